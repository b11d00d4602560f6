// Package endpoints runs Logflare query endpoints and ad-hoc SQL over the
// engine: it resolves sandboxed consumer queries (sql= and lql=), binds
// parameters, runs the SQL engine against one snapshot per source, encodes
// results as Logflare does, caches them per (endpoint, parameters) with
// proactive refresh, and redacts IP addresses on request.
//
// The HTTP layer authenticates and collects parameters, then calls
// RunEndpoint or RunSQL; everything else happens here.
package endpoints

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"runtime"
	"strings"
	"sync/atomic"
	"time"

	"github.com/sediment/sediment/catalog"
	"github.com/sediment/sediment/engine"
	"github.com/sediment/sediment/internal/jsonstr"
	"github.com/sediment/sediment/internal/recovered"
	"github.com/sediment/sediment/lql"
	"github.com/sediment/sediment/sql"
	"github.com/sediment/sediment/sql/parser"
	"github.com/sediment/sediment/sql/scan"
)

// Options configure a Service. Zero values mean defaults.
type Options struct {
	// Now is the clock (default time.Now); tests inject one to drive cache
	// expiry and refresh.
	Now    func() time.Time
	Logger *slog.Logger
	// CacheMaxBytes bounds the memory of cached results (default 64 MiB);
	// past it the least recently used results are dropped.
	CacheMaxBytes int64
	// QueryTimeout bounds one query (default 60s).
	QueryTimeout time.Duration
	// QueryMemory bounds the memory one query may hold (default 512 MiB);
	// QueryMemorySetting names how an operator changes it (a flag such as
	// --query-memory), quoted in the error of a query past it.
	QueryMemory        int64
	QueryMemorySetting string
	// QueryMemoryPool, when set, is the memory all queries share (give the
	// search service the same pool): a query it cannot serve fails with an
	// error naming it. A result stays charged to it until it is encoded.
	QueryMemoryPool *sql.MemoryPool
	// AdhocMaxRows caps rows of GET /api/query (default 1000).
	AdhocMaxRows int
	// DisableBackground stops the refresh goroutine; tests call Tick.
	DisableBackground bool
	// RefreshInterval is how often the background loop looks for results
	// to refresh or expire (default 1s).
	RefreshInterval time.Duration
}

// Service runs endpoints and ad-hoc queries.
type Service struct {
	eng   *engine.Engine
	cat   *catalog.Catalog
	opts  Options
	cache *cache
	unsub func()
	stop  chan struct{}
	done  chan struct{}

	executions atomic.Int64
	panics     atomic.Int64

	// testHookRun, set by package tests only, is called before each query
	// runs (to make one panic).
	testHookRun func(*parser.Query)
}

// Panics returns how many queries failed with a recovered panic (each is
// logged with its stack), for tests and metrics.
func (s *Service) Panics() int64 { return s.panics.Load() }

// Executions returns how many endpoint queries have run (cache misses and
// refreshes), for tests and metrics.
func (s *Service) Executions() int64 { return s.executions.Load() }

// New returns a Service and starts its refresh loop.
func New(eng *engine.Engine, cat *catalog.Catalog, opts *Options) *Service {
	o := Options{}
	if opts != nil {
		o = *opts
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if o.CacheMaxBytes <= 0 {
		o.CacheMaxBytes = 64 << 20
	}
	if o.QueryTimeout <= 0 {
		o.QueryTimeout = 60 * time.Second
	}
	if o.QueryMemory <= 0 {
		o.QueryMemory = 512 << 20
	}
	if o.AdhocMaxRows <= 0 {
		o.AdhocMaxRows = 1000
	}
	if o.RefreshInterval <= 0 {
		o.RefreshInterval = time.Second
	}
	s := &Service{eng: eng, cat: cat, opts: o, stop: make(chan struct{}), done: make(chan struct{})}
	s.cache = newCache(s, o.CacheMaxBytes)
	s.unsub = cat.Subscribe(func(c catalog.Change) {
		switch c.Kind {
		case catalog.EndpointUpdated, catalog.EndpointDeleted:
			ep := c.OldEndpoint
			if ep == nil {
				ep = c.Endpoint
			}
			if ep != nil {
				s.cache.dropEndpoint(ep.ID)
			}
		}
	})
	if o.DisableBackground {
		close(s.done)
	} else {
		go s.loop()
	}
	return s
}

// Close stops the refresh loop.
func (s *Service) Close() {
	s.unsub()
	select {
	case <-s.stop:
	default:
		close(s.stop)
	}
	<-s.done
}

func (s *Service) loop() {
	defer close(s.done)
	t := time.NewTicker(s.opts.RefreshInterval)
	defer t.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-t.C:
			s.Tick()
		}
	}
}

// Tick refreshes cached results that are due and drops expired ones.
func (s *Service) Tick() { s.cache.tick() }

// RunEndpoint executes ep with the request parameters and returns the
// response body: {"result": [...]} or {"error": "..."}, always sent with
// HTTP 200 as Logflare does.
func (s *Service) RunEndpoint(ctx context.Context, ep *catalog.Endpoint, params map[string]string, redactPII bool) []byte {
	body, _ := s.RunEndpointReportingCache(ctx, ep, params, redactPII)
	return body
}

// Cache statuses RunEndpointReportingCache reports.
const (
	// CacheHit: a stored result answered.
	CacheHit = "hit"
	// CacheMiss: the query ran for this request (or for an identical one
	// that was running when it came).
	CacheMiss = "miss"
	// CacheOff: the endpoint does not cache (cache_duration_seconds 0).
	CacheOff = "off"
)

// RunEndpointReportingCache is RunEndpoint that also says how the cache
// answered: CacheHit, CacheMiss or CacheOff.
func (s *Service) RunEndpointReportingCache(ctx context.Context, ep *catalog.Endpoint, params map[string]string, redactPII bool) ([]byte, string) {
	var body []byte
	var err error
	status := CacheOff
	if ep.CacheDurationSeconds > 0 {
		var hit bool
		body, hit, err = s.cache.lookup(ctx, ep, params)
		status = CacheMiss
		if hit {
			status = CacheHit
		}
	} else {
		body, _, err = s.execute(ctx, ep, params)
	}
	if err != nil {
		return errorBody(err), status
	}
	if redactPII {
		return RedactJSON(body), status
	}
	return body, status
}

// EndpointParameters lists the @parameters an endpoint declares: those of
// its SQL in order of first appearance (Logflare's list), none for an LQL
// endpoint. A query that does not parse declares none.
func (s *Service) EndpointParameters(ep *catalog.Endpoint) []string {
	if ep.Language == catalog.LanguageLQL {
		return nil
	}
	q, err := parser.Parse(ep.Query)
	if err != nil {
		return nil
	}
	return parser.Parameters(q)
}

// CachedEndpoint returns what RunEndpoint would return when that is a
// fresh cached result, and false when answering needs a query (an endpoint
// without caching, a miss, an expired result, a computation in flight). It
// never blocks: the HTTP layer answers cache hits without a query slot.
func (s *Service) CachedEndpoint(ep *catalog.Endpoint, params map[string]string, redactPII bool) ([]byte, bool) {
	if ep.CacheDurationSeconds <= 0 {
		return nil, false
	}
	body, ok := s.cache.fresh(ep, params)
	if !ok {
		return nil, false
	}
	if redactPII {
		return RedactJSON(body), true
	}
	return body, true
}

// RunSQL runs an ad-hoc query over the sources (GET /api/query).
func (s *Service) RunSQL(ctx context.Context, q string) []byte {
	w := &scan.Warnings{}
	res, err := s.Query(scan.WithWarnings(ctx, w), q, nil, s.opts.AdhocMaxRows)
	if err != nil {
		return errorBody(err)
	}
	return resultBody(res, w.List())
}

// Query validates and runs SQL over the sources. When the engine has to
// leave out data it cannot read (damage set aside), it says so in the
// scan.Warnings that ctx carries (scan.WithWarnings); without one, such a
// query fails instead. A panic while doing so is logged with its stack
// and returned as a *recovered.Error. The caller calls Release on the
// result once done with it.
func (s *Service) Query(ctx context.Context, q string, params map[string]string, maxRows int) (_ *sql.Result, err error) {
	defer func() { s.logPanic(err, "sql", q) }()
	defer recovered.Catch(&err)
	pq, err := parser.Validate(q, parser.ValidateOptions{KnownSource: s.cat.HasSourceName})
	if err != nil {
		return nil, err
	}
	return s.run(ctx, pq, params, maxRows)
}

// Explain validates SQL and returns its optimised plan as an indented
// tree, for `sediment query --explain`.
func (s *Service) Explain(q string, params map[string]string, maxRows int) (_ string, err error) {
	defer func() { s.logPanic(err, "sql", q) }()
	defer recovered.Catch(&err)
	pq, err := parser.Validate(q, parser.ValidateOptions{KnownSource: s.cat.HasSourceName})
	if err != nil {
		return "", err
	}
	qc := &queryCatalog{s: s, snaps: map[string]*engine.Snapshot{}}
	defer qc.release()
	n, err := sql.Plan(pq, qc, sql.Options{Params: params, Now: s.opts.Now(), MaxRows: maxRows})
	if err != nil {
		return "", err
	}
	return sql.Explain(n), nil
}

func (s *Service) run(ctx context.Context, pq *parser.Query, params map[string]string, maxRows int) (*sql.Result, error) {
	if s.testHookRun != nil {
		s.testHookRun(pq)
	}
	qc := &queryCatalog{s: s, snaps: map[string]*engine.Snapshot{}}
	defer qc.release()
	return sql.Run(ctx, pq, qc, sql.Options{
		Params:             params,
		Now:                s.opts.Now(),
		MaxRows:            maxRows,
		MemoryLimit:        s.opts.QueryMemory,
		MemoryLimitSetting: s.opts.QueryMemorySetting,
		MemoryPool:         s.opts.QueryMemoryPool,
		Timeout:            s.opts.QueryTimeout,
		Workers:            runtime.GOMAXPROCS(0),
	})
}

// execute runs an endpoint without the cache and encodes the result. A
// panic anywhere in it is logged with its stack and becomes the request's
// error, so the cache's waiters are released and a background refresh
// does not take the process down.
// execute runs an endpoint, returning its answer and the moment (zero:
// none) from which the answer may show an event past its source's
// retention, so must not be served from the cache.
func (s *Service) execute(ctx context.Context, ep *catalog.Endpoint, params map[string]string) (_ []byte, until time.Time, err error) {
	defer func() { s.logPanic(err, "endpoint", ep.Name, "sql", params["sql"], "lql", params["lql"]) }()
	defer recovered.Catch(&err)
	s.executions.Add(1)
	pq, err := s.prepare(ep, params)
	if err != nil {
		return nil, until, err
	}
	maxRows := ep.MaxLimit
	if maxRows <= 0 {
		maxRows = 1000
	}
	w := &scan.Warnings{}
	v := &scan.Validity{}
	res, err := s.run(scan.WithValidity(scan.WithWarnings(ctx, w), v), pq, params, maxRows)
	if err != nil {
		return nil, until, err
	}
	if t, ok := v.Until(); ok {
		until = time.UnixMicro(t)
	}
	// The body, warnings included, is what the cache keeps: a cached
	// answer that misses data says so as the first one did.
	return resultBody(res, w.List()), until, nil
}

// logPanic logs err with its stack when it is a recovered panic, with the
// attributes that say which query it was.
func (s *Service) logPanic(err error, attrs ...any) {
	pe := recovered.As(err)
	if pe == nil || !pe.FirstReport() {
		return
	}
	s.panics.Add(1)
	s.opts.Logger.Error("query panicked", append([]any{"panic", fmt.Sprint(pe.Value), "stack", string(pe.Stack)}, attrs...)...)
}

// prepare turns an endpoint and the request's consumer query, if any, into
// the query to run.
func (s *Service) prepare(ep *catalog.Endpoint, params map[string]string) (*parser.Query, error) {
	vopts := parser.ValidateOptions{KnownSource: s.cat.HasSourceName}
	base, err := s.endpointSQL(ep)
	if err != nil {
		return nil, err
	}
	consumer := ""
	if ep.Sandboxable {
		consumer = params["sql"]
		if consumer == "" && params["lql"] != "" {
			endpointQ, err := parser.Parse(base)
			if err != nil {
				return nil, err
			}
			if endpointQ.With != nil {
				var ctes []string
				for _, c := range endpointQ.With.CTEs {
					ctes = append(ctes, c.Name.Name)
				}
				q, err := lql.Parse(params["lql"], lql.Options{Now: s.opts.Now()})
				if err != nil {
					return nil, err
				}
				if consumer, err = lql.ForSandbox(q, ctes); err != nil {
					return nil, err
				}
			}
		}
	}
	if consumer == "" {
		return parser.Validate(base, vopts)
	}
	sb, err := parser.Sandbox(base, consumer, vopts)
	if err != nil {
		var ve *parser.ValidationError
		if errors.As(err, &ve) && ve.Kind == parser.KindSandboxNoWith {
			// Logflare ignores a consumer query when the endpoint has no
			// CTEs to sandbox it in.
			return parser.Validate(base, vopts)
		}
		return nil, err
	}
	return sb.Query, nil
}

// queryCatalog gives one query one snapshot per source it names.
type queryCatalog struct {
	s     *Service
	snaps map[string]*engine.Snapshot
}

func (qc *queryCatalog) Table(name string) (scan.Table, error) {
	if sn, ok := qc.snaps[name]; ok {
		return sn.Table(name), nil
	}
	src := qc.s.cat.SourceByName(name)
	if src == nil {
		return nil, fmt.Errorf("can't find source %s", name)
	}
	sh, err := qc.s.eng.Shard(src.Token)
	if err != nil {
		if errors.Is(err, engine.ErrClosed) {
			return nil, err
		}
		// The cause may name server paths: it goes to the log only.
		qc.s.opts.Logger.Error("open the storage of a source for a query", "source", name, "err", err)
		return nil, fmt.Errorf("source %s: its storage could not be opened (the server log says why)", name)
	}
	sn := sh.Snapshot()
	qc.snaps[name] = sn
	return sn.Table(name), nil
}

func (qc *queryCatalog) release() {
	for _, sn := range qc.snaps {
		sn.Release()
	}
}

// resultBody is Logflare's {"result": [...]}, with a "warnings" list of
// what the answer misses (stored data set aside as damaged) when it misses
// anything. Logflare's clients ignore members they do not know. It lets go
// of the result (its memory stops counting against the shared budget).
func resultBody(res *sql.Result, warnings []string) []byte {
	defer res.Release()
	b := make([]byte, 0, 64+res.Len*128)
	b = append(b, `{"result":`...)
	b = res.AppendJSON(b)
	b = AppendWarnings(b, warnings)
	return append(b, '}')
}

// AppendWarnings appends `,"warnings":[...]` to a JSON object being
// written, or nothing when there are no warnings.
func AppendWarnings(dst []byte, warnings []string) []byte {
	if len(warnings) == 0 {
		return dst
	}
	dst = append(dst, `,"warnings":[`...)
	for i, w := range warnings {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = jsonstr.Append(dst, w)
	}
	return append(dst, ']')
}

// errorBody is Logflare's error envelope. Messages name what is wrong
// (field, function, parameter, position) so the author can fix the query.
func errorBody(err error) []byte {
	msg := err.Error()
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, sql.ErrTimeout) {
		msg = sql.ErrTimeout.Error()
	}
	b := []byte(`{"error":`)
	b = jsonstr.Append(b, strings.TrimSpace(msg))
	return append(b, '}')
}

// endpointSQL returns an endpoint's query as SQL: its own, or its LQL
// translated (an LQL endpoint must name its source with f:).
func (s *Service) endpointSQL(ep *catalog.Endpoint) (string, error) {
	if ep.Language != catalog.LanguageLQL {
		return ep.Query, nil
	}
	q, err := lql.Parse(ep.Query, lql.Options{Now: s.opts.Now()})
	if err != nil {
		return "", err
	}
	if q.From == "" {
		return "", errors.New("an LQL endpoint must name its source with f:<source>")
	}
	return lql.ToSQL(q, q.From, lql.SQLOptions{Limit: ep.MaxLimit})
}
