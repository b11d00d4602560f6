package sql

import (
	"errors"
	"strings"

	"github.com/sediment/sediment/internal/vec"
	"github.com/sediment/sediment/sql/fn"
	"github.com/sediment/sediment/sql/parser"
	"github.com/sediment/sediment/sql/scan"
)

func (b *binder) bindExpr(e parser.Expr, sc *scope) (Expr, error) {
	return b.bindExprWant(e, sc, wantValue)
}

// bindBoolExpr binds a condition (WHERE, ON, HAVING): it must be BOOL.
func (b *binder) bindBoolExpr(e parser.Expr, sc *scope) (Expr, error) {
	x, err := b.bindExpr(e, sc)
	if err != nil {
		return nil, err
	}
	switch x.Type().V {
	case vec.Bool, vec.Unknown:
		return x, nil
	}
	clause := sc.clause
	if clause == "" {
		clause = "condition"
	}
	return nil, errAt(e.Pos(), "%s clause should return type BOOL, but returns %s", clause, x.Type())
}

// bindExprWant binds an expression: after an aggregation, what the
// aggregation computed; else with the binder of its syntax node
// (bindnodes.go, and bindCall, bindCase, bindIn, bindSubscript here). w
// says what the context wants of a name that could be a column or a
// container.
func (b *binder) bindExprWant(e parser.Expr, sc *scope, w want) (Expr, error) {
	if sc.agg != nil {
		if x, ok, err := b.bindPostAgg(e, sc, w); ok || err != nil {
			return x, err
		}
	}
	switch e := e.(type) {
	case *parser.ColumnRef:
		return b.bindColumnRef(e, sc, w)
	case *parser.Param:
		return b.bindParam(e), nil
	case *parser.IntLit:
		return &Literal{D: fn.Datum{Type: vec.Int64, Int: e.Value}}, nil
	case *parser.FloatLit:
		return &Literal{D: fn.Datum{Type: vec.Float64, Flt: e.Value}}, nil
	case *parser.StringLit:
		return &Literal{D: fn.Datum{Type: vec.String, Str: e.Value}}, nil
	case *parser.BytesLit:
		return &Literal{D: fn.Datum{Type: vec.String, Str: e.Value}}, nil
	case *parser.BoolLit:
		return boolLit(e.Value), nil
	case *parser.NullLit:
		return nullLit(vec.Unknown), nil
	case *parser.TypedLit:
		return b.bindTypedLit(e)
	case *parser.Interval:
		return b.bindInterval(e, sc)
	case *parser.DatePart:
		return nil, errAt(e.At, "Unrecognized name: %s", e.Name)
	case *parser.Unary:
		return b.bindUnary(e, sc)
	case *parser.Binary:
		return b.bindBinary(e, sc)
	case *parser.Like:
		return b.bindLike(e, sc)
	case *parser.Between:
		return b.bindBetween(e, sc)
	case *parser.In:
		return b.bindIn(e, sc)
	case *parser.Is:
		return b.bindIs(e, sc)
	case *parser.FuncCall:
		return b.bindCall(e, sc)
	case *parser.Extract:
		return b.bindExtract(e, sc)
	case *parser.Case:
		return b.bindCase(e, sc)
	case *parser.Cast:
		return b.bindCast(e, sc)
	case *parser.Subscript:
		return b.bindSubscript(e, sc)
	case *parser.FieldAccess:
		return b.bindFieldAccess(e, sc, w)
	case *parser.ArrayLit:
		return b.bindArrayLit(e, sc)
	case *parser.Exists:
		return b.bindExists(e, sc)
	case *parser.ScalarSubquery:
		return b.bindSubquery(e.Query, subScalar, e.At)
	case *parser.ArraySubquery:
		return b.bindSubquery(e.Query, subArray, e.At)
	case *parser.StructLit:
		return nil, errAt(e.At, "STRUCT values are not supported")
	}
	return nil, errUnsupported(e)
}

// errUnsupported is the error for a syntax node the binder has no rule for.
func errUnsupported(e parser.Expr) error { return errAt(e.Pos(), "unsupported expression") }

func parseIntString(s string) (int64, error) {
	var n int64
	neg := false
	s = strings.TrimSpace(s)
	if s != "" && (s[0] == '-' || s[0] == '+') {
		neg = s[0] == '-'
		s = s[1:]
	}
	if s == "" {
		return 0, errNotInt
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, errNotInt
		}
		n = n*10 + int64(s[i]-'0')
	}
	if neg {
		n = -n
	}
	return n, nil
}

func wantBool(x Expr, pos parser.Pos, op string) error {
	switch x.Type().V {
	case vec.Bool, vec.Unknown:
		return nil
	}
	return errAt(pos, "No matching signature for operator %s for argument type %s", op, x.Type())
}

func flattenAnd(l, r Expr) Expr {
	var args []Expr
	for _, x := range []Expr{l, r} {
		if a, ok := x.(*AndExpr); ok {
			args = append(args, a.Args...)
		} else {
			args = append(args, x)
		}
	}
	return &AndExpr{Args: args}
}

func flattenOr(l, r Expr) Expr {
	var args []Expr
	for _, x := range []Expr{l, r} {
		if a, ok := x.(*OrExpr); ok {
			args = append(args, a.Args...)
		} else {
			args = append(args, x)
		}
	}
	return &OrExpr{Args: args}
}

func binaryOpName(op parser.BinaryOp) string {
	switch op {
	case parser.OpEq:
		return "="
	case parser.OpNe:
		return "!="
	case parser.OpLt:
		return "<"
	case parser.OpLe:
		return "<="
	case parser.OpGt:
		return ">"
	case parser.OpGe:
		return ">="
	case parser.OpIsDistinctFrom:
		return "IS DISTINCT FROM"
	case parser.OpIsNotDistinctFrom:
		return "IS NOT DISTINCT FROM"
	case parser.OpBitOr:
		return "|"
	case parser.OpBitXor:
		return "^"
	case parser.OpBitAnd:
		return "&"
	case parser.OpShl:
		return "<<"
	case parser.OpShr:
		return ">>"
	case parser.OpAdd:
		return "+"
	case parser.OpSub:
		return "-"
	case parser.OpMul:
		return "*"
	case parser.OpDiv:
		return "/"
	case parser.OpConcat:
		return "||"
	}
	return "?"
}

func typeKindVec(k parser.TypeKind) (vec.Type, bool) {
	switch k {
	case parser.TypeInt64:
		return vec.Int64, true
	case parser.TypeFloat64, parser.TypeNumeric, parser.TypeBigNumeric:
		return vec.Float64, true
	case parser.TypeString, parser.TypeBytes:
		return vec.String, true
	case parser.TypeBool:
		return vec.Bool, true
	case parser.TypeTimestamp:
		return vec.Timestamp, true
	case parser.TypeDatetime:
		return vec.Datetime, true
	case parser.TypeDate:
		return vec.Date, true
	case parser.TypeJSON:
		return vec.JSON, true
	}
	return 0, false
}

// call binds a function or operator by name.
func (b *binder) call(name string, args []Expr, pos parser.Pos, safe bool) (Expr, error) {
	info := make([]fn.Arg, len(args))
	for i, a := range args {
		info[i] = argOf(a)
	}
	return b.callInfo(name, args, info, pos, safe)
}

func (b *binder) callInfo(name string, args []Expr, info []fn.Arg, pos parser.Pos, safe bool) (Expr, error) {
	f, ok := fn.Lookup(name)
	if !ok {
		return nil, errAt(pos, "Function not found: %s", name)
	}
	bound, err := f.Bind(info, fn.BindInfo{Safe: safe, Now: b.now})
	if err != nil {
		return nil, errAt(pos, "%v", err)
	}
	return &Call{Name: strings.ToLower(name), F: bound, Args: args, Info: info, T: ColType{V: bound.Type, Elem: bound.Elem}}, nil
}

func (b *binder) castExpr(x Expr, t vec.Type, safe bool, pos parser.Pos) (Expr, error) {
	if x.Type().V == t {
		return x, nil
	}
	if l, ok := x.(*Literal); ok && l.D.Null {
		return nullLit(t), nil
	}
	bound, err := fn.BindCast(argOf(x), t, safe, fn.BindInfo{Now: b.now, Safe: safe})
	if err != nil {
		if _, isLit := x.(*Literal); isLit {
			return &errorExpr{err: errAt(pos, "%v", err), T: ColType{V: t}}, nil
		}
		return nil, errAt(pos, "%v", err)
	}
	name := "cast_" + strings.ToLower(t.String())
	if safe {
		name = "safe_" + name
	}
	return &Call{Name: name, F: bound, Args: []Expr{x}, Info: []fn.Arg{argOf(x)}, T: ColType{V: bound.Type, Elem: bound.Elem}}, nil
}

// bindCall binds a function call, with the special forms that need lazy
// evaluation rewritten to CASE.
func (b *binder) bindCall(e *parser.FuncCall, sc *scope) (Expr, error) {
	name := strings.ToLower(e.FuncName())
	safe := false
	if len(e.Name) == 2 && strings.EqualFold(e.Name[0].Name, "safe") {
		safe = true
		name = strings.ToLower(e.Name[1].Name)
	}
	if e.Over != nil {
		return b.bindWindowCall(e, name, safe, sc)
	}
	if isAggregateCall(e) {
		return nil, errAt(e.At, "Aggregate function %s not allowed in %s", strings.ToUpper(name), clauseName(sc))
	}
	args := make([]Expr, len(e.Args))
	info := make([]fn.Arg, len(e.Args))
	for i, a := range e.Args {
		if dp, ok := a.(*parser.DatePart); ok {
			info[i] = fn.Arg{Part: dp.Name, PartArg: dp.Arg}
			continue
		}
		x, err := b.bindExpr(a, sc)
		if err != nil {
			return nil, err
		}
		args[i] = x
		info[i] = argOf(x)
	}
	switch name {
	case "if":
		if len(args) != 3 {
			return nil, errAt(e.At, "Number of arguments does not match for function IF")
		}
		if err := wantBool(args[0], e.At, "IF"); err != nil {
			return nil, err
		}
		return b.caseOf([]When{{Cond: args[0], Then: args[1]}}, args[2], e.At)
	case "ifnull":
		if len(args) != 2 {
			return nil, errAt(e.At, "Number of arguments does not match for function IFNULL")
		}
		return b.caseOf([]When{{Cond: &IsNullExpr{X: args[0], Not: true}, Then: args[0]}}, args[1], e.At)
	case "coalesce":
		if len(args) == 0 {
			return nil, errAt(e.At, "Number of arguments does not match for function COALESCE")
		}
		var whens []When
		for _, a := range args[:len(args)-1] {
			whens = append(whens, When{Cond: &IsNullExpr{X: a, Not: true}, Then: a})
		}
		return b.caseOf(whens, args[len(args)-1], e.At)
	case "nullif":
		if len(args) != 2 {
			return nil, errAt(e.At, "Number of arguments does not match for function NULLIF")
		}
		eq, err := b.call("=", args, e.At, false)
		if err != nil {
			return nil, err
		}
		return b.caseOf([]When{{Cond: eq, Then: nullLit(args[0].Type().V)}}, args[0], e.At)
	}
	return b.callInfo(name, args, info, e.At, safe)
}

func clauseName(sc *scope) string {
	if sc.clause == "" {
		return "this context"
	}
	return sc.clause + " clause"
}

// caseOf builds a CASE, unifying the result types of its arms.
func (b *binder) caseOf(whens []When, els Expr, pos parser.Pos) (Expr, error) {
	t := ColType{V: vec.Unknown}
	arms := make([]Expr, 0, len(whens)+1)
	for _, w := range whens {
		arms = append(arms, w.Then)
	}
	if els != nil {
		arms = append(arms, els)
	}
	for _, a := range arms {
		nt, ok := commonType(t, a.Type())
		if !ok {
			return nil, errAt(pos, "No common supertype for CASE/IF results of types %s and %s", t, a.Type())
		}
		t = nt
	}
	for i := range whens {
		c, err := b.coerce(whens[i].Then, t)
		if err != nil {
			return nil, err
		}
		whens[i].Then = c
		if err := wantBool(whens[i].Cond, pos, "WHEN"); err != nil {
			return nil, err
		}
	}
	if els != nil {
		c, err := b.coerce(els, t)
		if err != nil {
			return nil, err
		}
		els = c
	}
	return &CaseExpr{Whens: whens, Else: els, T: t}, nil
}

func (b *binder) bindCase(e *parser.Case, sc *scope) (Expr, error) {
	var operand Expr
	if e.Operand != nil {
		x, err := b.bindExpr(e.Operand, sc)
		if err != nil {
			return nil, err
		}
		operand = x
	}
	var whens []When
	for _, w := range e.Whens {
		c, err := b.bindExpr(w.Cond, sc)
		if err != nil {
			return nil, err
		}
		if operand != nil {
			if c, err = b.call("=", []Expr{operand, c}, w.At, false); err != nil {
				return nil, err
			}
		}
		r, err := b.bindExpr(w.Result, sc)
		if err != nil {
			return nil, err
		}
		whens = append(whens, When{Cond: c, Then: r})
	}
	var els Expr
	if e.Else != nil {
		x, err := b.bindExpr(e.Else, sc)
		if err != nil {
			return nil, err
		}
		els = x
	}
	return b.caseOf(whens, els, e.At)
}

func (b *binder) bindIn(e *parser.In, sc *scope) (Expr, error) {
	x, err := b.bindExpr(e.X, sc)
	if err != nil {
		return nil, err
	}
	switch {
	case e.Unnest != nil:
		arr, err := b.bindExprWant(e.Unnest, sc, wantContainer)
		if err != nil {
			return nil, err
		}
		if arr.Type().V != vec.List && arr.Type().V != vec.Unknown {
			return nil, errAt(e.At, "Values referenced in UNNEST must be arrays")
		}
		return &InArrayExpr{X: x, Arr: arr, Not: e.Not}, nil
	case e.Query != nil:
		sq, err := b.bindSubquery(e.Query, subSet, e.At)
		if err != nil {
			return nil, err
		}
		s := sq.(*subqueryExpr)
		s.in = x
		s.not = e.Not
		return s, nil
	}
	var list, eqs []Expr
	for _, it := range e.List {
		y, err := b.bindExpr(it, sc)
		if err != nil {
			return nil, err
		}
		eq, err := b.call("=", []Expr{x, y}, it.Pos(), false)
		if err != nil {
			return nil, err
		}
		list = append(list, y)
		eqs = append(eqs, eq)
	}
	return &InExpr{X: x, List: list, Not: e.Not, Eqs: eqs}, nil
}

// bindSubscript binds arr[i] in its forms; on a record (`metadata[0]`,
// one object per row) offset 0 is the record itself.
func (b *binder) bindSubscript(e *parser.Subscript, sc *scope) (Expr, error) {
	x, err := b.bindExprWant(e.X, sc, wantContainer)
	if err != nil {
		return nil, err
	}
	idx, err := b.bindExpr(e.Index, sc)
	if err != nil {
		return nil, err
	}
	safe := e.Mode == parser.SubscriptSafeOffset || e.Mode == parser.SubscriptSafeOrdinal
	ordinal := e.Mode == parser.SubscriptOrdinal || e.Mode == parser.SubscriptSafeOrdinal
	switch x.Type().V {
	case vec.Unknown:
		return nullLit(vec.Unknown), nil
	case vec.RowRef:
		k, err := foldExpr(idx, b.now)
		if err != nil {
			return nil, err
		}
		l, ok := k.(*Literal)
		if !ok || l.D.Type != vec.Int64 {
			return nil, errAt(e.At, "Array index of a record must be a constant integer")
		}
		first := int64(0)
		if ordinal {
			first = 1
		}
		if l.D.Null || l.D.Int != first {
			if safe {
				return nullLit(vec.RowRef), nil
			}
			return nil, errAt(e.At, "Array index %d is out of bounds (overflow)", l.D.Int)
		}
		if cr, ok := x.(*ColRef); ok {
			t := cr.T
			t.Single = true
			return &ColRef{ID: cr.ID, T: t, Name: cr.Name}, nil
		}
		return x, nil
	case vec.List:
	default:
		return nil, errAt(e.At, "Array element access with array position is not supported on type %s", x.Type())
	}
	if idx.Type().V != vec.Int64 && idx.Type().V != vec.Unknown {
		return nil, errAt(e.At, "Array position in [] must be coercible to INT64 type, but has type %s", idx.Type())
	}
	et := ColType{V: x.Type().Elem}
	if et.V == vec.Unknown {
		et.V = vec.JSON
	}
	return &SubscriptExpr{X: x, Index: idx, Mode: e.Mode, T: et}, nil
}

// fieldAccess resolves X.field where X is not a plain name path.
func (b *binder) fieldAccess(x Expr, field string, pos parser.Pos, w want) (Expr, error) {
	if s, ok := x.(*SubscriptExpr); ok {
		// arr[i].field: the field of each element, then the subscript.
		if cr, ok := s.X.(*ColRef); ok && cr.T.V == vec.List && cr.T.Elem == vec.Unknown {
			lf, err := b.listField(cr, field, pos)
			if err != nil {
				return nil, err
			}
			return &SubscriptExpr{X: lf, Index: s.Index, Mode: s.Mode, T: ColType{V: lf.Type().Elem}}, nil
		}
	}
	e, err := b.fieldOf(x, []string{field}, w)
	if err != nil {
		return nil, errAt(pos, "%v", err)
	}
	return e, nil
}

// listField reads one field of every record element of an array column.
func (b *binder) listField(arr *ColRef, field string, pos parser.Pos) (Expr, error) {
	s, ci := traceScanCol(b.fromRoot, arr.ID)
	if s == nil {
		return nil, errAt(pos, "Cannot access field %s of array elements here", field)
	}
	col := &s.req.Columns[ci]
	f := s.Table.Schema().Lookup(col.Path)
	t := vec.Unknown
	if f != nil {
		for _, ef := range f.ElemFields {
			if ef.Path == field {
				t = ef.Type
				if t == vec.Unknown {
					t = vec.JSON
				}
			}
		}
	}
	if t == vec.Unknown {
		return nullLit(vec.Unknown), nil
	}
	child := -1
	for i, c := range col.Elem {
		if c.Path == field {
			child = i
		}
	}
	if child < 0 {
		spec := scan.Column{Path: field, Type: t}
		if t == vec.JSON {
			spec = scan.Column{Path: field, Kind: scan.Record}
		}
		col.Elem = append(col.Elem, spec)
		child = len(col.Elem) - 1
	}
	return &ListFieldExpr{Arr: arr, Child: child, T: ColType{V: vec.List, Elem: t}}, nil
}

// ---------------------------------------------------------------------------
// Aggregation

// bindPostAgg binds an expression above an aggregation: aggregate calls
// become aggregate outputs, expressions equal to a group key become that
// key. ok is false when the expression must be bound structurally (its
// parts will come back here).
func (b *binder) bindPostAgg(e parser.Expr, sc *scope, w want) (Expr, bool, error) {
	ac := sc.agg
	if fc, ok := e.(*parser.FuncCall); ok && isAggregateCall(fc) {
		x, err := b.bindAggCall(fc, ac)
		return x, true, err
	}
	switch e.(type) {
	case *parser.IntLit, *parser.FloatLit, *parser.StringLit, *parser.BoolLit, *parser.NullLit, *parser.Param, *parser.Interval, *parser.TypedLit, *parser.BytesLit:
		return nil, false, nil
	}
	// A SELECT alias that names nothing in FROM: binding it there would
	// read a never-ingested field as NULL.
	if cr, ok := e.(*parser.ColumnRef); ok && len(cr.Parts) == 1 && aliasClause(sc.clause) && !b.nameInScope(cr.Parts[0].Name, sc) {
		if ae, ok := sc.aliases[strings.ToLower(cr.Parts[0].Name)]; ok {
			x, err := b.bindExprWant(ae, &scope{vars: sc.vars, agg: ac, outer: sc.outer, clause: "SELECT", win: sc.win}, w)
			return x, true, err
		}
	}
	if !hasAggregate(e) && !(aliasClause(sc.clause) && b.readsUnknownAlias(e, sc)) {
		if x, err := b.bindExprWant(e, ac.base, w); err == nil {
			for i, k := range ac.keys {
				if exprEqual(k, x) {
					c := ac.kcols[i]
					return &ColRef{ID: c.ID, T: c.T, Name: c.Name}, true, nil
				}
			}
			if isConst(x) {
				return x, true, nil
			}
		}
	}
	if cr, ok := e.(*parser.ColumnRef); ok {
		if len(cr.Parts) == 1 && aliasClause(sc.clause) {
			if ae, ok := sc.aliases[strings.ToLower(cr.Parts[0].Name)]; ok {
				x, err := b.bindExprWant(ae, &scope{vars: sc.vars, agg: ac, outer: sc.outer, clause: "SELECT", win: sc.win}, w)
				return x, true, err
			}
		}
		name := make([]string, len(cr.Parts))
		for i, p := range cr.Parts {
			name[i] = p.Name
		}
		return nil, true, errAt(cr.At, "SELECT list expression references column %s which is neither grouped nor aggregated", strings.Join(name, "."))
	}
	return nil, false, nil
}

// readsUnknownAlias reports whether e reads a SELECT alias that names
// nothing in FROM (outside subqueries): bound below the aggregation such a
// name would read as a never-ingested field, NULL.
func (b *binder) readsUnknownAlias(e parser.Expr, sc *scope) bool {
	found := false
	parser.Inspect(e, func(n parser.Node) bool {
		switch n := n.(type) {
		case *parser.ColumnRef:
			if len(n.Parts) == 1 && !b.nameInScope(n.Parts[0].Name, sc) {
				if _, ok := sc.aliases[strings.ToLower(n.Parts[0].Name)]; ok {
					found = true
				}
			}
		case *parser.Query:
			return false
		}
		return !found
	})
	return found
}

// aliasClause reports whether SELECT aliases are visible in a clause.
func aliasClause(clause string) bool {
	return clause == "HAVING" || clause == "ORDER BY" || clause == "QUALIFY"
}

// nameInScope reports whether name is a range variable or a column of one
// in sc.
func (b *binder) nameInScope(name string, sc *scope) bool {
	for _, rv := range sc.vars {
		if strings.EqualFold(rv.name, name) || b.varHas(rv, name) {
			return true
		}
	}
	return false
}

func (b *binder) bindAggCall(fc *parser.FuncCall, ac *aggCtx) (Expr, error) {
	base := &scope{vars: ac.base.vars, outer: ac.base.outer, clause: "aggregate"}
	a, err := b.newAggCall(fc, base, false)
	if err != nil {
		return nil, err
	}
	for _, prev := range ac.aggs {
		if prev.String() == a.String() && prev.Param == a.Param && prev.Sep == a.Sep {
			return &ColRef{ID: prev.Out.ID, T: prev.T, Name: prev.Out.Name}, nil
		}
	}
	a.Out = b.newCol(a.Name, a.T)
	ac.aggs = append(ac.aggs, a)
	return &ColRef{ID: a.Out.ID, T: a.T, Name: a.Out.Name}, nil
}

// newAggCall binds an aggregate call's arguments in argScope and checks
// them. nestedOK allows aggregates inside the arguments (an aggregate used
// as a window function in a grouped query: SUM(COUNT(*)) OVER ()).
func (b *binder) newAggCall(fc *parser.FuncCall, argScope *scope, nestedOK bool) (*AggCall, error) {
	name := strings.ToLower(fc.Name[0].Name)
	a := &AggCall{Name: name, Star: fc.Star, Distinct: fc.Distinct, Limit: -1}
	for _, arg := range fc.Args {
		if !nestedOK && hasAggregate(arg) {
			return nil, errAt(arg.Pos(), "Aggregations of aggregations are not allowed")
		}
		x, err := b.bindExpr(arg, argScope)
		if err != nil {
			return nil, err
		}
		a.Args = append(a.Args, x)
	}
	argT := ColType{V: vec.Unknown}
	switch name {
	case "count":
		if !fc.Star && len(a.Args) != 1 {
			return nil, errAt(fc.At, "Number of arguments does not match for aggregate function COUNT")
		}
		if !fc.Star {
			argT = a.Args[0].Type()
		}
	case "countif", "logical_and", "logical_or":
		if len(a.Args) != 1 {
			return nil, errAt(fc.At, "Number of arguments does not match for aggregate function %s", strings.ToUpper(name))
		}
		if err := wantBool(a.Args[0], fc.At, strings.ToUpper(name)); err != nil {
			return nil, err
		}
		argT = a.Args[0].Type()
	case "approx_quantiles":
		if len(a.Args) != 2 {
			return nil, errAt(fc.At, "Number of arguments does not match for aggregate function APPROX_QUANTILES")
		}
		n, err := foldExpr(a.Args[1], b.now)
		if err != nil {
			return nil, err
		}
		l, ok := n.(*Literal)
		if !ok || l.D.Type != vec.Int64 || l.D.Null || l.D.Int < 1 || l.D.Int > 100000 {
			return nil, errAt(fc.At, "APPROX_QUANTILES number of quantiles must be a constant positive integer")
		}
		a.Param = l.D.Int
		a.Args = a.Args[:1]
		argT = a.Args[0].Type()
	case "string_agg":
		if len(a.Args) < 1 || len(a.Args) > 2 {
			return nil, errAt(fc.At, "Number of arguments does not match for aggregate function STRING_AGG")
		}
		a.Sep = ","
		if len(a.Args) == 2 {
			sep, err := foldExpr(a.Args[1], b.now)
			if err != nil {
				return nil, err
			}
			l, ok := sep.(*Literal)
			if !ok || l.D.Type != vec.String {
				return nil, errAt(fc.At, "STRING_AGG delimiter must be a constant string")
			}
			a.Sep = l.D.Str
			a.Args = a.Args[:1]
		}
		argT = a.Args[0].Type()
	default:
		if len(a.Args) != 1 {
			return nil, errAt(fc.At, "Number of arguments does not match for aggregate function %s", strings.ToUpper(name))
		}
		argT = a.Args[0].Type()
	}
	t, err := aggResultType(name, argT)
	if err != nil {
		return nil, errAt(fc.At, "%v", err)
	}
	a.T = t
	if err := b.bindAggOrder(fc, a, argScope); err != nil {
		return nil, err
	}
	return a, nil
}

// bindAggOrder binds ARRAY_AGG/STRING_AGG's IGNORE NULLS, ORDER BY and
// LIMIT; other aggregates refuse them as BigQuery does.
func (b *binder) bindAggOrder(fc *parser.FuncCall, a *AggCall, argScope *scope) error {
	upper := strings.ToUpper(a.Name)
	ordered := a.Name == "array_agg" || a.Name == "string_agg"
	if fc.Nulls == parser.IgnoreNulls {
		if a.Name != "array_agg" && a.Name != "any_value" {
			return errAt(fc.At, "IGNORE NULLS is not supported for aggregate function %s", upper)
		}
		a.IgnoreNulls = true
	}
	if len(fc.OrderBy) == 0 && fc.Limit == nil {
		return nil
	}
	if !ordered {
		return errAt(fc.At, "ORDER BY and LIMIT in the arguments are not supported for aggregate function %s", upper)
	}
	if fc.Over != nil {
		return errAt(fc.At, "ORDER BY and LIMIT in the arguments of %s are not allowed with OVER", upper)
	}
	for _, o := range fc.OrderBy {
		k, err := b.bindExpr(o.Expr, argScope)
		if err != nil {
			return err
		}
		switch k.Type().V {
		case vec.RowRef, vec.List, vec.Struct, vec.JSON:
			return errAt(o.At, "ORDER BY does not support expressions of type %s", k.Type())
		}
		if a.Distinct && !exprEqual(k, a.Args[0]) {
			return errAt(o.At, "An aggregate function that has both DISTINCT and ORDER BY arguments can only ORDER BY expressions that are arguments to the function")
		}
		a.Args = append(a.Args, k)
		a.OrderDesc = append(a.OrderDesc, o.Desc)
		// BigQuery: NULLs first ascending, last descending, unless told.
		a.OrderNullsLast = append(a.OrderNullsLast, o.Nulls == parser.NullsLast || (o.Desc && o.Nulls != parser.NullsFirst))
	}
	if fc.Limit != nil {
		x, err := b.bindExpr(fc.Limit, argScope)
		if err != nil {
			return err
		}
		x, err = foldExpr(x, b.now)
		if err != nil {
			return err
		}
		l, ok := x.(*Literal)
		if !ok || l.D.Type != vec.Int64 || l.D.Null || l.D.Int < 0 {
			return errAt(fc.At, "LIMIT in the arguments of %s must be a non-negative integer constant", upper)
		}
		a.Limit = l.D.Int
	}
	return nil
}

var errNotInt = errors.New("not an integer")
