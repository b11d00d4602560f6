package parser

import (
	"strings"
	"testing"
)

func TestStudioQueriesParse(t *testing.T) {
	for _, tc := range studioQueries {
		t.Run(tc.name, func(t *testing.T) {
			mustParse(t, tc.sql)
		})
	}
}

func TestEdgeLogsQueryShape(t *testing.T) {
	q := mustParse(t, studioQueries[0].sql)
	s := selectOf(t, q)
	var items []string
	for _, it := range s.Items {
		items = append(items, sx(it.Expr))
	}
	want := "id edge_logs.timestamp event_message request.method request.path response.status_code"
	if got := strings.Join(items, " "); got != want {
		t.Errorf("items = %s, want %s", got, want)
	}
	// FROM edge_logs CROSS JOIN UNNEST(metadata) m CROSS JOIN UNNEST(m.request) request
	// CROSS JOIN UNNEST(m.response) response: a left-deep chain.
	j3, ok := s.From.(*Join)
	if !ok || j3.Kind != JoinCross {
		t.Fatalf("from = %T", s.From)
	}
	u3 := j3.Right.(*UnnestTable)
	if sx(u3.Expr) != "m.response" || u3.Alias.Name != "response" {
		t.Errorf("last unnest = %s AS %v", sx(u3.Expr), u3.Alias)
	}
	j2 := j3.Left.(*Join)
	j1 := j2.Left.(*Join)
	base := j1.Left.(*TableName)
	if base.Name() != "edge_logs" || base.Alias != nil {
		t.Errorf("base table = %q alias %v", base.Name(), base.Alias)
	}
	if u1 := j1.Right.(*UnnestTable); sx(u1.Expr) != "metadata" || u1.Alias.Name != "m" {
		t.Errorf("first unnest = %s", sx(u1.Expr))
	}
	if got := sx(s.Where); got != `(AND regexp_contains(event_message, "error") (>= response.status_code 500))` {
		t.Errorf("where = %s", got)
	}
	if len(q.OrderBy) != 1 || sx(q.OrderBy[0].Expr) != "timestamp" || !q.OrderBy[0].Desc {
		t.Errorf("order by = %+v", q.OrderBy)
	}
	if lim, ok := q.Limit.(*IntLit); !ok || lim.Value != 100 {
		t.Errorf("limit = %v", q.Limit)
	}
}

func TestLogsAllShape(t *testing.T) {
	q := mustParse(t, logsAllSQL())
	if q.With == nil || len(q.With.CTEs) != 9 {
		t.Fatalf("want 9 CTEs, got %+v", q.With)
	}
	names := []string{"edge_logs", "postgres_logs", "function_edge_logs", "function_logs", "auth_logs",
		"realtime_logs", "storage_logs", "postgrest_logs", "pgbouncer_logs"}
	for i, c := range q.With.CTEs {
		if c.Name.Name != names[i] {
			t.Errorf("CTE %d = %s, want %s", i, c.Name.Name, names[i])
		}
		s := selectOf(t, c.Query)
		var tn *TableName
		switch f := s.From.(type) {
		case *TableName:
			tn = f
		case *Join:
			tn = f.Left.(*TableName)
		}
		if tn.Name() != supabaseSources[i] || !tn.Parts[0].Quoted || tn.Alias.Name != "t" {
			t.Errorf("CTE %s reads %q (quoted %v)", c.Name.Name, tn.Name(), tn.Parts[0].Quoted)
		}
		if len(c.Query.OrderBy) != 1 || sx(c.Query.OrderBy[0].Expr) != "(CAST t.timestamp TIMESTAMP)" {
			t.Errorf("CTE %s order by wrong", c.Name.Name)
		}
	}
	where := selectOf(t, q.With.CTEs[0].Query).Where
	want := `(AND (AND (= t.project @project) (CASE [(= coalesce(@iso_timestamp_start, "") "") TRUE] ELSE (> (CAST t.timestamp TIMESTAMP) (CAST @iso_timestamp_start TIMESTAMP)))) (CASE [(= coalesce(@iso_timestamp_end, "") "") TRUE] ELSE (<= (CAST t.timestamp TIMESTAMP) (CAST @iso_timestamp_end TIMESTAMP))))`
	if strings.ReplaceAll(sx(where), "COALESCE", "coalesce") != want {
		t.Errorf("edge_logs where =\n%s\nwant\n%s", sx(where), want)
	}
	got := Format(q.Body)
	if got != "SELECT id, timestamp, event_message, metadata FROM edge_logs" || sx(q.Limit) != "100" {
		t.Errorf("final select = %s LIMIT %s", got, sx(q.Limit))
	}
}

func TestAPICountsShape(t *testing.T) {
	q := mustParse(t, apiCountsSQL)
	if len(q.With.CTEs) != 2 {
		t.Fatalf("want 2 CTEs")
	}
	chart := selectOf(t, q.With.CTEs[1].Query)
	// dates, `cloudflare.logs.prod` as f0 LEFT JOIN UNNEST(metadata) f1 LEFT JOIN UNNEST(f1.request) f2
	j2 := chart.From.(*Join)
	j1 := j2.Left.(*Join)
	comma := j1.Left.(*Join)
	if j2.Kind != JoinLeft || j1.Kind != JoinLeft || comma.Kind != JoinComma {
		t.Errorf("join kinds = %v %v %v", comma.Kind, j1.Kind, j2.Kind)
	}
	if j1.On != nil || j2.On != nil {
		t.Errorf("LEFT JOIN UNNEST without ON must have no condition")
	}
	if f2 := j2.Right.(*UnnestTable); sx(f2.Expr) != "f1.request" || f2.Alias.Name != "f2" {
		t.Errorf("f2 = %s", Format(f2))
	}
	if src := comma.Right.(*TableName); src.Name() != "cloudflare.logs.prod" || src.Alias.Name != "f0" {
		t.Errorf("source = %s", Format(src))
	}
	if got := sx(chart.Items[1].Expr); got != `COUNTIF(REGEXP_CONTAINS(f2.path, "/rest"))` {
		t.Errorf("item 1 = %s", got)
	}
	if got := sx(chart.Items[0].Expr); !strings.Contains(got, "timestamp_trunc(f0.timestamp, <HOUR>)") {
		t.Errorf("item 0 = %s", got)
	}
	if got := sx(chart.Where); got != `(AND REGEXP_CONTAINS(f2.url, @project) (>= f0.timestamp ([] dates 0)))` {
		t.Errorf("where = %s", got)
	}
	dates := selectOf(t, q.With.CTEs[0].Query)
	if got := sx(dates.Items[0].Expr); !strings.Contains(got, "timestamp_sub(current_timestamp(), (INTERVAL 60 MINUTE))") {
		t.Errorf("dates item = %s", got)
	}
	final := selectOf(t, q)
	if len(final.Items) != 5 || sx(final.Items[0].Expr) != `datetime(chart_counts.timestamp, "UTC")` {
		t.Errorf("final items = %d, first %s", len(final.Items), sx(final.Items[0].Expr))
	}
	if len(final.GroupBy) != 1 || sx(final.GroupBy[0]) != "timestamp" || q.OrderBy[0].Desc {
		t.Errorf("group/order wrong")
	}
}

func TestQueryStructure(t *testing.T) {
	cases := []struct {
		sql   string
		check func(t *testing.T, q *Query)
	}{
		{"select 1;", func(t *testing.T, q *Query) { selectOf(t, q) }},
		{"select 1 ;  -- done\n", func(t *testing.T, q *Query) { selectOf(t, q) }},
		{"with a as (select 1 as x), b as (select x from a) select x from b", func(t *testing.T, q *Query) {
			if len(q.With.CTEs) != 2 || q.With.CTEs[1].Name.Name != "b" || q.With.Recursive {
				t.Errorf("with = %s", Format(q.With))
			}
		}},
		{"WITH a AS (SELECT 1) -- first\n, /* second */ b AS (SELECT 2)\n# third\n, c AS (SELECT 3) SELECT 1 FROM c", func(t *testing.T, q *Query) {
			if len(q.With.CTEs) != 3 {
				t.Errorf("want 3 CTEs")
			}
		}},
		{"with recursive r as (select 1 as n union all select n + 1 from r where n < 3) select n from r", func(t *testing.T, q *Query) {
			if !q.With.Recursive {
				t.Errorf("RECURSIVE lost")
			}
			if _, ok := q.With.CTEs[0].Query.Body.(*SetOp); !ok {
				t.Errorf("CTE body is %T", q.With.CTEs[0].Query.Body)
			}
		}},
		{"select a from t union all select b from u order by 1 limit 5 offset 2", func(t *testing.T, q *Query) {
			s, ok := q.Body.(*SetOp)
			if !ok || s.Op != Union || s.Quantifier != QuantAll {
				t.Fatalf("body = %T", q.Body)
			}
			if len(q.OrderBy) != 1 || sx(q.Limit) != "5" || sx(q.Offset) != "2" {
				t.Errorf("ORDER BY/LIMIT/OFFSET must apply to the whole union")
			}
		}},
		{"select a from t UNION DISTINCT select b from u union distinct select c from v", func(t *testing.T, q *Query) {
			s := q.Body.(*SetOp)
			if s.Quantifier != QuantDistinct || s.Left.(*SetOp).Quantifier != QuantDistinct {
				t.Errorf("quantifiers wrong")
			}
			if Format(s.Right) != "SELECT c FROM v" {
				t.Errorf("chain must be left-deep")
			}
		}},
		{"select 1 union select 2", func(t *testing.T, q *Query) {
			if q.Body.(*SetOp).Quantifier != QuantNone {
				t.Errorf("bare UNION")
			}
		}},
		{"select 1 union all select 2 intersect distinct select 3", func(t *testing.T, q *Query) {
			s := q.Body.(*SetOp)
			if s.Op != Union || s.Right.(*SetOp).Op != Intersect {
				t.Errorf("INTERSECT must bind tighter: %s", Format(q))
			}
		}},
		{"select 1 except distinct select 2", func(t *testing.T, q *Query) {
			if q.Body.(*SetOp).Op != Except {
				t.Errorf("EXCEPT")
			}
		}},
		{"(select a from t) union all (select b from u order by b limit 1)", func(t *testing.T, q *Query) {
			s := q.Body.(*SetOp)
			if _, ok := s.Left.(*Select); !ok {
				t.Errorf("grouping parentheses must be dropped, got %T", s.Left)
			}
			r, ok := s.Right.(*Query)
			if !ok || sx(r.Limit) != "1" {
				t.Errorf("parenthesised query with its own LIMIT must be kept, got %T", s.Right)
			}
		}},
		{"with a as (select 1 as x) (with b as (select x from a) select x from b)", func(t *testing.T, q *Query) {
			inner, ok := q.Body.(*Query)
			if !ok || inner.With == nil || inner.With.CTEs[0].Name.Name != "b" {
				t.Fatalf("nested WITH lost: %T", q.Body)
			}
		}},
		{"((select 1))", func(t *testing.T, q *Query) { selectOf(t, q) }},
		{"select distinct a, b from t", func(t *testing.T, q *Query) {
			if !selectOf(t, q).Distinct {
				t.Errorf("DISTINCT lost")
			}
		}},
		{"select all a from t", func(t *testing.T, q *Query) {
			if selectOf(t, q).Distinct {
				t.Errorf("ALL is not DISTINCT")
			}
		}},
		{"select a as x, b y, c, `d` as `e f` from t", func(t *testing.T, q *Query) {
			s := selectOf(t, q)
			if s.Items[0].Alias.Name != "x" || s.Items[1].Alias.Name != "y" || s.Items[2].Alias != nil ||
				s.Items[3].Alias.Name != "e f" || !s.Items[3].Alias.Quoted {
				t.Errorf("aliases wrong: %s", Format(q))
			}
		}},
		{"select a, b, from t", func(t *testing.T, q *Query) {
			if len(selectOf(t, q).Items) != 2 {
				t.Errorf("trailing comma")
			}
		}},
		{"select count(*) as count, from t", func(t *testing.T, q *Query) {
			if len(selectOf(t, q).Items) != 1 {
				t.Errorf("trailing comma")
			}
		}},
		{"select *, t.*, m.request.* except (a, b) from t", func(t *testing.T, q *Query) {
			s := selectOf(t, q)
			if !s.Items[0].Star || s.Items[0].Expr != nil {
				t.Errorf("bare star")
			}
			if !s.Items[1].Star || sx(s.Items[1].Expr) != "t" {
				t.Errorf("t.*")
			}
			if !s.Items[2].Star || sx(s.Items[2].Expr) != "m.request" || len(s.Items[2].Except) != 2 {
				t.Errorf("m.request.* except")
			}
		}},
		{"select a from t where x group by a, 2 having count(*) > 1 qualify true order by a desc nulls last, 2 asc nulls first", func(t *testing.T, q *Query) {
			s := selectOf(t, q)
			if sx(s.Where) != "x" || len(s.GroupBy) != 2 || sx(s.GroupBy[1]) != "2" || sx(s.Having) != "(> count(*) 1)" || sx(s.Qualify) != "TRUE" {
				t.Errorf("clauses: %s", Format(q))
			}
			if !q.OrderBy[0].Desc || q.OrderBy[0].Nulls != NullsLast || q.OrderBy[1].Desc || q.OrderBy[1].Nulls != NullsFirst {
				t.Errorf("order items: %+v %+v", q.OrderBy[0], q.OrderBy[1])
			}
		}},
		{"select a from t limit @lim offset @off", func(t *testing.T, q *Query) {
			if sx(q.Limit) != "@lim" || sx(q.Offset) != "@off" {
				t.Errorf("limit/offset params")
			}
		}},
		{"with a as (select x from t limit 10) select x from a", func(t *testing.T, q *Query) {
			if sx(q.With.CTEs[0].Query.Limit) != "10" || q.Limit != nil {
				t.Errorf("LIMIT inside CTE belongs to the CTE")
			}
		}},
		{"select 1", func(t *testing.T, q *Query) {
			if selectOf(t, q).From != nil {
				t.Errorf("no FROM")
			}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.sql, func(t *testing.T) {
			tc.check(t, mustParse(t, tc.sql))
		})
	}
}

func TestFromClause(t *testing.T) {
	cases := []struct {
		sql  string
		want string // Format of the FROM clause
		// check, when set, asserts details Format does not show.
		check func(t *testing.T, from TableExpr)
	}{
		{"select a from my_table", "my_table", nil},
		{"select a from `cloudflare.logs.prod`", "`cloudflare.logs.prod`", func(t *testing.T, f TableExpr) {
			tn := f.(*TableName)
			if len(tn.Parts) != 1 || tn.Name() != "cloudflare.logs.prod" || !tn.Parts[0].Quoted {
				t.Errorf("backticked dotted name must be one quoted part")
			}
		}},
		{"select a from `project.dataset.table` t", "`project.dataset.table` AS t", nil},
		{"select a from `deno-relay-logs` as t", "`deno-relay-logs` AS t", nil},
		{"select a from dataset.table", "dataset.table", func(t *testing.T, f TableExpr) {
			if tn := f.(*TableName); len(tn.Parts) != 2 || tn.Name() != "dataset.table" {
				t.Errorf("dotted name")
			}
		}},
		{"select a from `project`.dataset.`table`", "`project`.dataset.`table`", nil},
		{"select a from a, b", "a, b", nil},
		{"select a from a cross join b", "a CROSS JOIN b", nil},
		{"select a from a join b on a.x = b.x", "a JOIN b ON a.x = b.x", nil},
		{"select a from a inner join b on true", "a JOIN b ON TRUE", nil},
		{"select a from a left outer join b on a.x = b.x", "a LEFT JOIN b ON a.x = b.x", nil},
		{"select a from a left join b using (x, y)", "a LEFT JOIN b USING (x, y)", func(t *testing.T, f TableExpr) {
			if j := f.(*Join); len(j.Using) != 2 || j.Using[1].Name != "y" {
				t.Errorf("USING")
			}
		}},
		{"select a from a right join b on c", "a RIGHT JOIN b ON c", nil},
		{"select a from a full outer join b on c", "a FULL JOIN b ON c", nil},
		{"select a from t cross join unnest(x) as a", "t CROSS JOIN UNNEST(x) AS a", nil},
		{"select a from t cross join unnest (x)", "t CROSS JOIN UNNEST(x)", nil},
		{"select a from t left join unnest(x) as a on true", "t LEFT JOIN UNNEST(x) AS a ON TRUE", nil},
		{"select a from t, unnest(t.x) as a", "t, UNNEST(t.x) AS a", nil},
		{"select a from t join unnest(t.x) a", "t JOIN UNNEST(t.x) AS a", nil},
		{"select a from unnest([1, 2]) as a with offset", "UNNEST([1, 2]) AS a WITH OFFSET", func(t *testing.T, f TableExpr) {
			if u := f.(*UnnestTable); !u.WithOffset || u.OffsetAlias != nil {
				t.Errorf("WITH OFFSET")
			}
		}},
		{"select a from unnest(x) a with offset as o", "UNNEST(x) AS a WITH OFFSET AS o", nil},
		{"select a from unnest(x) with offset o", "UNNEST(x) WITH OFFSET AS o", nil},
		{"select a from (select b from t) as s", "(SELECT b FROM t) AS s", nil},
		{"select a from (select b from t) s", "(SELECT b FROM t) AS s", nil},
		{"select a from ((select b from t)) s", "(SELECT b FROM t) AS s", nil},
		{"select a from (with c as (select 1 as b) select b from c) s", "(WITH c AS (SELECT 1 AS b) SELECT b FROM c) AS s", nil},
		{"select a from t left join ( u cross join unnest(u.x) as c ) on t.id = u.id",
			"t LEFT JOIN (u CROSS JOIN UNNEST(u.x) AS c) ON t.id = u.id", func(t *testing.T, f TableExpr) {
				j := f.(*Join)
				if inner, ok := j.Right.(*Join); !ok || inner.Kind != JoinCross {
					t.Errorf("join group must be the right operand")
				}
			}},
		{"select a from (a join b on x) join c on y", "a JOIN b ON x JOIN c ON y", nil},
		{"select a from ((select 1 as x) as s join t on true)", "(SELECT 1 AS x) AS s JOIN t ON TRUE", nil},
		{"select a from a, b join c on true", "a, b JOIN c ON TRUE", func(t *testing.T, f TableExpr) {
			j := f.(*Join)
			if l, ok := j.Left.(*Join); !ok || l.Kind != JoinComma {
				t.Errorf("comma and JOIN are evaluated left to right")
			}
		}},
		{"select a from dates, `table` as f0", "dates, `table` AS f0", nil},
		{"select a from t left join (select x, count(*) as c from u group by x) d on t.x = d.x",
			"t LEFT JOIN (SELECT x, count(*) AS c FROM u GROUP BY x) AS d ON t.x = d.x", nil},
		{"select a from timestamp", "timestamp", nil},
	}
	for _, tc := range cases {
		t.Run(tc.sql, func(t *testing.T) {
			s := selectOf(t, mustParse(t, tc.sql))
			if got := Format(s.From); got != tc.want {
				t.Errorf("FROM = %s, want %s", got, tc.want)
			}
			if tc.check != nil {
				tc.check(t, s.From)
			}
		})
	}
}

func TestIdentifiers(t *testing.T) {
	q := mustParse(t, "SELECT Edge_Logs.TimeStamp AS Ts, `request`.`method`, `my col` FROM Edge_Logs")
	s := selectOf(t, q)
	cr := s.Items[0].Expr.(*ColumnRef)
	if cr.Parts[0].Name != "Edge_Logs" || cr.Parts[1].Name != "TimeStamp" || cr.Parts[0].Quoted {
		t.Errorf("spelling not kept: %+v", cr.Parts)
	}
	if s.Items[0].Alias.Name != "Ts" {
		t.Errorf("alias spelling")
	}
	cr = s.Items[1].Expr.(*ColumnRef)
	if len(cr.Parts) != 2 || !cr.Parts[0].Quoted || !cr.Parts[1].Quoted || cr.Parts[1].Name != "method" {
		t.Errorf("quoted path: %+v", cr.Parts)
	}
	if cr := s.Items[2].Expr.(*ColumnRef); cr.Parts[0].Name != "my col" {
		t.Errorf("quoted name with space")
	}
	if !cr.Parts[0].Is("REQUEST") {
		t.Errorf("Ident.Is must ignore case")
	}
	// Positions: line and column of each node.
	q = mustParse(t, "select\n  a,\n  é.b\nfrom t")
	s = selectOf(t, q)
	if p := s.Items[1].Expr.Pos(); p.Line != 3 || p.Col != 3 || p.Offset != 14 {
		t.Errorf("position of é.b = %+v", p)
	}
	if p := s.From.Pos(); p.Line != 4 || p.Col != 6 {
		t.Errorf("position of t = %+v", p)
	}
	// A column after a multi-byte character counts characters, not bytes.
	q = mustParse(t, "select 'é', x")
	if p := selectOf(t, q).Items[1].Expr.Pos(); p.Col != 13 || p.Offset != 13 {
		t.Errorf("position of x = %+v, want column 13 offset 13", p)
	}
}

func TestStatements(t *testing.T) {
	cases := []struct {
		sql  string
		want []string // "Q" for a query, keyword for others
	}{
		{"", nil},
		{" ; ;; -- nothing\n", nil},
		{"select 1", []string{"Q"}},
		{"select 1;", []string{"Q"}},
		{"select 1; select 2", []string{"Q", "Q"}},
		{"select a from b; select c from d;", []string{"Q", "Q"}},
		{"insert into t (a) values ('x;y')", []string{"INSERT"}},
		{"UPDATE t SET a = 1", []string{"UPDATE"}},
		{"delete from t where true", []string{"DELETE"}},
		{"merge t using u on t.a = u.a when matched then delete", []string{"MERGE"}},
		{"truncate table t", []string{"TRUNCATE"}},
		{"drop table t", []string{"DROP"}},
		{"create table t as select 1", []string{"CREATE"}},
		{"create or replace function f() as (1)", []string{"CREATE"}},
		{"alter table t add column c int64", []string{"ALTER"}},
		{"grant select on t to u", []string{"GRANT"}},
		{"revoke all on t from u", []string{"REVOKE"}},
		{"set x = 1", []string{"SET"}},
		{"call p()", []string{"CALL"}},
		{"execute immediate 'select 1'", []string{"EXECUTE"}},
		{"copy t from 'f'", []string{"COPY"}},
		{"declare x int64", []string{"DECLARE"}},
		{"begin select 1; end", []string{"BEGIN", "END"}},
		{"show variables", []string{"SHOW"}},
		{"with a as (select 1) insert into t select * from a", []string{"INSERT"}},
		{"with a as (select 1) delete from t where x in (select * from a)", []string{"DELETE"}},
		{"select 1; drop table t (x, (y; z)); select 2", []string{"Q", "DROP", "Q"}},
	}
	for _, tc := range cases {
		t.Run(tc.sql, func(t *testing.T) {
			stmts, err := ParseStatements(tc.sql)
			if err != nil {
				t.Fatalf("ParseStatements: %v", err)
			}
			var got []string
			for _, st := range stmts {
				switch x := st.(type) {
				case *Query:
					got = append(got, "Q")
				case *OtherStatement:
					got = append(got, x.Keyword)
				}
			}
			if strings.Join(got, ",") != strings.Join(tc.want, ",") {
				t.Errorf("statements = %v, want %v", got, tc.want)
			}
		})
	}
	stmts, _ := ParseStatements("  insert into t values (1) ; select 1")
	if o := stmts[0].(*OtherStatement); o.Text != "insert into t values (1)" || o.At.Col != 3 {
		t.Errorf("other statement text %q at %+v", o.Text, o.At)
	}
}

func TestParseSingle(t *testing.T) {
	cases := []struct {
		sql  string
		kind ValidationKind
	}{
		{"", KindEmpty},
		{"  -- only a comment", KindEmpty},
		{";", KindEmpty},
		{"select a from b; select c from d;", KindMultipleStatements},
		{"insert into t values (1)", KindNotSelect},
		{"select 1; insert into t values (1)", KindNotSelect},
	}
	for _, tc := range cases {
		_, err := Parse(tc.sql)
		ve, ok := err.(*ValidationError)
		if !ok || ve.Kind != tc.kind {
			t.Errorf("Parse(%q) = %v, want kind %d", tc.sql, err, tc.kind)
		}
	}
}
