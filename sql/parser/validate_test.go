package parser

import (
	"errors"
	"testing"
)

const (
	errWildcard   = "restricted wildcard (*) in a result column"
	errNotSelect  = "Only SELECT queries allowed"
	errSingular   = "Only singular query allowed"
	errEmpty      = "Query cannot be empty"
	errRestricted = "Restricted function "
)

// validationCases run through Validate with the nine Supabase sources and
// my_table known. want is the exact error text, "" for a valid query.
var validationCases = []struct {
	name, sql, want string
	kind            ValidationKind
}{
	{"empty", "", errEmpty, KindEmpty},
	{"whitespace", "  \n\t ", errEmpty, KindEmpty},
	{"only comments", "-- nothing\n/* here */", errEmpty, KindEmpty},
	{"only semicolon", ";", errEmpty, KindEmpty},
	{"two queries", "select a from b; select c from d;", errSingular, KindMultipleStatements},
	{"two queries without final semicolon", "select a from my_table; select a from my_table", errSingular, KindMultipleStatements},
	{"single query with semicolon", "select a from my_table;", "", 0},
	{"insert", "insert into my_table (a) values (1)", errNotSelect, KindNotSelect},
	{"update", "UPDATE my_table SET a = 1 WHERE true", errNotSelect, KindNotSelect},
	{"delete", "delete from my_table where a = 1", errNotSelect, KindNotSelect},
	{"merge", "merge my_table t using other s on t.a = s.a when matched then delete", errNotSelect, KindNotSelect},
	{"truncate", "truncate table my_table", errNotSelect, KindNotSelect},
	{"drop", "drop table my_table", errNotSelect, KindNotSelect},
	{"create table", "create table x as select a from my_table", errNotSelect, KindNotSelect},
	{"create view", "create view v as select a from my_table", errNotSelect, KindNotSelect},
	{"create function", "create temp function f(x int64) as (x + 1)", errNotSelect, KindNotSelect},
	{"alter", "alter table my_table add column b string", errNotSelect, KindNotSelect},
	{"grant", "grant select on my_table to bob", errNotSelect, KindNotSelect},
	{"revoke", "revoke select on my_table from bob", errNotSelect, KindNotSelect},
	{"set", "set @@dataset_id = 'x'", errNotSelect, KindNotSelect},
	{"call", "call proc(1)", errNotSelect, KindNotSelect},
	{"execute immediate", "execute immediate 'drop table x'", errNotSelect, KindNotSelect},
	{"copy", "copy my_table to '/tmp/x'", errNotSelect, KindNotSelect},
	{"declare", "declare x int64 default 1", errNotSelect, KindNotSelect},
	{"begin", "begin transaction", errNotSelect, KindNotSelect},
	{"show", "show tables", errNotSelect, KindNotSelect},
	{"with insert", "with a as (select 1) insert into my_table select x from a", errNotSelect, KindNotSelect},
	{"insert before select", "insert into t values (1); select a from my_table", errNotSelect, KindNotSelect},
	{"select before delete", "select a from my_table; delete from my_table", errNotSelect, KindNotSelect},
	{"select into", "select a into b from my_table", "sql parser error: Expected: end of statement, found: into at Line: 1, Column: 10", 0},
	{"parse error", "select (", "sql parser error: Expected: an expression, found: EOF at Line: 1, Column: 9", 0},
	{"star", "select * from my_table", errWildcard, KindWildcard},
	{"qualified star", "select t.* from my_table t", errWildcard, KindWildcard},
	{"star with other columns", "select a, * from my_table", errWildcard, KindWildcard},
	{"star except", "select * except (a) from my_table", errWildcard, KindWildcard},
	{"star in subquery", "select a from (select * from my_table)", errWildcard, KindWildcard},
	{"star in CTE", "with c as (select * from my_table) select a from c", errWildcard, KindWildcard},
	{"star in union branch", "select a from my_table union all select * from my_table", errWildcard, KindWildcard},
	{"star in IN subquery", "select a from my_table where a in (select * from my_table)", errWildcard, KindWildcard},
	{"star in EXISTS", "select a from my_table where exists (select * from my_table)", errWildcard, KindWildcard},
	{"star in nested WITH", "with c as (select a from my_table) (with d as (select c.* from c) select a from d)", errWildcard, KindWildcard},
	{"count star is fine", "select count(*) from my_table", "", 0},
	{"count star over window is fine", "select count(*) over () as n from my_table", "", 0},
	{"multiplication is fine", "select a * 2 from my_table", "", 0},
	{"session_user", "select session_user() as u from my_table", errRestricted + "session_user", KindRestrictedFunction},
	{"SESSION_USER upper case", "select SESSION_USER()", errRestricted + "session_user", KindRestrictedFunction},
	{"external_query", "select a from my_table where a in (select x from unnest([external_query('c', 'select 1')]) as x)", errRestricted + "external_query", KindRestrictedFunction},
	{"external_query in FROM", "select a from EXTERNAL_QUERY('conn', 'select 1')", errRestricted + "external_query", KindRestrictedFunction},
	{"restricted in CTE", "with a as (select session_user() as u) select u from a", errRestricted + "session_user", KindRestrictedFunction},
	{"restricted as a dotted name part", "select x.external_query(1)", errRestricted + "external_query", KindRestrictedFunction},
	{"restricted backticked", "select `session_user`()", errRestricted + "session_user", KindRestrictedFunction},
	{"restricted checked before wildcard", "select *, session_user()", errRestricted + "session_user", KindRestrictedFunction},
	{"similar names are fine", "select session_user_name, external_query_count from my_table", "", 0},
	{"unknown source", "select a from unknown_table", "can't find source unknown_table", KindUnknownSource},
	{"unknown backticked dotted source", "select a from `a.b.c`", "can't find source a.b.c", KindUnknownSource},
	{"unknown dotted source", "select a from a.b.c", "can't find source a.b.c", KindUnknownSource},
	{"source names are case-sensitive", "select a from MY_TABLE", "can't find source MY_TABLE", KindUnknownSource},
	{"known backticked source", "select a from `cloudflare.logs.prod` t", "", 0},
	{"known dotted source without backticks", "select a from postgres.logs", "", 0},
	{"known plain source", "select a from my_table", "", 0},
	{"first unknown source is reported", "select a from my_table join nope1 on true join nope2 on true", "can't find source nope1", KindUnknownSource},
	{"CTE", "with edge_logs as (select a from `cloudflare.logs.prod`) select a from edge_logs", "", 0},
	{"CTE names are case-insensitive", "with Edge as (select a from my_table) select a from EDGE", "", 0},
	{"backticked CTE reference", "with edge as (select a from my_table) select a from `edge`", "", 0},
	{"later CTE sees earlier", "with a as (select x from my_table), b as (select x from a) select x from b", "", 0},
	{"earlier CTE does not see later", "with a as (select x from b), b as (select x from my_table) select x from a", "can't find source b", KindUnknownSource},
	{"CTE does not see itself", "with a as (select x from a) select x from a", "can't find source a", KindUnknownSource},
	{"recursive CTE sees itself", "with recursive a as (select 1 as x union all select x + 1 from a where x < 3) select x from a", "", 0},
	{"CTE of a subquery is not visible outside", "select x from (with c as (select x from my_table) select x from c) s, c", "can't find source c", KindUnknownSource},
	{"nested WITH", "with a as (select x from my_table) (with b as (select x from a) select x from b)", "", 0},
	{"nested WITH scope ends", "select x from (with b as (select 1 as x) select x from b) join b on true", "can't find source b", KindUnknownSource},
	{"outer CTE visible in subquery", "with a as (select x from my_table) select x from my_table where x in (select x from a)", "", 0},
	{"unknown source in IN subquery", "select a from my_table where a in (select b from nope)", "can't find source nope", KindUnknownSource},
	{"unknown source in EXISTS", "select a from my_table where exists(select 1 from nope)", "can't find source nope", KindUnknownSource},
	{"unknown source in scalar subquery", "select (select max(b) from nope) as m", "can't find source nope", KindUnknownSource},
	{"unknown source in ARRAY subquery", "select array(select b from nope) as m", "can't find source nope", KindUnknownSource},
	{"unnest is not a source", "select m.x from my_table cross join unnest(metadata) as m", "", 0},
	{"table function", "select a from my_func(1)", "can't find source my_func", KindUnknownSource},
	{"Studio edge logs", "with edge_logs as (select id, timestamp, event_message, metadata from `cloudflare.logs.prod`) " + studioQueries[0].sql, "", 0},
	{"logs.all", logsAllSQL(), "", 0},
	{"usage.api-counts", apiCountsSQL, "", 0},
	{"functions.invocation-stats", invocationStatsSQL, "", 0},
}

func TestValidate(t *testing.T) {
	for _, tc := range validationCases {
		t.Run(tc.name, func(t *testing.T) {
			q, err := Validate(tc.sql, supabaseOpts)
			if tc.want == "" {
				if err != nil || q == nil {
					t.Fatalf("Validate(%q) = %v, want success", tc.sql, err)
				}
				return
			}
			if err == nil {
				t.Fatalf("Validate(%q) succeeded, want %q", tc.sql, tc.want)
			}
			if err.Error() != tc.want {
				t.Errorf("Validate(%q)\n got %q\nwant %q", tc.sql, err.Error(), tc.want)
			}
			var ve *ValidationError
			if tc.kind != 0 && (!errors.As(err, &ve) || ve.Kind != tc.kind) {
				t.Errorf("error kind = %v, want %d", err, tc.kind)
			}
		})
	}
}

func TestValidateWithoutSources(t *testing.T) {
	_, err := Validate("select a from my_table", ValidateOptions{})
	if err == nil || err.Error() != "can't find source my_table" {
		t.Errorf("with no KnownSource every table must be unknown, got %v", err)
	}
	if _, err := Validate("with c as (select 1 as a) select a from c", ValidateOptions{}); err != nil {
		t.Errorf("CTEs need no sources: %v", err)
	}
}

// TestValidateResolves checks that table names are bound to what they refer
// to, which the planner relies on.
func TestValidateResolves(t *testing.T) {
	q, err := Validate(logsAllSQL(), supabaseOpts)
	if err != nil {
		t.Fatal(err)
	}
	main := selectOf(t, q).From.(*TableName)
	if main.Ref != RefCTE || main.CTE != q.With.CTEs[0] {
		t.Errorf("edge_logs in the final select must point at the first CTE, got %v %p", main.Ref, main.CTE)
	}
	for _, c := range q.With.CTEs {
		var tn *TableName
		Inspect(c.Query, func(n Node) bool {
			if x, ok := n.(*TableName); ok {
				tn = x
			}
			return true
		})
		if tn.Ref != RefSource || tn.CTE != nil {
			t.Errorf("CTE %s: %s must resolve to a source", c.Name.Name, tn.Name())
		}
	}

	// Shadowing: the innermost definition wins.
	q, err = Validate("with a as (select x from my_table) (with a as (select x from a) select x from a)", supabaseOpts)
	if err != nil {
		t.Fatal(err)
	}
	inner := q.Body.(*Query)
	ref := selectOf(t, inner).From.(*TableName)
	if ref.CTE != inner.With.CTEs[0] {
		t.Errorf("final `a` must be the inner CTE")
	}
	innerDef := selectOf(t, inner.With.CTEs[0].Query).From.(*TableName)
	if innerDef.CTE != q.With.CTEs[0] {
		t.Errorf("`a` inside the inner CTE must be the outer CTE")
	}
	// A CTE named like a source shadows the source.
	q, err = Validate("with my_table as (select 1 as a) select a from my_table", supabaseOpts)
	if err != nil {
		t.Fatal(err)
	}
	if tn := selectOf(t, q).From.(*TableName); tn.Ref != RefCTE {
		t.Errorf("CTE must shadow the source of the same name")
	}
}

func TestValidationErrorPositions(t *testing.T) {
	_, err := Validate("select a\nfrom my_table, nope", supabaseOpts)
	var ve *ValidationError
	if !errors.As(err, &ve) || ve.Pos.Line != 2 || ve.Pos.Col != 16 || ve.Name != "nope" {
		t.Errorf("got %+v", err)
	}
	_, err = Validate("select a, *\nfrom my_table", supabaseOpts)
	if !errors.As(err, &ve) || ve.Pos.Line != 1 || ve.Pos.Col != 11 {
		t.Errorf("got %+v", err)
	}
}
