package sql

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/sediment/sediment/internal/vec"
	"github.com/sediment/sediment/sql/fn"
	"github.com/sediment/sediment/sql/scan"
)

// operator is a physical operator: Next returns batches until nil.
type operator interface {
	next(ec *evalCtx) (*vec.Batch, error)
	close()
}

// queryRun holds what one execution needs: opened scans, the record
// sources RowRefs point into, memory accounting.
type queryRun struct {
	opts    *Options
	scansMu sync.Mutex
	scans   []scan.Scan
	recs    []recordSource
	mem     queryMemory
	workers int
	cancel  context.CancelFunc
}

// recordSource is where the records of a RowRef column live.
type recordSource struct {
	sc   scan.Scan
	path string
}

// RowRefs carry the record source in their top bits: a flag (bit 62) that
// the value is one STRUCT (an unnested record, written as an object) rather
// than the REPEATED RECORD column itself (written as a one-element array),
// the source (14 bits), the part (16 bits) and the row (32 bits).
const (
	refSourceShift   = 48
	refSourceMask    = 1<<14 - 1
	refPartMask      = 1<<48 - 1
	refSingleBit     = 1 << 62
	maxRecordSources = refSourceMask + 1
)

func (q *queryRun) addRecordSource(sc scan.Scan, path string) (int64, error) {
	q.scansMu.Lock()
	defer q.scansMu.Unlock()
	if len(q.recs) >= maxRecordSources {
		return 0, errors.New("query reads records from too many scans")
	}
	q.recs = append(q.recs, recordSource{sc: sc, path: path})
	return int64(len(q.recs) - 1), nil
}

// reserve charges n bytes to the query for as long as the query runs;
// operators that let go of what they hold charge through an account.
func (q *queryRun) reserve(n int64) error { return q.mem.reserve(n) }

// account returns an empty account of the query's memory.
func (q *queryRun) account() memAccount { return memAccount{q: &q.mem} }

// materialize writes the JSON of records (RowRefs from any source).
func (q *queryRun) materialize(ctx context.Context, refs []int64, asArray bool, dst []string) error {
	type group struct {
		src    int64
		single bool
	}
	bySrc := map[group][]int{}
	for i, r := range refs {
		g := group{src: r >> refSourceShift & refSourceMask, single: r&refSingleBit != 0}
		bySrc[g] = append(bySrc[g], i)
	}
	for g, idx := range bySrc {
		if r := refs[idx[0]]; r < 0 || int(g.src) >= len(q.recs) {
			return fmt.Errorf("internal: bad record reference")
		}
		rs := q.recs[g.src]
		local := make([]int64, len(idx))
		for k, i := range idx {
			local[k] = refs[i] & refPartMask
		}
		out := make([]string, len(idx))
		if err := rs.sc.Materialize(ctx, rs.path, asArray && !g.single, local, out); err != nil {
			return err
		}
		for k, i := range idx {
			dst[i] = out[k]
		}
	}
	return nil
}

func (q *queryRun) closeScans() {
	q.scansMu.Lock()
	defer q.scansMu.Unlock()
	for _, s := range q.scans {
		s.Close()
	}
	q.scans = nil
}

// runSubquery runs an uncorrelated subquery and returns its first column.
// The result is charged to the query for as long as it runs.
func (q *queryRun) runSubquery(ec *evalCtx, s *subqueryExpr) (*vec.Vector, error) {
	op, err := q.build(s.plan)
	if err != nil {
		return nil, err
	}
	defer op.close()
	t := s.plan.Cols()
	var ct ColType
	if len(t) > 0 {
		ct = t[0].T
	}
	var rows []*vec.Vector
	var held int64 // the first columns of rows, charged
	defer func() { q.mem.release(held) }()
	n := 0
	for {
		if err := ec.ctx.Err(); err != nil {
			return nil, err
		}
		b, err := op.next(ec)
		if err != nil {
			return nil, err
		}
		if b == nil {
			break
		}
		if s.kind == subExists && b.Rows() > 0 {
			return &vec.Vector{Type: vec.Bool, Len: 1, Bools: []bool{true}}, nil
		}
		if b.Rows() == 0 {
			continue
		}
		n += b.Rows()
		if s.kind == subScalar && n > 1 {
			return nil, fmt.Errorf("Scalar subquery produced more than one element")
		}
		if n > 1_000_000 {
			return nil, fmt.Errorf("Subquery returned more than 1000000 rows")
		}
		c := gatherSel(b.Cols[0], b)
		sz := vectorBytes(c, nil)
		if err := q.reserve(sz); err != nil {
			return nil, err
		}
		held += sz
		rows = append(rows, c)
	}
	if s.kind == subExists {
		return &vec.Vector{Type: vec.Bool, Len: 0}, nil
	}
	acc := newVector(ct, n)
	k := 0
	for _, c := range rows {
		for i := 0; i < c.Len; i++ {
			copyValue(acc, k, c, i)
			k++
		}
	}
	if err := q.reserve(vectorBytes(acc, nil)); err != nil {
		return nil, err
	}
	return acc, nil
}

// gatherSel returns the selected rows of column v of b as a dense vector.
func gatherSel(v *vec.Vector, b *vec.Batch) *vec.Vector {
	if b.Sel == nil {
		return v
	}
	return gather(v, b.Sel)
}

// ---------------------------------------------------------------------------
// Streaming operators. Each can also run as a stage inside scan workers.

// stage transforms the live rows of one batch, from the from-th on: it
// returns its output for some of them (nil: none) and the position to go
// on from, b.Rows() once every row is done. Filters and projections take
// every row at once; an UNNEST, whose output can be far larger than its
// input, about unnestChunk output rows at a time.
type stage func(ec *evalCtx, b *vec.Batch, from int) (*vec.Batch, int, error)

// whole makes a stage of a transformation that takes every row at once.
func whole(f func(ec *evalCtx, b *vec.Batch) (*vec.Batch, error)) stage {
	return func(ec *evalCtx, b *vec.Batch, _ int) (*vec.Batch, int, error) {
		out, err := f(ec, b)
		return out, b.Rows(), err
	}
}

// runStages runs b through stages, handing each non-empty output of the
// last to sink; the context is checked between parts of a batch.
func runStages(ec *evalCtx, stages []stage, b *vec.Batch, sink func(*vec.Batch) error) error {
	if len(stages) == 0 {
		if b.Rows() == 0 {
			return nil
		}
		return sink(b)
	}
	for from := 0; ; {
		out, next, err := stages[0](ec, b, from)
		if err != nil {
			return err
		}
		if out != nil {
			if err := runStages(ec, stages[1:], out, sink); err != nil {
				return err
			}
		}
		if next >= b.Rows() {
			return nil
		}
		if err := ec.ctx.Err(); err != nil {
			return err
		}
		from = next
	}
}

// stageOp runs a stage over its child's batches.
type stageOp struct {
	in operator
	fn stage
	// The batch being worked through, and the position in it.
	cur  *vec.Batch
	from int
}

func (o *stageOp) next(ec *evalCtx) (*vec.Batch, error) {
	for {
		if err := ec.ctx.Err(); err != nil {
			return nil, err
		}
		if o.cur == nil {
			b, err := o.in.next(ec)
			if err != nil || b == nil {
				return nil, err
			}
			o.cur, o.from = b, 0
		}
		out, next, err := o.fn(ec, o.cur, o.from)
		if err != nil {
			return nil, err
		}
		if next >= o.cur.Rows() {
			o.cur = nil
		} else {
			o.from = next
		}
		if out != nil && out.Rows() > 0 {
			return out, nil
		}
	}
}

func (o *stageOp) close() { o.in.close() }

func filterStage(cond evaluator) stage {
	return whole(func(ec *evalCtx, b *vec.Batch) (*vec.Batch, error) {
		if b.Rows() == 0 {
			return nil, nil
		}
		v, err := cond(ec, b, b.Sel)
		if err != nil {
			return nil, err
		}
		sel := make([]int32, 0, b.Rows())
		b.ForEach(func(i int) {
			if !v.IsNull(i) && v.BoolAt(i) {
				sel = append(sel, int32(i))
			}
		})
		if len(sel) == 0 {
			return nil, nil
		}
		return compact(&vec.Batch{Len: b.Len, Sel: sel, Cols: b.Cols}), nil
	})
}

// compact gathers the selected rows when few remain, so later operators
// do not carry dead rows.
func compact(b *vec.Batch) *vec.Batch {
	if b.Sel == nil || len(b.Sel)*4 > b.Len {
		return b
	}
	out := &vec.Batch{Len: len(b.Sel), Cols: make([]*vec.Vector, len(b.Cols))}
	for i, c := range b.Cols {
		out.Cols[i] = gather(c, b.Sel)
	}
	return out
}

// gather copies the listed rows of v into a new vector.
func gather(v *vec.Vector, rows []int32) *vec.Vector {
	n := len(rows)
	if v.Const {
		c := *v
		c.Len = n
		return &c
	}
	out := &vec.Vector{Type: v.Type, Len: n}
	if v.Nulls != nil {
		for i, r := range rows {
			if v.Nulls.Get(int(r)) {
				if out.Nulls == nil {
					out.Nulls = vec.NewBitset(n)
				}
				out.Nulls.Set(i)
			}
		}
	}
	switch {
	case v.Type == vec.List:
		out.Offsets = make([]int32, n+1)
		var idx []int32
		for i, r := range rows {
			for j := v.Offsets[r]; j < v.Offsets[r+1]; j++ {
				idx = append(idx, j)
			}
			out.Offsets[i+1] = int32(len(idx))
		}
		out.Elem = gather(v.Elem, idx)
	case v.Type == vec.Struct:
		out.Names = v.Names
		for _, ch := range v.Children {
			out.Children = append(out.Children, gather(ch, rows))
		}
	case v.Dict != nil:
		out.Dict = v.Dict
		out.Codes = make([]uint32, n)
		for i, r := range rows {
			out.Codes[i] = v.Codes[r]
		}
	case v.Bools != nil:
		out.Bools = make([]bool, n)
		for i, r := range rows {
			out.Bools[i] = v.Bools[r]
		}
	case v.Floats != nil:
		out.Floats = make([]float64, n)
		for i, r := range rows {
			out.Floats[i] = v.Floats[r]
		}
	case v.IsBytes():
		gatherBytes(out, v, rows)
	case v.Strs != nil:
		out.Strs = make([]string, n)
		for i, r := range rows {
			out.Strs[i] = v.Strs[r]
		}
	case v.Ints != nil:
		out.Ints = make([]int64, n)
		for i, r := range rows {
			out.Ints[i] = v.Ints[r]
		}
	}
	return out
}

func projectStage(evs []evaluator) stage {
	return whole(func(ec *evalCtx, b *vec.Batch) (*vec.Batch, error) {
		out := &vec.Batch{Len: b.Len, Sel: b.Sel, Cols: make([]*vec.Vector, len(evs))}
		for i, ev := range evs {
			v, err := ev(ec, b, b.Sel)
			if err != nil {
				return nil, err
			}
			out.Cols[i] = v
		}
		return out, nil
	})
}

// recordAliasStage appends the alias column (the same RowRefs as the
// source) and, for a cross join, drops rows whose record is absent.
func recordAliasStage(src int, outer bool) stage {
	return whole(func(ec *evalCtx, b *vec.Batch) (*vec.Batch, error) {
		v := b.Cols[src]
		out := &vec.Batch{Len: b.Len, Sel: b.Sel, Cols: append(append([]*vec.Vector(nil), b.Cols...), v)}
		if outer || v.Nulls == nil {
			return out, nil
		}
		sel := make([]int32, 0, b.Rows())
		b.ForEach(func(i int) {
			if !v.IsNull(i) {
				sel = append(sel, int32(i))
			}
		})
		if len(sel) == 0 {
			return nil, nil
		}
		out.Sel = sel
		return compact(out), nil
	})
}

// unnestChunk is about the most rows an UNNEST produces at once (more
// when one row alone has more elements).
const unnestChunk = 8192

// unnestStage expands each row into one row per element of its array, a
// chunk of at most unnestChunk output rows per call (a row with more
// elements than that is split over several). The array is evaluated once
// per input batch and charged to mem while the stage works through it (the
// stage, and mem, belong to one goroutine).
func unnestStage(n *UnnestNode, arr evaluator, inWidth int, mem memAccount) stage {
	var lastB *vec.Batch
	var av *vec.Vector
	// A row left half done: its position and the next element.
	resumeRow, resumeElem := -1, int32(0)
	return func(ec *evalCtx, b *vec.Batch, from int) (*vec.Batch, int, error) {
		if av == nil || b != lastB {
			v, err := arr(ec, b, b.Sel)
			if err != nil {
				return nil, 0, err
			}
			lastB, av, resumeRow = b, v, -1
			if err := mem.resize(vectorBytes(v, nil)); err != nil {
				return nil, 0, err
			}
		}
		rows := rowsOf(b.Sel, b.Len)
		var parent, elem []int32 // per output row: input row, element index (-1 none)
		next := from
		for ; next < len(rows) && len(parent) < unnestChunk; next++ {
			i := int(rows[next])
			ai := i
			if av.Const {
				ai = 0
			}
			if av.IsNull(i) || av.Elem == nil || av.Offsets[ai] == av.Offsets[ai+1] {
				if n.Outer {
					parent = append(parent, int32(i))
					elem = append(elem, -1)
				}
				continue
			}
			j, end := av.Offsets[ai], av.Offsets[ai+1]
			if next == resumeRow {
				j = resumeElem
			}
			for ; j < end && len(parent) < unnestChunk; j++ {
				parent = append(parent, int32(i))
				elem = append(elem, j)
			}
			if j < end {
				resumeRow, resumeElem = next, j // go on with this row
				break
			}
		}
		var out *vec.Batch
		if len(parent) > 0 {
			out = unnestRows(n, b, av, inWidth, parent, elem)
		}
		if next >= len(rows) {
			lastB, av = nil, nil // done with the batch: let it go
			mem.clear()
		}
		return out, next, nil
	}
}

// unnestRows builds an UNNEST's output rows: the parent's columns, the
// element, its offset and the fields of record elements.
func unnestRows(n *UnnestNode, b *vec.Batch, av *vec.Vector, inWidth int, parent, elem []int32) *vec.Batch {
	out := &vec.Batch{Len: len(parent)}
	for _, c := range b.Cols[:inWidth] {
		out.Cols = append(out.Cols, gather(c, parent))
	}
	elemVec := av.Elem
	if n.elemChild >= 0 && elemVec != nil && elemVec.Type == vec.Struct {
		elemVec = elemVec.Children[n.elemChild]
	}
	out.Cols = append(out.Cols, gatherOpt(elemVec, elem, n.Elem.T))
	if n.Offset != nil {
		ov := &vec.Vector{Type: vec.Int64, Len: len(parent), Ints: make([]int64, len(parent))}
		for k, j := range elem {
			if j < 0 {
				setNull(ov, k)
				continue
			}
			ai := parent[k]
			if av.Const {
				ai = 0
			}
			ov.Ints[k] = int64(j - av.Offsets[ai])
		}
		out.Cols = append(out.Cols, ov)
	}
	for _, f := range n.Fields {
		var src *vec.Vector
		if av.Elem != nil && av.Elem.Type == vec.Struct && f.child < len(av.Elem.Children) {
			src = av.Elem.Children[f.child]
		}
		out.Cols = append(out.Cols, gatherOpt(src, elem, f.col.T))
	}
	return out
}

// gatherOpt gathers rows where -1 means NULL.
func gatherOpt(v *vec.Vector, rows []int32, t ColType) *vec.Vector {
	n := len(rows)
	if v == nil {
		return allNullVector(t, n)
	}
	if v.Type == vec.Unknown {
		return allNullVector(t, n)
	}
	if v.Type == vec.List || v.Type == vec.Struct {
		cells := make([]cell, n)
		for i, r := range rows {
			cells[i] = cell{v, r}
		}
		return gatherCells(v.Type, cells)
	}
	out := newVector(ColType{V: v.Type}, n)
	for i, r := range rows {
		if r < 0 {
			setNull(out, i)
			continue
		}
		copyValue(out, i, v, int(r))
	}
	return out
}

// valuesOp produces one row with no columns.
type valuesOp struct{ done bool }

func (o *valuesOp) next(*evalCtx) (*vec.Batch, error) {
	if o.done {
		return nil, nil
	}
	o.done = true
	return &vec.Batch{Len: 1}, nil
}
func (o *valuesOp) close() {}

// limitOp skips offset rows and passes count rows.
type limitOp struct {
	in     operator
	count  int64 // < 0: no limit
	offset int64
	seen   int64
	closed bool
}

func (o *limitOp) next(ec *evalCtx) (*vec.Batch, error) {
	for {
		if o.count >= 0 && o.seen >= o.offset+o.count {
			// Release the input now: scans below stop reading units even
			// while the rest of the plan (a join, a union) goes on.
			o.close()
			return nil, nil
		}
		b, err := o.in.next(ec)
		if err != nil || b == nil {
			return nil, err
		}
		rows := rowsOf(b.Sel, b.Len)
		var keep []int32
		for _, r := range rows {
			if o.seen >= o.offset && (o.count < 0 || o.seen < o.offset+o.count) {
				keep = append(keep, r)
			}
			o.seen++
		}
		if len(keep) > 0 {
			return &vec.Batch{Len: b.Len, Sel: keep, Cols: b.Cols}, nil
		}
	}
}
func (o *limitOp) close() {
	if !o.closed {
		o.closed = true
		o.in.close()
	}
}

// unionOp concatenates its inputs, remapping columns.
type unionOp struct {
	ins  []operator
	maps [][]int // per input: output column → input position
	cur  int
}

func (o *unionOp) next(ec *evalCtx) (*vec.Batch, error) {
	for o.cur < len(o.ins) {
		if err := ec.ctx.Err(); err != nil {
			return nil, err
		}
		b, err := o.ins[o.cur].next(ec)
		if err != nil {
			return nil, err
		}
		if b == nil {
			o.cur++
			continue
		}
		out := &vec.Batch{Len: b.Len, Sel: b.Sel, Cols: make([]*vec.Vector, len(o.maps[o.cur]))}
		for i, p := range o.maps[o.cur] {
			out.Cols[i] = b.Cols[p]
		}
		return out, nil
	}
	return nil, nil
}

func (o *unionOp) close() {
	for _, in := range o.ins {
		in.close()
	}
}

// drain reads its input into memory (a join's build side), compacted and
// charged to acc.
func drain(ec *evalCtx, op operator, acc *memAccount, dicts dictSet) ([]*vec.Batch, error) {
	var out []*vec.Batch
	for {
		if err := ec.ctx.Err(); err != nil {
			return nil, err
		}
		b, err := op.next(ec)
		if err != nil {
			return nil, err
		}
		if b == nil {
			return out, nil
		}
		if b.Rows() == 0 {
			continue
		}
		b = compact(b)
		if err := acc.grow(batchBytes(b, dicts)); err != nil {
			return nil, err
		}
		out = append(out, b)
	}
}

// newEvalCtx makes the evaluation context of a run.
func (q *queryRun) newEvalCtx(ctx context.Context) *evalCtx {
	ec := &evalCtx{ctx: ctx, q: q}
	ec.fctx = &fn.EvalCtx{Ctx: ctx, Materialize: func(refs []int64, dst []string) error {
		return q.materialize(ctx, refs, true, dst)
	}}
	return ec
}

// gatherBytes copies rows of a Bytes+Offs vector into out, in that form:
// the bytes of the rows taken, and nothing that refers to v.
func gatherBytes(out, v *vec.Vector, rows []int32) {
	total := 0
	for _, r := range rows {
		total += int(v.Offs[r+1] - v.Offs[r])
	}
	out.Bytes = make([]byte, 0, total)
	out.Offs = make([]uint32, len(rows)+1)
	for i, r := range rows {
		out.Bytes = append(out.Bytes, v.Bytes[v.Offs[r]:v.Offs[r+1]]...)
		out.Offs[i+1] = uint32(len(out.Bytes))
	}
}
