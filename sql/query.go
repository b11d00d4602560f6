// Package sql runs Sediment's SQL: the BigQuery dialect that Logflare query
// endpoints and Supabase Studio use. A query is parsed (sql/parser), bound
// to the sources of a Catalog (names, types, nested records), optimised
// (constant folding, filter and limit pushdown into scans, top-K, index
// counts, column pruning) and executed by vectorised operators over
// batches of column vectors read through the sql/scan interface.
package sql

import (
	"context"
	"errors"
	"runtime"
	"time"

	"github.com/sediment/sediment/internal/recovered"
	"github.com/sediment/sediment/internal/vec"
	"github.com/sediment/sediment/sql/parser"
	"github.com/sediment/sediment/sql/scan"
)

// Options control one query execution.
type Options struct {
	// Params bind @name parameters, all as STRING; a parameter missing from
	// the map is NULL.
	Params map[string]string
	// Now is the query's CURRENT_TIMESTAMP (default time.Now()).
	Now time.Time
	// MaxRows truncates the result (0 = no limit), and lets the plan stop
	// early.
	MaxRows int
	// MemoryLimit bounds the bytes buffered by sorts, aggregations and joins
	// (default 1 GiB); past it the query fails with ErrMemoryLimit.
	MemoryLimit int64
	// Timeout bounds the run (default 60s); past it ErrTimeout.
	Timeout time.Duration
	// Workers is the number of goroutines scanning in parallel (default
	// GOMAXPROCS).
	Workers int

	// NoRewrites, NoPushdown and NoIndex turn optimisations off; the zero
	// value runs them all. Each changes how a query runs, never its rows
	// (only their order where the query leaves it open): the metamorphic
	// tests (query/sqlcheck) check exactly that.
	//
	// NoRewrites skips constant folding and the plan rewrites made for
	// speed: dropping sorts nothing observes, ORDER BY + LIMIT as top-K,
	// COUNT(*) from unit counts, aggregate arguments computed in scan
	// workers, CROSS JOIN UNNEST of an object as a presence filter.
	NoRewrites bool
	// NoPushdown keeps filters and limits where the query put them instead
	// of moving them down the plan and into scans (scan predicates, time
	// bounds, top-K and limits read by the scan).
	NoPushdown bool
	// NoIndex makes scans test every row of the blocks in their time range:
	// no index bitmaps, no block pruning by value ranges or dictionaries
	// (scan.Request.NoIndex).
	NoIndex bool

	ctx context.Context
}

// ErrTimeout is returned when a query runs past its deadline.
var ErrTimeout = errors.New("Query timed out. Retry your query or reduce the time range.")

// Result is a query's output: named columns of vectors, all of Len rows.
// Records (RowRef) are already materialised as JSON text.
type Result struct {
	Names []string
	Types []ColType
	Cols  []*vec.Vector
	Len   int
}

// Plan binds and optimises a validated query, for inspection. A panic
// while planning is returned as a *recovered.Error.
func Plan(q *parser.Query, cat Catalog, opts Options) (_ Node, err error) {
	defer recovered.Catch(&err)
	n, _, err := plan(q, cat, &opts)
	return n, err
}

// outColumn is one column of a query's result: the plan column, and for an
// array of records the index of the element child that carries each whole
// element as JSON text (-1 otherwise).
type outColumn struct {
	Column
	wholeElem int
}

func plan(q *parser.Query, cat Catalog, opts *Options) (Node, []outColumn, error) {
	if opts.Now.IsZero() {
		opts.Now = time.Now()
	}
	b := &binder{cat: cat, params: opts.Params, now: opts.Now}
	n, err := b.bindQuery(q, nil)
	if err != nil {
		return nil, nil, err
	}
	if opts.MaxRows > 0 {
		n = &LimitNode{In: n, Count: int64(opts.MaxRows)}
	}
	cols := n.Cols()
	needed := make([]ColID, len(cols))
	out := make([]outColumn, len(cols))
	for i, c := range cols {
		needed[i] = c.ID
		out[i] = outColumn{Column: c, wholeElem: -1}
		if c.T.V == vec.List && c.T.Elem == vec.Unknown {
			// An array of records in the result: its elements are written
			// whole, so the scan must read them whole.
			if s, ci := traceScanCol(n, c.ID); s != nil {
				out[i].wholeElem = wholeElemChild(&s.req.Columns[ci])
			}
		}
	}
	n, err = optimize(n, opts, needed)
	if err != nil {
		return nil, nil, err
	}
	return n, out, nil
}

// Run executes a validated query against cat. A panic while planning or
// running it, on this goroutine or a scan worker, fails the query alone:
// it is returned as a *recovered.Error carrying the stack.
func Run(ctx context.Context, q *parser.Query, cat Catalog, opts Options) (_ *Result, err error) {
	defer recovered.Catch(&err)
	if opts.Timeout <= 0 {
		opts.Timeout = 60 * time.Second
	}
	if opts.MemoryLimit <= 0 {
		opts.MemoryLimit = 1 << 30
	}
	if opts.Workers <= 0 {
		opts.Workers = runtime.GOMAXPROCS(0)
	}
	ctx, cancel := context.WithTimeout(ctx, opts.Timeout)
	defer cancel()
	opts.ctx = ctx
	n, cols, err := plan(q, cat, &opts)
	if err != nil {
		return nil, err
	}
	qr := &queryRun{opts: &opts, memLimit: opts.MemoryLimit, workers: opts.Workers, cancel: cancel}
	defer qr.closeScans()
	res, err := qr.run(ctx, n, cols)
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) || ctx.Err() == context.DeadlineExceeded {
			return nil, ErrTimeout
		}
		return nil, err
	}
	return res, nil
}

func (q *queryRun) run(ctx context.Context, n Node, outCols []outColumn) (*Result, error) {
	cols := make([]Column, len(outCols))
	for i, c := range outCols {
		cols[i] = c.Column
	}
	ec := q.newEvalCtx(ctx)
	op, err := q.build(n)
	if err != nil {
		return nil, err
	}
	defer op.close()
	var batches []*vec.Batch
	total := 0
	for {
		b, err := op.next(ec)
		if err != nil {
			return nil, err
		}
		if b == nil {
			break
		}
		if b.Rows() == 0 {
			continue
		}
		if err := q.reserve(batchBytes(b)); err != nil {
			return nil, err
		}
		batches = append(batches, b)
		total += b.Rows()
		if q.opts.MaxRows > 0 && total >= q.opts.MaxRows {
			break
		}
	}
	out := concatBatches(batches, cols)
	if q.opts.MaxRows > 0 && out.Len > q.opts.MaxRows {
		out = truncateBatch(out, q.opts.MaxRows)
	}
	res := &Result{Len: out.Len}
	for i, c := range cols {
		v := out.Cols[i]
		if c.T.V == vec.RowRef {
			js := make([]string, out.Len)
			var refs []int64
			var at []int
			for r := 0; r < out.Len; r++ {
				if !v.IsNull(r) {
					refs = append(refs, v.Ints[r])
					at = append(at, r)
				}
			}
			txt := make([]string, len(refs))
			if err := q.materialize(ctx, refs, !c.T.Single, txt); err != nil {
				return nil, err
			}
			for k, r := range at {
				js[r] = txt[k]
			}
			v = &vec.Vector{Type: vec.JSON, Len: out.Len, Strs: js, Nulls: v.Nulls}
		}
		if k := outCols[i].wholeElem; k >= 0 && v.Type == vec.List && v.Elem != nil && v.Elem.Type == vec.Struct && k < len(v.Elem.Children) {
			// An array of records: each element as its JSON text.
			v = &vec.Vector{Type: vec.List, Len: v.Len, Nulls: v.Nulls, Offsets: v.Offsets, Elem: v.Elem.Children[k], Const: v.Const}
		}
		res.Names = append(res.Names, c.Name)
		res.Types = append(res.Types, c.T)
		res.Cols = append(res.Cols, v)
	}
	return res, nil
}

func truncateBatch(b *vec.Batch, n int) *vec.Batch {
	rows := allRows(n)
	out := &vec.Batch{Len: n}
	for _, c := range b.Cols {
		out.Cols = append(out.Cols, gather(c, rows))
	}
	return out
}

// Columns of a source table are read through scan.Table; this assertion
// documents the dependency.
var _ scan.Table = scan.Table(nil)
