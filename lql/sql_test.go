package lql

import (
	"strings"
	"testing"
)

const (
	sqlSelect = "SELECT t.timestamp, t.id, t.event_message FROM `cloudflare.logs.prod` AS t"
	sqlOrder  = " ORDER BY t.timestamp DESC, t.id DESC LIMIT 100"
)

// sqlCases translate as searches over `cloudflare.logs.prod`, limit 100.
var sqlCases = []struct{ in, want string }{
	{``, sqlSelect + sqlOrder},
	{`error`, sqlSelect + " WHERE STRPOS(t.event_message, 'error') > 0" + sqlOrder},
	{`-error`, sqlSelect + " WHERE (t.event_message IS NULL OR NOT (STRPOS(t.event_message, 'error') > 0))" + sqlOrder},
	{`~"^GET \d+"`, sqlSelect + ` WHERE REGEXP_CONTAINS(t.event_message, '^GET \\d+')` + sqlOrder},
	{`"it's \\ a \"test\""`, sqlSelect + ` WHERE STRPOS(t.event_message, 'it\'s \\ a "test"') > 0` + sqlOrder},
	{`m.a:"x' OR 1=1 --"`, sqlSelect + " CROSS JOIN UNNEST(t.metadata) AS m0 WHERE m0.a = 'x\\' OR 1=1 --'" + sqlOrder},
	{"\"tab\there\nnewline\"", sqlSelect + ` WHERE STRPOS(t.event_message, 'tab\there\nnewline') > 0` + sqlOrder},
	{`m.response.status_code:500 m.request.method:GET`, sqlSelect +
		" CROSS JOIN UNNEST(t.metadata) AS m0 CROSS JOIN UNNEST(m0.response) AS m1 CROSS JOIN UNNEST(m0.request) AS m2" +
		" WHERE m1.status_code = 500 AND m2.method = 'GET'" + sqlOrder},
	{`-m.request.method:GET`, sqlSelect +
		" LEFT JOIN UNNEST(t.metadata) AS m0 ON TRUE LEFT JOIN UNNEST(m0.request) AS m1 ON TRUE" +
		" WHERE (m1.method IS NULL OR NOT (m1.method = 'GET'))" + sqlOrder},
	{`-m.request.method:GET m.request.path:~"^/rest"`, sqlSelect +
		" CROSS JOIN UNNEST(t.metadata) AS m0 CROSS JOIN UNNEST(m0.request) AS m1" +
		" WHERE (m1.method IS NULL OR NOT (m1.method = 'GET')) AND REGEXP_CONTAINS(m1.path, '^/rest')" + sqlOrder},
	{`m.x:NULL -m.y:NULL`, sqlSelect + " CROSS JOIN UNNEST(t.metadata) AS m0 WHERE m0.x IS NULL AND NOT (m0.y IS NULL)" + sqlOrder},
	{`m.x:NULL`, sqlSelect + " LEFT JOIN UNNEST(t.metadata) AS m0 ON TRUE WHERE m0.x IS NULL" + sqlOrder},
	{`m.x:>=1 m.x:<2.5 m.x:-1..5 m.x:true m.x:99999999999999999999 m.x:2.0`, sqlSelect + " CROSS JOIN UNNEST(t.metadata) AS m0" +
		" WHERE m0.x >= 1 AND m0.x < 2.5 AND m0.x BETWEEN -1 AND 5 AND m0.x = TRUE AND m0.x = 1e+20 AND m0.x = 2.0" + sqlOrder},
	{`-m.x:1..5`, sqlSelect + " LEFT JOIN UNNEST(t.metadata) AS m0 ON TRUE WHERE (m0.x IS NULL OR NOT (m0.x BETWEEN 1 AND 5))" + sqlOrder},
	{`m.level:info..error`, sqlSelect + " CROSS JOIN UNNEST(t.metadata) AS m0 WHERE m0.level IN ('info', 'notice', 'warning', 'error')" + sqlOrder},
	{`m.tags:@>foo m.tags:@>~"^b"`, sqlSelect + " CROSS JOIN UNNEST(t.metadata) AS m0" +
		" WHERE 'foo' IN UNNEST(m0.tags) AND EXISTS(SELECT 1 FROM UNNEST(m0.tags) AS x WHERE REGEXP_CONTAINS(x, '^b'))" + sqlOrder},
	{`project:abc t:>2024-01-01T00:00:00Z`, sqlSelect +
		" WHERE t.project = 'abc' AND t.timestamp > TIMESTAMP_MICROS(1704067200000000)" + sqlOrder},
	{`t:2024-01-01`, sqlSelect +
		" WHERE t.timestamp BETWEEN TIMESTAMP_MICROS(1704067200000000) AND TIMESTAMP_MICROS(1704153599999999)" + sqlOrder},
	{`t:last@5m`, sqlSelect +
		" WHERE t.timestamp BETWEEN TIMESTAMP_MICROS(1710498300000000) AND TIMESTAMP_MICROS(1710498645123456)" + sqlOrder},
	{`a.b.c:1 id:x`, sqlSelect + " CROSS JOIN UNNEST(t.a) AS m0 CROSS JOIN UNNEST(m0.b) AS m1 WHERE m1.c = 1 AND t.id = 'x'" + sqlOrder},
	{`m.select.1a:x`, sqlSelect + " CROSS JOIN UNNEST(t.metadata) AS m0 CROSS JOIN UNNEST(m0.`select`) AS m1 WHERE m1.`1a` = 'x'" + sqlOrder},
	{`s:m.request.url s:project@p s:timestamp s:id@order m.response.status_code:500`,
		"SELECT m2.url AS metadata_request_url, t.project AS p, t.timestamp, t.id AS `order` FROM `cloudflare.logs.prod` AS t" +
			" CROSS JOIN UNNEST(t.metadata) AS m0 CROSS JOIN UNNEST(m0.response) AS m1 LEFT JOIN UNNEST(m0.request) AS m2 ON TRUE" +
			" WHERE m1.status_code = 500" + sqlOrder},
	{`s:* s:m.a`, sqlSelect + sqlOrder}, // s:* leaves the default projection
	{`c:count(*) c:group_by(t::minute) m.status:500`,
		"SELECT TIMESTAMP_TRUNC(t.timestamp, MINUTE) AS timestamp, COUNT(t.timestamp) AS count FROM `cloudflare.logs.prod` AS t" +
			" CROSS JOIN UNNEST(t.metadata) AS m0 WHERE m0.status = 500 GROUP BY 1 ORDER BY 1"},
	{`c:countd(m.user) c:group_by(t::day) s:m.ignored`,
		"SELECT TIMESTAMP_TRUNC(t.timestamp, DAY) AS timestamp, COUNT(DISTINCT m0.user) AS count FROM `cloudflare.logs.prod` AS t" +
			" LEFT JOIN UNNEST(t.metadata) AS m0 ON TRUE GROUP BY 1 ORDER BY 1"},
	{`c:p95(m.ms) c:group_by(t::h)`,
		"SELECT TIMESTAMP_TRUNC(t.timestamp, HOUR) AS timestamp, APPROX_QUANTILES(m0.ms, 100)[OFFSET(95)] AS count FROM `cloudflare.logs.prod` AS t" +
			" LEFT JOIN UNNEST(t.metadata) AS m0 ON TRUE GROUP BY 1 ORDER BY 1"},
	{`c:avg(m.ms) c:group_by(t::s) error`,
		"SELECT TIMESTAMP_TRUNC(t.timestamp, SECOND) AS timestamp, AVG(m0.ms) AS count FROM `cloudflare.logs.prod` AS t" +
			" LEFT JOIN UNNEST(t.metadata) AS m0 ON TRUE WHERE STRPOS(t.event_message, 'error') > 0 GROUP BY 1 ORDER BY 1"},
	{`c:sum(m.bytes)`, "SELECT TIMESTAMP_TRUNC(t.timestamp, MINUTE) AS timestamp, SUM(m0.bytes) AS count FROM `cloudflare.logs.prod` AS t" +
		" LEFT JOIN UNNEST(t.metadata) AS m0 ON TRUE GROUP BY 1 ORDER BY 1"},
	{`c:max(*) c:p50(m.a) c:p99(m.a)`, "SELECT TIMESTAMP_TRUNC(t.timestamp, MINUTE) AS timestamp, APPROX_QUANTILES(m0.a, 100)[OFFSET(99)] AS count FROM `cloudflare.logs.prod` AS t" +
		" LEFT JOIN UNNEST(t.metadata) AS m0 ON TRUE GROUP BY 1 ORDER BY 1"},
	{`c:max(*)`, "SELECT TIMESTAMP_TRUNC(t.timestamp, MINUTE) AS timestamp, MAX(t.timestamp) AS count FROM `cloudflare.logs.prod` AS t GROUP BY 1 ORDER BY 1"},
}

func TestToSQL(t *testing.T) {
	for _, c := range sqlCases {
		q, err := Parse(c.in, testOpts)
		if err != nil {
			t.Errorf("Parse(%q): %v", c.in, err)
			continue
		}
		got, err := ToSQL(q, "cloudflare.logs.prod", SQLOptions{Limit: 100})
		if err != nil {
			t.Errorf("ToSQL(%q): %v", c.in, err)
			continue
		}
		if got != c.want {
			t.Errorf("ToSQL(%q)\n got %s\nwant %s", c.in, got, c.want)
		}
		checkNoInjection(t, got)
	}
}

func TestToSQLTyped(t *testing.T) {
	q, err := Parse(`m.at:>2024-01-01T00:00:00Z m.civil:2024-01-01T10:00:00 m.msg:500 m.ratio:2`, schemaOpts)
	if err != nil {
		t.Fatal(err)
	}
	got, err := ToSQL(q, "src", SQLOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := "SELECT t.timestamp, t.id, t.event_message FROM src AS t CROSS JOIN UNNEST(t.metadata) AS m0" +
		" WHERE m0.`at` > TIMESTAMP_MICROS(1704067200000000) AND m0.civil = DATETIME(TIMESTAMP_MICROS(1704103200000000))" +
		" AND m0.msg = '500' AND m0.ratio = 2.0 ORDER BY t.timestamp DESC, t.id DESC"
	if got != want {
		t.Errorf("\n got %s\nwant %s", got, want)
	}
}

func TestToSQLTableQuoting(t *testing.T) {
	q := &Query{}
	for table, want := range map[string]string{
		"my_source":    "my_source",
		"select":       "`select`",
		"1source":      "`1source`",
		"deno-relay":   "`deno-relay`",
		"a`b\\c":       "`a\\`b\\\\c`",
		"new\nline":    "`new\\nline`",
		"postgres.log": "`postgres.log`",
	} {
		got, err := ToSQL(q, table, SQLOptions{Sandboxed: true})
		if err != nil {
			t.Fatal(err)
		}
		if w := "SELECT t.timestamp FROM " + want + " AS t"; got != w {
			t.Errorf("table %q:\n got %s\nwant %s", table, got, w)
		}
	}
}

func TestToSQLErrors(t *testing.T) {
	cases := []struct {
		q     Query
		table string
		msg   string
	}{
		{Query{}, "", "lql: no table to query"},
		{Query{Selects: []Select{{Path: "metadata.a_b"}, {Path: "metadata.a.b"}}}, "t",
			"lql: two selected columns are named `metadata_a_b`; give one an @alias"},
		{Query{Filters: []Filter{eq("a..b", I(1))}}, "t", `lql: invalid field path "a..b"`},
		{Query{Filters: []Filter{eq("a;b", I(1))}}, "t", `lql: invalid field path "a;b"`},
		{Query{Filters: []Filter{{Path: "a", Op: OpRegex, Value: I(1)}}}, "t", "lql: :~ needs a string operand on a"},
		{Query{Filters: []Filter{{Path: "a", Op: OpGt, Value: NullValue()}}}, "t", "lql: NULL needs the `:` operator on a"},
		{Query{Filters: []Filter{{Path: "a", Op: OpRange, Values: []Value{I(1)}}}}, "t", "lql: a range needs two values on a"},
		{Query{Selects: []Select{{Path: "a", Alias: "x"}, {Path: "b", Alias: "x"}}}, "t",
			"lql: two selected columns are named `x`; give one an @alias"},
	}
	for _, c := range cases {
		got, err := ToSQL(&c.q, c.table, SQLOptions{})
		if err == nil || err.Error() != c.msg {
			t.Errorf("ToSQL(%+v) = %q, %v; want error %q", c.q, got, err, c.msg)
		}
	}
}

func TestForSandbox(t *testing.T) {
	cases := []struct {
		in   string
		ctes []string
		want string
		msg  string
	}{
		{`m.status:500`, []string{"edge_logs"},
			"SELECT m0.status AS metadata_status FROM edge_logs AS t CROSS JOIN UNNEST(t.metadata) AS m0 WHERE m0.status = 500", ""},
		{``, []string{"a"}, "SELECT t.timestamp FROM a AS t", ""},
		{`m.a:1 m.a:2 -m.b:x`, []string{"a"},
			"SELECT m0.a AS metadata_a, m0.b AS metadata_b FROM a AS t CROSS JOIN UNNEST(t.metadata) AS m0" +
				" WHERE m0.a = 1 AND m0.a = 2 AND (m0.b IS NULL OR NOT (m0.b = 'x'))", ""},
		{`error t:>2024-01-01T00:00:00Z f:b`, []string{"a", "b"},
			"SELECT t.event_message, t.timestamp FROM b AS t WHERE STRPOS(t.event_message, 'error') > 0" +
				" AND t.timestamp > TIMESTAMP_MICROS(1704067200000000)", ""},
		{`s:m.a@x s:id from:a`, []string{"a"}, "SELECT m0.a AS x, t.id FROM a AS t LEFT JOIN UNNEST(t.metadata) AS m0 ON TRUE", ""},
		{`s:* project:p`, []string{"a"}, "SELECT t.project FROM a AS t WHERE t.project = 'p'", ""},
		{`c:count(*) c:group_by(t::hour) f:a`, []string{"a", "b"},
			"SELECT TIMESTAMP_TRUNC(t.timestamp, HOUR) AS timestamp, COUNT(t.timestamp) AS count FROM a AS t GROUP BY 1 ORDER BY 1", ""},
		{`m.x:1`, []string{"a", "b"}, "", "Multiple CTEs available (a, b). You must specify which one to query using `f:name`"},
		{`f:zz`, []string{"a", "b"}, "", "Table 'zz' not found in available CTEs: a, b"},
		{`m.x:1`, nil, "", "No CTEs found in query"},
	}
	for _, c := range cases {
		q, err := Parse(c.in, testOpts)
		if err != nil {
			t.Errorf("Parse(%q): %v", c.in, err)
			continue
		}
		got, err := ForSandbox(q, c.ctes)
		if c.msg != "" {
			if err == nil || err.Error() != c.msg {
				t.Errorf("ForSandbox(%q, %v) = %q, %v; want error %q", c.in, c.ctes, got, err, c.msg)
			}
			continue
		}
		if err != nil {
			t.Errorf("ForSandbox(%q, %v): %v", c.in, c.ctes, err)
			continue
		}
		if got != c.want {
			t.Errorf("ForSandbox(%q, %v)\n got %s\nwant %s", c.in, c.ctes, got, c.want)
		}
	}
}

// unquoteSQL decodes a BigQuery single-quoted literal as quoteString writes
// it; ok is false for anything malformed.
func unquoteSQL(lit string) (string, bool) {
	if len(lit) < 2 || lit[0] != '\'' || lit[len(lit)-1] != '\'' {
		return "", false
	}
	body := lit[1 : len(lit)-1]
	var b strings.Builder
	for i := 0; i < len(body); i++ {
		c := body[i]
		if c == '\'' {
			return "", false // an unescaped quote would end the literal
		}
		if c != '\\' {
			b.WriteByte(c)
			continue
		}
		i++
		if i >= len(body) {
			return "", false
		}
		switch body[i] {
		case '\\', '\'', '`':
			b.WriteByte(body[i])
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 't':
			b.WriteByte('\t')
		case 'x':
			if i+2 >= len(body) {
				return "", false
			}
			const hex = "0123456789abcdef"
			hi, lo := strings.IndexByte(hex, body[i+1]), strings.IndexByte(hex, body[i+2])
			if hi < 0 || lo < 0 {
				return "", false
			}
			b.WriteByte(byte(hi<<4 | lo))
			i += 2
		default:
			return "", false
		}
	}
	return b.String(), true
}

func TestQuoteStringDecodes(t *testing.T) {
	for _, s := range []string{"", "plain", "it's", `a\b`, `\'`, "'; DROP TABLE x; --", "\x00\x01\x1f\x7f", "tab\tnl\ncr\r", "é ü 日本", "`back`", `"dq"`} {
		lit := quoteString(s)
		got, ok := unquoteSQL(lit)
		if !ok || got != s {
			t.Errorf("quoteString(%q) = %s decodes to %q, %v", s, lit, got, ok)
		}
	}
}

// checkNoInjection scans SQL the way a BigQuery lexer would: outside string
// literals and quoted identifiers there must be no statement separator or
// comment, and every literal must be closed and decodable.
func checkNoInjection(t testing.TB, sql string) {
	t.Helper()
	var outside strings.Builder
	for i := 0; i < len(sql); i++ {
		c := sql[i]
		if c != '\'' && c != '`' {
			outside.WriteByte(c)
			continue
		}
		j := i + 1
		for ; j < len(sql) && sql[j] != c; j++ {
			if sql[j] == '\\' {
				j++
			}
		}
		if j >= len(sql) {
			t.Fatalf("unterminated %c literal in %s", c, sql)
		}
		if c == '\'' {
			if _, ok := unquoteSQL(sql[i : j+1]); !ok {
				t.Fatalf("undecodable literal %s in %s", sql[i:j+1], sql)
			}
		}
		outside.WriteString("?")
		i = j
	}
	rest := outside.String()
	for _, bad := range []string{";", "--", "/*", "#", "\n", "\""} {
		if strings.Contains(rest, bad) {
			t.Fatalf("%q outside literals in %s", bad, sql)
		}
	}
}
