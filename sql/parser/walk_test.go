package parser

import (
	"fmt"
	"strings"
	"testing"
)

func nodeName(n Node) string {
	return strings.TrimPrefix(fmt.Sprintf("%T", n), "*parser.")
}

func TestInspectOrder(t *testing.T) {
	q := mustParse(t, "with c as (select 1 as x) select f(x, @p) as y from c cross join unnest(z) as u where x > 1 order by y limit 2")
	var got []string
	Inspect(q, func(n Node) bool {
		if n != nil {
			got = append(got, nodeName(n))
		}
		return true
	})
	want := "Query With CTE Query Select SelectItem IntLit " +
		"Select SelectItem FuncCall ColumnRef Param Join TableName UnnestTable ColumnRef Binary ColumnRef IntLit " +
		"OrderItem ColumnRef IntLit"
	if strings.Join(got, " ") != want {
		t.Errorf("order\n got %s\nwant %s", strings.Join(got, " "), want)
	}
}

// countingVisitor checks that Walk pairs every descent with a Visit(nil).
type countingVisitor struct {
	depth, maxDepth, nodes *int
	skip                   func(Node) bool
}

func (v countingVisitor) Visit(n Node) Visitor {
	if n == nil {
		*v.depth--
		return nil
	}
	*v.nodes++
	if v.skip != nil && v.skip(n) {
		return nil
	}
	*v.depth++
	if *v.depth > *v.maxDepth {
		*v.maxDepth = *v.depth
	}
	return v
}

func TestWalk(t *testing.T) {
	q := mustParse(t, studioQueries[0].sql)
	depth, maxDepth, nodes := 0, 0, 0
	Walk(countingVisitor{&depth, &maxDepth, &nodes, nil}, q)
	if depth != 0 || maxDepth < 5 || nodes < 30 {
		t.Errorf("depth %d max %d nodes %d", depth, maxDepth, nodes)
	}
	// Returning nil for the FROM clause skips its subtree.
	depth, maxDepth, skipped := 0, 0, 0
	Walk(countingVisitor{&depth, &maxDepth, &skipped, func(n Node) bool { _, ok := n.(*Join); return ok }}, q)
	if depth != 0 || skipped >= nodes {
		t.Errorf("skipping a subtree visited %d of %d nodes", skipped, nodes)
	}
}

// TestWalkReachesEverything checks that every expression of a query full of
// constructs is reached, by counting the @params (each construct holds one).
func TestWalkReachesEverything(t *testing.T) {
	sql := `with c as (select @p1 as a) select
		-@p2, @p3 + 1, @p4 like 'x', @p5 between @p6 and @p7, @p8 in (@p9), 1 in (select @p10), 1 in unnest(@p11),
		@p12 is null, f(@p13 order by @p14 limit @p15) over (partition by @p16 order by @p17 rows @p18 preceding),
		extract(hour from @p19 at time zone @p20), case @p21 when @p22 then @p23 else @p24 end, cast(@p25 as string),
		@p26[offset(@p27)], (@p28).x, [@p29], array(select @p30), struct(@p31 as s), exists(select @p32),
		(select @p33), interval @p34 hour, timestamp_trunc(@p35, minute)
	from c cross join unnest(@p36) as u left join (select @p37 as z) s on @p38
	where @p39 group by @p40 having @p41 qualify @p42 order by @p43 limit @p44 offset @p45`
	q := mustParse(t, sql)
	got := Parameters(q)
	if len(got) != 45 {
		t.Errorf("Walk reached %d of 45 parameters: %v", len(got), got)
	}
	// Rewrite reaches the same set: replace every parameter with a string.
	n := 0
	Rewrite(q, Rewriter{Expr: func(e Expr) Expr {
		if p, ok := e.(*Param); ok {
			n++
			return &StringLit{At: p.At, Value: "v_" + p.Name}
		}
		return e
	}})
	if n != 45 || len(Parameters(q)) != 0 {
		t.Errorf("Rewrite replaced %d of 45 parameters; %d left", n, len(Parameters(q)))
	}
	checkRoundTrip(t, Format(q))
}

func TestRewrite(t *testing.T) {
	q := mustParse(t, "select a from t where x = @x and y > @y")
	// Bind parameters.
	Rewrite(q, Rewriter{Expr: func(e Expr) Expr {
		if p, ok := e.(*Param); ok && p.Name == "x" {
			return &IntLit{Value: 42}
		}
		return e
	}})
	if got := Format(q); got != "SELECT a FROM t WHERE x = 42 AND y > @y" {
		t.Errorf("after binding: %s", got)
	}
	// Replace a table by a subquery.
	Rewrite(q, Rewriter{Table: func(te TableExpr) TableExpr {
		if tn, ok := te.(*TableName); ok && tn.Name() == "t" {
			return &SubqueryTable{Query: mustParse(t, "select 1 as a, 2 as x, 3 as y"), Alias: &Ident{Name: "t"}}
		}
		return te
	}})
	if got := Format(q); got != "SELECT a FROM (SELECT 1 AS a, 2 AS x, 3 AS y) AS t WHERE x = 42 AND y > @y" {
		t.Errorf("after table rewrite: %s", got)
	}
	// Bottom-up: children are rewritten before their parent sees them.
	e := parseExprString(t, "1 + 2 * 3")
	folded := Rewrite(e, Rewriter{Expr: func(e Expr) Expr {
		b, ok := e.(*Binary)
		if !ok {
			return e
		}
		l, lok := b.L.(*IntLit)
		r, rok := b.R.(*IntLit)
		if !lok || !rok {
			return e
		}
		switch b.Op {
		case OpAdd:
			return &IntLit{Value: l.Value + r.Value}
		case OpMul:
			return &IntLit{Value: l.Value * r.Value}
		}
		return e
	}})
	if sx(folded.(Expr)) != "7" {
		t.Errorf("constant folding = %s", sx(folded.(Expr)))
	}
	// Replace a query body.
	q = mustParse(t, "with c as (select 1 as a) select a from c")
	Rewrite(q, Rewriter{Body: func(b QueryBody) QueryBody {
		if s, ok := b.(*Select); ok && s.From != nil {
			return mustParse(t, "select 2 as a").Body
		}
		return b
	}})
	if got := Format(q); got != "WITH c AS (SELECT 1 AS a) SELECT 2 AS a" {
		t.Errorf("after body rewrite: %s", got)
	}
}
