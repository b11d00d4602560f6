package sql

import (
	"github.com/sediment/sediment/internal/vec"
)

// joinOp joins its left input with the materialised right input: a hash
// join on equality keys when the condition has them, else a nested loop.
type joinOp struct {
	q     *queryRun
	n     *JoinNode
	left  operator
	right operator

	lkeys, rkeys []evaluator
	ktypes       []vec.Type
	cond         evaluator // residual condition over the joined layout

	built  bool
	rb     *vec.Batch // all right rows, compacted
	table  map[string][]int32
	rwidth int

	pending []*vec.Batch
}

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
	o := &joinOp{q: q, n: n, left: l, right: r, rwidth: len(n.Right.Cols())}
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
			f := &vec.Vector{Type: vec.Float64, Len: 1, Floats: []float64{float64(v.IntAt(i))}}
			buf = appendKey(buf, f, 0, vec.Float64)
			continue
		}
		buf = appendKey(buf, v, i, ts[k])
	}
	return buf, true
}

func (o *joinOp) build(ec *evalCtx) error {
	batches, err := drain(ec, o.right, o.q)
	if err != nil {
		return err
	}
	o.rb = concatBatches(batches, o.n.Right.Cols())
	if len(o.rkeys) > 0 {
		o.table = map[string][]int32{}
		kv := make([]*vec.Vector, len(o.rkeys))
		for i, k := range o.rkeys {
			v, err := k(ec, o.rb, nil)
			if err != nil {
				return err
			}
			kv[i] = v
		}
		var buf []byte
		for r := 0; r < o.rb.Len; r++ {
			b, ok := keyBytes(buf, kv, o.ktypes, r)
			buf = b
			if ok {
				o.table[string(b)] = append(o.table[string(b)], int32(r))
			}
		}
	}
	return nil
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

const joinChunk = 8192

func (o *joinOp) next(ec *evalCtx) (*vec.Batch, error) {
	if !o.built {
		o.built = true
		if err := o.build(ec); err != nil {
			return nil, err
		}
	}
	for {
		if len(o.pending) > 0 {
			b := o.pending[0]
			o.pending = o.pending[1:]
			return b, nil
		}
		lb, err := o.left.next(ec)
		if err != nil || lb == nil {
			return nil, err
		}
		if err := o.probe(ec, compact(lb)); err != nil {
			return nil, err
		}
	}
}

// probe joins one left batch, queueing output batches.
func (o *joinOp) probe(ec *evalCtx, lb *vec.Batch) error {
	var lrows, rrows []int32
	var kv []*vec.Vector
	if o.table != nil {
		kv = make([]*vec.Vector, len(o.lkeys))
		for i, k := range o.lkeys {
			v, err := k(ec, lb, lb.Sel)
			if err != nil {
				return err
			}
			kv[i] = v
		}
	}
	flush := func(final bool) error {
		if len(lrows) == 0 || (!final && len(lrows) < joinChunk) {
			return nil
		}
		out, err := o.emit(ec, lb, lrows, rrows)
		if err != nil {
			return err
		}
		if out != nil {
			o.pending = append(o.pending, out)
		}
		lrows, rrows = nil, nil
		return nil
	}
	var buf []byte
	var ferr error
	lb.ForEach(func(i int) {
		if ferr != nil {
			return
		}
		var matches []int32
		if o.table != nil {
			b, ok := keyBytes(buf, kv, o.ktypes, i)
			buf = b
			if ok {
				matches = o.table[string(b)]
			}
		} else {
			matches = allRows(o.rb.Len)
		}
		if len(matches) == 0 && o.n.Kind == JoinLeft {
			lrows = append(lrows, int32(i))
			rrows = append(rrows, -1)
		}
		for _, m := range matches {
			lrows = append(lrows, int32(i))
			rrows = append(rrows, m)
		}
		ferr = flush(false)
	})
	if ferr != nil {
		return ferr
	}
	return flush(true)
}

// emit builds the joined rows, applies the residual condition, and for a
// LEFT join re-adds left rows whose every match failed it.
func (o *joinOp) emit(ec *evalCtx, lb *vec.Batch, lrows, rrows []int32) (*vec.Batch, error) {
	build := func(l, r []int32) *vec.Batch {
		out := &vec.Batch{Len: len(l)}
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
	out := build(lrows, rrows)
	if o.cond == nil {
		return out, nil
	}
	var sel []int32
	for k, r := range rrows {
		if r >= 0 {
			sel = append(sel, int32(k))
		}
	}
	v, err := o.cond(ec, out, sel)
	if err != nil {
		return nil, err
	}
	var keepL, keepR []int32
	matched := map[int32]bool{}
	for k := range lrows {
		if rrows[k] < 0 {
			continue
		}
		if !v.IsNull(k) && v.BoolAt(k) {
			keepL = append(keepL, lrows[k])
			keepR = append(keepR, rrows[k])
			matched[lrows[k]] = true
		}
	}
	if o.n.Kind == JoinLeft {
		seen := map[int32]bool{}
		for _, l := range lrows {
			if !matched[l] && !seen[l] {
				seen[l] = true
				keepL = append(keepL, l)
				keepR = append(keepR, -1)
			}
		}
	}
	if len(keepL) == 0 {
		return nil, nil
	}
	return build(keepL, keepR), nil
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
}
