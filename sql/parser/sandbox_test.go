package parser

import (
	"errors"
	"reflect"
	"testing"
)

// sandboxEndpoint is Logflare's documented sandboxing example.
const sandboxEndpoint = "with src as (select a from my_table), src2 as (select a from src where a > 5) select c from src order by c limit 100"

const sandboxEndpointWith = "WITH src AS (SELECT a FROM my_table), src2 AS (SELECT a FROM src WHERE a > 5) "

var sandboxCases = []struct {
	name, endpoint, consumer string
	// want is the Format of the merged query, or the error text when err.
	want string
	err  bool
}{
	{"documented example", sandboxEndpoint, "select a, b, c from src2",
		sandboxEndpointWith + "SELECT a, b, c FROM src2", false},
	{"consumer ORDER BY and LIMIT replace the endpoint's", sandboxEndpoint, "select a from src2 order by a desc limit 5",
		sandboxEndpointWith + "SELECT a FROM src2 ORDER BY a DESC LIMIT 5", false},
	{"no LIMIT in the consumer means none", sandboxEndpoint, "select a from src",
		sandboxEndpointWith + "SELECT a FROM src", false},
	{"consumer WITH is nested", sandboxEndpoint, "with c1 as (select a from src2), c2 as (select a from c1) select a from c2 limit 3",
		sandboxEndpointWith + "(WITH c1 AS (SELECT a FROM src2), c2 AS (SELECT a FROM c1) SELECT a FROM c2 LIMIT 3)", false},
	{"consumer CTE shadows an endpoint CTE", sandboxEndpoint, "with src as (select a from src2) select a from src",
		sandboxEndpointWith + "(WITH src AS (SELECT a FROM src2) SELECT a FROM src)", false},
	{"subqueries, unnest, joins and union all", sandboxEndpoint,
		"select a from src cross join unnest(a.x) as u union all select s.a from (select a from src2) s join src on s.a = src.a where s.a in (select a from src) order by 1 limit 10",
		sandboxEndpointWith + "SELECT a FROM src CROSS JOIN UNNEST(a.x) AS u UNION ALL SELECT s.a FROM (SELECT a FROM src2) AS s JOIN src ON s.a = src.a WHERE s.a IN (SELECT a FROM src) ORDER BY 1 LIMIT 10", false},
	{"CTE names are case-insensitive", sandboxEndpoint, "select a from SRC2", sandboxEndpointWith + "SELECT a FROM SRC2", false},
	{"trailing semicolon and comments", sandboxEndpoint, "-- mine\nselect a from src2;", sandboxEndpointWith + "SELECT a FROM src2", false},
	{"unknown table", sandboxEndpoint, "select a from nope", "can't find source nope", true},
	{"source that is not a CTE", sandboxEndpoint, "select a from my_table", "Table not found in CTE: (my_table)", true},
	{"several sources that are not CTEs", sandboxEndpoint,
		"select a from my_table join `cloudflare.logs.prod` as c on true join my_table as m2 on true",
		"Table not found in CTE: (my_table, cloudflare.logs.prod)", true},
	{"source in a consumer subquery", sandboxEndpoint, "select a from src where a in (select a from my_table)",
		"Table not found in CTE: (my_table)", true},
	{"source in a consumer CTE", sandboxEndpoint, "with c as (select a from my_table) select a from c",
		"Table not found in CTE: (my_table)", true},
	{"consumer CTE visible only in its scope", sandboxEndpoint, "select a from (with c as (select a from src) select a from c) s, c",
		"can't find source c", true},
	{"delete", sandboxEndpoint, "delete from src where true", "Only SELECT queries allowed in sandboxed queries", true},
	{"create", sandboxEndpoint, "create table x as select a from src", "Only SELECT queries allowed in sandboxed queries", true},
	{"two consumer statements", sandboxEndpoint, "select a from src; select a from src2", "Only singular query allowed", true},
	{"consumer wildcard", sandboxEndpoint, "select * from src", errWildcard, true},
	{"consumer qualified wildcard in a subquery", sandboxEndpoint, "select a from (select s.* from src s)", errWildcard, true},
	{"consumer restricted function", sandboxEndpoint, "select session_user() from src", "Restricted function session_user", true},
	{"empty consumer", sandboxEndpoint, "  ", errEmpty, true},
	{"consumer syntax error", sandboxEndpoint, "select from src",
		"sql parser error: Expected: an expression, found: from at Line: 1, Column: 8", true},
	{"endpoint without WITH", "select a from my_table", "select a from my_table",
		"Sandboxed queries require an endpoint query with a WITH clause", true},
	{"invalid endpoint", "with s as (select * from my_table) select a from s", "select a from s", errWildcard, true},
}

func TestSandbox(t *testing.T) {
	for _, tc := range sandboxCases {
		t.Run(tc.name, func(t *testing.T) {
			res, err := Sandbox(tc.endpoint, tc.consumer, supabaseOpts)
			if tc.err {
				if err == nil {
					t.Fatalf("succeeded with %s, want error %q", Format(res.Query), tc.want)
				}
				if err.Error() != tc.want {
					t.Errorf("error\n got %q\nwant %q", err.Error(), tc.want)
				}
				return
			}
			if err != nil {
				t.Fatalf("Sandbox: %v", err)
			}
			if got := Format(res.Query); got != tc.want {
				t.Errorf("merged\n got %s\nwant %s", got, tc.want)
			}
			// The merged query is itself a valid query over known sources.
			if _, err := Validate(Format(res.Query), supabaseOpts); err != nil {
				t.Errorf("merged query does not validate: %v", err)
			}
			checkResolved(t, res.Query)
		})
	}
}

// checkResolved asserts that every table name of q is bound.
func checkResolved(t *testing.T, q *Query) {
	t.Helper()
	Inspect(q, func(n Node) bool {
		if tn, ok := n.(*TableName); ok {
			if tn.Ref == RefUnresolved || (tn.Ref == RefCTE) != (tn.CTE != nil) {
				t.Errorf("table %s not resolved (%v)", tn.Name(), tn.Ref)
			}
		}
		return true
	})
}

func TestSandboxErrorKinds(t *testing.T) {
	cases := []struct {
		endpoint, consumer string
		kind               ValidationKind
	}{
		{sandboxEndpoint, "select a from my_table", KindSandboxTableNotInCTE},
		{sandboxEndpoint, "insert into src values (1)", KindSandboxNotSelect},
		{"select a from my_table", "select a from my_table", KindSandboxNoWith},
		{sandboxEndpoint, "select a from nope", KindUnknownSource},
	}
	for _, tc := range cases {
		_, err := Sandbox(tc.endpoint, tc.consumer, supabaseOpts)
		var ve *ValidationError
		if !errors.As(err, &ve) || ve.Kind != tc.kind {
			t.Errorf("Sandbox(%q): %v, want kind %d", tc.consumer, err, tc.kind)
		}
	}
}

func TestSandboxLogsAll(t *testing.T) {
	consumer := "select id, timestamp, event_message from edge_logs where event_message = @extra union all " +
		"select id, timestamp, event_message from postgres_logs order by timestamp desc limit 100"
	res, err := Sandbox(logsAllSQL(), consumer, supabaseOpts)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"project", "iso_timestamp_start", "iso_timestamp_end"}; !reflect.DeepEqual(res.Declared, want) {
		t.Errorf("declared = %v, want %v (a consumer-only parameter is not declared)", res.Declared, want)
	}
	if got := Parameters(res.Query); !reflect.DeepEqual(got, []string{"project", "iso_timestamp_start", "iso_timestamp_end", "extra"}) {
		t.Errorf("parameters of the merged query = %v", got)
	}
	if len(res.Query.With.CTEs) != 9 {
		t.Errorf("the endpoint's CTEs must stay")
	}
	set := res.Query.Body.(*SetOp)
	left := set.Left.(*Select).From.(*TableName)
	if left.CTE != res.Query.With.CTEs[0] {
		t.Errorf("edge_logs must resolve to the endpoint's CTE")
	}
	if sx(res.Query.Limit) != "100" || !res.Query.OrderBy[0].Desc {
		t.Errorf("consumer ORDER BY/LIMIT lost")
	}

	// Studio's real list query works against logs.all as it is.
	res, err = Sandbox(logsAllSQL(), studioQueries[0].sql, supabaseOpts)
	if err != nil {
		t.Fatal(err)
	}
	if got := Format(res.Query.Body); got[:len("SELECT id, edge_logs.timestamp")] != "SELECT id, edge_logs.timestamp" {
		t.Errorf("body = %s", got)
	}
}
