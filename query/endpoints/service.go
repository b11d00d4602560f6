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
	"github.com/sediment/sediment/internal/jsonstr"
	"io"
	"log/slog"
	"runtime"
	"strings"
	"sync/atomic"
	"time"

	"github.com/sediment/sediment/catalog"
	"github.com/sediment/sediment/engine"
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
}

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
	var body []byte
	var err error
	if ep.CacheDurationSeconds > 0 {
		body, err = s.cache.get(ctx, ep, params)
	} else {
		body, err = s.execute(ctx, ep, params)
	}
	if err != nil {
		return errorBody(err)
	}
	if redactPII {
		return RedactJSON(body)
	}
	return body
}

// RunSQL runs an ad-hoc query over the sources (GET /api/query).
func (s *Service) RunSQL(ctx context.Context, q string) []byte {
	res, err := s.Query(ctx, q, nil, s.opts.AdhocMaxRows)
	if err != nil {
		return errorBody(err)
	}
	return resultBody(res)
}

// Query validates and runs SQL over the sources. The caller calls
// Release on the result once done with it.
func (s *Service) Query(ctx context.Context, q string, params map[string]string, maxRows int) (*sql.Result, error) {
	pq, err := parser.Validate(q, parser.ValidateOptions{KnownSource: s.cat.HasSourceName})
	if err != nil {
		return nil, err
	}
	return s.run(ctx, pq, params, maxRows)
}

// Explain validates SQL and returns its optimised plan as an indented
// tree, for `sediment query --explain`.
func (s *Service) Explain(q string, params map[string]string, maxRows int) (string, error) {
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

// execute runs an endpoint without the cache and encodes the result.
func (s *Service) execute(ctx context.Context, ep *catalog.Endpoint, params map[string]string) ([]byte, error) {
	s.executions.Add(1)
	pq, err := s.prepare(ep, params)
	if err != nil {
		return nil, err
	}
	maxRows := ep.MaxLimit
	if maxRows <= 0 {
		maxRows = 1000
	}
	res, err := s.run(ctx, pq, params, maxRows)
	if err != nil {
		return nil, err
	}
	return resultBody(res), nil
}

// prepare turns an endpoint and the request's consumer query, if any, into
// the query to run.
func (s *Service) prepare(ep *catalog.Endpoint, params map[string]string) (*parser.Query, error) {
	vopts := parser.ValidateOptions{KnownSource: s.cat.HasSourceName}
	base := ep.Query
	if ep.Language == catalog.LanguageLQL {
		q, err := lql.Parse(ep.Query, lql.Options{Now: s.opts.Now()})
		if err != nil {
			return nil, err
		}
		if q.From == "" {
			return nil, errors.New("an LQL endpoint must name its source with f:<source>")
		}
		if base, err = lql.ToSQL(q, q.From, lql.SQLOptions{Limit: ep.MaxLimit}); err != nil {
			return nil, err
		}
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
		return nil, err
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

// resultBody encodes a result as Logflare does and lets go of the result
// (its memory stops counting against the shared budget).
func resultBody(res *sql.Result) []byte {
	defer res.Release()
	b := make([]byte, 0, 64+res.Len*128)
	b = append(b, `{"result":`...)
	b = res.AppendJSON(b)
	return append(b, '}')
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
