package parser

import "strconv"

// A Visitor's Visit method is invoked for each node encountered by Walk. If
// the result visitor w is not nil, Walk visits each of the children of node
// with w, followed by a call of w.Visit(nil).
type Visitor interface {
	Visit(node Node) (w Visitor)
}

// Walk traverses a syntax tree depth-first in source order (as go/ast.Walk
// does): it calls v.Visit(node); if that returns a non-nil w, Walk visits
// each child with w and then calls w.Visit(nil).
//
// Children of a node, in order: Query: With, Body, ORDER BY items, Limit,
// Offset. With: CTEs. CTE: Query. Select: items, From, Where, GROUP BY,
// Having, Qualify. Join: Left, Right, On. FuncCall: args, ORDER BY items,
// Limit, Over. WindowSpec: PARTITION BY, ORDER BY items, frame offsets. The
// others follow the order of their fields. TableName resolution pointers
// (TableName.CTE) are not followed.
func Walk(v Visitor, node Node) {
	if v = v.Visit(node); v == nil {
		return
	}
	var buf [8]Node
	for _, c := range appendChildren(buf[:0], node) {
		Walk(v, c)
	}
	v.Visit(nil)
}

type inspector func(Node) bool

func (f inspector) Visit(node Node) Visitor {
	if f(node) {
		return f
	}
	return nil
}

// Inspect traverses a syntax tree in source order: it calls f(node); if f
// returns true, Inspect visits node's children, then calls f(nil).
func Inspect(node Node, f func(Node) bool) {
	Walk(inspector(f), node)
}

// appendChildren appends the direct children of n to dst in source order.
// It is the single definition of the tree's shape used by Walk and by the
// height check.
func appendChildren(dst []Node, n Node) []Node {
	switch x := n.(type) {
	case *Query:
		if x.With != nil {
			dst = append(dst, x.With)
		}
		if x.Body != nil {
			dst = append(dst, x.Body)
		}
		dst = addOrder(dst, x.OrderBy)
		dst = addExpr(dst, x.Limit)
		dst = addExpr(dst, x.Offset)
	case *With:
		for _, c := range x.CTEs {
			dst = append(dst, c)
		}
	case *CTE:
		dst = addQuery(dst, x.Query)
	case *Select:
		for _, it := range x.Items {
			dst = append(dst, it)
		}
		if x.From != nil {
			dst = append(dst, x.From)
		}
		dst = addExpr(dst, x.Where)
		for _, e := range x.GroupBy {
			dst = addExpr(dst, e)
		}
		dst = addExpr(dst, x.Having)
		dst = addExpr(dst, x.Qualify)
	case *SelectItem:
		dst = addExpr(dst, x.Expr)
	case *SetOp:
		if x.Left != nil {
			dst = append(dst, x.Left)
		}
		if x.Right != nil {
			dst = append(dst, x.Right)
		}
	case *OrderItem:
		dst = addExpr(dst, x.Expr)
	case *SubqueryTable:
		dst = addQuery(dst, x.Query)
	case *UnnestTable:
		dst = addExpr(dst, x.Expr)
	case *TableFunc:
		if x.Call != nil {
			dst = append(dst, x.Call)
		}
	case *Join:
		if x.Left != nil {
			dst = append(dst, x.Left)
		}
		if x.Right != nil {
			dst = append(dst, x.Right)
		}
		dst = addExpr(dst, x.On)
	case *Interval:
		dst = addExpr(dst, x.Value)
	case *Unary:
		dst = addExpr(dst, x.X)
	case *Binary:
		dst = addExpr(dst, x.L)
		dst = addExpr(dst, x.R)
	case *Like:
		dst = addExpr(dst, x.X)
		dst = addExpr(dst, x.Pattern)
	case *Between:
		dst = addExpr(dst, x.X)
		dst = addExpr(dst, x.Lo)
		dst = addExpr(dst, x.Hi)
	case *In:
		dst = addExpr(dst, x.X)
		for _, e := range x.List {
			dst = addExpr(dst, e)
		}
		dst = addQuery(dst, x.Query)
		dst = addExpr(dst, x.Unnest)
	case *Is:
		dst = addExpr(dst, x.X)
	case *FuncCall:
		for _, e := range x.Args {
			dst = addExpr(dst, e)
		}
		dst = addOrder(dst, x.OrderBy)
		dst = addExpr(dst, x.Limit)
		if x.Over != nil {
			dst = append(dst, x.Over)
		}
	case *WindowSpec:
		for _, e := range x.PartitionBy {
			dst = addExpr(dst, e)
		}
		dst = addOrder(dst, x.OrderBy)
		if x.Frame != nil {
			dst = addExpr(dst, x.Frame.Start.Offset)
			if x.Frame.End != nil {
				dst = addExpr(dst, x.Frame.End.Offset)
			}
		}
	case *Extract:
		if x.Part != nil {
			dst = append(dst, x.Part)
		}
		dst = addExpr(dst, x.X)
		dst = addExpr(dst, x.TimeZone)
	case *Case:
		dst = addExpr(dst, x.Operand)
		for _, w := range x.Whens {
			dst = append(dst, w)
		}
		dst = addExpr(dst, x.Else)
	case *When:
		dst = addExpr(dst, x.Cond)
		dst = addExpr(dst, x.Result)
	case *Cast:
		dst = addExpr(dst, x.X)
	case *Subscript:
		dst = addExpr(dst, x.X)
		dst = addExpr(dst, x.Index)
	case *FieldAccess:
		dst = addExpr(dst, x.X)
	case *ArrayLit:
		for _, e := range x.Elems {
			dst = addExpr(dst, e)
		}
	case *ArraySubquery:
		dst = addQuery(dst, x.Query)
	case *StructLit:
		for _, f := range x.Fields {
			dst = addExpr(dst, f.Expr)
		}
	case *Exists:
		dst = addQuery(dst, x.Query)
	case *ScalarSubquery:
		dst = addQuery(dst, x.Query)
	}
	return dst
}

func addExpr(dst []Node, e Expr) []Node {
	if e != nil {
		dst = append(dst, e)
	}
	return dst
}

func addOrder(dst []Node, items []*OrderItem) []Node {
	for _, it := range items {
		dst = append(dst, it)
	}
	return dst
}

func addQuery(dst []Node, q *Query) []Node {
	if q != nil {
		dst = append(dst, q)
	}
	return dst
}

// checkHeight fails when the tree under root is higher than MaxTreeHeight.
func checkHeight(root Node) *Error {
	if h, deepest := treeHeight(root, MaxTreeHeight); h > MaxTreeHeight {
		return &Error{
			Msg: "Query is too deeply nested (syntax tree higher than " + strconv.Itoa(MaxTreeHeight) + ")",
			Pos: deepest.Pos(),
		}
	}
	return nil
}

// treeHeight returns the height of the tree under root (a lone node has
// height 1), or, as soon as it exceeds limit, limit+1 and the node found at
// that depth. It walks with an explicit stack, so it does not itself recurse.
func treeHeight(root Node, limit int) (int, Node) {
	type item struct {
		n     Node
		depth int
	}
	stack := []item{{root, 1}}
	var kids []Node
	height := 0
	for len(stack) > 0 {
		it := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if it.depth > limit {
			return limit + 1, it.n
		}
		height = max(height, it.depth)
		kids = appendChildren(kids[:0], it.n)
		for _, k := range kids {
			stack = append(stack, item{k, it.depth + 1})
		}
	}
	return height, nil
}
