package sql

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/sediment/sediment/internal/vec"
	"github.com/sediment/sediment/sql/fn"
	"github.com/sediment/sediment/sql/parser"
	"github.com/sediment/sediment/sql/scan"
)

// Catalog resolves source names to tables for one query. The engine gives
// each query a catalog that takes one snapshot per source, so that every
// reference to a source in the query sees the same data.
type Catalog interface {
	Table(name string) (scan.Table, error)
}

// QueryError is an error in a query that its author can fix: a name that
// does not resolve, a type mismatch, an unsupported construct. The message
// says what and where.
type QueryError struct {
	Msg string
	Pos parser.Pos
}

func (e *QueryError) Error() string {
	if e.Pos.Line > 0 {
		return fmt.Sprintf("%s at [%d:%d]", e.Msg, e.Pos.Line, e.Pos.Col)
	}
	return e.Msg
}

func errAt(pos parser.Pos, format string, args ...any) error {
	return &QueryError{Msg: fmt.Sprintf(format, args...), Pos: pos}
}

// binder turns a parsed query into a logical plan.
type binder struct {
	cat    Catalog
	params map[string]string
	now    time.Time
	nextID ColID
	// fromRoot is the FROM tree of the SELECT being bound: names of
	// records resolve through it.
	fromRoot Node
	// inCTE holds the CTEs whose bodies are being bound: a reference to
	// one of them from inside is recursion (WITH RECURSIVE), which this
	// engine does not run; bound blindly it never ends.
	inCTE map[*parser.CTE]bool
	// queries counts the query bodies bound: each reference to a CTE
	// binds its body again, so CTEs referring several times to the one
	// before grow the plan exponentially with the text (maxBoundQueries).
	queries int
}

// maxBoundQueries bounds the query bodies one statement may bind (CTE
// references count each time): far above what a real query has, far
// below what would take the binder's memory and time.
const maxBoundQueries = 10_000

func (b *binder) newCol(name string, t ColType) Column {
	b.nextID++
	return Column{ID: b.nextID, Name: name, T: t}
}

// rangeVar is a name in a FROM clause: a source, a subquery or CTE, or an
// unnested element.
type rangeVar struct {
	name string
	kind rvKind
	node Node // the node producing the variable's columns
	scan *ScanNode
	cols []Column // subquery output columns
	elem Column   // unnest or record alias element
}

type rvKind uint8

const (
	rvTable rvKind = iota + 1
	rvSubquery
	rvElem
)

type scope struct {
	vars []*rangeVar
	// agg, when set, binds expressions after aggregation: aggregate calls
	// become aggregate outputs and other columns must match group keys.
	agg *aggCtx
	// aliases are the SELECT list's named expressions, visible to GROUP BY,
	// HAVING and ORDER BY.
	aliases map[string]parser.Expr
	// outer is the enclosing query's scope (for EXISTS over UNNEST of an
	// outer array).
	outer *scope
	// elemVars are extra names bound inside EXISTS(... UNNEST ...).
	clause string
	// win, when set, collects window function calls: they are allowed
	// here (SELECT list, QUALIFY, ORDER BY). Elsewhere winErr, if set,
	// says why a window call is not allowed.
	win    *winCtx
	winErr string
}

func (s *scope) find(name string) *rangeVar {
	for i := len(s.vars) - 1; i >= 0; i-- {
		if s.vars[i].name == name {
			return s.vars[i]
		}
	}
	for i := len(s.vars) - 1; i >= 0; i-- {
		if strings.EqualFold(s.vars[i].name, name) {
			return s.vars[i]
		}
	}
	return nil
}

// bindQuery binds a full query (WITH, body, ORDER BY, LIMIT).
func (b *binder) bindQuery(q *parser.Query, outer *scope) (Node, error) {
	if b.queries++; b.queries > maxBoundQueries {
		return nil, errAt(q.At, "the query is too complex: its subqueries and CTE references make more than %d queries to plan", maxBoundQueries)
	}
	if sel, ok := q.Body.(*parser.Select); ok {
		return b.bindSelect(sel, q.OrderBy, q.Limit, q.Offset, outer)
	}
	n, err := b.bindBody(q.Body, outer)
	if err != nil {
		return nil, err
	}
	if len(q.OrderBy) > 0 {
		cols := n.Cols()
		var keys []SortKey
		for _, o := range q.OrderBy {
			e, err := b.resolveOutputRef(o.Expr, cols)
			if err != nil {
				return nil, err
			}
			keys = append(keys, sortKey(e, o))
		}
		n = &SortNode{In: n, Keys: keys}
	}
	return b.applyLimit(n, q.Limit, q.Offset)
}

// bindBody binds a query body that is not a plain SELECT.
func (b *binder) bindBody(body parser.QueryBody, outer *scope) (Node, error) {
	switch body := body.(type) {
	case *parser.Select:
		return b.bindSelect(body, nil, nil, nil, outer)
	case *parser.Query:
		return b.bindQuery(body, outer)
	case *parser.SetOp:
		if body.Op != parser.Union {
			return nil, errAt(body.At, "%s is not supported; use UNION ALL", body.Op)
		}
		l, err := b.bindBody(body.Left, outer)
		if err != nil {
			return nil, err
		}
		r, err := b.bindBody(body.Right, outer)
		if err != nil {
			return nil, err
		}
		u, err := b.union(l, r, body.At)
		if err != nil {
			return nil, err
		}
		if body.Quantifier != parser.QuantAll {
			return &DistinctNode{In: u}, nil
		}
		return u, nil
	}
	return nil, fmt.Errorf("unsupported query body %T", body)
}

// union builds UNION ALL of two nodes (flattening nested unions), unifying
// column types.
func (b *binder) union(l, r Node, pos parser.Pos) (Node, error) {
	var ins []Node
	for _, n := range []Node{l, r} {
		if u, ok := n.(*UnionNode); ok && len(ins) == 0 {
			ins = append(ins, u.Ins...)
			continue
		}
		ins = append(ins, n)
	}
	width := len(ins[0].Cols())
	for _, in := range ins[1:] {
		if len(in.Cols()) != width {
			return nil, errAt(pos, "Queries in UNION ALL have mismatched column count; query 1 has %d columns, query %d has %d columns", width, len(ins), len(in.Cols()))
		}
	}
	u := &UnionNode{Ins: ins}
	for c := 0; c < width; c++ {
		t := ins[0].Cols()[c].T
		for _, in := range ins[1:] {
			nt, ok := commonType(t, in.Cols()[c].T)
			if !ok {
				return nil, errAt(pos, "Column %d in UNION ALL has incompatible types: %s, %s", c+1, t, in.Cols()[c].T)
			}
			t = nt
		}
		u.Out = append(u.Out, b.newCol(ins[0].Cols()[c].Name, t))
	}
	// Cast branches whose column type differs.
	for i, in := range ins {
		cols := in.Cols()
		var proj *ProjectNode
		m := make([]ColID, width)
		for c := 0; c < width; c++ {
			m[c] = cols[c].ID
			if cols[c].T != u.Out[c].T {
				if proj == nil {
					proj = &ProjectNode{In: in}
					for _, cc := range cols {
						proj.Exprs = append(proj.Exprs, &ColRef{ID: cc.ID, T: cc.T, Name: cc.Name})
						proj.Out = append(proj.Out, cc)
					}
				}
				e, err := b.coerce(&ColRef{ID: cols[c].ID, T: cols[c].T, Name: cols[c].Name}, u.Out[c].T)
				if err != nil {
					return nil, err
				}
				nc := b.newCol(cols[c].Name, u.Out[c].T)
				proj.Exprs[c] = e
				proj.Out[c] = nc
				m[c] = nc.ID
			}
		}
		if proj != nil {
			ins[i] = proj
		}
		u.Maps = append(u.Maps, m)
	}
	return u, nil
}

// commonType is the supertype two column types unify to.
func commonType(a, b ColType) (ColType, bool) {
	switch {
	case a == b:
		return a, true
	case a.V == vec.Unknown:
		return b, true
	case b.V == vec.Unknown:
		return a, true
	case a.V.IsNumeric() && b.V.IsNumeric():
		return ColType{V: vec.Float64}, true
	case a.V == vec.List && b.V == vec.List && (a.Elem == vec.Unknown || b.Elem == vec.Unknown):
		return ColType{V: vec.List}, true
	}
	return ColType{}, false
}

// coerce casts e to type t (for unifying branches).
func (b *binder) coerce(e Expr, t ColType) (Expr, error) {
	if e.Type() == t {
		return e, nil
	}
	if l, ok := e.(*Literal); ok && l.D.Null {
		return nullLit(t.V), nil
	}
	bound, err := fn.BindCast(argOf(e), t.V, false, fn.BindInfo{Now: b.now})
	if err != nil {
		return nil, err
	}
	return &Call{Name: "cast_" + strings.ToLower(t.V.String()), F: bound, Args: []Expr{e}, Info: []fn.Arg{argOf(e)}, T: t}, nil
}

func argOf(e Expr) fn.Arg {
	a := fn.Arg{Type: e.Type().V, Elem: e.Type().Elem}
	if l, ok := e.(*Literal); ok {
		d := l.D
		a.Const = &d
	}
	return a
}

func sortKey(e Expr, o *parser.OrderItem) SortKey {
	k := SortKey{E: e, Desc: o.Desc}
	// BigQuery: NULLs first ascending, last descending, unless written.
	switch o.Nulls {
	case parser.NullsFirst:
		k.NullsLast = false
	case parser.NullsLast:
		k.NullsLast = true
	default:
		k.NullsLast = o.Desc
	}
	return k
}

// resolveOutputRef binds an ORDER BY key over a set operation's output: an
// ordinal or an output column name.
func (b *binder) resolveOutputRef(e parser.Expr, cols []Column) (Expr, error) {
	switch x := e.(type) {
	case *parser.IntLit:
		if x.Value < 1 || int(x.Value) > len(cols) {
			return nil, errAt(x.At, "ORDER BY column number %d is out of range; there are %d columns", x.Value, len(cols))
		}
		c := cols[x.Value-1]
		return &ColRef{ID: c.ID, T: c.T, Name: c.Name}, nil
	case *parser.ColumnRef:
		if len(x.Parts) == 1 {
			for _, c := range cols {
				if strings.EqualFold(c.Name, x.Parts[0].Name) {
					return &ColRef{ID: c.ID, T: c.T, Name: c.Name}, nil
				}
			}
		}
	}
	return nil, errAt(e.Pos(), "ORDER BY of a set operation must name an output column or use a column number")
}

func (b *binder) applyLimit(n Node, limit, offset parser.Expr) (Node, error) {
	if limit == nil && offset == nil {
		return n, nil
	}
	count, off := int64(-1), int64(0)
	var err error
	if limit != nil {
		if count, err = b.constInt(limit, "LIMIT"); err != nil {
			return nil, err
		}
	}
	if offset != nil {
		if off, err = b.constInt(offset, "OFFSET"); err != nil {
			return nil, err
		}
	}
	return &LimitNode{In: n, Count: count, Offset: off}, nil
}

// constInt evaluates a LIMIT/OFFSET expression.
func (b *binder) constInt(e parser.Expr, what string) (int64, error) {
	x, err := b.bindExpr(e, &scope{clause: what})
	if err != nil {
		return 0, err
	}
	x, err = foldExpr(x, b.now)
	if err != nil {
		return 0, err
	}
	l, ok := x.(*Literal)
	if !ok || l.D.Null {
		return 0, errAt(e.Pos(), "%s expects an integer literal or parameter", what)
	}
	var v int64
	switch l.D.Type {
	case vec.Int64:
		v = l.D.Int
	case vec.String:
		n, err := strconv.ParseInt(strings.TrimSpace(l.D.Str), 10, 64)
		if err != nil {
			return 0, errAt(e.Pos(), "%s expects an integer, got %q", what, l.D.Str)
		}
		v = n
	default:
		return 0, errAt(e.Pos(), "%s expects an integer, got %s", what, l.D.Type)
	}
	if v < 0 {
		return 0, errAt(e.Pos(), "%s must not be negative", what)
	}
	return v, nil
}
