package sql

import (
	"strings"

	"github.com/sediment/sediment/internal/vec"
	"github.com/sediment/sediment/sql/fn"
	"github.com/sediment/sediment/sql/parser"
)

// One binder per expression syntax node that bindExprWant dispatches to
// (the larger ones, calls, CASE, IN and subscripts, are in bindexpr.go).

// bindColumnRef binds a name: in ORDER BY and QUALIFY a SELECT alias
// first, else a column, a range variable or a path through one.
func (b *binder) bindColumnRef(e *parser.ColumnRef, sc *scope, w want) (Expr, error) {
	if sc.agg == nil && (sc.clause == "ORDER BY" || sc.clause == "QUALIFY") && len(e.Parts) == 1 {
		if ae, ok := sc.aliases[strings.ToLower(e.Parts[0].Name)]; ok {
			return b.bindExprWant(ae, &scope{vars: sc.vars, outer: sc.outer, clause: "SELECT", win: sc.win}, w)
		}
	}
	return b.resolveIn(e, sc, w)
}

// bindParam binds @name to the request's parameter, a STRING (NULL when
// the request has none of that name).
func (b *binder) bindParam(e *parser.Param) Expr {
	if v, ok := b.params[e.Name]; ok {
		return &Literal{D: fn.Datum{Type: vec.String, Str: v}}
	}
	return nullLit(vec.String)
}

// bindTypedLit binds TIMESTAMP '…' and its kin: the string cast to the type.
func (b *binder) bindTypedLit(e *parser.TypedLit) (Expr, error) {
	t, ok := typeKindVec(e.Type)
	if !ok {
		return nil, errAt(e.At, "%s literals are not supported", e.Type)
	}
	s := &Literal{D: fn.Datum{Type: vec.String, Str: e.Value}}
	return b.castExpr(s, t, false, e.At)
}

// bindInterval binds INTERVAL n UNIT; n must fold to a constant integer
// (or a float, truncated, or a string of an integer).
func (b *binder) bindInterval(e *parser.Interval, sc *scope) (Expr, error) {
	v, err := b.bindExpr(e.Value, sc)
	if err != nil {
		return nil, err
	}
	v, err = foldExpr(v, b.now)
	if err != nil {
		return nil, err
	}
	l, ok := v.(*Literal)
	if !ok || l.D.Null {
		return nil, errAt(e.At, "INTERVAL needs a constant value")
	}
	n := l.D.Int
	switch l.D.Type {
	case vec.Int64:
	case vec.Float64:
		n = int64(l.D.Flt)
	case vec.String:
		x, err := parseIntString(l.D.Str)
		if err != nil {
			return nil, errAt(e.At, "INTERVAL value %q is not an integer", l.D.Str)
		}
		n = x
	default:
		return nil, errAt(e.At, "INTERVAL value must be an integer")
	}
	return &Literal{D: fn.Datum{Type: vec.Interval, Int: n, Str: strings.ToUpper(e.Unit)}}, nil
}

// bindUnary binds NOT, unary plus and minus, and ~.
func (b *binder) bindUnary(e *parser.Unary, sc *scope) (Expr, error) {
	x, err := b.bindExpr(e.X, sc)
	if err != nil {
		return nil, err
	}
	switch e.Op {
	case parser.OpNot:
		if err := wantBool(x, e.At, "NOT"); err != nil {
			return nil, err
		}
		return &NotExpr{X: x}, nil
	case parser.OpPlus:
		return x, nil
	case parser.OpNeg:
		return b.call("neg", []Expr{x}, e.At, false)
	case parser.OpBitNot:
		return b.call("~", []Expr{x}, e.At, false)
	}
	return nil, errUnsupported(e)
}

// bindBinary binds AND and OR (flattened, BOOL operands) and the operators
// that are functions of sql/fn.
func (b *binder) bindBinary(e *parser.Binary, sc *scope) (Expr, error) {
	l, err := b.bindExpr(e.L, sc)
	if err != nil {
		return nil, err
	}
	r, err := b.bindExpr(e.R, sc)
	if err != nil {
		return nil, err
	}
	switch e.Op {
	case parser.OpAnd:
		if err := wantBool(l, e.L.Pos(), "AND"); err != nil {
			return nil, err
		}
		if err := wantBool(r, e.R.Pos(), "AND"); err != nil {
			return nil, err
		}
		return flattenAnd(l, r), nil
	case parser.OpOr:
		if err := wantBool(l, e.L.Pos(), "OR"); err != nil {
			return nil, err
		}
		if err := wantBool(r, e.R.Pos(), "OR"); err != nil {
			return nil, err
		}
		return flattenOr(l, r), nil
	}
	return b.call(binaryOpName(e.Op), []Expr{l, r}, e.OpAt, false)
}

// bindLike binds x [NOT] LIKE pattern.
func (b *binder) bindLike(e *parser.Like, sc *scope) (Expr, error) {
	x, err := b.bindExpr(e.X, sc)
	if err != nil {
		return nil, err
	}
	p, err := b.bindExpr(e.Pattern, sc)
	if err != nil {
		return nil, err
	}
	c, err := b.call("like", []Expr{x, p}, e.OpAt, false)
	if err != nil {
		return nil, err
	}
	if e.Not {
		return &NotExpr{X: c}, nil
	}
	return c, nil
}

// bindBetween binds x [NOT] BETWEEN lo AND hi as x >= lo AND x <= hi.
func (b *binder) bindBetween(e *parser.Between, sc *scope) (Expr, error) {
	x, err := b.bindExpr(e.X, sc)
	if err != nil {
		return nil, err
	}
	lo, err := b.bindExpr(e.Lo, sc)
	if err != nil {
		return nil, err
	}
	hi, err := b.bindExpr(e.Hi, sc)
	if err != nil {
		return nil, err
	}
	ge, err := b.call(">=", []Expr{x, lo}, e.OpAt, false)
	if err != nil {
		return nil, err
	}
	le, err := b.call("<=", []Expr{x, hi}, e.OpAt, false)
	if err != nil {
		return nil, err
	}
	var res Expr = &AndExpr{Args: []Expr{ge, le}}
	if e.Not {
		res = &NotExpr{X: res}
	}
	return res, nil
}

// bindIs binds IS [NOT] NULL, UNKNOWN, TRUE and FALSE.
func (b *binder) bindIs(e *parser.Is, sc *scope) (Expr, error) {
	x, err := b.bindExpr(e.X, sc)
	if err != nil {
		return nil, err
	}
	switch e.What {
	case parser.IsNull, parser.IsUnknown:
		return &IsNullExpr{X: x, Not: e.Not}, nil
	case parser.IsTrue, parser.IsFalse:
		if err := wantBool(x, e.At, "IS TRUE"); err != nil {
			return nil, err
		}
		return &IsBoolExpr{X: x, Value: e.What == parser.IsTrue, Not: e.Not}, nil
	}
	return nil, errUnsupported(e)
}

// bindExtract binds EXTRACT(part FROM x [AT TIME ZONE tz]) as the extract
// function, the part passed as bind-time information.
func (b *binder) bindExtract(e *parser.Extract, sc *scope) (Expr, error) {
	x, err := b.bindExpr(e.X, sc)
	if err != nil {
		return nil, err
	}
	args := []Expr{nil, x}
	info := []fn.Arg{{Part: e.Part.Name, PartArg: e.Part.Arg}, argOf(x)}
	if e.TimeZone != nil {
		tz, err := b.bindExpr(e.TimeZone, sc)
		if err != nil {
			return nil, err
		}
		args = append(args, tz)
		info = append(info, argOf(tz))
	}
	return b.callInfo("extract", args, info, e.At, false)
}

// bindCast binds [SAFE_]CAST(x AS type).
func (b *binder) bindCast(e *parser.Cast, sc *scope) (Expr, error) {
	x, err := b.bindExpr(e.X, sc)
	if err != nil {
		return nil, err
	}
	t, ok := typeKindVec(e.Type.Kind)
	if !ok {
		return nil, errAt(e.At, "CAST to %s is not supported", e.Type.Name)
	}
	return b.castExpr(x, t, e.Safe, e.At)
}

// bindFieldAccess binds x.field on an expression (a path through a range
// variable is a ColumnRef).
func (b *binder) bindFieldAccess(e *parser.FieldAccess, sc *scope, w want) (Expr, error) {
	x, err := b.bindExprWant(e.X, sc, wantContainer)
	if err != nil {
		return nil, err
	}
	return b.fieldAccess(x, e.Field.Name, e.At, w)
}

// bindArrayLit binds [a, b, …]: the elements coerced to their common
// supertype.
func (b *binder) bindArrayLit(e *parser.ArrayLit, sc *scope) (Expr, error) {
	var elems []Expr
	t := ColType{V: vec.Unknown}
	for _, el := range e.Elems {
		x, err := b.bindExpr(el, sc)
		if err != nil {
			return nil, err
		}
		nt, ok := commonType(t, x.Type())
		if !ok {
			return nil, errAt(el.Pos(), "Array elements of types %s and %s have no common supertype", t, x.Type())
		}
		t = nt
		elems = append(elems, x)
	}
	for i, el := range elems {
		c, err := b.coerce(el, t)
		if err != nil {
			return nil, err
		}
		elems[i] = c
	}
	return &ArrayExpr{Elems: elems, T: ColType{V: vec.List, Elem: t.V}}, nil
}
