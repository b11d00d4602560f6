package sql

import (
	"fmt"
	"strings"

	"github.com/sediment/sediment/internal/vec"
	"github.com/sediment/sediment/sql/parser"
)

// SELECT: aggregation, GROUP BY, HAVING, QUALIFY, ORDER BY keys and the
// projection that finishes a SELECT.

// aggCtx collects the aggregates and group keys of a SELECT.
type aggCtx struct {
	base  *scope
	keys  []Expr
	kcols []Column
	aggs  []*AggCall
}

func isAggregateCall(f *parser.FuncCall) bool {
	if f.Over != nil || len(f.Name) != 1 {
		return false
	}
	return aggregateNames[strings.ToLower(f.Name[0].Name)]
}

// hasAggregate reports whether an expression contains an aggregate call
// (not looking into subqueries).
func hasAggregate(e parser.Expr) bool {
	found := false
	parser.Inspect(e, func(n parser.Node) bool {
		switch n := n.(type) {
		case *parser.FuncCall:
			if isAggregateCall(n) {
				found = true
			}
		case *parser.Query:
			return false
		}
		return !found
	})
	return found
}

// bindSelect binds one SELECT with the ORDER BY, LIMIT and OFFSET of its
// query: FROM and WHERE, then the list and the clauses after it, with or
// without aggregation.
func (b *binder) bindSelect(sel *parser.Select, orderBy []*parser.OrderItem, limit, offset parser.Expr, outer *scope) (Node, error) {
	sc := &scope{outer: outer}
	saved := b.fromRoot
	defer func() { b.fromRoot = saved }()
	n, err := b.bindFromWhere(sel, sc)
	if err != nil {
		return nil, err
	}
	sc.aliases = map[string]parser.Expr{}
	for _, it := range sel.Items {
		if it.Alias != nil {
			sc.aliases[strings.ToLower(it.Alias.Name)] = it.Expr
		}
	}
	// Window calls of the SELECT list, QUALIFY and ORDER BY.
	wc := &winCtx{}
	if isAggregateSelect(sel, orderBy) {
		return b.bindAggregateSelect(sel, sc, wc, n, orderBy, limit, offset)
	}
	return b.bindPlainSelect(sel, sc, wc, n, orderBy, limit, offset)
}

// bindFromWhere binds a SELECT's FROM (none: one row of no columns) and
// WHERE, and sets b.fromRoot to the node whose rows the rest reads.
func (b *binder) bindFromWhere(sel *parser.Select, sc *scope) (Node, error) {
	var n Node
	b.fromRoot = nil
	if sel.From != nil {
		var err error
		if n, err = b.bindFromWithRoot(sel.From, sc); err != nil {
			return nil, err
		}
	} else {
		n = &ValuesNode{}
		b.fromRoot = n
	}
	for _, it := range sel.Items {
		if it.Star {
			return nil, errAt(it.At, "restricted wildcard (*) in a result column")
		}
	}
	if sel.Where != nil {
		if hasAggregate(sel.Where) {
			return nil, errAt(sel.Where.Pos(), "Aggregate function not allowed in WHERE clause")
		}
		sc.clause = "WHERE"
		cond, err := b.bindBoolExpr(sel.Where, sc)
		if err != nil {
			return nil, err
		}
		n = &FilterNode{In: n, Cond: cond}
		b.fromRoot = n
	}
	return n, nil
}

// isAggregateSelect reports whether a SELECT aggregates: it has GROUP BY
// or HAVING, or an aggregate call in its list, ORDER BY or QUALIFY.
func isAggregateSelect(sel *parser.Select, orderBy []*parser.OrderItem) bool {
	aggregate := len(sel.GroupBy) > 0 || sel.Having != nil
	for _, it := range sel.Items {
		aggregate = aggregate || hasAggregate(it.Expr)
	}
	for _, o := range orderBy {
		aggregate = aggregate || hasAggregate(o.Expr)
	}
	if sel.Qualify != nil {
		aggregate = aggregate || hasAggregate(sel.Qualify)
	}
	return aggregate
}

// bindPlainSelect binds the list, QUALIFY and ORDER BY of a SELECT that
// does not aggregate, over n.
func (b *binder) bindPlainSelect(sel *parser.Select, sc *scope, wc *winCtx, n Node, orderBy []*parser.OrderItem, limit, offset parser.Expr) (Node, error) {
	sc.win = wc
	items := make([]Expr, len(sel.Items))
	for i, it := range sel.Items {
		sc.clause = "SELECT"
		e, err := b.bindExpr(it.Expr, sc)
		if err != nil {
			return nil, err
		}
		items[i] = e
	}
	qualify, err := b.bindQualify(sel, sc, wc)
	if err != nil {
		return nil, err
	}
	okeys, err := b.bindOrderKeys(orderBy, sel, items, sc)
	if err != nil {
		return nil, err
	}
	n = wc.windowNode(n)
	if qualify != nil {
		n = &FilterNode{In: n, Cond: qualify}
	}
	return b.finishSelect(sel, n, items, okeys, limit, offset)
}

// bindAggregateSelect binds an aggregating SELECT over n: the group keys,
// then everything that reads aggregates (list, HAVING, QUALIFY, ORDER BY),
// so that the aggregate node knows all of them, then the nodes: aggregate,
// HAVING filter, windows, QUALIFY filter.
func (b *binder) bindAggregateSelect(sel *parser.Select, sc *scope, wc *winCtx, n Node, orderBy []*parser.OrderItem, limit, offset parser.Expr) (Node, error) {
	ac, err := b.bindGroupKeys(sel, sc)
	if err != nil {
		return nil, err
	}
	exprScope := &scope{vars: sc.vars, agg: ac, aliases: sc.aliases, outer: sc.outer, win: wc}
	items := make([]Expr, len(sel.Items))
	for i, it := range sel.Items {
		e, err := b.bindExpr(it.Expr, exprScope)
		if err != nil {
			return nil, err
		}
		items[i] = e
	}
	var having Expr
	if sel.Having != nil {
		hsc := *exprScope
		hsc.clause, hsc.win = "HAVING", nil
		h, err := b.bindBoolExpr(sel.Having, &hsc)
		if err != nil {
			return nil, err
		}
		having = h
	}
	qualify, err := b.bindQualify(sel, exprScope, wc)
	if err != nil {
		return nil, err
	}
	okeys, err := b.bindOrderKeys(orderBy, sel, items, exprScope)
	if err != nil {
		return nil, err
	}
	an := &AggregateNode{In: n, Keys: ac.keys}
	an.Out = append(an.Out, ac.kcols...)
	for _, a := range ac.aggs {
		an.Aggs = append(an.Aggs, a)
		an.Out = append(an.Out, a.Out)
	}
	n = an
	if having != nil {
		n = &FilterNode{In: n, Cond: having}
	}
	n = wc.windowNode(n)
	if qualify != nil {
		n = &FilterNode{In: n, Cond: qualify}
	}
	return b.finishSelect(sel, n, items, okeys, limit, offset)
}

// bindGroupKeys binds GROUP BY's distinct keys (no records or arrays) into
// a new aggregation context over sc.
func (b *binder) bindGroupKeys(sel *parser.Select, sc *scope) (*aggCtx, error) {
	ac := &aggCtx{base: sc}
	sc.clause = "GROUP BY"
	for _, g := range sel.GroupBy {
		ge, err := b.groupExpr(g, sel, sc)
		if err != nil {
			return nil, err
		}
		dup := false
		for _, k := range ac.keys {
			if exprEqual(k, ge) {
				dup = true
			}
		}
		if dup {
			continue
		}
		if ge.Type().V == vec.RowRef || ge.Type().V == vec.List {
			return nil, errAt(g.Pos(), "Grouping by expressions of type %s is not allowed", ge.Type())
		}
		ac.keys = append(ac.keys, ge)
		ac.kcols = append(ac.kcols, b.newCol(exprName(g), ge.Type()))
	}
	return ac, nil
}

// bindQualify binds the QUALIFY condition, which filters rows after the
// window functions; BigQuery requires one in the SELECT list or in QUALIFY
// itself.
func (b *binder) bindQualify(sel *parser.Select, sc *scope, wc *winCtx) (Expr, error) {
	if sel.Qualify == nil {
		return nil, nil
	}
	qsc := *sc
	qsc.clause = "QUALIFY"
	cond, err := b.bindBoolExpr(sel.Qualify, &qsc)
	if err != nil {
		return nil, err
	}
	if len(wc.funcs) == 0 {
		return nil, errAt(sel.Qualify.Pos(), "The QUALIFY clause requires analytic function to be present")
	}
	return cond, nil
}

// groupExpr binds a GROUP BY item: an ordinal, a SELECT alias, or an
// expression.
func (b *binder) groupExpr(g parser.Expr, sel *parser.Select, sc *scope) (Expr, error) {
	if il, ok := g.(*parser.IntLit); ok {
		if il.Value < 1 || int(il.Value) > len(sel.Items) {
			return nil, errAt(il.At, "GROUP BY column number %d is out of range; there are %d columns", il.Value, len(sel.Items))
		}
		return b.bindExpr(sel.Items[il.Value-1].Expr, sc)
	}
	if cr, ok := g.(*parser.ColumnRef); ok && len(cr.Parts) == 1 {
		if ae, ok := sc.aliases[strings.ToLower(cr.Parts[0].Name)]; ok && !hasAggregate(ae) {
			return b.bindExpr(ae, sc)
		}
	}
	return b.bindExpr(g, sc)
}

// orderSpec is an ORDER BY key before it is placed.
type orderSpec struct {
	item int // index into the select items, or -1
	e    Expr
	o    *parser.OrderItem
}

func (b *binder) bindOrderKeys(orderBy []*parser.OrderItem, sel *parser.Select, items []Expr, sc *scope) ([]orderSpec, error) {
	var out []orderSpec
	for _, o := range orderBy {
		if il, ok := o.Expr.(*parser.IntLit); ok {
			if il.Value < 1 || int(il.Value) > len(items) {
				return nil, errAt(il.At, "ORDER BY column number %d is out of range; there are %d columns", il.Value, len(items))
			}
			out = append(out, orderSpec{item: int(il.Value - 1), o: o})
			continue
		}
		if cr, ok := o.Expr.(*parser.ColumnRef); ok && len(cr.Parts) == 1 {
			found := -1
			for i, it := range sel.Items {
				if it.Alias != nil && strings.EqualFold(it.Alias.Name, cr.Parts[0].Name) {
					found = i
					break
				}
			}
			if found < 0 {
				for i, it := range sel.Items {
					if it.Alias == nil && strings.EqualFold(exprName(it.Expr), cr.Parts[0].Name) {
						if _, isRef := it.Expr.(*parser.ColumnRef); isRef {
							found = i
							break
						}
					}
				}
			}
			if found >= 0 {
				out = append(out, orderSpec{item: found, o: o})
				continue
			}
		}
		sc.clause = "ORDER BY"
		e, err := b.bindExpr(o.Expr, sc)
		if err != nil {
			return nil, err
		}
		spec := orderSpec{item: -1, e: e, o: o}
		for i, it := range items {
			if exprEqual(it, e) {
				spec.item = i
				break
			}
		}
		out = append(out, spec)
	}
	return out, nil
}

// finishSelect adds the projection, DISTINCT, ordering and limit.
func (b *binder) finishSelect(sel *parser.Select, n Node, items []Expr, order []orderSpec, limit, offset parser.Expr) (Node, error) {
	p := &ProjectNode{In: n}
	anon := 0
	for i, it := range sel.Items {
		name := ""
		if it.Alias != nil {
			name = it.Alias.Name
		} else if nm := exprName(it.Expr); nm != "" {
			name = nm
		} else {
			name = fmt.Sprintf("f%d_", anon)
			anon++
		}
		p.Exprs = append(p.Exprs, items[i])
		p.Out = append(p.Out, b.newCol(name, items[i].Type()))
	}
	visible := len(p.Out)
	var keys []SortKey
	for _, o := range order {
		if o.item >= 0 {
			c := p.Out[o.item]
			keys = append(keys, sortKey(&ColRef{ID: c.ID, T: c.T, Name: c.Name}, o.o))
			continue
		}
		if sel.Distinct {
			return nil, errAt(o.o.At, "ORDER BY clause expression references a column which is not visible after SELECT DISTINCT")
		}
		c := b.newCol("$order", o.e.Type())
		p.Exprs = append(p.Exprs, o.e)
		p.Out = append(p.Out, c)
		keys = append(keys, sortKey(&ColRef{ID: c.ID, T: c.T, Name: c.Name}, o.o))
	}
	var out Node = p
	if sel.Distinct {
		for _, c := range p.Out {
			if c.T.V == vec.RowRef || c.T.V == vec.List {
				return nil, errAt(sel.At, "Column %s of type %s cannot be used in SELECT DISTINCT", c.Name, c.T)
			}
		}
		out = &DistinctNode{In: out}
	}
	if len(keys) > 0 {
		for _, k := range keys {
			if t := k.E.Type().V; t == vec.RowRef || t == vec.List {
				return nil, errAt(sel.At, "ORDER BY does not support expressions of type %s", k.E.Type())
			}
		}
		out = &SortNode{In: out, Keys: keys}
	}
	if len(p.Out) > visible {
		fp := &ProjectNode{In: out}
		for _, c := range p.Out[:visible] {
			fp.Exprs = append(fp.Exprs, &ColRef{ID: c.ID, T: c.T, Name: c.Name})
			fp.Out = append(fp.Out, c)
		}
		out = fp
	}
	return b.applyLimit(out, limit, offset)
}

// exprName is the implicit output name of a SELECT expression: the last
// part of a column or field path, "" for anything else.
func exprName(e parser.Expr) string {
	switch e := e.(type) {
	case *parser.ColumnRef:
		return e.Parts[len(e.Parts)-1].Name
	case *parser.FieldAccess:
		return e.Field.Name
	}
	return ""
}
