package sql

import (
	"encoding/binary"
	"math"
	"unsafe"

	"github.com/sediment/sediment/internal/vec"
)

// joinOp joins its left input with the materialised right input: a hash
// join on equality keys when the condition has them, else a nested loop.
// It holds the right side and its hash table (charged to the query) and
// the left batch it probes (in flight); the joined rows are produced a
// chunk at a time, so a join whose output is far larger than its inputs streams
// (a COUNT(*) over a cross join never holds more than a chunk), and the
// query's context is checked before every chunk.
type joinOp struct {
	q     *queryRun
	n     *JoinNode
	left  operator
	right operator

	lkeys, rkeys []evaluator
	ktypes       []vec.Type
	cond         evaluator // residual condition over the joined layout

	mem   memAccount
	dicts dictSet
	built bool
	rb    *vec.Batch // all right rows, compacted
	// The hash table: table maps an encoded key to its entry e, whose
	// right rows are first[e], chain[first[e]], ... (-1 ends), count[e] of
	// them; last[e] is the latest, where the build appends.
	table              *strTable
	first, last, count []int32
	chain              []int32
	rwidth             int
	// countOnly: no column of either side is read after the join and
	// nothing is left to test, so only the number of joined rows matters.
	countOnly bool

	// The probe: the left batch being joined, its live rows and key
	// values, the position in them, and the next match of the current
	// left row (mposStart: not looked up yet).
	lb       *vec.Batch
	lrows    []int32
	lkv      []*vec.Vector
	li       int
	mpos     int32
	lmatched bool // a LEFT join's current row already had a match pass cond
	carry    bool // the previous chunk ended inside the current row's matches
	buf      []byte
	pl, pr   []int32 // pair scratch
}

// mposStart marks a left row whose matches are not looked up yet.
const mposStart = -2

func (q *queryRun) buildJoin(n *JoinNode) (operator, error) {
	l, err := q.build(n.Left)
	if err != nil {
		return nil, err
	}
	r, err := q.build(n.Right)
	if err != nil {
		l.close()
		return nil, err
	}
	o, err := newJoinOp(q, n, l, r)
	if err != nil {
		l.close()
		r.close()
		return nil, err
	}
	return o, nil
}

// newJoinOp compiles a join of the operators l and r.
func newJoinOp(q *queryRun, n *JoinNode, l, r operator) (*joinOp, error) {
	o := &joinOp{q: q, n: n, left: l, right: r, rwidth: len(n.Right.Cols()), mpos: mposStart}
	llay, rlay := layoutOf(n.Left.Cols()), layoutOf(n.Right.Cols())
	var residual []Expr
	if n.Cond != nil {
		for _, c := range conjuncts(n.Cond) {
			if lk, rk, ok := equiPair(c, llay, rlay); ok {
				le, err := compile(lk, llay)
				if err != nil {
					return nil, err
				}
				re, err := compile(rk, rlay)
				if err != nil {
					return nil, err
				}
				o.lkeys = append(o.lkeys, le)
				o.rkeys = append(o.rkeys, re)
				t := lk.Type().V
				if lk.Type().V != rk.Type().V {
					t = vec.Float64
				}
				o.ktypes = append(o.ktypes, t)
				continue
			}
			residual = append(residual, c)
		}
	}
	if len(residual) > 0 {
		ev, err := compile(andOf(residual), layoutOf(n.Cols()))
		if err != nil {
			return nil, err
		}
		o.cond = ev
	}
	o.countOnly = o.cond == nil && len(n.Cols()) == 0
	return o, nil
}

// equiPair recognises `left expr = right expr` over one side each.
func equiPair(c Expr, llay, rlay layout) (Expr, Expr, bool) {
	call, ok := c.(*Call)
	if !ok || call.Name != "=" || len(call.Args) != 2 {
		return nil, nil, false
	}
	a, b := call.Args[0], call.Args[1]
	side := func(e Expr) int { // 1 left, 2 right, 0 none/both
		refs := map[ColID]bool{}
		colRefs(e, refs)
		s := 0
		for id := range refs {
			_, inL := llay[id]
			_, inR := rlay[id]
			switch {
			case inL && s != 2:
				s = 1
			case inR && s != 1:
				s = 2
			default:
				return 0
			}
		}
		return s
	}
	okType := func(t vec.Type) bool {
		switch t {
		case vec.Int64, vec.Float64, vec.String, vec.Timestamp, vec.Datetime, vec.Date, vec.Bool:
			return true
		}
		return false
	}
	ta, tb := a.Type().V, b.Type().V
	if !okType(ta) || !okType(tb) || (ta != tb && !(ta.IsNumeric() && tb.IsNumeric())) {
		return nil, nil, false
	}
	switch {
	case side(a) == 1 && side(b) == 2:
		return a, b, true
	case side(a) == 2 && side(b) == 1:
		return b, a, true
	}
	return nil, nil, false
}

func conjuncts(e Expr) []Expr {
	if a, ok := e.(*AndExpr); ok {
		var out []Expr
		for _, x := range a.Args {
			out = append(out, conjuncts(x)...)
		}
		return out
	}
	return []Expr{e}
}

// keyBytes encodes a join key, numbers of mixed types as floats.
func keyBytes(buf []byte, vs []*vec.Vector, ts []vec.Type, i int) ([]byte, bool) {
	buf = buf[:0]
	for k, v := range vs {
		if v.IsNull(i) {
			return nil, false // NULL never equals
		}
		if ts[k] == vec.Float64 && v.Type == vec.Int64 {
			// As appendKey writes a FLOAT64 (an integer is never -0).
			buf = append(buf, 1)
			buf = binary.LittleEndian.AppendUint64(buf, math.Float64bits(float64(v.IntAt(i))))
			continue
		}
		buf = appendKey(buf, v, i, ts[k])
	}
	return buf, true
}

func (o *joinOp) build(ec *evalCtx) error {
	o.mem = o.q.account()
	o.dicts = dictSet{}
	batches, err := drain(ec, o.right, &o.mem, o.dicts)
	if err != nil {
		return err
	}
	drained := o.mem.n
	o.rb = concatBatches(batches, o.n.Right.Cols())
	rbBytes := batchBytes(o.rb, dictSet{})
	if err := o.mem.grow(rbBytes); err != nil {
		return err
	}
	o.mem.shrink(drained) // the drained batches are garbage now
	batches = nil
	if len(o.rkeys) > 0 {
		kv := make([]*vec.Vector, len(o.rkeys))
		for i, k := range o.rkeys {
			v, err := k(ec, o.rb, nil)
			if err != nil {
				return err
			}
			kv[i] = v
		}
		o.table = newStrTable()
		o.chain = make([]int32, o.rb.Len)
		var buf []byte
		for r := 0; r < o.rb.Len; r++ {
			if r&(joinChunk-1) == 0 {
				if err := ec.ctx.Err(); err != nil {
					return err
				}
				if err := o.mem.resize(rbBytes + o.tableBytes()); err != nil {
					return err
				}
			}
			o.chain[r] = -1
			b, ok := keyBytes(buf, kv, o.ktypes, r)
			if !ok {
				continue
			}
			buf = b
			e := o.table.lookup(unsafe.String(unsafe.SliceData(b), len(b)), func() int32 {
				o.first = append(o.first, int32(r))
				o.last = append(o.last, -1)
				o.count = append(o.count, 0)
				return int32(len(o.first) - 1)
			})
			if l := o.last[e]; l >= 0 {
				o.chain[l] = int32(r)
			}
			o.last[e] = int32(r)
			o.count[e]++
		}
		o.last = nil
		if err := o.mem.resize(rbBytes + o.tableBytes()); err != nil {
			return err
		}
	}
	return nil
}

// tableBytes is the heap of the hash table.
func (o *joinOp) tableBytes() int64 {
	return o.table.bytes() + int64(cap(o.first)+cap(o.last)+cap(o.count)+cap(o.chain))*4
}

// concatBatches copies batches into one compact batch.
func concatBatches(bs []*vec.Batch, cols []Column) *vec.Batch {
	n := 0
	for _, b := range bs {
		n += b.Rows()
	}
	out := &vec.Batch{Len: n, Cols: make([]*vec.Vector, len(cols))}
	for c, col := range cols {
		if col.T.V == vec.List {
			lb := newListBuilder(col.T, n)
			k := 0
			for _, b := range bs {
				b.ForEach(func(i int) {
					lb.copyFrom(k, b.Cols[c], i)
					k++
				})
			}
			out.Cols[c] = lb.finish()
			continue
		}
		v := newVector(col.T, n)
		k := 0
		for _, b := range bs {
			b.ForEach(func(i int) {
				copyValue(v, k, b.Cols[c], i)
				k++
			})
		}
		out.Cols[c] = v
	}
	return out
}

// joinChunk is the most joined rows built at once (a power of two).
const joinChunk = 8192

// countChunk is about the most rows of a count-only join's batches, which
// carry no columns (as many as a scan's largest batch, which consumers are
// sized for).
const countChunk = 1 << 16

func (o *joinOp) next(ec *evalCtx) (*vec.Batch, error) {
	if !o.built {
		o.built = true
		if err := o.build(ec); err != nil {
			return nil, err
		}
	}
	for {
		if err := ec.ctx.Err(); err != nil {
			return nil, err
		}
		if o.lb == nil {
			lb, err := o.left.next(ec)
			if err != nil || lb == nil {
				return nil, err
			}
			if lb.Rows() == 0 {
				continue
			}
			if err := o.startLeft(ec, compact(lb)); err != nil {
				return nil, err
			}
		}
		var out *vec.Batch
		var err error
		if o.countOnly {
			out = o.countStep()
		} else {
			out, err = o.step(ec)
		}
		if err != nil {
			return nil, err
		}
		if out != nil && out.Rows() > 0 {
			return out, nil
		}
	}
}

// startLeft makes lb the batch being probed.
func (o *joinOp) startLeft(ec *evalCtx, lb *vec.Batch) error {
	o.lb, o.lrows, o.li, o.mpos, o.carry = lb, rowsOf(lb.Sel, lb.Len), 0, mposStart, false
	o.lkv = o.lkv[:0]
	if o.table != nil {
		for _, k := range o.lkeys {
			v, err := k(ec, lb, lb.Sel)
			if err != nil {
				return err
			}
			o.lkv = append(o.lkv, v)
		}
	}
	return nil
}

// firstMatch is left row l's first right row, or -1.
func (o *joinOp) firstMatch(l int32) int32 {
	if len(o.rkeys) == 0 {
		if o.rb.Len == 0 {
			return -1
		}
		return 0
	}
	if e := o.entry(l); e >= 0 {
		return o.first[e]
	}
	return -1
}

// entry is the hash table entry of left row l's key (-1: none).
func (o *joinOp) entry(l int32) int32 {
	if o.table == nil {
		return -1
	}
	b, ok := keyBytes(o.buf, o.lkv, o.ktypes, int(l))
	if !ok {
		return -1
	}
	o.buf = b
	e, found := o.table.find(unsafe.String(unsafe.SliceData(b), len(b)))
	if !found {
		return -1
	}
	return e
}

// nextMatch is the right row after r among the current row's matches.
func (o *joinOp) nextMatch(r int32) int32 {
	if len(o.rkeys) == 0 {
		if int(r)+1 < o.rb.Len {
			return r + 1
		}
		return -1
	}
	return o.chain[r]
}

// countStep is a count-only join's next batch: rows and no columns.
func (o *joinOp) countStep() *vec.Batch {
	n := 0
	for o.li < len(o.lrows) && n < countChunk {
		l := o.lrows[o.li]
		o.li++
		m := 0
		if len(o.rkeys) == 0 {
			m = o.rb.Len
		} else if e := o.entry(l); e >= 0 {
			m = int(o.count[e])
		}
		if m == 0 && o.n.Kind == JoinLeft {
			m = 1
		}
		n += m
	}
	if o.li >= len(o.lrows) {
		o.lb = nil
	}
	return &vec.Batch{Len: n}
}

// step joins the next chunk of the current left batch.
func (o *joinOp) step(ec *evalCtx) (*vec.Batch, error) {
	pl, pr := o.pl[:0], o.pr[:0]
	carried, carriedMatched := o.carry, o.lmatched
	for o.li < len(o.lrows) && len(pl) < joinChunk {
		l := o.lrows[o.li]
		if o.mpos == mposStart {
			o.mpos = o.firstMatch(l)
			if o.mpos < 0 {
				if o.n.Kind == JoinLeft {
					pl, pr = append(pl, l), append(pr, -1)
				}
				o.li++
				o.mpos = mposStart
				continue
			}
		}
		for o.mpos >= 0 && len(pl) < joinChunk {
			pl, pr = append(pl, l), append(pr, o.mpos)
			o.mpos = o.nextMatch(o.mpos)
		}
		if o.mpos < 0 {
			o.li++
			o.mpos = mposStart
		}
	}
	// The chunk may end inside a row's matches: a LEFT join with a
	// condition then decides on that row in a later chunk.
	o.carry = o.mpos >= 0
	lb := o.lb
	if o.li >= len(o.lrows) {
		o.lb = nil
	}
	o.pl, o.pr = pl, pr
	if len(pl) == 0 {
		return nil, nil
	}
	out := o.joined(lb, pl, pr)
	if o.cond == nil {
		return out, nil
	}
	return o.filter(ec, lb, out, pl, pr, carried, carriedMatched)
}

// joined builds the rows of pairs (left row, right row; -1 is NULLs).
func (o *joinOp) joined(lb *vec.Batch, l, r []int32) *vec.Batch {
	out := &vec.Batch{Len: len(l), Cols: make([]*vec.Vector, 0, len(lb.Cols)+o.rwidth)}
	for _, c := range lb.Cols {
		out.Cols = append(out.Cols, gather(c, l))
	}
	for c := 0; c < o.rwidth; c++ {
		rc := o.rb.Cols[c]
		if rc.Type == vec.List {
			lbld := newListBuilder(ColType{V: vec.List, Elem: elemType(rc)}, len(r))
			for k, x := range r {
				if x < 0 {
					lbld.null(k)
				} else {
					lbld.copyFrom(k, rc, int(x))
				}
			}
			out.Cols = append(out.Cols, lbld.finish())
			continue
		}
		out.Cols = append(out.Cols, gatherOpt(rc, r, ColType{V: rc.Type}))
	}
	return out
}

// filter applies the residual condition to joined rows; a LEFT join adds,
// after them, a NULL-extended row for each left row finished in this chunk
// none of whose matches passed. carried says the chunk's first row began in
// the previous chunk, carriedMatched whether a match of it passed there.
func (o *joinOp) filter(ec *evalCtx, lb, out *vec.Batch, pl, pr []int32, carried, carriedMatched bool) (*vec.Batch, error) {
	var sel []int32
	for k, r := range pr {
		if r >= 0 {
			sel = append(sel, int32(k))
		}
	}
	v, err := o.cond(ec, out, sel)
	if err != nil {
		return nil, err
	}
	var keep []int32
	var unmatched []int32
	cur, curMatched := int32(-1), false
	finishRow := func() {
		if cur >= 0 && !curMatched && o.n.Kind == JoinLeft {
			unmatched = append(unmatched, cur)
		}
	}
	for k, l := range pl {
		if l != cur || k == 0 {
			if k > 0 {
				finishRow()
			}
			cur, curMatched = l, k == 0 && carried && carriedMatched
		}
		if pr[k] >= 0 && !v.IsNull(k) && v.BoolAt(k) {
			keep = append(keep, int32(k))
			curMatched = true
		}
	}
	if o.carry {
		o.lmatched = curMatched // the last row goes on in the next chunk
	} else {
		finishRow()
		o.lmatched = false
	}
	if len(unmatched) == 0 {
		if len(keep) == 0 {
			return nil, nil
		}
		return &vec.Batch{Len: out.Len, Sel: keep, Cols: out.Cols}, nil
	}
	kl := make([]int32, 0, len(keep)+len(unmatched))
	kr := make([]int32, 0, len(keep)+len(unmatched))
	for _, k := range keep {
		kl, kr = append(kl, pl[k]), append(kr, pr[k])
	}
	for _, l := range unmatched {
		kl, kr = append(kl, l), append(kr, -1)
	}
	return o.joined(lb, kl, kr), nil
}

func elemType(v *vec.Vector) vec.Type {
	if v.Elem == nil {
		return vec.Unknown
	}
	return v.Elem.Type
}

func (o *joinOp) close() {
	o.left.close()
	o.right.close()
	o.rb, o.table, o.first, o.count, o.chain, o.lb = nil, nil, nil, nil, nil, nil
	o.mem.clear()
}
