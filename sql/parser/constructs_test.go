package parser

import (
	"testing"
)

// constructCases covers every construct listed in docs/compat/supabase.md §5.6
// (the SQL Studio writes). Each query is parsed and one
// expression (or clause) of it is checked: want is the sx rendering of the
// expression selected by pick, or the Format of a clause that is not an
// expression.
var constructCases = []struct {
	construct string
	sql       string
	pick      func(q *Query) Node
	want      string
}{
	{"regexp_contains with RE2 pattern", `select id from edge_logs where regexp_contains(event_message, 'a|b\\s{3}[Ee]rror')`,
		where, `regexp_contains(event_message, "a|b\\s{3}[Ee]rror")`},
	{"REGEXP_CONTAINS upper case", `SELECT id FROM edge_logs WHERE REGEXP_CONTAINS(event_message, "timeout")`,
		where, `REGEXP_CONTAINS(event_message, "timeout")`},
	{"timestamp_trunc lower", `select timestamp_trunc(timestamp, minute) as t from edge_logs`,
		item(0), `timestamp_trunc(timestamp, <MINUTE>)`},
	{"TIMESTAMP_TRUNC upper", `select TIMESTAMP_TRUNC(t.timestamp, HOUR) as t from edge_logs t`,
		item(0), `TIMESTAMP_TRUNC(t.timestamp, <HOUR>)`},
	{"timestamp_trunc day", `select timestamp_trunc(timestamp, day) from edge_logs`,
		item(0), `timestamp_trunc(timestamp, <DAY>)`},
	{"cross join unnest", `select m.x from edge_logs cross join unnest(metadata) as m`,
		from, "edge_logs CROSS JOIN UNNEST(metadata) AS m"},
	{"left join unnest on true", `select a.x from edge_logs left join unnest(metadata) as a on true`,
		from, "edge_logs LEFT JOIN UNNEST(metadata) AS a ON TRUE"},
	{"cross join unnest with a space", `select m.x from edge_logs cross join unnest (metadata) as m`,
		from, "edge_logs CROSS JOIN UNNEST(metadata) AS m"},
	{"parenthesised join group", `select t.id from edge_logs t left join ( function_logs f cross join unnest(f.metadata) as fm ) on t.id = fm.request_id`,
		from, "edge_logs AS t LEFT JOIN (function_logs AS f CROSS JOIN UNNEST(f.metadata) AS fm) ON t.id = fm.request_id"},
	{"left join derived table with group by", `select d.ts, c.n from dates d left join (select ts, count(*) as n from edge_logs group by ts) c on d.ts = c.ts`,
		from, "dates AS d LEFT JOIN (SELECT ts, count(*) AS n FROM edge_logs GROUP BY ts) AS c ON d.ts = c.ts"},
	{"comma join", "select f0.id from dates, `cloudflare.logs.prod` as f0",
		from, "dates, `cloudflare.logs.prod` AS f0"},
	{"count(*)", `select count(*) from edge_logs`, item(0), "count(*)"},
	{"count(col)", `select count(id) from edge_logs`, item(0), "count(id)"},
	{"count(CASE WHEN ... THEN 1 END)", `select count(CASE WHEN status >= 500 THEN 1 END) from edge_logs`,
		item(0), "count((CASE [(>= status 500) 1]))"},
	{"countif", `select countif(status >= 500) as errors from edge_logs`, item(0), "countif((>= status 500))"},
	{"COUNTIF", `select COUNTIF(status = 200) from edge_logs`, item(0), "COUNTIF((= status 200))"},
	{"count(distinct ...)", `select count(distinct request.path) from edge_logs`, item(0), "count(DISTINCT request.path)"},
	{"avg", `select avg(m.execution_time_ms) from edge_logs`, item(0), "avg(m.execution_time_ms)"},
	{"sum", `select sum(x) from edge_logs`, item(0), "sum(x)"},
	{"ANY_VALUE", `select ANY_VALUE(x) from edge_logs`, item(0), "ANY_VALUE(x)"},
	{"safe_divide", `select safe_divide(countif(status >= 500), count(*)) from edge_logs`,
		item(0), "safe_divide(countif((>= status 500)), count(*))"},
	{"SAFE_CAST to INT64", `select SAFE_CAST(x AS INT64) from t`, item(0), "(SAFE_CAST x INT64)"},
	{"cast to int64", `select cast(x as int64) from t`, item(0), "(CAST x INT64)"},
	{"CAST to STRING", `select CAST(x AS STRING) from t`, item(0), "(CAST x STRING)"},
	{"cast to datetime", `select cast(ts as datetime) from t`, item(0), "(CAST ts DATETIME)"},
	{"cast to timestamp", `select cast(x as timestamp) from t`, item(0), "(CAST x TIMESTAMP)"},
	{"datetime(ts, 'UTC')", `select datetime(ts, 'UTC') as timestamp from t`, item(0), `datetime(ts, "UTC")`},
	{"timestamp_sub hour", `select timestamp_sub(current_timestamp(), interval 1 hour) from t`,
		item(0), "timestamp_sub(current_timestamp(), (INTERVAL 1 HOUR))"},
	{"timestamp_sub day", `select timestamp_sub(current_timestamp(), interval 7 day) from t`,
		item(0), "timestamp_sub(current_timestamp(), (INTERVAL 7 DAY))"},
	{"timestamp_sub minute", `select timestamp_sub(current_timestamp(), interval 60 minute) from t`,
		item(0), "timestamp_sub(current_timestamp(), (INTERVAL 60 MINUTE))"},
	{"IFNULL", `select IFNULL(x, 0) from t`, item(0), "IFNULL(x, 0)"},
	{"COALESCE", `select COALESCE(x, y, '') from t`, item(0), `COALESCE(x, y, "")`},
	{"starts_with", `select id from t where starts_with(request.path, '/rest')`, where, `starts_with(request.path, "/rest")`},
	{"like", `select id from t where path like '%/rest/%'`, where, `(LIKE path "%/rest/%")`},
	{"not like", `select id from t where path not like '%/rest/%'`, where, `(NOT LIKE path "%/rest/%")`},
	{"postgres cast ::text", `select id from t where metadata::text like '%x%'`, where, `(LIKE (CAST metadata STRING) "%x%")`},
	{"in", `select id from t where m in ('a', 'b')`, where, `(IN m ["a" "b"])`},
	{"not in", `select id from t where m not in ('a', 'b')`, where, `(NOT IN m ["a" "b"])`},
	{"between", `select id from t where status between 200 and 299`, where, `(BETWEEN status 200 299)`},
	{"is null", `select id from t where x is null`, where, `(IS NULL x)`},
	{"is not null", `select id from t where x is not null`, where, `(IS NOT NULL x)`},
	{"!=", `select id from t where x != 'a'`, where, `(!= x "a")`},
	{"<>", `select id from t where x <> 'a'`, where, `(!= x "a")`},
	{"searched CASE", `select CASE WHEN a THEN 'x' WHEN b THEN 'y' ELSE 'z' END from t`,
		item(0), `(CASE [a "x"] [b "y"] ELSE "z")`},
	{"CASE with @param", `select case when @interval = 'hourly' then timestamp_trunc(ts, hour) else timestamp_trunc(ts, day) end from t`,
		item(0), `(CASE [(= @interval "hourly") timestamp_trunc(ts, <HOUR>)] ELSE timestamp_trunc(ts, <DAY>))`},
	{"NOT (...)", `select id from t where NOT (a = 1 or b = 2)`, where, `(NOT (OR (= a 1) (= b 2)))`},
	{"AND/OR precedence without parentheses", `select id from t where a = 1 or b = 2 and c = 3`,
		where, `(OR (= a 1) (AND (= b 2) (= c 3)))`},
	{"true/false/null in select list", `select true as a, false as b, null as c from t`, item(2), "NULL"},
	{"true/false in conditions", `select id from t where x = true or y = false`, where, `(OR (= x TRUE) (= y FALSE))`},
	{"boolean expression as a column", `select (h.cf_cache_status = 'HIT') as cached from t`, item(0), `(= h.cf_cache_status "HIT")`},
	{"several CTEs with comments between", "with a as (select 1 as x),\n-- second\nb as (select x from a), /* third */ c as (select x from b)\nselect x from c",
		func(q *Query) Node { return q.With.CTEs[2].Query.Body }, "SELECT x FROM b"},
	{"lower-case union all between CTE branches", "with a as (select 1 as x), b as (select 2 as x) select x from a union all select x from b",
		func(q *Query) Node { return q.Body }, "SELECT x FROM a UNION ALL SELECT x FROM b"},
	{"union all of constant rows", "select 'GET' as m union all select 'POST' union all select 'PUT'",
		func(q *Query) Node { return q.Body }, "SELECT 'GET' AS m UNION ALL SELECT 'POST' UNION ALL SELECT 'PUT'"},
	{"GROUP BY alias", `select timestamp_trunc(ts, minute) as timestamp, count(*) from t group by timestamp`,
		groupBy(0), "timestamp"},
	{"GROUP BY ordinals", `select a, b, c, count(*) from t group by 1, 2, 3`, groupBy(2), "3"},
	{"GROUP BY backticked column", "select `log_type`, count(*) from t group by `log_type`", groupBy(0), "`log_type`"},
	{"ORDER BY alias", `select count(*) as c from t order by c desc`,
		func(q *Query) Node { return q.OrderBy[0] }, "c DESC"},
	{"ORDER BY several keys", `select id, timestamp from t order by timestamp DESC, id DESC`,
		func(q *Query) Node { return q }, "SELECT id, timestamp FROM t ORDER BY timestamp DESC, id DESC"},
	{"LIMIT with trailing semicolon", `select id from t limit 10;`, func(q *Query) Node { return q.Limit }, "10"},
	{"LIMIT inside CTE", `with a as (select id from t limit 5) select id from a`,
		func(q *Query) Node { return q.With.CTEs[0].Query.Limit }, "5"},
	{"OFFSET", `select id from t limit 10 offset 20`, func(q *Query) Node { return q.Offset }, "20"},
	{"HAVING", `select path, count(*) as c from t group by path having count(*) > 10`,
		func(q *Query) Node { return q.Body.(*Select).Having }, "(> count(*) 10)"},
	{"window function", `select row_number() over (partition by path order by ts desc) as rn from t`,
		item(0), "row_number() OVER(PARTITION BY path ORDER BY ts DESC)"},
	{"format_timestamp", `select format_timestamp('%H:%M', ts) from t`, item(0), `format_timestamp("%H:%M", ts)`},
	{"JSON functions", `select json_value(body, '$.a.b'), json_extract_scalar(body, '$.c') from t`,
		item(1), `json_extract_scalar(body, "$.c")`},
	{"backticked identifiers", "select `log_type` from `cloudflare.logs.prod`", item(0), "`log_type`"},
	{"table alias without AS", `select t.id from edge_logs t`, from, "edge_logs AS t"},
	{"alias shadowing a column", `select metadata.level from function_logs cross join unnest(metadata) as metadata`,
		from, "function_logs CROSS JOIN UNNEST(metadata) AS metadata"},
	{"unqualified struct field of an unnested alias", `select path, function_id from t cross join unnest(metadata) as m`,
		item(1), "function_id"},
	{"'' escape", `select id from t where msg = 'it''s'`, where, `(= msg "it's")`},
	{"\\\\ escape", `select id from t where msg = 'C:\\temp'`, where, `(= msg "C:\\temp")`},
	{"double-quoted string", `select id from t where msg = "hello"`, where, `(= msg "hello")`},
	{"timestamp compared with ISO string", `select id from t where t.timestamp > '2025-07-10T11:00:00.000Z'`,
		where, `(> t.timestamp "2025-07-10T11:00:00.000Z")`},
	{"trailing comma before FROM", `select id, timestamp, from t`,
		func(q *Query) Node { return q.Body }, "SELECT id, timestamp FROM t"},
	{"-- comment on the first line", "-- list\nselect id from t", item(0), "id"},
	{"-- comment inside the select list", "select\n  id, -- the id\n  -- next\n  timestamp\nfrom t", item(1), "timestamp"},
	{"@param placeholders", `select id from t where project = @project and ts > @iso_timestamp_start`,
		where, `(AND (= project @project) (> ts @iso_timestamp_start))`},
	{"array subscript", `select dates[0] from dates`, item(0), "([] dates 0)"},
}

func where(q *Query) Node { return q.Body.(*Select).Where }
func from(q *Query) Node  { return q.Body.(*Select).From }

func item(i int) func(*Query) Node {
	return func(q *Query) Node { return q.Body.(*Select).Items[i].Expr }
}

func groupBy(i int) func(*Query) Node {
	return func(q *Query) Node { return q.Body.(*Select).GroupBy[i] }
}

func TestStudioConstructs(t *testing.T) {
	for _, tc := range constructCases {
		t.Run(tc.construct, func(t *testing.T) {
			q := mustParse(t, tc.sql)
			n := tc.pick(q)
			var got string
			if e, ok := n.(Expr); ok {
				got = sx(e)
			} else {
				got = Format(n)
			}
			if got != tc.want {
				t.Errorf("%s\n got %s\nwant %s", tc.sql, got, tc.want)
			}
		})
	}
}
