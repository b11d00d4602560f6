package sql

import (
	"fmt"
	"sync"

	"github.com/sediment/sediment/internal/vec"
	"github.com/sediment/sediment/sql/parser"
)

type subKind uint8

const (
	subScalar subKind = iota + 1
	subArray
	subSet
	subExists
)

// subqueryExpr is an uncorrelated subquery used as a value: run once per
// query, on first use.
type subqueryExpr struct {
	kind subKind
	plan Node
	t    ColType
	// IN (subquery):
	in  Expr
	not bool

	once sync.Once
	res  *vec.Vector // first column of the result
	err  error
	// IN (subquery): the result's values, and whether one was NULL.
	set     map[valueKey]bool
	sawNull bool
}

// run runs the subquery once; IN also builds its set of values, charged
// to the query.
func (e *subqueryExpr) run(ec *evalCtx) {
	e.res, e.err = ec.q.runSubquery(ec, e)
	if e.err != nil || e.kind != subSet {
		return
	}
	res := e.res
	var size int64
	e.set = make(map[valueKey]bool, res.Len)
	for i := 0; i < res.Len; i++ {
		if res.IsNull(i) {
			e.sawNull = true
			continue
		}
		k := keyOf(res, i)
		if !e.set[k] {
			e.set[k] = true
			size += setEntryBytes
		}
	}
	e.err = ec.q.reserve(size)
}

func (e *subqueryExpr) Type() ColType { return e.t }
func (e *subqueryExpr) String() string {
	return fmt.Sprintf("subquery%d(%p)", e.kind, e)
}

func (b *binder) bindSubquery(q *parser.Query, kind subKind, pos parser.Pos) (Expr, error) {
	saved := b.fromRoot
	n, err := b.bindQuery(q, nil)
	b.fromRoot = saved
	if err != nil {
		return nil, err
	}
	cols := n.Cols()
	if kind != subExists && len(cols) != 1 {
		return nil, errAt(pos, "Subquery must return exactly one column, it returns %d", len(cols))
	}
	s := &subqueryExpr{kind: kind, plan: n}
	switch kind {
	case subScalar:
		s.t = cols[0].T
	case subArray:
		s.t = ColType{V: vec.List, Elem: cols[0].T.V}
	default:
		s.t = ColType{V: vec.Bool}
	}
	return s, nil
}

// bindExists binds EXISTS(subquery). The form LQL uses for array fields,
// EXISTS(SELECT ... FROM UNNEST(<array of this row>) AS x WHERE <cond on
// x>), is evaluated per row; anything else must not read the outer query.
func (b *binder) bindExists(e *parser.Exists, sc *scope) (Expr, error) {
	if sel, ok := e.Query.Body.(*parser.Select); ok && e.Query.With == nil && len(sel.GroupBy) == 0 && sel.Having == nil {
		if u, ok := sel.From.(*parser.UnnestTable); ok {
			arr, err := b.bindExprWant(u.Expr, sc, wantContainer)
			if err == nil && (arr.Type().V == vec.List || arr.Type().V == vec.Unknown) {
				et := ColType{V: arr.Type().Elem}
				if et.V == vec.Unknown {
					et.V = vec.JSON
				}
				elem := b.newCol(aliasName(u.Alias, ""), et)
				if sel.Where == nil {
					return &ExistsArrayExpr{Arr: arr, Elem: elem, Cond: boolLit(true)}, nil
				}
				inner := &scope{vars: []*rangeVar{{name: elem.Name, kind: rvElem, elem: elem}}, clause: "WHERE"}
				cond, err := b.bindBoolExpr(sel.Where, inner)
				if err != nil {
					return nil, err
				}
				return &ExistsArrayExpr{Arr: arr, Elem: elem, Cond: cond}, nil
			}
		}
	}
	return b.bindSubquery(e.Query, subExists, e.At)
}

func compileSubquery(e *subqueryExpr, lay layout) (evaluator, error) {
	var in evaluator
	if e.in != nil {
		var err error
		if in, err = compile(e.in, lay); err != nil {
			return nil, err
		}
	}
	return func(ec *evalCtx, b *vec.Batch, sel []int32) (*vec.Vector, error) {
		e.once.Do(func() { e.run(ec) })
		if e.err != nil {
			return nil, e.err
		}
		res := e.res
		switch e.kind {
		case subScalar:
			if res.Len == 0 {
				return allNullVector(e.t, b.Len), nil
			}
			if res.Len > 1 {
				return nil, fmt.Errorf("Scalar subquery produced more than one element")
			}
			out := newVector(e.t, b.Len)
			for _, r := range rowsOf(sel, b.Len) {
				copyValue(out, int(r), res, 0)
			}
			return out, nil
		case subExists:
			return vec.ConstBool(res.Len > 0, b.Len), nil
		case subArray:
			out := &vec.Vector{Type: vec.List, Len: b.Len, Const: true, Offsets: []int32{0, int32(res.Len)}, Elem: res}
			return out, nil
		}
		// IN (subquery)
		x, err := in(ec, b, sel)
		if err != nil {
			return nil, err
		}
		set, sawNull := e.set, e.sawNull
		out := newVector(ColType{V: vec.Bool}, b.Len)
		for _, r := range rowsOf(sel, b.Len) {
			i := int(r)
			switch {
			case x.IsNull(i):
				setNull(out, i)
			case set[keyOf(x, i)]:
				out.Bools[i] = !e.not
			case sawNull:
				setNull(out, i)
			default:
				out.Bools[i] = e.not
			}
		}
		return out, nil
	}, nil
}
