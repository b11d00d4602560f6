package search

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/sediment/sediment/engine"
	"github.com/sediment/sediment/internal/jsonstr"
	"github.com/sediment/sediment/internal/recovered"
	"github.com/sediment/sediment/lql"
	"github.com/sediment/sediment/sql"
	"github.com/sediment/sediment/sql/parser"
	"github.com/sediment/sediment/sql/scan"
)

// Limits of a search.
const (
	// DefaultLimit is the number of events a search returns when the
	// request does not say (Logflare's search UI shows 100).
	DefaultLimit = 100
	// MaxLimit is the most events one search returns.
	MaxLimit = 10_000
	// MaxChartBuckets bounds the buckets a chart may span, so that a
	// c:group_by(t::second) over months is refused rather than computed.
	MaxChartBuckets = 10_000
)

// Options configure a Searcher. Zero values mean defaults.
type Options struct {
	// Now is the clock of LQL timestamp shorthands (t:last@15m, today) and
	// of SQL's CURRENT_TIMESTAMP (default time.Now).
	Now func() time.Time
	// Location is the zone LQL dates and date-times without an offset are
	// read in, and the request's From/To when given as text (default UTC).
	Location *time.Location
	// Timeout bounds each of a search's queries (default 60 s).
	Timeout time.Duration
	// MemoryLimit bounds the memory one query may hold (default 512 MiB);
	// MemoryLimitSetting names how an operator changes it (a flag such as
	// --query-memory), quoted in the error of a query past it.
	MemoryLimit        int64
	MemoryLimitSetting string
	// MemoryPool, when set, is the memory all queries share (the endpoint
	// service's pool): a search it cannot serve fails with an error naming
	// it. Results stay charged to it until Response.Release.
	MemoryPool *sql.MemoryPool
	// Workers is the number of goroutines one query scans with (default
	// GOMAXPROCS).
	Workers int
	// Logger receives the stack of a search that panicked (default
	// discards).
	Logger *slog.Logger
}

// Searcher runs searches. It holds no state besides its options and is
// safe for concurrent use.
type Searcher struct{ opts Options }

// New returns a Searcher.
func New(opts Options) *Searcher {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Location == nil {
		opts.Location = time.UTC
	}
	if opts.Timeout <= 0 {
		opts.Timeout = 60 * time.Second
	}
	if opts.MemoryLimit <= 0 {
		opts.MemoryLimit = 512 << 20
	}
	if opts.Workers <= 0 {
		opts.Workers = runtime.GOMAXPROCS(0)
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	return &Searcher{opts: opts}
}

// Request is one search of one source.
type Request struct {
	// LQL is the query; blank matches every event.
	LQL string
	// From and To bound event timestamps, inclusive, in unix microseconds;
	// nil is unbounded. They are ANDed with the LQL's own t: clauses.
	From, To *int64
	// Limit is the number of events to return: 0 means DefaultLimit, more
	// than MaxLimit is an error.
	Limit int
}

// RequestError is an error in the request itself: LQL that does not parse
// or does not fit the source's schema, a bad limit or range. The HTTP
// layer answers it 400; other Search errors are failures of the query.
type RequestError struct{ Err error }

func (e *RequestError) Error() string { return e.Err.Error() }
func (e *RequestError) Unwrap() error { return e.Err }

func requestErrorf(format string, args ...any) error {
	return &RequestError{fmt.Errorf(format, args...)}
}

// Plan is a request compiled for one source.
type Plan struct {
	// Query is the parsed LQL with the request's range added as timestamp
	// filters.
	Query *lql.Query
	// Limit is the number of events to return.
	Limit int
	// SearchSQL selects the events: the filters, newest first (ORDER BY
	// timestamp DESC, id DESC), LIMIT Limit.
	SearchSQL string
	// NewestSQL selects the timestamps of the newest Limit matches (ORDER
	// BY timestamp alone, which the scan can stop early for). Run uses the
	// oldest of them as a lower time bound of SearchSQL, so that the
	// search, whose id tie-break keeps the scan from stopping early, reads
	// only the newest blocks.
	NewestSQL string
	// ChartSQL computes the chart; "" when the LQL has no c: clause.
	ChartSQL string
	// Period is the chart's bucket, written in the LQL (PeriodWritten) or
	// chosen from the time span.
	Period        lql.Period
	PeriodWritten bool

	events lql.Query // the search's query, for the bounded SearchSQL
	table  string
}

// Response is a search's outcome.
type Response struct {
	// Events are the matching events, newest first: timestamp, id,
	// event_message, then the s: selects.
	Events *sql.Result
	// Chart has one row per non-empty bucket, oldest first: timestamp (the
	// bucket's start) and count (the c: aggregate). Nil without c:.
	Chart *sql.Result
	// Warnings say what the answer misses: stored events set aside as
	// damaged that the search would have read. Nil when it misses nothing.
	Warnings []string
}

// AppendJSON writes the response body: {"result": [...], "chart": [...],
// "warnings": [...]}, rows encoded as Logflare's query results are
// (timestamps in integer microseconds, records in BigQuery's shape);
// "chart" only with a chart, "warnings" only when the answer misses data.
func (r *Response) AppendJSON(dst []byte) []byte {
	dst = append(dst, `{"result":`...)
	dst = r.Events.AppendJSON(dst)
	if r.Chart != nil {
		dst = append(dst, `,"chart":`...)
		dst = r.Chart.AppendJSON(dst)
	}
	if len(r.Warnings) > 0 {
		dst = append(dst, `,"warnings":[`...)
		for i, w := range r.Warnings {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = jsonstr.Append(dst, w)
		}
		dst = append(dst, ']')
	}
	return append(dst, '}')
}

// Release lets go of the response's results: their memory stops counting
// against the shared budget. Call it once the response is encoded.
func (r *Response) Release() {
	if r != nil {
		r.Events.Release()
		r.Chart.Release()
	}
}

// Search runs req over the shard's current events. table is the name the
// source has in SQL (its name), used in the generated SQL and in error
// messages. Both queries read one snapshot. Errors in the request are
// *RequestError; a query past its deadline fails with sql.ErrTimeout. A
// panic fails the search alone: it is logged with its stack and returned as
// a *recovered.Error.
func (s *Searcher) Search(ctx context.Context, sh *engine.Shard, table string, req Request) (_ *Response, err error) {
	defer func() { s.logPanic(err, "source", table, "lql", req.LQL) }()
	defer recovered.Catch(&err)
	sn := sh.Snapshot()
	defer sn.Release()
	tbl := sn.Table(table)
	p, err := s.Prepare(ctx, tbl, req)
	if err == nil {
		var res *Response
		if res, err = s.Run(ctx, tbl, p); err == nil {
			return res, nil
		}
	}
	if errors.Is(err, context.DeadlineExceeded) {
		err = sql.ErrTimeout // the message Logflare's clients know
	}
	return nil, err
}

// Prepare compiles req for tbl: it parses the LQL with tbl's schema,
// applies the range, and writes the SQL of the search and of the chart.
// Errors in the request are *RequestError.
func (s *Searcher) Prepare(ctx context.Context, tbl scan.Table, req Request) (_ *Plan, err error) {
	defer func() { s.logPanic(err, "source", tbl.Name(), "lql", req.LQL) }()
	defer recovered.Catch(&err)
	limit := req.Limit
	switch {
	case limit == 0:
		limit = DefaultLimit
	case limit < 0 || limit > MaxLimit:
		return nil, requestErrorf("limit must be from 1 to %d, got %d", MaxLimit, limit)
	}
	if req.From != nil && req.To != nil && *req.From > *req.To {
		return nil, requestErrorf("from (%d) is after to (%d)", *req.From, *req.To)
	}
	popts := lql.Options{Now: s.opts.Now(), Location: s.opts.Location, Schema: SchemaOf(tbl.Schema())}
	q, err := lql.Parse(req.LQL, popts)
	if err != nil {
		return nil, &RequestError{err}
	}
	if req.From != nil {
		q.Filters = append(q.Filters, lql.Filter{Path: "timestamp", Op: lql.OpGte, Value: lql.TimestampValue(*req.From)})
	}
	if req.To != nil {
		q.Filters = append(q.Filters, lql.Filter{Path: "timestamp", Op: lql.OpLte, Value: lql.TimestampValue(*req.To)})
	}
	p := &Plan{Query: q, Limit: limit, table: tbl.Name()}

	p.events = *q
	p.events.Chart = nil
	p.events.Selects = withBaseColumns(q.Selects)
	if p.SearchSQL, err = lql.ToSQL(&p.events, p.table, lql.SQLOptions{Limit: limit}); err != nil {
		return nil, &RequestError{err}
	}
	// Sandboxed output has no ORDER BY of its own; with the one select it
	// is SELECT t.timestamp FROM ... WHERE <the same filters>.
	newest := p.events
	newest.Selects = []lql.Select{{Path: "timestamp"}}
	if p.NewestSQL, err = lql.ToSQL(&newest, p.table, lql.SQLOptions{Sandboxed: true}); err != nil {
		return nil, &RequestError{err}
	}
	p.NewestSQL += " ORDER BY t.timestamp DESC LIMIT " + strconv.Itoa(limit)
	if q.Chart == nil {
		return p, nil
	}

	lo, hi := timeBounds(q, scan.MinTime, scan.MaxTime)
	if lo <= hi {
		if lo, hi, err = dataSpan(ctx, tbl, lo, hi); err != nil {
			return nil, err
		}
	}
	span := int64(0)
	if lo <= hi {
		span = spanMicros(lo, hi)
	}
	p.Period, p.PeriodWritten = q.Chart.Period, periodWritten(req.LQL, popts, q)
	if !p.PeriodWritten {
		p.Period = DefaultPeriod(span)
	}
	if n := span/periodMicros(p.Period) + 1; n > MaxChartBuckets {
		return nil, requestErrorf("the chart would span %d buckets of a %s (the limit is %d): narrow the time range or choose a longer c:group_by period",
			n, p.Period, MaxChartBuckets)
	}
	chart := *q
	chart.Selects = nil
	chart.Chart = &lql.Chart{Aggregate: q.Chart.Aggregate, Path: q.Chart.Path, Period: p.Period}
	if p.ChartSQL, err = lql.ToSQL(&chart, tbl.Name(), lql.SQLOptions{}); err != nil {
		return nil, &RequestError{err}
	}
	return p, nil
}

// logPanic logs err with its stack, once, when it is a recovered panic.
func (s *Searcher) logPanic(err error, attrs ...any) {
	if pe := recovered.As(err); pe != nil && pe.FirstReport() {
		s.opts.Logger.Error("search panicked", append([]any{"panic", fmt.Sprint(pe.Value), "stack", string(pe.Stack)}, attrs...)...)
	}
}

// Run executes a plan over tbl. What the answer misses (stored data set
// aside as damaged) is in the response's Warnings. A panic fails the run
// alone: it is logged with its stack and returned as a *recovered.Error.
func (s *Searcher) Run(ctx context.Context, tbl scan.Table, p *Plan) (_ *Response, err error) {
	defer func() { s.logPanic(err, "source", tbl.Name(), "sql", p.SearchSQL) }()
	defer recovered.Catch(&err)
	res := &Response{}
	w := scan.WarningsFrom(ctx)
	if w == nil {
		w = &scan.Warnings{}
		ctx = scan.WithWarnings(ctx, w)
	}
	defer func() { res.Warnings = w.List() }()
	if res.Events, err = s.events(ctx, tbl, p); err != nil {
		return nil, err
	}
	if p.ChartSQL != "" {
		if res.Chart, err = s.query(ctx, tbl, p.ChartSQL, MaxChartBuckets); err != nil {
			res.Release()
			return nil, err
		}
	}
	return res, nil
}

// events runs the search in two steps: the timestamps of the newest Limit
// matches, then SearchSQL bounded below by the oldest of them. The bound
// keeps every event the search would return (none older can be among the
// newest Limit), events tied with it included.
func (s *Searcher) events(ctx context.Context, tbl scan.Table, p *Plan) (*sql.Result, error) {
	newest, err := s.query(ctx, tbl, p.NewestSQL, p.Limit)
	if err != nil {
		return nil, err
	}
	if newest.Len == 0 {
		return newest, nil // no match: an empty result
	}
	bound := newest.Cols[0].IntAt(newest.Len - 1)
	newest.Release()
	q := p.events
	q.Filters = append(q.Filters[:len(q.Filters):len(q.Filters)],
		lql.Filter{Path: "timestamp", Op: lql.OpGte, Value: lql.TimestampValue(bound)})
	text, err := lql.ToSQL(&q, p.table, lql.SQLOptions{Limit: p.Limit})
	if err != nil {
		return nil, err
	}
	return s.query(ctx, tbl, text, p.Limit)
}

// query runs one generated SELECT over tbl alone.
func (s *Searcher) query(ctx context.Context, tbl scan.Table, text string, maxRows int) (*sql.Result, error) {
	name := tbl.Name()
	pq, err := parser.Validate(text, parser.ValidateOptions{KnownSource: func(n string) bool { return n == name }})
	if err != nil {
		return nil, fmt.Errorf("search: generated SQL does not validate: %w", err)
	}
	return sql.Run(ctx, pq, oneTable{tbl}, sql.Options{
		Now:                s.opts.Now(),
		MaxRows:            maxRows,
		MemoryLimit:        s.opts.MemoryLimit,
		MemoryLimitSetting: s.opts.MemoryLimitSetting,
		MemoryPool:         s.opts.MemoryPool,
		Timeout:            s.opts.Timeout,
		Workers:            s.opts.Workers,
	})
}

// oneTable is the SQL catalog of a search: the searched source only, so a
// source is searched even when another has the same name.
type oneTable struct{ t scan.Table }

func (o oneTable) Table(name string) (scan.Table, error) {
	if name != o.t.Name() {
		return nil, errors.New("can't find source " + name)
	}
	return o.t, nil
}

// baseColumns are the columns every search returns first.
var baseColumns = [...]string{"timestamp", "id", "event_message"}

// withBaseColumns puts timestamp, id and event_message before the s:
// selects, except those a select already yields under that name. No
// selects (or s:*) leave ToSQL's default, which is the same three.
func withBaseColumns(sel []lql.Select) []lql.Select {
	if len(sel) == 0 {
		return nil
	}
	taken := make(map[string]bool, len(sel))
	for _, s := range sel {
		if s.Path == lql.Wildcard {
			return nil
		}
		name := s.Alias
		if name == "" {
			name = strings.ReplaceAll(s.Path, ".", "_")
		}
		taken[name] = true
	}
	out := make([]lql.Select, 0, len(baseColumns)+len(sel))
	for _, c := range baseColumns {
		if !taken[c] {
			out = append(out, lql.Select{Path: c})
		}
	}
	return append(out, sel...)
}

// periodWritten reports whether the LQL text names a chart period. Parse
// fills in minute when no c:group_by is written, without saying so; a
// second parse with c:group_by(t::second) in front tells the two apart,
// since a period written in the text replaces the one before it.
func periodWritten(text string, opts lql.Options, q *lql.Query) bool {
	if q.Chart == nil {
		return false
	}
	if q.Chart.Period != lql.PeriodMinute {
		return true
	}
	probe, err := lql.Parse("c:group_by(t::second) "+text, opts)
	if err != nil || probe.Chart == nil {
		return true // the probe went over a limit: keep the parsed period
	}
	return probe.Chart.Period == lql.PeriodMinute
}

// dataSpan narrows [lo, hi] to the time range of the data the table holds
// there (from the scan units' bounds, without reading any rows). lo > hi
// when there is none.
func dataSpan(ctx context.Context, tbl scan.Table, lo, hi int64) (int64, int64, error) {
	sc, err := tbl.Open(ctx, &scan.Request{TimeMin: lo, TimeMax: hi})
	if err != nil {
		return 0, 0, err
	}
	defer sc.Close()
	dmin, dmax := int64(scan.MaxTime), int64(scan.MinTime)
	for _, u := range sc.Units() {
		if u.Rows() == 0 {
			continue
		}
		a, b := u.TimeRange()
		dmin, dmax = min(dmin, a), max(dmax, b)
	}
	return max(lo, dmin), min(hi, dmax), nil
}

// spanMicros is hi-lo without overflow (saturating).
func spanMicros(lo, hi int64) int64 {
	if d := hi - lo; d >= 0 {
		return d
	}
	return scan.MaxTime
}
