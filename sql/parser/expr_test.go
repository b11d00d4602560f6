package parser

import (
	"testing"
)

// exprCases maps an expression to the shape of its tree (see sx).
var exprCases = []struct {
	in, want string
}{
	// Precedence: OR < AND < NOT < comparison < | < ^ < & < shifts < + - <
	// * / || < unary < postfix.
	{"a or b and c", "(OR a (AND b c))"},
	{"a and b or c", "(OR (AND a b) c)"},
	{"a or b or c", "(OR (OR a b) c)"},
	{"not a and b", "(AND (NOT a) b)"},
	{"not a = b", "(NOT (= a b))"},
	{"not not a", "(NOT (NOT a))"},
	{"NOT (a OR b)", "(NOT (OR a b))"},
	{"a = 1 and not b like 'x%' or c is null", "(OR (AND (= a 1) (NOT (LIKE b \"x%\"))) (IS NULL c))"},
	{"a = b | c", "(= a (| b c))"},
	{"a | b ^ c & d", "(| a (^ b (& c d)))"},
	{"a & b << 2", "(& a (<< b 2))"},
	{"a << 1 + 2", "(<< a (+ 1 2))"},
	{"a >> b", "(>> a b)"},
	{"a + b * c", "(+ a (* b c))"},
	{"a - b - c", "(- (- a b) c)"},
	{"a * b / c", "(/ (* a b) c)"},
	{"a || b || c", "(|| (|| a b) c)"},
	{"a + b || c", "(+ a (|| b c))"},
	{"-a * b", "(* (NEG a) b)"},
	{"~a & b", "(& (~ a) b)"},
	{"+a", "(PLUS a)"},
	{"- - a", "(NEG (NEG a))"},
	{"-a.b[0]", "(NEG ([] a.b 0))"},
	{"(a + b) * c", "(* (+ a b) c)"},
	{"((a))", "a"},
	// Comparisons.
	{"a = b", "(= a b)"},
	{"a != b", "(!= a b)"},
	{"a <> b", "(!= a b)"},
	{"a < b", "(< a b)"},
	{"a <= b", "(<= a b)"},
	{"a > b", "(> a b)"},
	{"a >= b", "(>= a b)"},
	{"a like '%x'", "(LIKE a \"%x\")"},
	{"a not like '%x'", "(NOT LIKE a \"%x\")"},
	{"a between 1 and 2", "(BETWEEN a 1 2)"},
	{"a not between 1 and 2 and b", "(AND (NOT BETWEEN a 1 2) b)"},
	{"a between b + 1 and c * 2", "(BETWEEN a (+ b 1) (* c 2))"},
	{"a in (1, 2, 3)", "(IN a [1 2 3])"},
	{"a not in ('x')", "(NOT IN a [\"x\"])"},
	{"a in (select b from t)", "(IN a {SELECT b FROM t})"},
	{"a not in (select b from t)", "(NOT IN a {SELECT b FROM t})"},
	{"a in unnest(@list)", "(IN a UNNEST @list)"},
	{"a not in unnest([1, 2])", "(NOT IN a UNNEST [1 2])"},
	{"a in ((select 1), 2)", "(IN a [{SELECT 1} 2])"},
	{"a is null", "(IS NULL a)"},
	{"a is not null", "(IS NOT NULL a)"},
	{"a is true", "(IS TRUE a)"},
	{"a is not false", "(IS NOT FALSE a)"},
	{"a is unknown", "(IS UNKNOWN a)"},
	{"a is distinct from b", "(IS DISTINCT FROM a b)"},
	{"a is not distinct from b", "(IS NOT DISTINCT FROM a b)"},
	{"a = b is null", "(IS NULL (= a b))"},
	{"(a = 'HIT')", "(= a \"HIT\")"},
	// Literals.
	{"1", "1"},
	{"-1", "-1"},
	{"- 1", "-1"},
	{"-(1)", "(NEG 1)"},
	{"2-1", "(- 2 1)"},
	{"a - -1", "(- a -1)"},
	{"0x1F", "31"},
	{"-9223372036854775808", "-9223372036854775808"},
	{"9223372036854775807", "9223372036854775807"},
	{"1.5", "1.5"},
	{".5", "0.5"},
	{"1e3", "1000.0"},
	{"1.5E-3", "0.0015"},
	{"-2.5", "-2.5"},
	{"'abc'", `"abc"`},
	{`"abc"`, `"abc"`},
	{`'it''s'`, `"it's"`},
	{`"say ""hi"""`, `"say \"hi\""`},
	{`'a\\b'`, `"a\\b"`},
	{`'\'q\' \"d\" \n\t\r\b\f\v\a \? \` + "`" + `'`, "\"'q' \\\"d\\\" \\n\\t\\r\\b\\f\\v\\a ? `\""},
	{`'\101\x42\u0043\U00000044'`, `"ABCD"`},
	{`'\u00e9'`, `"é"`},
	{`'''triple 'quoted' string'''`, `"triple 'quoted' string"`},
	{`"""multi
line"""`, `"multi\nline"`},
	{`r'\d+\.\w'`, `"\\d+\\.\\w"`},
	{`R"a\"b"`, `"a\\\"b"`},
	{`b'abc'`, `b"abc"`},
	{`B'\xff'`, `b"\xff"`},
	{`rb'\x'`, `b"\\x"`},
	{"true", "TRUE"},
	{"FALSE", "FALSE"},
	{"null", "NULL"},
	{"TIMESTAMP '2024-01-01 00:00:00+00'", `(TIMESTAMP "2024-01-01 00:00:00+00")`},
	{"date '2024-01-01'", `(DATE "2024-01-01")`},
	{"DATETIME '2024-01-01 10:00:00'", `(DATETIME "2024-01-01 10:00:00")`},
	{"time '10:00:00'", `(TIME "10:00:00")`},
	{"json '{\"a\": 1}'", `(JSON "{\"a\": 1}")`},
	{"numeric '1.25'", `(NUMERIC "1.25")`},
	{"interval 1 hour", "(INTERVAL 1 HOUR)"},
	{"INTERVAL 7 DAY", "(INTERVAL 7 DAY)"},
	{"interval @n Minute", "(INTERVAL @n MINUTE)"},
	{"interval -1 week", "(INTERVAL -1 WEEK)"},
	{"interval (x + 1) month", "(INTERVAL (+ x 1) MONTH)"},
	{"interval '3' quarter", `(INTERVAL "3" QUARTER)`},
	{"interval 10 microsecond", "(INTERVAL 10 MICROSECOND)"},
	{"interval 10 MILLISECOND", "(INTERVAL 10 MILLISECOND)"},
	{"interval 1 second", "(INTERVAL 1 SECOND)"},
	{"interval 2 year", "(INTERVAL 2 YEAR)"},
	{"@project", "@project"},
	// Names and paths.
	{"a", "a"},
	{"t.a", "t.a"},
	{"m.request.path", "m.request.path"},
	{"`request`.`method`", "`request`.`method`"},
	{"`a.b.c`", "`a.b.c`"},
	{"m.timestamp", "m.timestamp"},
	{"t.from", "t.from"},
	{"timestamp", "timestamp"},
	{"date", "date"},
	{"level", "level"},
	{"status", "status"},
	{"type", "type"},
	{"user", "user"},
	{"(a).b", "a.b"},
	{"Edge_Logs.TimeStamp", "Edge_Logs.TimeStamp"},
	// Subscripts and field access.
	{"dates[0]", "([] dates 0)"},
	{"metadata[0].request", "(. ([] metadata 0) request)"},
	{"a[offset(0)]", "(OFFSET a 0)"},
	{"a[OFFSET(1)]", "(OFFSET a 1)"},
	{"a[ordinal(1)]", "(ORDINAL a 1)"},
	{"a[safe_offset(0)]", "(SAFE_OFFSET a 0)"},
	{"a[SAFE_ORDINAL(2)]", "(SAFE_ORDINAL a 2)"},
	{"a[0][1]", "([] ([] a 0) 1)"},
	{"f(x).y.z", "(. (. f(x) y) z)"},
	{"approx_quantiles(x, 100)[offset(95)]", "(OFFSET approx_quantiles(x, 100) 95)"},
	// Casts.
	{"cast(x as int64)", "(CAST x INT64)"},
	{"CAST(x AS STRING)", "(CAST x STRING)"},
	{"SAFE_CAST(x AS INT64)", "(SAFE_CAST x INT64)"},
	{"safe_cast(x as float64)", "(SAFE_CAST x FLOAT64)"},
	{"cast(x as integer)", "(CAST x INT64)"},
	{"cast(x as int)", "(CAST x INT64)"},
	{"cast(x as bigint)", "(CAST x INT64)"},
	{"cast(x as float)", "(CAST x FLOAT64)"},
	{"cast(x as numeric)", "(CAST x NUMERIC)"},
	{"cast(x as bignumeric)", "(CAST x BIGNUMERIC)"},
	{"cast(x as decimal)", "(CAST x NUMERIC)"},
	{"cast(x as bool)", "(CAST x BOOL)"},
	{"cast(x as boolean)", "(CAST x BOOL)"},
	{"cast(ts as timestamp)", "(CAST ts TIMESTAMP)"},
	{"cast(ts as datetime)", "(CAST ts DATETIME)"},
	{"cast(ts as date)", "(CAST ts DATE)"},
	{"cast(ts as time)", "(CAST ts TIME)"},
	{"cast(x as bytes)", "(CAST x BYTES)"},
	{"cast(x as json)", "(CAST x JSON)"},
	{"cast(x as array<int64>)", "(CAST x ARRAY)"},
	{"cast(x as struct<a int64, b string>)", "(CAST x STRUCT)"},
	{"cast(x as string(10))", "(CAST x STRING)"},
	{"x::text", "(CAST x STRING)"},
	{"x::int", "(CAST x INT64)"},
	{"x::bigint", "(CAST x INT64)"},
	{"x::numeric", "(CAST x NUMERIC)"},
	{"x::timestamp", "(CAST x TIMESTAMP)"},
	{"x::date", "(CAST x DATE)"},
	{"x::boolean", "(CAST x BOOL)"},
	{"x::float", "(CAST x FLOAT64)"},
	{"x::double precision", "(CAST x FLOAT64)"},
	{"x::jsonb", "(CAST x JSON)"},
	{"a.b::text || 'x'", "(|| (CAST a.b STRING) \"x\")"},
	{"-x::int", "(NEG (CAST x INT64))"},
	{"x::text::int", "(CAST (CAST x STRING) INT64)"},
	// CASE.
	{"case when a then 1 else 2 end", "(CASE [a 1] ELSE 2)"},
	{"CASE WHEN a = 1 THEN 'x' WHEN a = 2 THEN 'y' END", "(CASE [(= a 1) \"x\"] [(= a 2) \"y\"])"},
	{"case a when 1 then 'x' else 'z' end", "(CASE a [1 \"x\"] ELSE \"z\")"},
	{"case when @interval = 'hourly' then 1 end", "(CASE [(= @interval \"hourly\") 1])"},
	// Function calls.
	{"f()", "f()"},
	{"COUNT(*)", "COUNT(*)"},
	{"count(distinct x)", "count(DISTINCT x)"},
	{"countif(a > 1)", "countif((> a 1))"},
	{"net.host(x)", "net.host(x)"},
	{"`some.function`(@c)", "`some.function`(@c)"},
	{"safe.parse_date('%Y', s)", "safe.parse_date(\"%Y\", s)"},
	{"if(a, b, c)", "if(a, b, c)"},
	{"IF(a > 1, 'x', 'y')", "IF((> a 1), \"x\", \"y\")"},
	{"left(s, 2)", "left(s, 2)"},
	{"right(s, 2)", "right(s, 2)"},
	{"array_agg(x ignore nulls order by y desc limit 10)", "array_agg(x IGNORE NULLS ORDER BY y DESC LIMIT 10)"},
	{"string_agg(x, ',' order by y)", "string_agg(x, \",\" ORDER BY y)"},
	{"any_value(x respect nulls)", "any_value(x RESPECT NULLS)"},
	{"coalesce(sum(x), 0)", "coalesce(sum(x), 0)"},
	{"current_timestamp()", "current_timestamp()"},
	{"CURRENT_TIMESTAMP", "CURRENT_TIMESTAMP()"},
	{"current_date", "current_date()"},
	{"current_datetime()", "current_datetime()"},
	{"current_date()", "current_date()"},
	{"timestamp_sub(current_timestamp(), interval 1 hour)", "timestamp_sub(current_timestamp(), (INTERVAL 1 HOUR))"},
	{"timestamp_trunc(ts, minute)", "timestamp_trunc(ts, <MINUTE>)"},
	{"TIMESTAMP_TRUNC(ts, HOUR, 'UTC')", "TIMESTAMP_TRUNC(ts, <HOUR>, \"UTC\")"},
	{"date_trunc(d, month)", "date_trunc(d, <MONTH>)"},
	{"date_trunc(d, week(monday))", "date_trunc(d, <WEEK(MONDAY)>)"},
	{"DATE_TRUNC('day', col)", "DATE_TRUNC(\"day\", col)"},
	{"datetime_trunc(d, isoweek)", "datetime_trunc(d, <ISOWEEK>)"},
	{"timestamp_diff(a, b, second)", "timestamp_diff(a, b, <SECOND>)"},
	{"date_diff(a, b, day)", "date_diff(a, b, <DAY>)"},
	{"timestamp_trunc(ts, `minute`)", "timestamp_trunc(ts, `minute`)"},
	{"extract(hour from ts)", "(EXTRACT <HOUR> ts)"},
	{"EXTRACT(DATE FROM ts AT TIME ZONE 'UTC')", "(EXTRACT <DATE> ts AT \"UTC\")"},
	{"extract(week(sunday) from d)", "(EXTRACT <WEEK(SUNDAY)> d)"},
	{"datetime(ts, 'UTC')", "datetime(ts, \"UTC\")"},
	{"date(ts)", "date(ts)"},
	{"timestamp(s)", "timestamp(s)"},
	{"row_number() over (partition by a order by b desc)", "row_number() OVER(PARTITION BY a ORDER BY b DESC)"},
	{"sum(x) over (order by t rows between unbounded preceding and current row)", "sum(x) OVER(ORDER BY t ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)"},
	{"avg(x) over (order by t range between 2 preceding and 3 following)", "avg(x) OVER(ORDER BY t RANGE BETWEEN 2 PRECEDING AND 3 FOLLOWING)"},
	{"count(*) over ()", "count(*) OVER()"},
	{"first_value(x) over (partition by a rows unbounded preceding)", "first_value(x) OVER(PARTITION BY a ROWS UNBOUNDED PRECEDING)"},
	// Arrays, structs, subqueries.
	{"[1, 2, 3]", "[1 2 3]"},
	{"[]", "[]"},
	{"ARRAY[1, 2]", "[1 2]"},
	{"ARRAY<INT64>[1, 2]", "ARRAY<INT64>[1 2]"},
	{"array<array<string>>[]", "ARRAY<ARRAY>[]"},
	{"array(select x from t)", "(ARRAY {SELECT x FROM t})"},
	{"struct(a as x, b)", "(STRUCT a AS x b)"},
	{"STRUCT()", "(STRUCT)"},
	{"STRUCT<x INT64, y STRING>(1, 'a')", "(STRUCT 1 \"a\")"},
	{"exists(select 1 from t)", "(EXISTS {SELECT 1 FROM t})"},
	{"not exists (select 1)", "(NOT (EXISTS {SELECT 1}))"},
	{"(select max(x) from t)", "{SELECT max(x) FROM t}"},
	{"((select 1))", "{SELECT 1}"},
	{"((select 1) + 1)", "(+ {SELECT 1} 1)"},
	{"(select 1 limit 1) + (with a as (select 2) select * from a)", "(+ {SELECT 1 LIMIT 1} {WITH a AS (SELECT 2) SELECT * FROM a})"},
	{"1 + (select 1 union all select 2)", "(+ 1 {SELECT 1 UNION ALL SELECT 2})"},
	// Params everywhere, including CASE inside function arguments.
	{"coalesce(case when @a = '' then @b else @c end, @d)", "coalesce((CASE [(= @a \"\") @b] ELSE @c), @d)"},
}

func TestExpressions(t *testing.T) {
	for _, tc := range exprCases {
		t.Run(tc.in, func(t *testing.T) {
			e := parseExprString(t, tc.in)
			if got := sx(e); got != tc.want {
				t.Errorf("parse %q\n got %s\nwant %s", tc.in, got, tc.want)
			}
		})
	}
}

// TestDatePartIsNotColumn checks the node type, not only its rendering: the
// planner must not try to resolve MINUTE as a column.
func TestDatePartIsNotColumn(t *testing.T) {
	e := parseExprString(t, "timestamp_trunc(t.timestamp, minute)")
	f, ok := e.(*FuncCall)
	if !ok || len(f.Args) != 2 {
		t.Fatalf("got %T %s", e, sx(e))
	}
	if _, ok := f.Args[0].(*ColumnRef); !ok {
		t.Errorf("arg 0 is %T, want *ColumnRef", f.Args[0])
	}
	dp, ok := f.Args[1].(*DatePart)
	if !ok {
		t.Fatalf("arg 1 is %T, want *DatePart", f.Args[1])
	}
	if dp.Name != "MINUTE" || dp.At.Col != 37 {
		t.Errorf("date part = %+v, want MINUTE at column 37 (after SELECT)", dp)
	}
}

func TestLiteralValues(t *testing.T) {
	cases := []struct {
		in   string
		want Expr
	}{
		{"-9223372036854775808", &IntLit{Value: -9223372036854775808}},
		{"0xff", &IntLit{Value: 255}},
		{"1.", &FloatLit{Value: 1}},
		{"1e+2", &FloatLit{Value: 100}},
		{"'\\xc3\\xa9'", &StringLit{Value: "é"}},
		{"b'\\x00\\xff'", &BytesLit{Value: "\x00\xff"}},
		{"'\\0001'", &StringLit{Value: "\x001"}},
		{"''", &StringLit{Value: ""}},
		{"''''''", &StringLit{Value: ""}},
		{"'a''b''''c'", &StringLit{Value: "a'b''c"}},
		{"'\\\\'", &StringLit{Value: `\`}},
		{"'日本'", &StringLit{Value: "日本"}},
	}
	for _, tc := range cases {
		got := parseExprString(t, tc.in)
		if !Equal(got, tc.want) {
			t.Errorf("%s: got %s, want %s", tc.in, sx(got), sx(tc.want))
		}
	}
}

func TestTypeNames(t *testing.T) {
	cases := []struct {
		in   string
		want string // Format of the type
		kind TypeKind
	}{
		{"cast(x as INT64)", "INT64", TypeInt64},
		{"cast(x as array<struct<a int64, b array<string>>>)", "array<struct<a int64, b array<string>>>", TypeArray},
		{"cast(x as struct<int64, string>)", "struct<int64, string>", TypeStruct},
		{"cast(x as numeric(10, 2))", "numeric(10, 2)", TypeNumeric},
		{"x::varchar(255)", "varchar(255)", TypeString},
		{"x::double precision", "double precision", TypeFloat64},
		{"x::timestamptz", "timestamptz", TypeTimestamp},
		{"cast(x as interval)", "interval", TypeInterval},
	}
	for _, tc := range cases {
		e := parseExprString(t, tc.in)
		c, ok := e.(*Cast)
		if !ok {
			t.Fatalf("%s: got %T", tc.in, e)
		}
		var p printer
		p.typeName(c.Type)
		if got := p.b.String(); got != tc.want || c.Type.Kind != tc.kind {
			t.Errorf("%s: type %q kind %v, want %q %v", tc.in, got, c.Type.Kind, tc.want, tc.kind)
		}
	}
	arr := parseExprString(t, "cast(x as array<struct<a int64, b array<string>>>)").(*Cast).Type
	st := arr.Elem
	if st.Kind != TypeStruct || len(st.Fields) != 2 || st.Fields[0].Name.Name != "a" ||
		st.Fields[1].Type.Kind != TypeArray || st.Fields[1].Type.Elem.Kind != TypeString {
		t.Errorf("nested type parsed wrong: %+v", st)
	}
}
