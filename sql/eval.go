package sql

import (
	"context"
	"fmt"
	"math"
	"sync/atomic"

	"github.com/sediment/sediment/internal/vec"
	"github.com/sediment/sediment/sql/fn"
)

// evalCtx is shared by the evaluators of one query.
type evalCtx struct {
	ctx  context.Context
	fctx *fn.EvalCtx
	q    *queryRun
}

// evaluator computes an expression for the rows sel (nil = all) of a
// batch; the result has the batch's length.
type evaluator func(ec *evalCtx, b *vec.Batch, sel []int32) (*vec.Vector, error)

// layout maps column ids to their position in a node's batches.
type layout map[ColID]int

func layoutOf(cols []Column) layout {
	l := make(layout, len(cols))
	for i, c := range cols {
		l[c.ID] = i
	}
	return l
}

// identityRows holds 0, 1, 2, ...; allRows hands out prefixes of it.
var identityRows atomic.Pointer[[]int32]

// allRows returns the rows 0..n-1, read only (its capacity is n, so an
// append copies). Every evaluator without a selection asks for it, and a
// nested-loop join once per left row: the list is shared, not allocated.
func allRows(n int) []int32 {
	if p := identityRows.Load(); p != nil && len(*p) >= n {
		return (*p)[:n:n]
	}
	s := make([]int32, max(n, 8192))
	for i := range s {
		s[i] = int32(i)
	}
	identityRows.Store(&s)
	return s[:n:n]
}

// rowsOf returns the selected rows, or all n rows (read only).
func rowsOf(sel []int32, n int) []int32 {
	if sel == nil {
		return allRows(n)
	}
	return sel
}

// compile turns a bound expression into an evaluator over batches laid out
// as lay.
func compile(e Expr, lay layout) (evaluator, error) {
	switch e := e.(type) {
	case *ColRef:
		i, ok := lay[e.ID]
		if !ok {
			return nil, fmt.Errorf("internal: column %s not available here", e)
		}
		if e.T.V == vec.RowRef && e.T.Single {
			// An unnested record is one STRUCT: flag its references so that
			// wherever they go (function arguments, ANY_VALUE, ARRAY_AGG)
			// they are written as an object, not a one-element array.
			return func(_ *evalCtx, b *vec.Batch, _ []int32) (*vec.Vector, error) {
				return flagSingle(b.Cols[i]), nil
			}, nil
		}
		return func(_ *evalCtx, b *vec.Batch, _ []int32) (*vec.Vector, error) { return b.Cols[i], nil }, nil
	case *Literal:
		d := e.D
		return func(_ *evalCtx, b *vec.Batch, _ []int32) (*vec.Vector, error) { return constVector(d, b.Len), nil }, nil
	case *Call:
		args := make([]evaluator, len(e.Args))
		for i, a := range e.Args {
			if a == nil {
				continue
			}
			ev, err := compile(a, lay)
			if err != nil {
				return nil, err
			}
			args[i] = ev
		}
		f := e.F.Eval
		name := e.Name
		return func(ec *evalCtx, b *vec.Batch, sel []int32) (*vec.Vector, error) {
			vs := make([]*vec.Vector, len(args))
			for i, a := range args {
				if a == nil {
					continue
				}
				v, err := a(ec, b, sel)
				if err != nil {
					return nil, err
				}
				vs[i] = v
			}
			out, err := f(ec.fctx, vs, sel, b.Len)
			if err != nil {
				return nil, err
			}
			if out.Len != b.Len && !out.Const {
				return nil, fmt.Errorf("internal: %s returned %d rows for %d", name, out.Len, b.Len)
			}
			return out, nil
		}, nil
	case *AndExpr:
		return compileLogic(e.Args, lay, false)
	case *OrExpr:
		return compileLogic(e.Args, lay, true)
	case *NotExpr:
		x, err := compile(e.X, lay)
		if err != nil {
			return nil, err
		}
		return func(ec *evalCtx, b *vec.Batch, sel []int32) (*vec.Vector, error) {
			v, err := x(ec, b, sel)
			if err != nil {
				return nil, err
			}
			out := newVector(ColType{V: vec.Bool}, b.Len)
			for _, r := range rowsOf(sel, b.Len) {
				if v.IsNull(int(r)) {
					setNull(out, int(r))
				} else {
					out.Bools[r] = !v.BoolAt(int(r))
				}
			}
			return out, nil
		}, nil
	case *IsNullExpr:
		x, err := compile(e.X, lay)
		if err != nil {
			return nil, err
		}
		not := e.Not
		return func(ec *evalCtx, b *vec.Batch, sel []int32) (*vec.Vector, error) {
			v, err := x(ec, b, sel)
			if err != nil {
				return nil, err
			}
			out := newVector(ColType{V: vec.Bool}, b.Len)
			for _, r := range rowsOf(sel, b.Len) {
				out.Bools[r] = v.IsNull(int(r)) != not
			}
			return out, nil
		}, nil
	case *IsBoolExpr:
		x, err := compile(e.X, lay)
		if err != nil {
			return nil, err
		}
		val, not := e.Value, e.Not
		return func(ec *evalCtx, b *vec.Batch, sel []int32) (*vec.Vector, error) {
			v, err := x(ec, b, sel)
			if err != nil {
				return nil, err
			}
			out := newVector(ColType{V: vec.Bool}, b.Len)
			for _, r := range rowsOf(sel, b.Len) {
				is := !v.IsNull(int(r)) && v.BoolAt(int(r)) == val
				out.Bools[r] = is != not
			}
			return out, nil
		}, nil
	case *CaseExpr:
		return compileCase(e, lay)
	case *InExpr:
		return compileIn(e, lay)
	case *InArrayExpr:
		return compileInArray(e, lay)
	case *SubscriptExpr:
		return compileSubscript(e, lay)
	case *ListFieldExpr:
		arr, err := compile(e.Arr, lay)
		if err != nil {
			return nil, err
		}
		child := e.Child
		return func(ec *evalCtx, b *vec.Batch, sel []int32) (*vec.Vector, error) {
			v, err := arr(ec, b, sel)
			if err != nil {
				return nil, err
			}
			if v.Elem == nil || v.Elem.Type != vec.Struct || child >= len(v.Elem.Children) {
				return allNullVector(e.T, b.Len), nil
			}
			return &vec.Vector{Type: vec.List, Len: v.Len, Nulls: v.Nulls, Offsets: v.Offsets, Elem: v.Elem.Children[child], Const: v.Const}, nil
		}, nil
	case *ArrayExpr:
		return compileArray(e, lay)
	case *ExistsArrayExpr:
		return compileExistsArray(e, lay)
	case *subqueryExpr:
		return compileSubquery(e, lay)
	case *errorExpr:
		return func(_ *evalCtx, b *vec.Batch, sel []int32) (*vec.Vector, error) {
			if len(rowsOf(sel, b.Len)) == 0 {
				return allNullVector(e.T, b.Len), nil
			}
			return nil, e.err
		}, nil
	}
	return nil, fmt.Errorf("internal: cannot evaluate %T", e)
}

// compileLogic evaluates AND (or=false) / OR (or=true) lazily: each operand
// only for the rows the previous ones left undecided.
func compileLogic(args []Expr, lay layout, or bool) (evaluator, error) {
	evs := make([]evaluator, len(args))
	for i, a := range args {
		ev, err := compile(a, lay)
		if err != nil {
			return nil, err
		}
		evs[i] = ev
	}
	return func(ec *evalCtx, b *vec.Batch, sel []int32) (*vec.Vector, error) {
		out := newVector(ColType{V: vec.Bool}, b.Len)
		cur := rowsOf(sel, b.Len)
		var sawNull vec.Bitset
		for _, ev := range evs {
			if len(cur) == 0 {
				break
			}
			v, err := ev(ec, b, cur)
			if err != nil {
				return nil, err
			}
			next := cur[:0:0]
			for _, r := range cur {
				if v.IsNull(int(r)) {
					if sawNull == nil {
						sawNull = vec.NewBitset(b.Len)
					}
					sawNull.Set(int(r))
					next = append(next, r)
					continue
				}
				bv := v.BoolAt(int(r))
				if bv == or { // decided: FALSE for AND, TRUE for OR
					out.Bools[r] = or
					continue
				}
				next = append(next, r)
			}
			cur = next
		}
		for _, r := range cur {
			if sawNull != nil && sawNull.Get(int(r)) {
				setNull(out, int(r))
			} else {
				out.Bools[r] = !or
			}
		}
		return out, nil
	}, nil
}

func compileCase(e *CaseExpr, lay layout) (evaluator, error) {
	type arm struct{ cond, then evaluator }
	var arms []arm
	for _, w := range e.Whens {
		c, err := compile(w.Cond, lay)
		if err != nil {
			return nil, err
		}
		t, err := compile(w.Then, lay)
		if err != nil {
			return nil, err
		}
		arms = append(arms, arm{c, t})
	}
	var els evaluator
	if e.Else != nil {
		var err error
		if els, err = compile(e.Else, lay); err != nil {
			return nil, err
		}
	}
	t := e.T
	return func(ec *evalCtx, b *vec.Batch, sel []int32) (*vec.Vector, error) {
		out := newVector(t, b.Len)
		lb := newListBuilder(t, b.Len)
		rest := rowsOf(sel, b.Len)
		for _, a := range arms {
			if len(rest) == 0 {
				break
			}
			c, err := a.cond(ec, b, rest)
			if err != nil {
				return nil, err
			}
			var hit, miss []int32
			for _, r := range rest {
				if !c.IsNull(int(r)) && c.BoolAt(int(r)) {
					hit = append(hit, r)
				} else {
					miss = append(miss, r)
				}
			}
			if len(hit) > 0 {
				v, err := a.then(ec, b, hit)
				if err != nil {
					return nil, err
				}
				if err := copyRows(out, lb, v, hit, ec); err != nil {
					return nil, err
				}
			}
			rest = miss
		}
		if len(rest) > 0 {
			if els != nil {
				v, err := els(ec, b, rest)
				if err != nil {
					return nil, err
				}
				if err := copyRows(out, lb, v, rest, ec); err != nil {
					return nil, err
				}
			} else {
				for _, r := range rest {
					setNull(out, int(r))
					lb.null(int(r))
				}
			}
		}
		if t.V == vec.List {
			return lb.finish(), nil
		}
		return out, nil
	}, nil
}

func compileIn(e *InExpr, lay layout) (evaluator, error) {
	x, err := compile(e.X, lay)
	if err != nil {
		return nil, err
	}
	not := e.Not
	// Constant lists of strings or integers: a set lookup, once per
	// dictionary entry.
	allConst := true
	for _, it := range e.List {
		l, ok := it.(*Literal)
		if !ok || l.D.Null || l.D.Type != e.X.Type().V || (l.D.Type != vec.String && l.D.Type != vec.Int64) {
			allConst = false
		}
	}
	if allConst && (e.X.Type().V == vec.String || e.X.Type().V == vec.Int64) {
		strs := map[string]bool{}
		ints := map[int64]bool{}
		for _, it := range e.List {
			d := it.(*Literal).D
			strs[d.Str] = true
			ints[d.Int] = true
		}
		return func(ec *evalCtx, b *vec.Batch, sel []int32) (*vec.Vector, error) {
			v, err := x(ec, b, sel)
			if err != nil {
				return nil, err
			}
			out := newVector(ColType{V: vec.Bool}, b.Len)
			rows := rowsOf(sel, b.Len)
			if v.Type == vec.String && v.Dict != nil && !v.Const {
				ok := make([]bool, len(v.Dict))
				for c, s := range v.Dict {
					ok[c] = strs[s]
				}
				for _, r := range rows {
					if v.IsNull(int(r)) {
						setNull(out, int(r))
					} else {
						out.Bools[r] = ok[v.Codes[r]] != not
					}
				}
				return out, nil
			}
			for _, r := range rows {
				if v.IsNull(int(r)) {
					setNull(out, int(r))
				} else if v.Type == vec.String {
					out.Bools[r] = strs[v.StringAt(int(r))] != not
				} else {
					out.Bools[r] = ints[v.IntAt(int(r))] != not
				}
			}
			return out, nil
		}, nil
	}
	or, err := compileLogic(e.Eqs, lay, true)
	if err != nil {
		return nil, err
	}
	if !not {
		return or, nil
	}
	return func(ec *evalCtx, b *vec.Batch, sel []int32) (*vec.Vector, error) {
		v, err := or(ec, b, sel)
		if err != nil {
			return nil, err
		}
		for _, r := range rowsOf(sel, b.Len) {
			v.Bools[r] = !v.Bools[r]
		}
		return v, nil
	}, nil
}

// valueKey is a comparable representation of a scalar value.
type valueKey struct {
	t vec.Type
	i int64
	f float64
	s string
}

func keyOf(v *vec.Vector, i int) valueKey {
	switch v.Type {
	case vec.String, vec.JSON:
		return valueKey{t: vec.String, s: v.StringAt(i)}
	case vec.Float64:
		f := v.FloatAt(i)
		if f == math.Trunc(f) && math.Abs(f) < 1<<53 {
			return valueKey{t: vec.Int64, i: int64(f)}
		}
		return valueKey{t: vec.Float64, f: f}
	case vec.Bool:
		if v.BoolAt(i) {
			return valueKey{t: vec.Bool, i: 1}
		}
		return valueKey{t: vec.Bool}
	}
	return valueKey{t: vec.Int64, i: v.IntAt(i)}
}

func compileInArray(e *InArrayExpr, lay layout) (evaluator, error) {
	x, err := compile(e.X, lay)
	if err != nil {
		return nil, err
	}
	arr, err := compile(e.Arr, lay)
	if err != nil {
		return nil, err
	}
	not := e.Not
	return func(ec *evalCtx, b *vec.Batch, sel []int32) (*vec.Vector, error) {
		xv, err := x(ec, b, sel)
		if err != nil {
			return nil, err
		}
		av, err := arr(ec, b, sel)
		if err != nil {
			return nil, err
		}
		out := newVector(ColType{V: vec.Bool}, b.Len)
		for _, r := range rowsOf(sel, b.Len) {
			i := int(r)
			if xv.IsNull(i) || av.IsNull(i) || av.Elem == nil {
				if xv.IsNull(i) {
					setNull(out, i)
				} else {
					out.Bools[i] = not
				}
				continue
			}
			ai := i
			if av.Const {
				ai = 0
			}
			k := keyOf(xv, i)
			found, sawNull := false, false
			for j := av.Offsets[ai]; j < av.Offsets[ai+1]; j++ {
				if av.Elem.IsNull(int(j)) {
					sawNull = true
					continue
				}
				if keyOf(av.Elem, int(j)) == k {
					found = true
					break
				}
			}
			switch {
			case found:
				out.Bools[i] = !not
			case sawNull:
				setNull(out, i)
			default:
				out.Bools[i] = not
			}
		}
		return out, nil
	}, nil
}

func compileSubscript(e *SubscriptExpr, lay layout) (evaluator, error) {
	x, err := compile(e.X, lay)
	if err != nil {
		return nil, err
	}
	idx, err := compile(e.Index, lay)
	if err != nil {
		return nil, err
	}
	safe := e.Mode == subSafeOffset || e.Mode == subSafeOrdinal
	base := int64(0)
	if e.Mode == subOrdinal || e.Mode == subSafeOrdinal {
		base = 1
	}
	t := e.T
	return func(ec *evalCtx, b *vec.Batch, sel []int32) (*vec.Vector, error) {
		av, err := x(ec, b, sel)
		if err != nil {
			return nil, err
		}
		iv, err := idx(ec, b, sel)
		if err != nil {
			return nil, err
		}
		out := newVector(t, b.Len)
		for _, r := range rowsOf(sel, b.Len) {
			i := int(r)
			if av.IsNull(i) || iv.IsNull(i) || av.Elem == nil {
				setNull(out, i)
				continue
			}
			ai := i
			if av.Const {
				ai = 0
			}
			lo, hi := int64(av.Offsets[ai]), int64(av.Offsets[ai+1])
			k := iv.IntAt(i) - base
			if k < 0 || k >= hi-lo {
				if safe {
					setNull(out, i)
					continue
				}
				return nil, fmt.Errorf("Array index %d is out of bounds (overflow)", iv.IntAt(i))
			}
			copyValue(out, i, av.Elem, int(lo+k))
		}
		return out, nil
	}, nil
}

func compileArray(e *ArrayExpr, lay layout) (evaluator, error) {
	evs := make([]evaluator, len(e.Elems))
	for i, el := range e.Elems {
		ev, err := compile(el, lay)
		if err != nil {
			return nil, err
		}
		evs[i] = ev
	}
	et := ColType{V: e.T.Elem}
	return func(ec *evalCtx, b *vec.Batch, sel []int32) (*vec.Vector, error) {
		vals := make([]*vec.Vector, len(evs))
		for i, ev := range evs {
			v, err := ev(ec, b, sel)
			if err != nil {
				return nil, err
			}
			vals[i] = v
		}
		n := b.Len
		k := len(evs)
		elem := newVector(et, n*k)
		out := &vec.Vector{Type: vec.List, Len: n, Offsets: make([]int32, n+1), Elem: elem}
		for r := 0; r < n; r++ {
			for j, v := range vals {
				copyValue(elem, r*k+j, v, r)
			}
			out.Offsets[r+1] = int32((r + 1) * k)
		}
		return out, nil
	}, nil
}

func compileExistsArray(e *ExistsArrayExpr, lay layout) (evaluator, error) {
	arr, err := compile(e.Arr, lay)
	if err != nil {
		return nil, err
	}
	cond, err := compile(e.Cond, layout{e.Elem.ID: 0})
	if err != nil {
		return nil, err
	}
	return func(ec *evalCtx, b *vec.Batch, sel []int32) (*vec.Vector, error) {
		av, err := arr(ec, b, sel)
		if err != nil {
			return nil, err
		}
		out := newVector(ColType{V: vec.Bool}, b.Len)
		if av.Elem == nil || av.Elem.Len == 0 {
			return out, nil
		}
		eb := &vec.Batch{Len: av.Elem.Len, Cols: []*vec.Vector{av.Elem}}
		var esel []int32
		for _, r := range rowsOf(sel, b.Len) {
			if av.IsNull(int(r)) || av.Const {
				continue
			}
			for j := av.Offsets[r]; j < av.Offsets[r+1]; j++ {
				esel = append(esel, j)
			}
		}
		cv, err := cond(ec, eb, esel)
		if err != nil {
			return nil, err
		}
		for _, r := range rowsOf(sel, b.Len) {
			if av.IsNull(int(r)) || av.Const {
				continue
			}
			for j := av.Offsets[r]; j < av.Offsets[r+1]; j++ {
				if !cv.IsNull(int(j)) && cv.BoolAt(int(j)) {
					out.Bools[r] = true
					break
				}
			}
		}
		return out, nil
	}, nil
}

// ---------------------------------------------------------------------------
// Vector helpers

func newVector(t ColType, n int) *vec.Vector {
	v := &vec.Vector{Type: t.V, Len: n}
	switch {
	case t.V == vec.Bool:
		v.Bools = make([]bool, n)
	case t.V == vec.Float64:
		v.Floats = make([]float64, n)
	case t.V == vec.String || t.V == vec.JSON:
		v.Strs = make([]string, n)
	case t.V == vec.List:
		v.Offsets = make([]int32, n+1)
		v.Elem = newVector(ColType{V: t.Elem}, 0)
	case t.V == vec.Unknown:
		v.Nulls = vec.NewBitset(n)
		for i := 0; i < n; i++ {
			v.Nulls.Set(i)
		}
	default:
		v.Ints = make([]int64, n)
	}
	return v
}

func allNullVector(t ColType, n int) *vec.Vector {
	v := newVector(t, n)
	v.Nulls = vec.NewBitset(n)
	for i := 0; i < n; i++ {
		v.Nulls.Set(i)
	}
	return v
}

func setNull(v *vec.Vector, i int) {
	if v.Nulls == nil {
		v.Nulls = vec.NewBitset(v.Len)
	}
	v.Nulls.Set(i)
}

// constVector returns a constant vector for a datum.
func constVector(d fn.Datum, n int) *vec.Vector {
	if d.Null {
		t := d.Type
		v := allNullVector(ColType{V: t}, 1)
		v.Len, v.Const = n, true
		return v
	}
	switch d.Type {
	case vec.Bool:
		return vec.ConstBool(d.Bool, n)
	case vec.Float64:
		return vec.ConstFloat(d.Flt, n)
	case vec.String, vec.JSON:
		v := vec.ConstString(d.Str, n)
		v.Type = d.Type
		return v
	}
	return vec.ConstInt(d.Type, d.Int, n)
}

// copyValue copies row j of src into row i of dst (same type family).
func copyValue(dst *vec.Vector, i int, src *vec.Vector, j int) {
	if src.IsNull(j) {
		setNull(dst, i)
		return
	}
	switch dst.Type {
	case vec.Bool:
		dst.Bools[i] = src.BoolAt(j)
	case vec.Float64:
		if src.Type == vec.Int64 {
			dst.Floats[i] = float64(src.IntAt(j))
		} else {
			dst.Floats[i] = src.FloatAt(j)
		}
	case vec.String, vec.JSON:
		dst.Strs[i] = src.StringAt(j)
	case vec.Unknown:
	default:
		if src.Type == vec.Unknown {
			setNull(dst, i)
			return
		}
		dst.Ints[i] = src.IntAt(j)
	}
}

// copyRows copies the given rows of src into dst (or the list builder for
// ARRAY results).
func copyRows(dst *vec.Vector, lb *listBuilder, src *vec.Vector, rows []int32, _ *evalCtx) error {
	if dst.Type == vec.List {
		for _, r := range rows {
			lb.copyFrom(int(r), src, int(r))
		}
		return nil
	}
	for _, r := range rows {
		copyValue(dst, int(r), src, int(r))
	}
	return nil
}

// listBuilder assembles ARRAY results row by row from other list vectors.
type listBuilder struct {
	t     ColType
	n     int
	rows  []listPart
	nulls vec.Bitset
}

type listPart struct {
	src *vec.Vector
	row int
}

func newListBuilder(t ColType, n int) *listBuilder {
	if t.V != vec.List {
		return nil
	}
	return &listBuilder{t: t, n: n, rows: make([]listPart, n)}
}

func (lb *listBuilder) null(i int) {
	if lb == nil {
		return
	}
	if lb.nulls == nil {
		lb.nulls = vec.NewBitset(lb.n)
	}
	lb.nulls.Set(i)
}

func (lb *listBuilder) copyFrom(i int, src *vec.Vector, j int) {
	if src.IsNull(j) || src.Elem == nil {
		lb.null(i)
		return
	}
	if src.Const {
		j = 0
	}
	lb.rows[i] = listPart{src: src, row: j}
}

func (lb *listBuilder) finish() *vec.Vector {
	cells := make([]cell, lb.n)
	for i, p := range lb.rows {
		cells[i] = cell{p.src, int32(p.row)}
		if p.src == nil {
			cells[i].row = -1
		}
	}
	out := gatherListCells(cells, lb.t.Elem)
	// Rows never copied into stay empty arrays unless marked NULL.
	out.Nulls = lb.nulls
	return out
}

// flagSingle returns v (a RowRef vector) with every reference marked as
// one STRUCT value.
func flagSingle(v *vec.Vector) *vec.Vector {
	if len(v.Ints) == 0 || v.Ints[0]&refSingleBit != 0 {
		return v
	}
	out := *v
	out.Ints = make([]int64, len(v.Ints))
	for i, r := range v.Ints {
		out.Ints[i] = r | refSingleBit
	}
	return &out
}
