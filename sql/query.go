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
	// MemoryLimit bounds the bytes the query's operators hold at once
	// (default 1 GiB): a join's build side and hash table, a sort's rows,
	// an aggregation's groups, DISTINCT's keys, a window's partition,
	// subquery results and the result itself. Past it the query fails with
	// a *MemoryLimitError (errors.Is ErrMemoryLimit).
	MemoryLimit int64
	// MemoryLimitSetting names how an operator changes MemoryLimit (a flag
	// such as --query-memory), quoted in the error; "" quotes nothing.
	MemoryLimitSetting string
	// MemoryPool, when set, is the budget shared by every query given the
	// same pool: what the query holds is drawn from it, and a query the
	// pool cannot serve fails with a *MemoryLimitError naming the pool.
	// The result stays charged to the pool until Result.Release.
	MemoryPool *MemoryPool
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
	// PeakMemory is the most memory the query's operators held at once,
	// as charged against MemoryLimit.
	PeakMemory int64

	charge *resultCharge // what the pool still counts for the result
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
	qr := &queryRun{opts: &opts, workers: opts.Workers, cancel: cancel}
	qr.mem.limit, qr.mem.setting, qr.mem.pool = opts.MemoryLimit, opts.MemoryLimitSetting, opts.MemoryPool
	defer qr.mem.returnAll()
	defer qr.closeScans()
	res, err := qr.run(ctx, n, cols)
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) || ctx.Err() == context.DeadlineExceeded {
			return nil, ErrTimeout
		}
		if ctx.Err() != nil && !errors.Is(err, ErrMemoryLimit) {
			// Cancelled (the client went away, the server shuts down):
			// whatever an operator made of it, the cause is the context's.
			return nil, ctx.Err()
		}
		return nil, err
	}
	return res, nil
}

// run executes the plan and builds the result. The rows are charged to
// the query as they arrive, then as one compact result (and as much again
// for the caller's encoding of it), which stays charged to the pool after
// the query until Result.Release.
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
	acc := q.account()
	defer acc.clear()
	dicts := dictSet{}
	var batches []*vec.Batch
	total := 0
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
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
		if err := acc.grow(batchBytes(b, dicts)); err != nil {
			return nil, err
		}
		batches = append(batches, b)
		total += b.Rows()
		if q.opts.MaxRows > 0 && total >= q.opts.MaxRows {
			break
		}
	}
	op.close()
	out := concatBatches(batches, cols)
	if q.opts.MaxRows > 0 && out.Len > q.opts.MaxRows {
		out = truncateBatch(out, q.opts.MaxRows)
	}
	rows := q.account()
	defer rows.clear()
	if err := rows.grow(batchBytes(out, dictSet{})); err != nil {
		return nil, err
	}
	batches = nil
	acc.clear()
	res := &Result{Len: out.Len}
	for i, c := range cols {
		v := out.Cols[i]
		if c.T.V == vec.RowRef {
			var err error
			if v, err = q.recordsJSON(ctx, v, out.Len, !c.T.Single, &rows); err != nil {
				return nil, err
			}
		}
		if k := outCols[i].wholeElem; k >= 0 && v.Type == vec.List && v.Elem != nil && v.Elem.Type == vec.Struct && k < len(v.Elem.Children) {
			// An array of records: each element as its JSON text.
			v = &vec.Vector{Type: vec.List, Len: v.Len, Nulls: v.Nulls, Offsets: v.Offsets, Elem: v.Elem.Children[k], Const: v.Const}
		}
		res.Names = append(res.Names, c.Name)
		res.Types = append(res.Types, c.T)
		res.Cols = append(res.Cols, v)
	}
	// The caller encodes the result: about as many bytes again.
	if err := rows.grow(rows.n); err != nil {
		return nil, err
	}
	res.PeakMemory = q.mem.peak.Load()
	q.mem.keepCharged(res, rows.n)
	return res, nil
}

// recordsJSON materialises a RowRef column as JSON text, charging the text
// to acc as each chunk of records is written.
func (q *queryRun) recordsJSON(ctx context.Context, v *vec.Vector, n int, asArray bool, acc *memAccount) (*vec.Vector, error) {
	js := make([]string, n)
	if err := acc.grow(int64(n) * stringHeader); err != nil {
		return nil, err
	}
	const chunk = 4096
	refs := make([]int64, 0, chunk)
	at := make([]int, 0, chunk)
	txt := make([]string, chunk)
	flush := func() error {
		if len(refs) == 0 {
			return nil
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := q.materialize(ctx, refs, asArray, txt[:len(refs)]); err != nil {
			return err
		}
		var sz int64
		for k, r := range at {
			js[r] = txt[k]
			sz += int64(len(txt[k]))
		}
		refs, at = refs[:0], at[:0]
		return acc.grow(sz)
	}
	for r := 0; r < n; r++ {
		if v.IsNull(r) {
			continue
		}
		refs = append(refs, v.Ints[r])
		at = append(at, r)
		if len(refs) == chunk {
			if err := flush(); err != nil {
				return nil, err
			}
		}
	}
	if err := flush(); err != nil {
		return nil, err
	}
	return &vec.Vector{Type: vec.JSON, Len: n, Strs: js, Nulls: v.Nulls}, nil
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
