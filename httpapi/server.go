package httpapi

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/sediment/sediment/catalog"
	"github.com/sediment/sediment/engine"
	"github.com/sediment/sediment/httpapi/ingest"
	"github.com/sediment/sediment/httpapi/metrics"
	"github.com/sediment/sediment/query/search"
)

// Options configure a Server. Engine and Catalog are required; every other
// zero field means its default.
type Options struct {
	Engine  *engine.Engine
	Catalog *catalog.Catalog
	// Runner executes query endpoints and ad-hoc SQL; nil answers those
	// routes 503 until SetRunner is called.
	Runner QueryRunner
	// Logger receives request logs (debug) and errors (default discards).
	Logger *slog.Logger
	// Now is the clock for ingest timestamps (default time.Now).
	Now func() time.Time

	// MaxBodyBytes caps a request body, before and after decompression
	// (default 12,000,000, Logflare's limit).
	MaxBodyBytes int
	// MaxInflightBodyBytes caps the bytes of request bodies held in memory
	// at once, over every connection (default 256 MiB). A request whose
	// body would pass it answers 429 with Retry-After; one body larger than
	// the cap is let through when it is the only one (see byteBudget).
	MaxInflightBodyBytes int64
	// MaxHeaderBytes caps the request line and headers; Studio sends its
	// SQL in the query string (default 64 KiB).
	MaxHeaderBytes int
	// IdleTimeout closes keep-alive connections idle this long (default
	// 90 s); ReadTimeout bounds reading one request (default 60 s).
	IdleTimeout time.Duration
	ReadTimeout time.Duration
	// QueryTimeout bounds one query endpoint call (default 65 s, Logflare's
	// call timeout), the wait for a query slot included.
	QueryTimeout time.Duration
	// MaxConcurrentQueries bounds the queries (endpoint runs, ad-hoc SQL,
	// LQL searches) running at once (default GOMAXPROCS, at least 2).
	// MaxQueuedQueries more wait for a slot (default 8 per slot; negative:
	// none), each at most QueryQueueWait (default 10 s); past either bound a
	// query route answers 429 with Retry-After. A cached endpoint answer
	// takes no slot. See admission.go.
	MaxConcurrentQueries int
	MaxQueuedQueries     int
	QueryQueueWait       time.Duration
	// Search configures the search service: the memory limit of its
	// queries and the pool all queries share (give the query runner the
	// same pool). Its Now and Timeout default to Now and QueryTimeout.
	Search search.Options
	// DrainDelay is how long Shutdown keeps serving, with /ready answering
	// 503, before it stops accepting connections, so that load balancers
	// notice (default 0).
	DrainDelay time.Duration

	// MaxTails bounds the live tails open at once; past it /tail answers
	// 429 (default 64).
	MaxTails int
	// TailBuffer is how many committed batches of events a live tail may
	// have waiting before the engine drops batches for it (default 64).
	TailBuffer int
	// TailKeepAlive is how often an idle live tail sends a `: keep-alive`
	// comment (default 15 s); it is also how soon a tail notices a client
	// that went away while no event matched.
	TailKeepAlive time.Duration
	// TailWriteTimeout ends a live tail whose client has not accepted a
	// write for this long (default 60 s).
	TailWriteTimeout time.Duration

	// Version and Commit describe the running build; /health reports them
	// when set (see health.go).
	Version, Commit string
	// SnapshotDir is where POST /api/admin/snapshot writes snapshots; ""
	// turns the route off (see snapshot.go). SnapshotFiles are further
	// files copied into each snapshot when they exist.
	SnapshotDir   string
	SnapshotFiles []string
	// Metrics is the registry GET /metrics serves; New registers the
	// server's collectors on it, so it serves one server (default a new
	// one; give the engine its ObserveWALSync to have fsync latencies).
	// MetricsAccess says who may read it (default MetricsPrivate).
	Metrics       *metrics.Registry
	MetricsAccess MetricsAccess

	// DefaultRetentionDays is the retention of every source whose own
	// retention_days is 0 (unset); 0 keeps their events forever. A
	// source's own retention_days wins, shorter or longer.
	DefaultRetentionDays int
	// ServerConditions, when set, returns what is wrong with the server
	// as a whole rather than with one source (an object store that cannot
	// be reached): GET /ready reports them under "server" and answers
	// "degraded" (see readyserver.go).
	ServerConditions func() []ServerCondition
	// Unsealed, with ClusterKey, serves the internal route query nodes
	// ask for this node's events of source not yet in the object store,
	// given the segment names the manifest they read lists (UnsealedPath;
	// cluster.go; remote.WriteUnsealed writes the answer). Nil: no such
	// route.
	Unsealed   func(w io.Writer, source string, listed []string) error
	ClusterKey string
	// QueryOnly refuses events (503): a query node's (--role query).
	QueryOnly bool
}

// DefaultMaxInflightBodyBytes is the default of
// Options.MaxInflightBodyBytes.
const DefaultMaxInflightBodyBytes = 256 << 20

func (o Options) withDefaults() (Options, error) {
	if o.Engine == nil || o.Catalog == nil {
		return o, errors.New("httpapi: Engine and Catalog are required")
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.MaxBodyBytes <= 0 {
		o.MaxBodyBytes = ingest.DefaultMaxBodyBytes
	}
	if o.MaxInflightBodyBytes <= 0 {
		o.MaxInflightBodyBytes = DefaultMaxInflightBodyBytes
	}
	if o.MaxConcurrentQueries <= 0 {
		o.MaxConcurrentQueries = max(2, runtime.GOMAXPROCS(0))
	}
	switch {
	case o.MaxQueuedQueries == 0:
		o.MaxQueuedQueries = 8 * o.MaxConcurrentQueries
	case o.MaxQueuedQueries < 0:
		o.MaxQueuedQueries = 0
	}
	if o.QueryQueueWait <= 0 {
		o.QueryQueueWait = 10 * time.Second
	}
	if o.MaxHeaderBytes <= 0 {
		o.MaxHeaderBytes = 64 << 10
	}
	if o.IdleTimeout <= 0 {
		o.IdleTimeout = 90 * time.Second
	}
	if o.ReadTimeout <= 0 {
		o.ReadTimeout = 60 * time.Second
	}
	if o.QueryTimeout <= 0 {
		o.QueryTimeout = 65 * time.Second
	}
	if o.MaxTails <= 0 {
		o.MaxTails = 64
	}
	if o.TailBuffer <= 0 {
		o.TailBuffer = 64
	}
	if o.TailKeepAlive <= 0 {
		o.TailKeepAlive = 15 * time.Second
	}
	if o.TailWriteTimeout <= 0 {
		o.TailWriteTimeout = 60 * time.Second
	}
	if o.Metrics == nil {
		o.Metrics = metrics.New(o.Logger)
	}
	return o, nil
}

// Server is the HTTP API. Create it with New, start it with Serve, mark it
// ready with SetReady once seeding is done, stop it with Shutdown (the
// engine is the caller's to close afterwards).
type Server struct {
	opts Options
	eng  *engine.Engine
	cat  *catalog.Catalog
	log  *slog.Logger
	srv  *fasthttp.Server

	runner atomic.Pointer[runnerBox]

	ready    atomic.Bool
	draining atomic.Bool

	// baseCtx is the context of engine appends and queries: unlike the
	// request context it is not cancelled when shutdown begins, so that
	// in-flight requests finish; Shutdown cancels it at the end.
	baseCtx context.Context
	cancel  context.CancelFunc

	workers *workerPool
	rules   ruleCache
	recent  recentStore
	stats   ingestCounters
	search  *search.Searcher
	tails   tailRegistry
	syslogd syslogRegistry
	queries *queryGate
	bodies  byteBudget // bytes of request bodies in flight
	conns   connTracker
	metrics *metrics.Registry

	// snapshotMu lets one snapshot be written at a time (snapshot.go);
	// unknownSources remembers the unknown sources ingest was refused for.
	snapshotMu     sync.Mutex
	unknownSources unknownSourceLog

	unsubscribe func()
	shutdown    sync.Once
	shutdownErr error
	// listeners are those Serve was given, closed by Shutdown too: fasthttp
	// knows a listener only once its Serve has started, and a Shutdown
	// before that found none to close, leaving Serve to run for good.
	listenersMu sync.Mutex
	listeners   []net.Listener
	stopped     bool // Shutdown has closed the listeners
}

type runnerBox struct{ r QueryRunner }

// New builds a Server. It subscribes to catalog changes to keep shards in
// step with sources (retention, deletion) and applies every source's
// retention now.
func New(opts Options) (*Server, error) {
	o, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	s := &Server{opts: o, eng: o.Engine, cat: o.Catalog, log: o.Logger, metrics: o.Metrics}
	s.baseCtx, s.cancel = context.WithCancel(context.Background())
	if o.Runner != nil {
		s.runner.Store(&runnerBox{o.Runner})
	}
	s.workers = newWorkerPool(int(min(o.MaxInflightBodyBytes, int64(math.MaxInt))), func() *ingestWorker {
		w := newIngestWorker(o.MaxBodyBytes)
		w.dec.Now = o.Now // RFC 3164 syslog timestamps take their year from it
		return w
	})
	so := o.Search
	if so.Now == nil {
		so.Now = o.Now
	}
	if so.Timeout <= 0 {
		so.Timeout = o.QueryTimeout
	}
	if so.Logger == nil {
		so.Logger = o.Logger
	}
	s.search = search.New(so)
	s.queries = newQueryGate(o.MaxConcurrentQueries, o.MaxQueuedQueries, o.QueryQueueWait)
	s.bodies.limit = o.MaxInflightBodyBytes
	s.srv = &fasthttp.Server{
		Handler:            s.handle,
		ErrorHandler:       s.handleProtocolError,
		Name:               "sediment",
		MaxRequestBodySize: o.MaxBodyBytes,
		// Handlers run once the headers are in and read the body
		// themselves, after checking the key (body.go). Before running the
		// handler fasthttp reads min(this request's body limit, 8 KiB) of
		// the body; a limit of one byte lets the handler run as soon as the
		// body starts. The limit itself is enforced by readBody.
		StreamRequestBody: true,
		HeaderReceived: func(*fasthttp.RequestHeader) fasthttp.RequestConfig {
			return fasthttp.RequestConfig{MaxRequestBodySize: 1}
		},
		ExpectHandler:                s.expectCounted,
		ConnState:                    s.conns.hook,
		ReadBufferSize:               o.MaxHeaderBytes,
		IdleTimeout:                  o.IdleTimeout,
		ReadTimeout:                  o.ReadTimeout,
		CloseOnShutdown:              true,
		NoDefaultContentType:         true,
		Logger:                       fasthttpLogger{o.Logger},
		DisablePreParseMultipartForm: true,
	}
	if err := s.registerMetrics(); err != nil {
		return nil, err
	}
	s.unsubscribe = s.cat.Subscribe(s.onCatalogChange)
	for _, sh := range s.eng.Shards() {
		if s.cat.SourceByToken(sh.ID()) == nil {
			// Data of a source the catalog does not know (deleted while a
			// request was writing to it, or a catalog restored from an
			// older copy). It is left alone: nothing reads or drops it.
			s.log.Warn("shard without a source in the catalog; its events are not reachable", "shard", sh.ID())
		}
	}
	for _, src := range s.cat.Sources() {
		if s.hasShardSettings(src) {
			if err := s.applySourceSettings(src); err != nil {
				s.unsubscribe()
				return nil, err
			}
		}
	}
	return s, nil
}

// onCatalogChange keeps shards and caches in step with sources.
func (s *Server) onCatalogChange(ch catalog.Change) {
	if old := ch.OldSource; old != nil {
		s.rules.forget(old)
	}
	s.forgetEndpointMetrics(ch)
	switch ch.Kind {
	case catalog.SourceCreated, catalog.SourceUpdated:
		if ch.OldSource == nil && !s.hasShardSettings(ch.Source) {
			return // a new shard keeps everything, in time order, already
		}
		if err := s.applySourceSettings(ch.Source); err != nil {
			s.log.Error("apply source settings", "source_id", ch.Source.ID, "err", err)
		}
	case catalog.SourceDeleted:
		s.recent.forget(ch.OldSource.ID)
		s.stats.forget(ch.OldSource.Token)
		if err := s.eng.DropShard(ch.OldSource.Token); err != nil {
			s.log.Error("drop shard of deleted source", "source_id", ch.OldSource.ID, "err", err)
		}
	}
}

// hasShardSettings reports whether a source's shard needs settings other
// than a new shard's (keep everything, time order, no size cap).
func (s *Server) hasShardSettings(src *catalog.Source) bool {
	return s.retentionDays(src) > 0 || src.SortKey != "" || src.MaxDiskBytes > 0
}

// retentionDays returns the retention a source's events are kept for:
// its own retention_days, else the server's default (0: forever).
func (s *Server) retentionDays(src *catalog.Source) int {
	if src.RetentionDays > 0 {
		return src.RetentionDays
	}
	return max(s.opts.DefaultRetentionDays, 0)
}

// applySourceSettings gives a source's shard the settings the engine
// keeps per shard: retention (its own or the default), the sort key and
// the size cap.
func (s *Server) applySourceSettings(src *catalog.Source) error {
	sh, err := s.eng.Shard(src.Token)
	if err != nil {
		return fmt.Errorf("shard of source %d: %w", src.ID, err)
	}
	sh.SetRetentionDays(s.retentionDays(src))
	sh.SetMaxDiskBytes(src.MaxDiskBytes)
	if err := sh.SetSortKey(src.SortKey); err != nil {
		return fmt.Errorf("sort key of source %d: %w", src.ID, err)
	}
	return nil
}

// SetRunner installs (or, with nil, removes) the query runner.
func (s *Server) SetRunner(r QueryRunner) {
	if r == nil {
		s.runner.Store(nil)
		return
	}
	s.runner.Store(&runnerBox{r})
}

func (s *Server) queryRunner() QueryRunner {
	if b := s.runner.Load(); b != nil {
		return b.r
	}
	return nil
}

// Handler returns the request handler, for serving on a listener the
// caller manages (tests use it with fasthttputil.InmemoryListener).
func (s *Server) Handler() fasthttp.RequestHandler { return s.handle }

// Serve serves connections from ln until Shutdown; it returns nil after a
// shutdown.
func (s *Server) Serve(ln net.Listener) error {
	s.listenersMu.Lock()
	if s.stopped {
		s.listenersMu.Unlock()
		_ = ln.Close()
		return nil
	}
	s.listeners = append(s.listeners, ln)
	s.listenersMu.Unlock()
	return s.srv.Serve(ln)
}

// SetReady marks startup (seeding) as done: /health and /ready answer 200.
func (s *Server) SetReady() { s.ready.Store(true) }

// Shutdown drains the server: /ready answers 503 at once; after
// DrainDelay live tails end, the listeners close, connections with no
// request in flight close at once (idle keep-alive connections, and new
// ones that have sent nothing), and requests in flight finish (their engine
// appends complete and are acknowledged; their connections close after the
// answer). It returns when no connection is left or ctx ends (then with
// ctx's error, and queries still running are cancelled). The caller closes
// the engine afterwards. Calling it again returns the first result.
func (s *Server) Shutdown(ctx context.Context) error {
	s.shutdown.Do(func() {
		s.draining.Store(true)
		if d := s.opts.DrainDelay; d > 0 {
			t := time.NewTimer(d)
			select {
			case <-t.C:
			case <-ctx.Done():
				t.Stop()
			}
		}
		// Live tails never end on their own: end them, or the server
		// would wait for them until ctx ends.
		s.tails.closeAll()
		s.shutdownSyslog(ctx)
		// fasthttp closes idle keep-alive connections itself, but a new
		// connection only 5 s after it opened (conns.go).
		s.conns.closeSilent()
		s.shutdownErr = s.srv.ShutdownWithContext(ctx)
		s.closeListeners()
		s.cancel()
		s.unsubscribe()
	})
	return s.shutdownErr
}

// closeListeners closes every listener Serve was given and makes later
// Serve calls return at once, so that a Serve whose goroutine had not
// started when Shutdown ran returns too (fasthttp's Serve returns nil for
// a closed listener).
func (s *Server) closeListeners() {
	s.listenersMu.Lock()
	defer s.listenersMu.Unlock()
	s.stopped = true
	for _, ln := range s.listeners {
		_ = ln.Close()
	}
}

// handleProtocolError answers requests fasthttp could not read: a body
// over the limit (413, before it is buffered), headers over the limit
// (431), a timeout (408), anything else malformed (400).
func (s *Server) handleProtocolError(ctx *fasthttp.RequestCtx, err error) {
	var small *fasthttp.ErrSmallBuffer
	defer func() { s.countUnhandled(ctx, ctx.Response.StatusCode()) }()
	switch {
	case errors.Is(err, fasthttp.ErrBodyTooLarge):
		sendDetail(ctx, fasthttp.StatusRequestEntityTooLarge, fmt.Sprintf("request body exceeds %d bytes", s.opts.MaxBodyBytes))
	case errors.As(err, &small):
		sendDetail(ctx, fasthttp.StatusRequestHeaderFieldsTooLarge, "request headers too large")
	case isTimeout(err):
		sendDetail(ctx, fasthttp.StatusRequestTimeout, "request timeout")
	default:
		sendDetail(ctx, fasthttp.StatusBadRequest, "malformed HTTP request")
	}
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// fasthttpLogger routes fasthttp's own messages to slog at debug level
// (they are about connections, e.g. clients going away).
type fasthttpLogger struct{ l *slog.Logger }

// Printf implements fasthttp.Logger.
func (f fasthttpLogger) Printf(format string, args ...any) {
	if f.l.Enabled(context.Background(), slog.LevelDebug) {
		f.l.Debug(fmt.Sprintf(format, args...), "component", "fasthttp")
	}
}
