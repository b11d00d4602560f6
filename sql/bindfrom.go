package sql

import (
	"fmt"

	"github.com/sediment/sediment/internal/vec"
	"github.com/sediment/sediment/sql/fn"
	"github.com/sediment/sediment/sql/parser"
	"github.com/sediment/sediment/sql/scan"
)

// The FROM clause: tables, CTEs, subqueries, UNNEST, joins and comma
// lists, each item adding its range variables to the scope.

func aliasName(alias *parser.Ident, def string) string {
	if alias != nil {
		return alias.Name
	}
	return def
}

// bindFrom binds a FROM item, adding its range variables to sc, and returns
// the node producing its rows. left is the node of the items before it (for
// UNNEST of their arrays), nil for the first item.
func (b *binder) bindFrom(t parser.TableExpr, sc *scope, left Node) (Node, error) {
	switch t := t.(type) {
	case *parser.TableName:
		if t.Ref == parser.RefCTE && t.CTE != nil {
			if b.inCTE[t.CTE] {
				return nil, errAt(t.At, "recursive CTEs are not supported: %s refers to itself", t.CTE.Name.Name)
			}
			if b.inCTE == nil {
				b.inCTE = map[*parser.CTE]bool{}
			}
			b.inCTE[t.CTE] = true
			n, err := b.bindQuery(t.CTE.Query, nil)
			delete(b.inCTE, t.CTE)
			if err != nil {
				return nil, err
			}
			sc.vars = append(sc.vars, &rangeVar{name: aliasName(t.Alias, t.CTE.Name.Name), kind: rvSubquery, node: n, cols: n.Cols()})
			return b.crossWith(left, n), nil
		}
		tb, err := b.cat.Table(t.Name())
		if err != nil {
			return nil, errAt(t.At, "%v", err)
		}
		def := t.Parts[len(t.Parts)-1].Name
		s := &ScanNode{Table: tb, Alias: aliasName(t.Alias, def), byPath: map[string]ColID{}}
		s.req.TimeMin, s.req.TimeMax = scan.MinTime, scan.MaxTime
		sc.vars = append(sc.vars, &rangeVar{name: s.Alias, kind: rvTable, node: s, scan: s})
		return b.crossWith(left, s), nil
	case *parser.SubqueryTable:
		n, err := b.bindQuery(t.Query, nil)
		if err != nil {
			return nil, err
		}
		sc.vars = append(sc.vars, &rangeVar{name: aliasName(t.Alias, ""), kind: rvSubquery, node: n, cols: n.Cols()})
		return b.crossWith(left, n), nil
	case *parser.UnnestTable:
		in := left
		if in == nil {
			in = &ValuesNode{}
		}
		return b.bindUnnest(t, sc, in, false)
	case *parser.Join:
		return b.bindFromItem(t, sc, left)
	case *parser.TableFunc:
		return nil, errAt(t.At, "Table-valued function %s is not supported", t.Call.FuncName())
	}
	return nil, fmt.Errorf("unsupported FROM item %T", t)
}

func (b *binder) crossWith(left, right Node) Node {
	if left == nil {
		return right
	}
	return &JoinNode{Kind: JoinCross, Left: left, Right: right}
}

func andOf(es []Expr) Expr {
	if len(es) == 1 {
		return es[0]
	}
	return &AndExpr{Args: es}
}

// bindUnnest binds UNNEST(expr) over the rows of in. An object (one record
// per row) becomes a RecordAliasNode; an array an UnnestNode.
func (b *binder) bindUnnest(u *parser.UnnestTable, sc *scope, in Node, outer bool) (Node, error) {
	arr, err := b.bindExprWant(u.Expr, sc, wantContainer)
	if err != nil {
		return nil, err
	}
	name := aliasName(u.Alias, "")
	if name == "" {
		if cr, ok := u.Expr.(*parser.ColumnRef); ok {
			name = cr.Parts[len(cr.Parts)-1].Name
		}
	}
	switch arr.Type().V {
	case vec.RowRef:
		src, ok := arr.(*ColRef)
		if !ok {
			return nil, errAt(u.At, "UNNEST of a computed record is not supported")
		}
		at := arr.Type()
		at.Single = true
		alias := b.newCol(name, at)
		if u.WithOffset {
			return nil, errAt(u.At, "WITH OFFSET over a record is not supported")
		}
		sc.vars = append(sc.vars, &rangeVar{name: name, kind: rvElem, elem: alias})
		return &RecordAliasNode{In: in, Src: src.ID, Alias: alias, Outer: outer}, nil
	case vec.List:
	case vec.Unknown:
		// A field that was never ingested: an empty array.
		arr = &Literal{D: fn.Datum{Type: vec.List, Null: true}}
	default:
		return nil, errAt(u.At, "Values referenced in UNNEST must be arrays. UNNEST contains expression of type %s", arr.Type())
	}
	et := ColType{V: arr.Type().Elem}
	if et.V == vec.Unknown {
		et.V = vec.JSON // record elements, read by field
	}
	un := &UnnestNode{In: in, Arr: arr, Elem: b.newCol(name, et), Outer: outer}
	if u.WithOffset {
		oc := b.newCol(aliasName(u.OffsetAlias, "offset"), ColType{V: vec.Int64})
		un.Offset = &oc
		sc.vars = append(sc.vars, &rangeVar{name: oc.Name, kind: rvElem, elem: oc})
	}
	un.elemChild = -1
	if cr, ok := arr.(*ColRef); ok {
		un.arrScan, un.arrCol = traceScanCol(in, cr.ID)
		if un.arrScan != nil && arr.Type().Elem == vec.Unknown {
			un.elemChild = wholeElemChild(&un.arrScan.req.Columns[un.arrCol])
		}
	}
	sc.vars = append(sc.vars, &rangeVar{name: name, kind: rvElem, node: un, elem: un.Elem})
	return un, nil
}

// wholeElemChild makes an array column's elements carry their whole value
// as JSON text (a child with an empty path) and returns its index.
func wholeElemChild(c *scan.Column) int {
	for i, e := range c.Elem {
		if e.Path == "" && e.Kind == scan.Record {
			return i
		}
	}
	c.Elem = append(c.Elem, scan.Column{Kind: scan.Record})
	return len(c.Elem) - 1
}

// traceScanCol follows pass-through columns down to the scan column that
// produces id, if there is one.
func traceScanCol(n Node, id ColID) (*ScanNode, int) {
	switch n := n.(type) {
	case *ScanNode:
		for i, c := range n.cols {
			if c.ID == id {
				return n, i
			}
		}
	case *ProjectNode:
		for i, c := range n.Out {
			if c.ID == id {
				if cr, ok := n.Exprs[i].(*ColRef); ok {
					return traceScanCol(n.In, cr.ID)
				}
				return nil, 0
			}
		}
	case *UnionNode:
		return nil, 0
	case *AggregateNode:
		return nil, 0
	default:
		for _, in := range n.Inputs() {
			if colIndex(in.Cols(), id) >= 0 {
				return traceScanCol(in, id)
			}
		}
	}
	return nil, 0
}

func (b *binder) bindFromWithRoot(t parser.TableExpr, sc *scope) (Node, error) {
	// Bind FROM items left to right: a later UNNEST may read an earlier
	// item's arrays, so the tree so far is the root names resolve through.
	var n Node
	items := flattenComma(t)
	for _, it := range items {
		var err error
		n, err = b.bindFromItem(it, sc, n)
		if err != nil {
			return nil, err
		}
	}
	b.fromRoot = n
	return n, nil
}

// flattenComma splits top-level comma joins into items.
func flattenComma(t parser.TableExpr) []parser.TableExpr {
	if j, ok := t.(*parser.Join); ok && j.Kind == parser.JoinComma {
		return append(flattenComma(j.Left), j.Right)
	}
	return []parser.TableExpr{t}
}

// bindFromItem binds one FROM item with b.fromRoot tracking the tree, so
// names in ON conditions and UNNEST arguments resolve through it.
func (b *binder) bindFromItem(t parser.TableExpr, sc *scope, left Node) (Node, error) {
	if j, ok := t.(*parser.Join); ok {
		l, err := b.bindFromItem(j.Left, sc, left)
		if err != nil {
			return nil, err
		}
		b.fromRoot = l
		n, err := b.bindJoinBound(j, sc, l)
		if err != nil {
			return nil, err
		}
		b.fromRoot = n
		return n, nil
	}
	if u, ok := t.(*parser.UnnestTable); ok {
		in := left
		if in == nil {
			in = &ValuesNode{}
		}
		b.fromRoot = in
		n, err := b.bindUnnest(u, sc, in, false)
		if err != nil {
			return nil, err
		}
		b.fromRoot = n
		return n, nil
	}
	n, err := b.bindFrom(t, sc, left)
	if err != nil {
		return nil, err
	}
	b.fromRoot = n
	return n, nil
}

func (b *binder) bindJoinBound(j *parser.Join, sc *scope, l Node) (Node, error) {
	if u, ok := j.Right.(*parser.UnnestTable); ok {
		return b.bindJoinUnnest(j, u, sc, l)
	}
	rs := &scope{}
	saved := b.fromRoot
	b.fromRoot = nil
	r, err := b.bindFromGroup(j.Right, rs)
	b.fromRoot = saved
	if err != nil {
		return nil, err
	}
	sc.vars = append(sc.vars, rs.vars...)
	jn := &JoinNode{Left: l, Right: r}
	switch j.Kind {
	case parser.JoinComma, parser.JoinCross:
		jn.Kind = JoinCross
	case parser.JoinInner:
		jn.Kind = JoinInner
	case parser.JoinLeft:
		jn.Kind = JoinLeft
	default:
		return nil, errAt(j.At, "%s is not supported", j.Kind)
	}
	b.fromRoot = jn
	if len(j.Using) > 0 {
		ls := &scope{vars: sc.vars[:len(sc.vars)-len(rs.vars)]}
		cond, err := b.bindUsing(j.Using, ls, rs)
		if err != nil {
			return nil, err
		}
		jn.Cond = cond
	} else if j.On != nil {
		cond, err := b.bindBoolExpr(j.On, sc)
		if err != nil {
			return nil, err
		}
		jn.Cond = cond
	}
	if jn.Kind == JoinInner && (jn.Cond == nil || isTrueLit(jn.Cond)) {
		jn.Kind, jn.Cond = JoinCross, nil
	}
	if jn.Kind == JoinLeft && jn.Cond != nil && isTrueLit(jn.Cond) {
		jn.Cond = nil
	}
	return jn, nil
}

// bindJoinUnnest binds [INNER|LEFT|CROSS] JOIN UNNEST(…): an inner join's
// ON condition filters the unnested rows; a LEFT JOIN takes only ON TRUE.
func (b *binder) bindJoinUnnest(j *parser.Join, u *parser.UnnestTable, sc *scope, l Node) (Node, error) {
	outer := j.Kind == parser.JoinLeft
	if j.On != nil {
		if bl, ok := j.On.(*parser.BoolLit); !ok || !bl.Value {
			if outer {
				return nil, errAt(j.At, "LEFT JOIN UNNEST supports only ON TRUE")
			}
			n, err := b.bindUnnest(u, sc, l, false)
			if err != nil {
				return nil, err
			}
			b.fromRoot = n
			cond, err := b.bindBoolExpr(j.On, sc)
			if err != nil {
				return nil, err
			}
			return &FilterNode{In: n, Cond: cond}, nil
		}
	}
	if j.Kind == parser.JoinRight || j.Kind == parser.JoinFull {
		return nil, errAt(j.At, "%s UNNEST is not supported", j.Kind)
	}
	return b.bindUnnest(u, sc, l, outer)
}

// bindUsing binds JOIN … USING (a, b): left.a = right.a AND left.b = right.b,
// each name resolved in the left scope ls and the right scope rs.
func (b *binder) bindUsing(using []parser.Ident, ls, rs *scope) (Expr, error) {
	var conds []Expr
	for _, u := range using {
		ref := &parser.ColumnRef{At: u.At, Parts: []parser.Ident{u}}
		le, err := b.resolveIn(ref, ls, wantValue)
		if err != nil {
			return nil, err
		}
		re, err := b.resolveIn(ref, rs, wantValue)
		if err != nil {
			return nil, err
		}
		eq, err := b.call("=", []Expr{le, re}, u.At, false)
		if err != nil {
			return nil, err
		}
		conds = append(conds, eq)
	}
	return andOf(conds), nil
}

// bindFromGroup binds an independent FROM subtree (the right side of a
// join, possibly a parenthesised group).
func (b *binder) bindFromGroup(t parser.TableExpr, sc *scope) (Node, error) {
	saved := b.fromRoot
	defer func() { b.fromRoot = saved }()
	return b.bindFromWithRoot(t, sc)
}
