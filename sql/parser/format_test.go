package parser

import (
	"testing"
)

// allTestSQL gathers every SQL text used by the tests, valid or not. It is
// the round-trip corpus and the fuzz seed corpus.
func allTestSQL() []string {
	var all []string
	for _, q := range studioQueries {
		all = append(all, q.sql)
	}
	for _, c := range constructCases {
		all = append(all, c.sql)
	}
	for _, c := range exprCases {
		all = append(all, "SELECT "+c.in)
	}
	for _, c := range parseErrorCases {
		all = append(all, c.sql)
	}
	for _, c := range formatCases {
		all = append(all, c.in)
	}
	for _, c := range validationCases {
		all = append(all, c.sql)
	}
	for _, c := range sandboxCases {
		all = append(all, c.endpoint, c.consumer)
	}
	return all
}

// checkRoundTrip asserts the printer's contract on sql: when it parses,
// every query prints to text that parses to an Equal tree, and printing
// that tree gives the same text again.
func checkRoundTrip(t *testing.T, sql string) {
	t.Helper()
	stmts, err := ParseStatements(sql)
	if err != nil {
		return
	}
	for _, st := range stmts {
		q, ok := st.(*Query)
		if !ok {
			continue
		}
		out := Format(q)
		q2, err := Parse(out)
		if err != nil {
			t.Errorf("Format output does not parse: %v\ninput:  %q\noutput: %q", err, sql, out)
			continue
		}
		if !Equal(q, q2) {
			t.Errorf("round trip changed the tree\ninput:  %q\noutput: %q\nreparsed: %q", sql, out, Format(q2))
			continue
		}
		if out2 := Format(q2); out2 != out {
			t.Errorf("Format not stable\nfirst:  %q\nsecond: %q", out, out2)
		}
	}
}

// checkHeightBound asserts that the cheap bound that lets the parser skip
// the exact tree height check is indeed a bound.
func checkHeightBound(t *testing.T, sql string) {
	t.Helper()
	stmts, p, err := parseStatements(sql)
	if err != nil {
		return
	}
	bound := p.treeHeightBound(p.lx.chainToks)
	for _, st := range stmts {
		if h, _ := treeHeight(st, bound); h > bound {
			t.Errorf("tree height exceeds the bound %d for %q", bound, sql)
		}
	}
}

func TestRoundTripCorpus(t *testing.T) {
	n := 0
	for _, sql := range allTestSQL() {
		checkRoundTrip(t, sql)
		checkHeightBound(t, sql)
		if _, err := ParseStatements(sql); err == nil {
			n++
		}
	}
	if n < 300 {
		t.Errorf("only %d corpus queries parse; the corpus lost its valid queries", n)
	}
}

// formatCases pin the canonical form.
var formatCases = []struct {
	in, want string
}{
	{"select a from t", "SELECT a FROM t"},
	{"select a b from t x", "SELECT a AS b FROM t AS x"},
	{"select a, b, from t;", "SELECT a, b FROM t"},
	{"select -1, - 1, -(1), -(-1), - - x, +1, ~x", "SELECT -1, -1, -(1), -(-1), -(-x), +1, ~x"},
	{"select (a + b) * c, a + b * c, (a - b) - c, a - (b - c)", "SELECT (a + b) * c, a + b * c, a - b - c, a - (b - c)"},
	{"select (a or b) and c, not (a and b), not a and b", "SELECT (a OR b) AND c, NOT (a AND b), NOT a AND b"},
	{"select (a = b) = c, a = (b = c), (a < b) is null", "SELECT (a = b) = c, a = (b = c), (a < b) IS NULL"},
	{"select a <> b, a != b", "SELECT a != b, a != b"},
	{"select x between (a and b) and c", "SELECT x BETWEEN (a AND b) AND c"},
	{"select 'it''s', \"q\\\"\", '\\n\\t\\x01', b'\\xff\\x00', '\\xff'", `SELECT 'it\'s', 'q"', '\n\t\x01', B'\xff\x00', '\xff'`},
	{"select r'\\d', '''a'b'''", `SELECT '\\d', 'a\'b'`},
	{"select `a b`.c, `select`, t.`from`, t.from", "SELECT `a b`.c, `select`, t.`from`, t.from"},
	{"select x from `cloudflare.logs.prod` as t", "SELECT x FROM `cloudflare.logs.prod` AS t"},
	{"select x::text, safe_cast(x as int64)", "SELECT CAST(x AS text), SAFE_CAST(x AS int64)"},
	{"select cast(x as array<array<int64>>)", "SELECT CAST(x AS array<array<int64>>)"},
	{"select timestamp_trunc(ts, minute), extract(hour from ts at time zone 'UTC')", "SELECT timestamp_trunc(ts, MINUTE), EXTRACT(HOUR FROM ts AT TIME ZONE 'UTC')"},
	{"select interval 1 hour, interval -x day, interval (a+1) week", "SELECT INTERVAL 1 HOUR, INTERVAL -x DAY, INTERVAL (a + 1) WEEK"},
	{"select current_timestamp, if(a, 1, 2), left(s, 1)", "SELECT current_timestamp(), if(a, 1, 2), left(s, 1)"},
	{"select 1.0, 1e21, .5, 0x10", "SELECT 1.0, 1e+21, 0.5, 16"},
	{"select a[offset(0)], (-1)[0], x.y[1].z", "SELECT a[OFFSET(0)], (-1)[0], x.y[1].z"},
	{"select timestamp '2024-01-01', date '2024-01-02'", "SELECT TIMESTAMP '2024-01-01', DATE '2024-01-02'"},
	{"select count(*), count(distinct a), f(x ignore nulls order by y desc limit 2)", "SELECT count(*), count(DISTINCT a), f(x IGNORE NULLS ORDER BY y DESC LIMIT 2)"},
	{"select sum(x) over (partition by a order by b rows between 1 preceding and unbounded following)", "SELECT sum(x) OVER (PARTITION BY a ORDER BY b ROWS BETWEEN 1 PRECEDING AND UNBOUNDED FOLLOWING)"},
	{"select x in (select 1), x in unnest(a), x not in (1, 2)", "SELECT x IN (SELECT 1), x IN UNNEST(a), x NOT IN (1, 2)"},
	{"select case x when 1 then 'a' end, case when a then b else c end", "SELECT CASE x WHEN 1 THEN 'a' END, CASE WHEN a THEN b ELSE c END"},
	{"select [1, 2], array<string>['a'], array(select 1), struct(1 as a, 2), exists(select 1)", "SELECT [1, 2], ARRAY<string>['a'], ARRAY(SELECT 1), STRUCT(1 AS a, 2), EXISTS(SELECT 1)"},
	{"select * except (a) from t", "SELECT * EXCEPT (a) FROM t"},
	{"select t.* from t", "SELECT t.* FROM t"},
	{"with a as (select 1) select * from a", "WITH a AS (SELECT 1) SELECT * FROM a"},
	{"with a as (select 1 x) (with b as (select x from a) select x from b)", "WITH a AS (SELECT 1 AS x) (WITH b AS (SELECT x FROM a) SELECT x FROM b)"},
	{"(select 1) union all (select 2) union all select 3", "SELECT 1 UNION ALL SELECT 2 UNION ALL SELECT 3"},
	{"select 1 union all (select 2 union all select 3)", "SELECT 1 UNION ALL (SELECT 2 UNION ALL SELECT 3)"},
	{"(select 1 union all select 2) union distinct select 3", "(SELECT 1 UNION ALL SELECT 2) UNION DISTINCT SELECT 3"},
	{"(select 1 limit 1) union all select 2 order by 1 limit 5", "(SELECT 1 LIMIT 1) UNION ALL SELECT 2 ORDER BY 1 LIMIT 5"},
	{"select a from t left join (u cross join unnest(u.x) as c) on true", "SELECT a FROM t LEFT JOIN (u CROSS JOIN UNNEST(u.x) AS c) ON TRUE"},
	{"select a from t join u using (x) where y group by 1 having z order by a nulls last limit 1 offset 2",
		"SELECT a FROM t JOIN u USING (x) WHERE y GROUP BY 1 HAVING z ORDER BY a NULLS LAST LIMIT 1 OFFSET 2"},
	{"select a is distinct from b, a is not true", "SELECT a IS DISTINCT FROM b, a IS NOT TRUE"},
	{"select 'é', '\\u00e9'", "SELECT 'é', 'é'"},
	{"select a || b, a << 2, a | b & c ^ d", "SELECT a || b, a << 2, a | b & c ^ d"},
	{"select (a | b) & c", "SELECT (a | b) & c"},
	{"select not not a, a = not b", "SELECT NOT NOT a, a = (NOT b)"},
}

func TestFormatCanonical(t *testing.T) {
	for _, tc := range formatCases {
		t.Run(tc.in, func(t *testing.T) {
			stmts, err := ParseStatements(tc.in)
			if err != nil || len(stmts) != 1 {
				t.Fatalf("ParseStatements(%q): %v", tc.in, err)
			}
			if got := Format(stmts[0]); got != tc.want {
				t.Errorf("Format(%q)\n got %s\nwant %s", tc.in, got, tc.want)
			}
		})
	}
}

// TestFormatBuiltTrees prints trees built by code, including shapes the
// parser normalises away, and checks that they still read back.
func TestFormatBuiltTrees(t *testing.T) {
	col := func(names ...string) *ColumnRef {
		c := &ColumnRef{}
		for _, n := range names {
			c.Parts = append(c.Parts, Ident{Name: n})
		}
		return c
	}
	cases := []struct {
		e        Expr
		want     string
		sameTree bool // reparses to an Equal tree
	}{
		{&Unary{Op: OpNeg, X: &IntLit{Value: -5}}, "-(-5)", true},
		{&Unary{Op: OpNeg, X: &Unary{Op: OpNeg, X: col("x")}}, "-(-x)", true},
		{&Binary{Op: OpSub, L: col("a"), R: &IntLit{Value: -1}}, "a - -1", true},
		{&Subscript{X: &FloatLit{Value: 1.5}, Index: &IntLit{Value: 0}, Mode: SubscriptPlain}, "(1.5)[0]", true},
		{&Binary{Op: OpMul, L: &Binary{Op: OpAdd, L: col("a"), R: col("b")}, R: col("c")}, "(a + b) * c", true},
		{&Binary{Op: OpEq, L: col("a"), R: &Binary{Op: OpEq, L: col("b"), R: col("c")}}, "a = (b = c)", true},
		{&StringLit{Value: "a'b\\c\x00\xff€"}, `'a\'b\\c\x00\xff€'`, true},
		{&ColumnRef{Parts: []Ident{{Name: "select"}, {Name: "from"}}}, "`select`.from", false},
		{&ColumnRef{Parts: []Ident{{Name: "has space"}}}, "`has space`", false},
		{&FieldAccess{X: col("a"), Field: Ident{Name: "b"}}, "(a).b", false},
		{&FloatLit{Value: 3}, "3.0", true},
	}
	for _, tc := range cases {
		got := Format(tc.e)
		if got != tc.want {
			t.Errorf("Format = %s, want %s", got, tc.want)
			continue
		}
		back := parseExprString(t, got)
		if Equal(back, tc.e) != tc.sameTree {
			t.Errorf("%s: reparsed tree equal = %v, want %v (got %s)", got, !tc.sameTree, tc.sameTree, sx(back))
		}
	}
}

func TestEqual(t *testing.T) {
	a := mustParse(t, "select a, b from t where x = 1")
	b := mustParse(t, "SELECT  a,\n b\nFROM t -- c\nWHERE x = 1;")
	if !Equal(a, b) {
		t.Errorf("positions and layout must not matter")
	}
	different := []string{
		"select a, c from t where x = 1",
		"select a, b from t where x = 2",
		"select a, b from t where x != 1",
		"select a, b from u where x = 1",
		"select a, b from t as t where x = 1",
		"select `a`, b from t where x = 1",
		"select a, b from t where x = '1'",
		"select a, b from t where x = 1 limit 1",
		"select distinct a, b from t where x = 1",
		"select a, b from t where x = 1 order by a",
	}
	for _, sql := range different {
		if Equal(a, mustParse(t, sql)) {
			t.Errorf("Equal(%q, %q) = true", Format(a), sql)
		}
	}
	// Resolution is not syntax.
	v, err := Validate("select a from my_table", supabaseOpts)
	if err != nil {
		t.Fatal(err)
	}
	if !Equal(v, mustParse(t, "select a from my_table")) {
		t.Errorf("Equal must ignore TableName.Ref")
	}
	if Equal(a, nil) || !Equal(nil, nil) {
		t.Errorf("nil handling")
	}
}

// TestConcurrentParse parses the corpus from several goroutines at once:
// parses share pooled scratch buffers, and no state may leak between them.
func TestConcurrentParse(t *testing.T) {
	var inputs, want []string
	for _, sql := range allTestSQL() {
		if q, err := Parse(sql); err == nil {
			inputs = append(inputs, sql)
			want = append(want, Format(q))
		}
	}
	done := make(chan string, 4)
	for g := 0; g < 4; g++ {
		go func(g int) {
			for round := 0; round < 5; round++ {
				for i := range inputs {
					k := (i*7 + g*13 + round) % len(inputs)
					q, err := Parse(inputs[k])
					if err != nil {
						done <- err.Error()
						return
					}
					if got := Format(q); got != want[k] {
						done <- "goroutine got " + got + "\nwant " + want[k]
						return
					}
				}
			}
			done <- ""
		}(g)
	}
	for g := 0; g < 4; g++ {
		if msg := <-done; msg != "" {
			t.Error(msg)
		}
	}
}
