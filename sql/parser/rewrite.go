package parser

// Rewriter replaces nodes of a tree, bottom-up. Each function, when non-nil,
// is called for every node of its kind after that node's children have been
// rewritten; the node it returns takes the original's place in the parent
// (return the argument to keep it). Functions must not return nil where the
// parent requires a value (a Binary operand, a Query body, ...).
//
// The walk reaches every expression, table expression and query body,
// including those inside subqueries, CTEs, window specifications and
// aggregate ORDER BY clauses. It does not replace the *DatePart of an
// Extract (its Part field has a fixed type) but does visit date parts used
// as function arguments.
type Rewriter struct {
	Expr  func(Expr) Expr
	Table func(TableExpr) TableExpr
	Body  func(QueryBody) QueryBody
}

// Rewrite applies r to the tree under root, modifying it in place, and
// returns the (possibly replaced) root. A root that is an Expr, TableExpr or
// QueryBody is itself subject to replacement; a *Query root is rewritten in
// place and returned as is.
func Rewrite(root Node, r Rewriter) Node {
	switch x := root.(type) {
	case *Query:
		r.query(x)
		return x
	case QueryBody:
		return r.body(x)
	case TableExpr:
		return r.table(x)
	case Expr:
		return r.expr(x)
	case *With:
		for _, c := range x.CTEs {
			r.query(c.Query)
		}
	case *CTE:
		r.query(x.Query)
	case *SelectItem:
		x.Expr = r.expr(x.Expr)
	case *OrderItem:
		x.Expr = r.expr(x.Expr)
	case *When:
		x.Cond = r.expr(x.Cond)
		x.Result = r.expr(x.Result)
	case *WindowSpec:
		r.window(x)
	}
	return root
}

func (r *Rewriter) query(q *Query) {
	if q == nil {
		return
	}
	if q.With != nil {
		for _, c := range q.With.CTEs {
			r.query(c.Query)
		}
	}
	q.Body = r.body(q.Body)
	r.orderItems(q.OrderBy)
	q.Limit = r.expr(q.Limit)
	q.Offset = r.expr(q.Offset)
}

func (r *Rewriter) orderItems(items []*OrderItem) {
	for _, it := range items {
		it.Expr = r.expr(it.Expr)
	}
}

func (r *Rewriter) exprs(list []Expr) {
	for i, e := range list {
		list[i] = r.expr(e)
	}
}

func (r *Rewriter) body(b QueryBody) QueryBody {
	switch x := b.(type) {
	case nil:
		return nil
	case *Select:
		for _, it := range x.Items {
			it.Expr = r.expr(it.Expr)
		}
		x.From = r.table(x.From)
		x.Where = r.expr(x.Where)
		r.exprs(x.GroupBy)
		x.Having = r.expr(x.Having)
		x.Qualify = r.expr(x.Qualify)
	case *SetOp:
		x.Left = r.body(x.Left)
		x.Right = r.body(x.Right)
	case *Query:
		r.query(x)
	}
	if r.Body != nil {
		b = r.Body(b)
	}
	return b
}

func (r *Rewriter) table(t TableExpr) TableExpr {
	switch x := t.(type) {
	case nil:
		return nil
	case *SubqueryTable:
		r.query(x.Query)
	case *UnnestTable:
		x.Expr = r.expr(x.Expr)
	case *TableFunc:
		// The call itself is not replaceable (its slot has a fixed type);
		// its arguments are.
		r.exprs(x.Call.Args)
	case *Join:
		x.Left = r.table(x.Left)
		x.Right = r.table(x.Right)
		x.On = r.expr(x.On)
	}
	if r.Table != nil {
		t = r.Table(t)
	}
	return t
}

func (r *Rewriter) window(w *WindowSpec) {
	r.exprs(w.PartitionBy)
	r.orderItems(w.OrderBy)
	if w.Frame != nil {
		w.Frame.Start.Offset = r.expr(w.Frame.Start.Offset)
		if w.Frame.End != nil {
			w.Frame.End.Offset = r.expr(w.Frame.End.Offset)
		}
	}
}

func (r *Rewriter) expr(e Expr) Expr {
	switch x := e.(type) {
	case nil:
		return nil
	case *Interval:
		x.Value = r.expr(x.Value)
	case *Unary:
		x.X = r.expr(x.X)
	case *Binary:
		x.L = r.expr(x.L)
		x.R = r.expr(x.R)
	case *Like:
		x.X = r.expr(x.X)
		x.Pattern = r.expr(x.Pattern)
	case *Between:
		x.X = r.expr(x.X)
		x.Lo = r.expr(x.Lo)
		x.Hi = r.expr(x.Hi)
	case *In:
		x.X = r.expr(x.X)
		r.exprs(x.List)
		r.query(x.Query)
		x.Unnest = r.expr(x.Unnest)
	case *Is:
		x.X = r.expr(x.X)
	case *FuncCall:
		r.exprs(x.Args)
		r.orderItems(x.OrderBy)
		x.Limit = r.expr(x.Limit)
		if x.Over != nil {
			r.window(x.Over)
		}
	case *Extract:
		x.X = r.expr(x.X)
		x.TimeZone = r.expr(x.TimeZone)
	case *Case:
		x.Operand = r.expr(x.Operand)
		for _, w := range x.Whens {
			w.Cond = r.expr(w.Cond)
			w.Result = r.expr(w.Result)
		}
		x.Else = r.expr(x.Else)
	case *Cast:
		x.X = r.expr(x.X)
	case *Subscript:
		x.X = r.expr(x.X)
		x.Index = r.expr(x.Index)
	case *FieldAccess:
		x.X = r.expr(x.X)
	case *ArrayLit:
		r.exprs(x.Elems)
	case *ArraySubquery:
		r.query(x.Query)
	case *StructLit:
		for i := range x.Fields {
			x.Fields[i].Expr = r.expr(x.Fields[i].Expr)
		}
	case *Exists:
		r.query(x.Query)
	case *ScalarSubquery:
		r.query(x.Query)
	}
	if r.Expr != nil {
		e = r.Expr(e)
	}
	return e
}
