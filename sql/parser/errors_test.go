package parser

import (
	"errors"
	"strings"
	"testing"
)

// parseErrorCases are inputs that must fail with exactly this error text.
var parseErrorCases = []struct {
	sql, want string
}{
	{"select a from", "sql parser error: Expected: identifier, found: EOF at Line: 1, Column: 14"},
	{"select a into b from t", "sql parser error: Expected: end of statement, found: into at Line: 1, Column: 10"},
	{"SELECT a INTO b FROM t", "sql parser error: Expected: end of statement, found: INTO at Line: 1, Column: 10"},
	{"select (a from t", "sql parser error: Expected: ), found: from at Line: 1, Column: 11"},
	{"select a,\n  b\nfrom t\nwhere (a = 1", "sql parser error: Expected: ), found: EOF at Line: 4, Column: 13"},
	{"select a from t where", "sql parser error: Expected: an expression, found: EOF at Line: 1, Column: 22"},
	{"select 1 +", "sql parser error: Expected: an expression, found: EOF at Line: 1, Column: 11"},
	{"selec 1", "sql parser error: Expected: an SQL statement, found: selec at Line: 1, Column: 1"},
	{"select 1 1", "sql parser error: Expected: end of statement, found: 1 at Line: 1, Column: 10"},
	{"select 1 select 2", "sql parser error: Expected: end of statement, found: select at Line: 1, Column: 10"},
	{"select a from t\n  order by", "sql parser error: Expected: an expression, found: EOF at Line: 2, Column: 11"},
	{"select cast(x as foo)", "sql parser error: Expected: a data type, found: foo at Line: 1, Column: 18"},
	{"select timestamp_sub(ts, interval 1 fortnight)", "sql parser error: Expected: a date part (e.g. DAY, HOUR, MINUTE), found: fortnight at Line: 1, Column: 37"},
	{"select extract(foo from x)", "sql parser error: Expected: a date part, found: foo at Line: 1, Column: 16"},
	{"select a from t join u", "sql parser error: Expected: ON or USING, found: EOF at Line: 1, Column: 23"},
	{"select a from t where x is 5", "sql parser error: Expected: NULL, TRUE, FALSE, UNKNOWN or DISTINCT FROM, found: 5 at Line: 1, Column: 28"},
	{"select case when a then 1", "sql parser error: Expected: END, found: EOF at Line: 1, Column: 26"},
	{"select case end", "sql parser error: Expected: an expression, found: end at Line: 1, Column: 13"},
	{"select a from t limit", "sql parser error: Expected: an expression, found: EOF at Line: 1, Column: 22"},
	{"select a.* + 1 from t", "sql parser error: Expected: end of statement, found: + at Line: 1, Column: 12"},
	{"select f(a.*)", "sql parser error: Expected: identifier, found: * at Line: 1, Column: 12"},
	{"with a as select 1 select 1", "sql parser error: Expected: (, found: select at Line: 1, Column: 11"},
	{"select a from t union all", "sql parser error: Expected: SELECT, VALUES, or a subquery in the query body, found: EOF at Line: 1, Column: 26"},
	{"select a, from t where", "sql parser error: Expected: an expression, found: EOF at Line: 1, Column: 23"},
	{"select a as from t", "sql parser error: Expected: identifier, found: from at Line: 1, Column: 13"},
	{"select (1, 2)", "sql parser error: Expected: ), found: , at Line: 1, Column: 10"},
	{"select x[offset(0)", "sql parser error: Expected: ], found: EOF at Line: 1, Column: 19"},
	{"select x[offset(0]", "sql parser error: Expected: ), found: ] at Line: 1, Column: 18"},
	{"select cast(x as array<int64)", "sql parser error: Expected: >, found: ) at Line: 1, Column: 29"},
	{"select 1 from t order by a nulls", "sql parser error: Expected: FIRST or LAST, found: EOF at Line: 1, Column: 33"},
	// Lexical errors.
	{"select 'abc", "sql parser error: Unterminated string literal at Line: 1, Column: 8"},
	{"select '''abc''", "sql parser error: Unterminated string literal at Line: 1, Column: 8"},
	{"select `abc", "sql parser error: Unterminated quoted identifier at Line: 1, Column: 8"},
	{"select ``", "sql parser error: Expected: identifier, found: `` at Line: 1, Column: 8"},
	{"select 1 /* open", "sql parser error: Unterminated block comment at Line: 1, Column: 10"},
	{`select 'a\qb'`, `sql parser error: Illegal escape sequence: \q at Line: 1, Column: 10`},
	{`select '\x4'`, `sql parser error: Illegal escape sequence: \x at Line: 1, Column: 9`},
	{`select '\ud800'`, `sql parser error: Illegal escape sequence: \u at Line: 1, Column: 9`},
	{`select '\400'`, `sql parser error: Illegal escape sequence: \4 at Line: 1, Column: 9`},
	{"select @ from t", "sql parser error: Expected: parameter name, found: @ at Line: 1, Column: 8"},
	{"select @@version", "sql parser error: Expected: parameter name, found: @ at Line: 1, Column: 8"},
	{"select $1", "sql parser error: Unexpected character '$' at Line: 1, Column: 8"},
	{"select a ? b", "sql parser error: Unexpected character '?' at Line: 1, Column: 10"},
	{"select 1abc", "sql parser error: Invalid number literal: 1abc at Line: 1, Column: 8"},
	{"select 99999999999999999999", "sql parser error: Integer literal out of range: 99999999999999999999 at Line: 1, Column: 8"},
	{"select -9223372036854775809", "sql parser error: Integer literal out of range: 9223372036854775809 at Line: 1, Column: 9"},
	{"select 1e400", "sql parser error: Float literal out of range: 1e400 at Line: 1, Column: 8"},
	{"select 'é' ! 1", "sql parser error: Unexpected character '!' at Line: 1, Column: 12"},
	{`select 'é\q'`, `sql parser error: Illegal escape sequence: \q at Line: 1, Column: 10`},
	{"select a → b", "sql parser error: Unexpected character '→' at Line: 1, Column: 10"},
	{"select `é` ¬ b", "sql parser error: Unexpected character '¬' at Line: 1, Column: 12"},
}

func TestParseErrors(t *testing.T) {
	for _, tc := range parseErrorCases {
		t.Run(tc.sql, func(t *testing.T) {
			_, err := Parse(tc.sql)
			if err == nil {
				t.Fatalf("Parse(%q) succeeded, want error %q", tc.sql, tc.want)
			}
			var perr *Error
			if !errors.As(err, &perr) {
				t.Fatalf("error %v is %T, want *Error", err, err)
			}
			if err.Error() != tc.want {
				t.Errorf("Parse(%q)\n got %s\nwant %s", tc.sql, err, tc.want)
			}
		})
	}
}

func TestLimits(t *testing.T) {
	deepParens := "select " + strings.Repeat("(", MaxNesting+1) + "1" + strings.Repeat(")", MaxNesting+1)
	cases := []struct {
		name, sql, want string
	}{
		{"input size", "select '" + strings.Repeat("x", MaxInputBytes) + "'", "maximum of 1048576"},
		{"parentheses", deepParens, "maximum depth of 200"},
		{"unary minus", "select " + strings.Repeat("- ", 300) + "x", "maximum depth of 200"},
		{"NOT", "select " + strings.Repeat("not ", 300) + "x", "maximum depth of 200"},
		{"function calls", "select " + strings.Repeat("f(", 300) + "1" + strings.Repeat(")", 300), "maximum depth of 200"},
		{"subqueries", strings.Repeat("select (", 150) + "1" + strings.Repeat(")", 150), "maximum depth of 200"},
		{"CTEs", strings.Repeat("with a as (", 250) + "select 1" + strings.Repeat(") select 1", 250), "maximum depth of 200"},
		{"join groups", "select 1 from " + strings.Repeat("(", 300) + "t" + strings.Repeat(")", 300), "maximum depth of 200"},
		{"array types", "select cast(x as " + strings.Repeat("array<", 300) + "int64" + strings.Repeat(">", 300) + ")", "maximum depth of 200"},
		{"long + chain", "select 1" + strings.Repeat(" + 1", MaxTreeHeight+10), "too deeply nested"},
		{"long join chain", "select 1 from t" + strings.Repeat(", t", MaxTreeHeight+10), "too deeply nested"},
		{"long union chain", "select 1" + strings.Repeat(" union all select 1", MaxTreeHeight+10), "too deeply nested"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse(tc.sql)
			var perr *Error
			if !errors.As(err, &perr) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want a parse error containing %q", err, tc.want)
			}
		})
	}
	// Within the limits, deep but legal queries parse.
	ok := []string{
		"select " + strings.Repeat("(", MaxNesting-5) + "1" + strings.Repeat(")", MaxNesting-5),
		"select 1 from t where " + strings.Repeat("a = 1 or ", 1500) + "true",
		"select 1 from t" + strings.Repeat(" cross join unnest(x)", 500),
	}
	for _, sql := range ok {
		if _, err := Parse(sql); err != nil {
			t.Errorf("Parse(%.60q...): %v", sql, err)
		}
	}
}

// TestNoBacktracking parses inputs where a parser that tries "subquery"
// first and falls back to "expression" would do exponential work (each
// level parsed twice). The parser decides from the matching parentheses
// instead, so these finish at once; an exponential parser would hang here.
func TestNoBacktracking(t *testing.T) {
	build := func(n int, open, close string) string {
		s := "u"
		for i := 0; i < n; i++ {
			s = open + s + close
		}
		return s
	}
	cases := []struct{ sql, want string }{
		{"select " + build(60, "((select ", ") + 1)"), "SELECT (SELECT (SELECT ("},
		{"select 1 from t where x in (" + build(60, "((select ", ") + 1)") + ", 2)", "SELECT 1 FROM t WHERE x IN ((SELECT (SELECT (SELECT"},
		{"select 1 from " + build(45, "((select 1 from ", ") as s join t on true)"), "SELECT 1 FROM (SELECT 1 FROM (SELECT"},
	}
	for _, tc := range cases {
		q, err := Parse(tc.sql)
		if err != nil {
			t.Fatalf("Parse: %v", err)
		}
		if got := Format(q); !strings.HasPrefix(got, tc.want) {
			t.Errorf("Format = %.80s..., want prefix %s", got, tc.want)
		}
		checkRoundTrip(t, tc.sql)
	}
}

// TestTruncatedInputs parses every prefix of every test query: each must
// either fail with an error or parse into statements that round-trip through
// Format; none may panic.
func TestTruncatedInputs(t *testing.T) {
	for _, sql := range allTestSQL() {
		step := 1
		if len(sql) > 1500 {
			step = 7
		}
		for i := 0; i < len(sql); i += step {
			checkRoundTrip(t, sql[:i])
			checkHeightBound(t, sql[:i])
		}
	}
}
