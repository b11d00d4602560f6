package lql

import (
	"reflect"
	"strings"
	"testing"
	"time"
	_ "time/tzdata" // America/New_York for the DST case, independent of the host
)

// testNow is Friday 2024-03-15 10:30:45.123456 UTC.
var testNow = time.Date(2024, 3, 15, 10, 30, 45, 123456000, time.UTC)

var testOpts = Options{Now: testNow}

// us reads an RFC 3339 instant as microseconds.
func us(s string) int64 {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		panic(err)
	}
	return t.UnixMicro()
}

func ts(s string) Value { return TimestampValue(us(s)) }
func S(s string) Value  { return StringValue(s) }
func I(i int64) Value   { return IntValue(i) }
func F(f float64) Value { return FloatValue(f) }

func msgFilter(op Op, s string) Filter { return Filter{Path: "event_message", Op: op, Value: S(s)} }
func neg(f Filter) Filter              { f.Negate = true; return f }
func eq(path string, v Value) Filter   { return Filter{Path: path, Op: OpEq, Value: v} }
func rng(path string, lo, hi Value) Filter {
	return Filter{Path: path, Op: OpRange, Values: []Value{lo, hi}}
}
func short(f Filter, sh string) Filter { f.Shorthand = sh; return f }

// filterCases parse without a schema to exactly these filters.
var filterCases = []struct {
	in   string
	want []Filter
}{
	{`error`, []Filter{msgFilter(OpContains, "error")}},
	{`-error`, []Filter{neg(msgFilter(OpContains, "error"))}},
	{`"hello world"`, []Filter{msgFilter(OpContains, "hello world")}},
	{`"say \"hi\" \\ \d"`, []Filter{msgFilter(OpContains, `say "hi" \ \d`)}},
	{`""`, []Filter{msgFilter(OpContains, "")}},
	{`~"a|b"`, []Filter{msgFilter(OpRegex, "a|b")}},
	{`~fo+\d`, []Filter{msgFilter(OpRegex, `fo+\d`)}},
	{`-~"x y"`, []Filter{neg(msgFilter(OpRegex, "x y"))}},
	{`foo\"bar`, []Filter{msgFilter(OpContains, `foo"bar`)}},
	{`café`, []Filter{msgFilter(OpContains, "café")}},
	{`a-b/c?d=e&f`, []Filter{msgFilter(OpContains, "a-b/c?d=e&f")}},
	{`--x`, []Filter{neg(msgFilter(OpContains, "-x"))}},
	{"one\ntwo\tthree  four", []Filter{
		msgFilter(OpContains, "one"), msgFilter(OpContains, "two"),
		msgFilter(OpContains, "three"), msgFilter(OpContains, "four")}},
	{`m.status:500`, []Filter{eq("metadata.status", I(500))}},
	{`metadata.status:500`, []Filter{eq("metadata.status", I(500))}},
	{`m.a.b.c:true`, []Filter{eq("metadata.a.b.c", BoolValue(true))}},
	{`m.a:false`, []Filter{eq("metadata.a", BoolValue(false))}},
	{`m.x:1.5`, []Filter{eq("metadata.x", F(1.5))}},
	{`m.x:-3`, []Filter{eq("metadata.x", I(-3))}},
	{`m.x:-2.25`, []Filter{eq("metadata.x", F(-2.25))}},
	{`m.x:99999999999999999999`, []Filter{eq("metadata.x", F(1e20))}},
	{`m.x:abc_1`, []Filter{eq("metadata.x", S("abc_1"))}},
	{`m.x:"500"`, []Filter{eq("metadata.x", S("500"))}},
	{`m.x:"a \"b\""`, []Filter{eq("metadata.x", S(`a "b"`))}},
	{`m.x:(hello world)`, []Filter{eq("metadata.x", S("hello world"))}},
	{`m.x:NULL`, []Filter{eq("metadata.x", NullValue())}},
	{`-m.x:NULL`, []Filter{neg(eq("metadata.x", NullValue()))}},
	{`m.x:"NULL"`, []Filter{eq("metadata.x", S("NULL"))}},
	{`m.x:>5`, []Filter{{Path: "metadata.x", Op: OpGt, Value: I(5)}}},
	{`m.x:>=5`, []Filter{{Path: "metadata.x", Op: OpGte, Value: I(5)}}},
	{`m.x:<5.5`, []Filter{{Path: "metadata.x", Op: OpLt, Value: F(5.5)}}},
	{`m.x:<=-5`, []Filter{{Path: "metadata.x", Op: OpLte, Value: I(-5)}}},
	{`m.x:1..5`, []Filter{rng("metadata.x", I(1), I(5))}},
	{`m.x:-1.5..2`, []Filter{rng("metadata.x", F(-1.5), I(2))}},
	{`-m.x:1..5`, []Filter{neg(rng("metadata.x", I(1), I(5)))}},
	{`m.d:2024-01-01..2024-02-01`, []Filter{rng("metadata.d", S("2024-01-01"), S("2024-02-01"))}},
	{`m.d:2024-01-01T10:00:00Z`, []Filter{eq("metadata.d", S("2024-01-01T10:00:00Z"))}},
	{`m.msg:~"^GET /"`, []Filter{{Path: "metadata.msg", Op: OpRegex, Value: S("^GET /")}}},
	{`m.msg:~GET|POST`, []Filter{{Path: "metadata.msg", Op: OpRegex, Value: S("GET|POST")}}},
	{`m.tags:@>foo`, []Filter{{Path: "metadata.tags", Op: OpArrayContains, Value: S("foo")}}},
	{`m.ids:@>5`, []Filter{{Path: "metadata.ids", Op: OpArrayContains, Value: I(5)}}},
	{`m.tags:@>~"^b"`, []Filter{{Path: "metadata.tags", Op: OpArrayRegex, Value: S("^b")}}},
	{`project:abc`, []Filter{eq("project", S("abc"))}},
	{`a.b.c:1`, []Filter{eq("a.b.c", I(1))}},
	{`id:123`, []Filter{eq("id", S("123"))}},
	{`event_message:hello`, []Filter{eq("event_message", S("hello"))}},
	{`m.level:info..error`, []Filter{{Path: LevelPath, Op: OpIn, Values: []Value{S("info"), S("notice"), S("warning"), S("error")}}}},
	{`metadata.level:error..info`, []Filter{{Path: LevelPath, Op: OpIn, Values: []Value{S("info"), S("notice"), S("warning"), S("error")}}}},
	{`-m.level:debug..debug`, []Filter{neg(Filter{Path: LevelPath, Op: OpIn, Values: []Value{S("debug")}})}},
	{`m.level:info`, []Filter{eq(LevelPath, S("info"))}},
	{`m.x:"a"b`, []Filter{eq("metadata.x", S("a")), msgFilter(OpContains, "b")}},

	// Timestamps.
	{`t:2024-01-01T10:00:00Z`, []Filter{eq("timestamp", ts("2024-01-01T10:00:00Z"))}},
	{`timestamp:>2024-01-01T10:00:00.5+02:00`, []Filter{{Path: "timestamp", Op: OpGt, Value: ts("2024-01-01T08:00:00.5Z")}}},
	{`t:<2024-01-01T10:00:00.123456789-01:30`, []Filter{{Path: "timestamp", Op: OpLt, Value: ts("2024-01-01T11:30:00.123456Z")}}},
	{`t:>=2024-01-01`, []Filter{{Path: "timestamp", Op: OpGte, Value: ts("2024-01-01T00:00:00Z")}}},
	{`t:2024-01-01`, []Filter{rng("timestamp", ts("2024-01-01T00:00:00Z"), ts("2024-01-01T23:59:59.999999Z"))}},
	{`-t:2024-02-28..2024-03-01`, []Filter{neg(rng("timestamp", ts("2024-02-28T00:00:00Z"), ts("2024-03-01T23:59:59.999999Z")))}},
	{`t:2024-01-01T00:00:00Z..2024-01-01T01:00:00Z`, []Filter{rng("timestamp", ts("2024-01-01T00:00:00Z"), ts("2024-01-01T01:00:00Z"))}},
	{`t:1710498645`, []Filter{eq("timestamp", ts("2024-03-15T10:30:45Z"))}},
	{`t:<1710498645123`, []Filter{{Path: "timestamp", Op: OpLt, Value: ts("2024-03-15T10:30:45.123Z")}}},
	{`t:>1710498645123456`, []Filter{{Path: "timestamp", Op: OpGt, Value: ts("2024-03-15T10:30:45.123456Z")}}},
	{`t:1710498600..1710498645`, []Filter{rng("timestamp", ts("2024-03-15T10:30:00Z"), ts("2024-03-15T10:30:45Z"))}},
	{`t:2022-04-{07..09}T00:{00..40}:00.{001..314}`, []Filter{rng("timestamp", ts("2022-04-07T00:00:00.001Z"), ts("2022-04-09T00:40:00.314Z"))}},
	{`t:2022-04-{07..09}`, []Filter{rng("timestamp", ts("2022-04-07T00:00:00Z"), ts("2022-04-09T23:59:59.999999Z"))}},
	{`t:{2021..2022}-01-01T10:00:00+01:00`, []Filter{rng("timestamp", ts("2021-01-01T09:00:00Z"), ts("2022-01-01T09:00:00Z"))}},
	{`t:2022-{01..01}-01`, []Filter{rng("timestamp", ts("2022-01-01T00:00:00Z"), ts("2022-01-01T23:59:59.999999Z"))}},
	{`t:now`, []Filter{short(eq("timestamp", TimestampValue(testNow.UnixMicro())), "now")}},
	{`t:>now`, []Filter{short(Filter{Path: "timestamp", Op: OpGt, Value: TimestampValue(testNow.UnixMicro())}, "now")}},
	{`t:today`, []Filter{short(rng("timestamp", ts("2024-03-15T00:00:00Z"), ts("2024-03-15T23:59:59.999999Z")), "today")}},
	{`t:yesterday`, []Filter{short(rng("timestamp", ts("2024-03-14T00:00:00Z"), ts("2024-03-14T23:59:59.999999Z")), "yesterday")}},
	{`t:this@week`, []Filter{short(rng("timestamp", ts("2024-03-11T00:00:00Z"), TimestampValue(testNow.UnixMicro())), "this@week")}},
	{`t:this@mm`, []Filter{short(rng("timestamp", ts("2024-03-01T00:00:00Z"), TimestampValue(testNow.UnixMicro())), "this@month")}},
	{`t:this@years`, []Filter{short(rng("timestamp", ts("2024-01-01T00:00:00Z"), TimestampValue(testNow.UnixMicro())), "this@year")}},
	{`t:this@d`, []Filter{short(rng("timestamp", ts("2024-03-15T00:00:00Z"), TimestampValue(testNow.UnixMicro())), "this@day")}},
	{`t:this@h`, []Filter{short(rng("timestamp", ts("2024-03-15T10:00:00Z"), TimestampValue(testNow.UnixMicro())), "this@hour")}},
	{`t:this@minutes`, []Filter{short(rng("timestamp", ts("2024-03-15T10:30:00Z"), TimestampValue(testNow.UnixMicro())), "this@minute")}},
	{`t:this@s`, []Filter{short(rng("timestamp", ts("2024-03-15T10:30:45Z"), TimestampValue(testNow.UnixMicro())), "this@second")}},
	{`t:last@30s`, []Filter{short(rng("timestamp", ts("2024-03-15T10:30:15Z"), TimestampValue(testNow.UnixMicro())), "last@30second")}},
	{`t:last@5m`, []Filter{short(rng("timestamp", ts("2024-03-15T10:25:00Z"), TimestampValue(testNow.UnixMicro())), "last@5minute")}},
	{`t:last@hour`, []Filter{short(rng("timestamp", ts("2024-03-15T09:00:00Z"), TimestampValue(testNow.UnixMicro())), "last@1hour")}},
	{`t:last@2days`, []Filter{short(rng("timestamp", ts("2024-03-13T00:00:00Z"), TimestampValue(testNow.UnixMicro())), "last@2day")}},
	{`t:last@1w`, []Filter{short(rng("timestamp", ts("2024-03-08T00:00:00Z"), TimestampValue(testNow.UnixMicro())), "last@1week")}},
	{`t:last@1mm`, []Filter{short(rng("timestamp", ts("2024-02-15T00:00:00Z"), TimestampValue(testNow.UnixMicro())), "last@1month")}},
	{`t:last@2y`, []Filter{short(rng("timestamp", ts("2022-03-15T00:00:00Z"), TimestampValue(testNow.UnixMicro())), "last@2year")}},
	{`-t:last@0010m`, []Filter{neg(short(rng("timestamp", ts("2024-03-15T10:20:00Z"), TimestampValue(testNow.UnixMicro())), "last@10minute"))}},
}

func TestParseFilters(t *testing.T) {
	for _, c := range filterCases {
		q, err := Parse(c.in, testOpts)
		if err != nil {
			t.Errorf("Parse(%q): %v", c.in, err)
			continue
		}
		if !reflect.DeepEqual(q.Filters, c.want) {
			t.Errorf("Parse(%q) filters\n got %+v\nwant %+v", c.in, q.Filters, c.want)
		}
		if q.Selects != nil || q.Chart != nil || q.From != "" {
			t.Errorf("Parse(%q) has non-filter rules: %+v", c.in, q)
		}
	}
}

// queryCases are whole-query parses: selects, charts, from, mixed.
var queryCases = []struct {
	in   string
	want Query
}{
	{``, Query{}},
	{" \n\t ", Query{}},
	{`s:*`, Query{Selects: []Select{{Path: "*"}}}},
	{`s:m.a.b s:timestamp select:project@p s:m.user.id@user_id`, Query{Selects: []Select{
		{Path: "metadata.a.b"}, {Path: "timestamp"}, {Path: "project", Alias: "p"}, {Path: "metadata.user.id", Alias: "user_id"}}}},
	{`c:count(*) c:group_by(t::minute)`, Query{Chart: &Chart{AggCount, "timestamp", PeriodMinute}}},
	{`chart:avg(m.latency) chart:group_by(timestamp::h)`, Query{Chart: &Chart{AggAvg, "metadata.latency", PeriodHour}}},
	{`c:countd(m.user)`, Query{Chart: &Chart{AggCountDistinct, "metadata.user", PeriodMinute}}},
	{`c:group_by(t::d)`, Query{Chart: &Chart{AggCount, "timestamp", PeriodDay}}},
	{`c:p99(m.ms) c:group_by(t::s)`, Query{Chart: &Chart{AggP99, "metadata.ms", PeriodSecond}}},
	{`c:group_by(t::second) c:p50(m.ms) c:p95(m.ms)`, Query{Chart: &Chart{AggP95, "metadata.ms", PeriodSecond}}},
	{`c:count(*) c:sum(m.bytes)`, Query{Chart: &Chart{AggSum, "metadata.bytes", PeriodMinute}}},
	{`c:max(timestamp)`, Query{Chart: &Chart{AggMax, "timestamp", PeriodMinute}}},
	{`c:count(project)`, Query{Chart: &Chart{AggCount, "project", PeriodMinute}}},
	{`f:edge_logs`, Query{From: "edge_logs"}},
	{`from:x1 error`, Query{From: "x1", Filters: []Filter{msgFilter(OpContains, "error")}}},
	{`error m.status:>=500 s:m.status c:count(*) c:group_by(t::hour) f:edge_logs`, Query{
		Filters: []Filter{msgFilter(OpContains, "error"), {Path: "metadata.status", Op: OpGte, Value: I(500)}},
		Selects: []Select{{Path: "metadata.status"}},
		Chart:   &Chart{AggCount, "timestamp", PeriodHour},
		From:    "edge_logs"}},
}

func TestParseQueries(t *testing.T) {
	for _, c := range queryCases {
		q, err := Parse(c.in, testOpts)
		if err != nil {
			t.Errorf("Parse(%q): %v", c.in, err)
			continue
		}
		if !reflect.DeepEqual(*q, c.want) {
			t.Errorf("Parse(%q)\n got %+v\nwant %+v", c.in, *q, c.want)
		}
	}
}

// errorCases fail to parse with exactly this message (no schema).
var errorCases = []struct{ in, msg string }{
	{`m.a:foo-bar`, "Error while parsing `metadata.a` field metadata filter value: foo-bar"},
	{`m.a:`, "Error while parsing `metadata.a` field metadata filter value: \"\""},
	{`m.a: x`, "Error while parsing `metadata.a` field metadata filter value: \"\""},
	{`project:a.b`, "Error while parsing `project` field metadata filter value: a.b"},
	{`http://example.com`, "Error while parsing `http` field metadata filter value: //example.com"},
	{`m.a:1..x`, "Error while parsing `metadata.a` field metadata filter value: 1..x"},
	{`m.a:1..2024-01-01`, "Error while parsing `metadata.a` field metadata filter value: 1..2024-01-01"},
	{`m.a:(abc`, "Error while parsing `metadata.a` field metadata filter value: (abc (missing closing `)`)"},
	{`m.a:>1..5`, "Error while parsing `metadata.a` field metadata filter value: 1..5 (a range needs the `:` operator)"},
	{`m.a:>NULL`, "Error while parsing `metadata.a` field metadata filter value: NULL (NULL needs the `:` operator)"},
	{`m.a:@>NULL`, "Error while parsing `metadata.a` field metadata filter value: NULL (NULL needs the `:` operator)"},
	{`m.a:2024-02-30`, "Error while parsing `metadata.a` field metadata filter value: 2024-02-30"},
	{`m.x:` + strings.Repeat("9", 400), "Error while parsing `metadata.x` field metadata filter value: " + strings.Repeat("9", 400) + " (number out of range)"},
	{`t:17106832220000`, "Error while parsing timestamp filter value: expected ISO8601 string, Unix timestamp, range or shorthand, got '17106832220000'"},
	{`t:`, "Error while parsing timestamp filter value: expected ISO8601 string, Unix timestamp, range or shorthand, got '\"\"'"},
	{`t:"2024-01-01"`, "Error while parsing timestamp filter value: expected ISO8601 string, Unix timestamp, range or shorthand, got '\"2024-01-01\"'"},
	{`t:2024-01-01T10:00`, "Error while parsing timestamp filter value: expected ISO8601 string, Unix timestamp, range or shorthand, got '2024-01-01T10:00'"},
	{`t:2024-01-01T10:00:00+2:00`, "Error while parsing timestamp filter value: expected ISO8601 string, Unix timestamp, range or shorthand, got '2024-01-01T10:00:00+2:00'"},
	{`t:2024-13-01`, "Error while parsing timestamp date value: expected ISO8601 string, got '2024-13-01'"},
	{`t:2024-02-30T10:00:00`, "Error while parsing timestamp datetime value: expected ISO8601 string, got '2024-02-30T10:00:00'"},
	{`t:2024-01-01T24:00:00Z`, "Error while parsing timestamp datetime value: expected ISO8601 string, got '2024-01-01T24:00:00Z'"},
	{`t:2022-04-{07..32}`, "Error while parsing timestamp date value: expected ISO8601 string, got '2022-04-{07..32}'"},
	{`t:2022-04-{07..09}..2022-05-01`, "Error while parsing timestamp filter value: expected ISO8601 string, Unix timestamp, range or shorthand, got '2022-04-{07..09}..2022-05-01'"},
	{`t:2022-04-{7..9}`, "Error while parsing timestamp filter value: expected ISO8601 string, Unix timestamp, range or shorthand, got '2022-04-{7..9}'"},
	{`t:0000-01-01`, "Error while parsing timestamp filter value: '0000-01-01' is outside the supported range 0001-01-01 to 9999-12-31"},
	{`t:last@5x`, "Error while parsing timestamp filter value: expected ISO8601 string, Unix timestamp, range or shorthand, got 'last@5x'"},
	{`t:last@12345m`, "Error while parsing timestamp filter value: expected ISO8601 string, Unix timestamp, range or shorthand, got 'last@12345m'"},
	{`t:this@fortnight`, "Error while parsing timestamp filter value: expected ISO8601 string, Unix timestamp, range or shorthand, got 'this@fortnight'"},
	{`t:~foo`, "Error while parsing timestamp filter: operator `:~` does not apply to timestamps"},
	{`t:@>2024-01-01`, "Error while parsing timestamp filter: operator `:@>` does not apply to timestamps"},
	{`t:>today`, "Error while parsing timestamp filter: a range needs the `:` operator, not `:>`"},
	{`t:<=2024-01-01..2024-01-02`, "Error while parsing timestamp filter: a range needs the `:` operator, not `:<=`"},
	{`s:m.qty@`, msgBlankAlias},
	{`s:m.qty@a-b`, "Error while parsing select clause: expected alias name ([A-Za-z0-9_]+) after @, got 'a-b'"},
	{`s:*@x`, "Error while parsing select clause: s:* cannot have an alias"},
	{`s:`, "Error while parsing select clause: expected *, m.<path> or <path>, got ''"},
	{`s:m.a-b`, "Error while parsing field path `m.a-b`: expected [A-Za-z0-9._]"},
	{`-s:m.a`, "Error while parsing select clause: a select clause cannot be negated"},
	{`-f:x`, "Error while parsing from clause: a from clause cannot be negated"},
	{`-c:count(*)`, "Error while parsing chart clause: a chart clause cannot be negated"},
	{`f:a f:b`, "Error while parsing from clause: only one from clause (f: or from:) is allowed, found f:a and f:b"},
	{`f:a-b`, "Error while parsing from clause: expected a table name ([A-Za-z0-9_]+), got 'a-b'"},
	{`c:foo(*)`, "Error while parsing chart clause: " + chartExpected + ", got 'foo(*)'"},
	{`c:count`, "Error while parsing chart clause: " + chartExpected + ", got 'count'"},
	{`c:group_by(t::week)`, "Error while parsing chart clause: " + chartExpected + ", got 'group_by(t::week)'"},
	{`c:group_by(x::m)`, "Error while parsing chart clause: " + chartExpected + ", got 'group_by(x::m)'"},
	{`c:avg(*)`, "Error while parsing chart clause: avg needs a numeric field, got '*'"},
	{`c:sum(m..x)`, "Error while parsing field path `m..x`: empty path segment"},
	{`"abc`, "Error while parsing quoted string: missing closing `\"` in \"abc"},
	{`m.a:"abc`, "Error while parsing quoted string: missing closing `\"` in m.a:\"abc"},
	{`-`, "Error while parsing `-`: expected a clause after `-`"},
	{`a - b`, "Error while parsing `-`: expected a clause after `-`"},
	{`~`, "Error while parsing `~`: expected a regular expression after `~`"},
	{`'abc`, "LQL parser doesn't know how to handle this part: 'abc"},
	{`foo :bar`, "LQL parser doesn't know how to handle this part: :bar"},
	{"foo \x01", "LQL parser doesn't know how to handle this part: \x01"},
	{`~"(abc"`, "Error while parsing regular expression `(abc`: missing closing )"},
	{`m.a:~"a**"`, "Error while parsing regular expression `a**`: invalid nested repetition operator: `**`"},
	{`m.a..b:1`, "Error while parsing field path `m.a..b`: empty path segment"},
	{`.a:1`, "Error while parsing field path `.a`: empty path segment"},
	{strings.Repeat("a.", MaxPathSegments) + "b:1", "Error while parsing field path `" + strings.Repeat("a.", MaxPathSegments) + "b`: more than 32 segments"},
	{strings.Repeat("a ", MaxClauses+1), "LQL query has more than 100 clauses"},
	{strings.Repeat("a", MaxQueryBytes+1), "LQL query is too long: 32769 bytes, the limit is 32768"},
	{"caf\xe9", "LQL query is not valid UTF-8"},
}

func TestParseErrors(t *testing.T) {
	for _, c := range errorCases {
		q, err := Parse(c.in, testOpts)
		if err == nil {
			t.Errorf("Parse(%q) = %+v, want error %q", c.in, q, c.msg)
			continue
		}
		if err.Error() != c.msg {
			t.Errorf("Parse(%q) error\n got %q\nwant %q", c.in, err.Error(), c.msg)
		}
	}
}

func TestParseErrorNamesClause(t *testing.T) {
	_, err := Parse(`error   m.status:abc-def t:today`, testOpts)
	e, ok := err.(*Error)
	if !ok {
		t.Fatalf("error %T %v, want *Error", err, err)
	}
	if e.Clause != "m.status:abc-def" || e.Offset != 8 {
		t.Errorf("Clause %q at %d, want m.status:abc-def at 8", e.Clause, e.Offset)
	}
}

func TestParseClauseLimit(t *testing.T) {
	in := strings.TrimSpace(strings.Repeat("m.level:info..error ", MaxClauses))
	q, err := Parse(in, testOpts)
	if err != nil {
		t.Fatalf("%d clauses: %v", MaxClauses, err)
	}
	if len(q.Filters) != MaxClauses {
		t.Errorf("got %d filters, want %d", len(q.Filters), MaxClauses)
	}
}

func TestParseShorthandNeedsClock(t *testing.T) {
	for _, in := range []string{`t:now`, `t:last@5m`, `t:today`} {
		_, err := Parse(in, Options{})
		want := "Error while parsing timestamp filter value: shorthand '" + in[2:] + "' needs the current time (Options.Now is not set)"
		if err == nil || err.Error() != want {
			t.Errorf("Parse(%q) without clock: %v, want %q", in, err, want)
		}
	}
	// Literal timestamps need no clock.
	if _, err := Parse(`t:2024-01-01T00:00:00Z`, Options{}); err != nil {
		t.Errorf("literal timestamp without clock: %v", err)
	}
}

// TestParseLocation: values without an offset, dates and shorthands are read
// in the display zone; values with an offset are absolute.
func TestParseLocation(t *testing.T) {
	ist := time.FixedZone("IST", 5*3600+1800)
	ny, err := time.LoadLocation("America/New_York")
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		in   string
		opts Options
		want Filter
	}{
		{`t:2024-01-01T10:00:00`, Options{Location: ist}, eq("timestamp", ts("2024-01-01T04:30:00Z"))},
		{`t:2024-01-01T10:00:00Z`, Options{Location: ist}, eq("timestamp", ts("2024-01-01T10:00:00Z"))},
		{`t:>2024-01-01`, Options{Location: ist}, Filter{Path: "timestamp", Op: OpGt, Value: ts("2023-12-31T18:30:00Z")}},
		// 20:00 UTC is already the 16th in India.
		{`t:today`, Options{Now: time.Date(2024, 3, 15, 20, 0, 0, 0, time.UTC), Location: ist},
			short(rng("timestamp", ts("2024-03-15T18:30:00Z"), ts("2024-03-16T18:29:59.999999Z")), "today")},
		{`t:this@h`, Options{Now: time.Date(2024, 3, 15, 20, 45, 0, 0, time.UTC), Location: ist},
			short(rng("timestamp", ts("2024-03-15T20:30:00Z"), ts("2024-03-15T20:45:00Z")), "this@hour")},
		// 2024-03-10 has 23 hours in New York.
		{`t:today`, Options{Now: time.Date(2024, 3, 10, 12, 0, 0, 0, ny), Location: ny},
			short(rng("timestamp", ts("2024-03-10T05:00:00Z"), ts("2024-03-11T03:59:59.999999Z")), "today")},
		{`t:2024-03-10`, Options{Location: ny},
			rng("timestamp", ts("2024-03-10T05:00:00Z"), ts("2024-03-11T03:59:59.999999Z"))},
		// Months clamp: March 31 minus one month is February 29 (2024).
		{`t:last@1mm`, Options{Now: time.Date(2024, 3, 31, 8, 0, 0, 0, time.UTC)},
			short(rng("timestamp", ts("2024-02-29T00:00:00Z"), ts("2024-03-31T08:00:00Z")), "last@1month")},
		{`t:last@1y`, Options{Now: time.Date(2024, 2, 29, 8, 0, 0, 0, time.UTC)},
			short(rng("timestamp", ts("2023-02-28T00:00:00Z"), ts("2024-02-29T08:00:00Z")), "last@1year")},
		{`t:last@14mm`, Options{Now: time.Date(2024, 3, 15, 8, 0, 0, 0, time.UTC)},
			short(rng("timestamp", ts("2023-01-15T00:00:00Z"), ts("2024-03-15T08:00:00Z")), "last@14month")},
		// Sunday: the week started on the Monday before.
		{`t:this@w`, Options{Now: time.Date(2024, 3, 17, 8, 0, 0, 0, time.UTC)},
			short(rng("timestamp", ts("2024-03-11T00:00:00Z"), ts("2024-03-17T08:00:00Z")), "this@week")},
	}
	for _, c := range cases {
		q, err := Parse(c.in, c.opts)
		if err != nil {
			t.Errorf("Parse(%q): %v", c.in, err)
			continue
		}
		if len(q.Filters) != 1 || !reflect.DeepEqual(q.Filters[0], c.want) {
			t.Errorf("Parse(%q) in %v\n got %+v\nwant %+v", c.in, c.opts.Location, q.Filters, c.want)
		}
	}
}

// testSchema types the paths of the schema cases.
var testSchema = MapSchema{
	"project":          {Kind: TypeString},
	"metadata":         {Kind: TypeObject},
	"metadata.status":  {Kind: TypeInt},
	"metadata.ratio":   {Kind: TypeFloat},
	"metadata.ok":      {Kind: TypeBool},
	"metadata.msg":     {Kind: TypeString},
	"metadata.level":   {Kind: TypeString},
	"metadata.tags":    {Kind: TypeString, Array: true},
	"metadata.ids":     {Kind: TypeInt, Array: true},
	"metadata.request": {Kind: TypeObject},
	"metadata.items":   {Kind: TypeObject, Array: true},
	"metadata.at":      {Kind: TypeTimestamp},
	"metadata.civil":   {Kind: TypeDatetime},
}

var schemaOpts = Options{Now: testNow, Location: time.FixedZone("X", 3600), Schema: testSchema}

var schemaCases = []struct {
	in   string
	want []Filter
}{
	{`m.status:500`, []Filter{eq("metadata.status", I(500))}},
	{`m.status:"500"`, []Filter{eq("metadata.status", I(500))}},
	{`m.status:-7`, []Filter{eq("metadata.status", I(-7))}},
	{`m.status:1..5`, []Filter{rng("metadata.status", I(1), I(5))}},
	{`m.status:NULL`, []Filter{eq("metadata.status", NullValue())}},
	{`m.msg:500`, []Filter{eq("metadata.msg", S("500"))}},
	{`m.msg:1.50`, []Filter{eq("metadata.msg", S("1.50"))}},
	{`m.msg:true`, []Filter{eq("metadata.msg", S("true"))}},
	{`m.msg:1..5`, []Filter{rng("metadata.msg", S("1"), S("5"))}},
	{`m.msg:~"^a"`, []Filter{{Path: "metadata.msg", Op: OpRegex, Value: S("^a")}}},
	{`m.ratio:2`, []Filter{eq("metadata.ratio", F(2))}},
	{`m.ratio:>0.5`, []Filter{{Path: "metadata.ratio", Op: OpGt, Value: F(0.5)}}},
	{`m.ok:true`, []Filter{eq("metadata.ok", BoolValue(true))}},
	{`-m.ok:false`, []Filter{neg(eq("metadata.ok", BoolValue(false)))}},
	{`m.tags:@>foo`, []Filter{{Path: "metadata.tags", Op: OpArrayContains, Value: S("foo")}}},
	{`m.tags:@>~"o+"`, []Filter{{Path: "metadata.tags", Op: OpArrayRegex, Value: S("o+")}}},
	{`m.tags:NULL`, []Filter{eq("metadata.tags", NullValue())}},
	{`m.ids:@>5`, []Filter{{Path: "metadata.ids", Op: OpArrayContains, Value: I(5)}}},
	{`m.at:>2024-01-01T00:00:00Z`, []Filter{{Path: "metadata.at", Op: OpGt, Value: ts("2024-01-01T00:00:00Z")}}},
	{`m.at:2024-01-01T01:00:00`, []Filter{eq("metadata.at", ts("2024-01-01T00:00:00Z"))}},
	{`m.at:1710498645`, []Filter{eq("metadata.at", ts("2024-03-15T10:30:45Z"))}},
	{`m.at:last@1h`, []Filter{short(rng("metadata.at", ts("2024-03-15T09:00:00Z"), TimestampValue(testNow.UnixMicro())), "last@1hour")}},
	// DATETIME columns are civil: no display zone applied.
	{`m.civil:2024-01-01T10:00:00`, []Filter{eq("metadata.civil", DatetimeValue(us("2024-01-01T10:00:00Z")))}},
	{`m.civil:2024-01-01T10:00:00+02:00`, []Filter{eq("metadata.civil", DatetimeValue(us("2024-01-01T08:00:00Z")))}},
	{`m.level:info..error`, []Filter{{Path: LevelPath, Op: OpIn, Values: []Value{S("info"), S("notice"), S("warning"), S("error")}}}},
	{`project:abc`, []Filter{eq("project", S("abc"))}},
	{`id:123 event_message:x`, []Filter{eq("id", S("123")), eq("event_message", S("x"))}},
	{`t:2024-01-01T01:00:00`, []Filter{eq("timestamp", ts("2024-01-01T00:00:00Z"))}},
	{`error`, []Filter{msgFilter(OpContains, "error")}},
}

func TestParseSchema(t *testing.T) {
	for _, c := range schemaCases {
		q, err := Parse(c.in, schemaOpts)
		if err != nil {
			t.Errorf("Parse(%q): %v", c.in, err)
			continue
		}
		if !reflect.DeepEqual(q.Filters, c.want) {
			t.Errorf("Parse(%q) filters\n got %+v\nwant %+v", c.in, q.Filters, c.want)
		}
	}
}

var schemaErrorCases = []struct{ in, msg string }{
	{`m.missing:1`, "LQL parser error: path `metadata.missing` not present in source schema."},
	{`s:m.nope`, "LQL parser error: path `metadata.nope` not present in source schema."},
	{`c:sum(m.nope)`, "LQL parser error: path `metadata.nope` not present in source schema."},
	{`m.request:1`, "Field type `map` is not queryable."},
	{`m.items:1`, "Field type `map` is not queryable."},
	{`c:count(m.request)`, "Field type `map` is not queryable."},
	{`m.status:abc`, "Query syntax error: expected integer for metadata.status, got: 'abc'"},
	{`m.status:1.5`, "Query syntax error: expected integer for metadata.status, got: '1.5'"},
	{`m.status:"x y"`, "Query syntax error: expected integer for metadata.status, got: 'x y'"},
	{`m.status:1..x5`, "Error while parsing `metadata.status` field metadata filter value: 1..x5"},
	{`m.status:2024-01-01..2024-01-02`, "Query syntax error: expected integer for metadata.status, got: '2024-01-01'"},
	{`m.ratio:abc`, "Query syntax error: expected float for metadata.ratio, got: 'abc'"},
	{`m.ok:yes`, "Query syntax error: Expected boolean for metadata.ok, got: 'yes'"},
	{`m.at:yesterdayish`, "Query syntax error: expected datetime for metadata.at, got: 'yesterdayish'"},
	{`m.at:>today`, "Error while parsing `metadata.at` field metadata filter value: today (a range needs the `:` operator, not `:>`)"},
	{`m.status:@>5`, "Query syntax error: operator `:@>` needs an array field, `metadata.status` is integer"},
	{`m.tags:foo`, "Query syntax error: `metadata.tags` is array<string>; use `:@>` or `:@>~` to match its elements"},
	{`m.status:~5`, "Query syntax error: operator `:~` needs a string field, `metadata.status` is integer"},
	{`m.msg:@>~x`, "Query syntax error: operator `:@>~` needs an array<string> field, `metadata.msg` is string"},
	{`m.ids:@>~x`, "Query syntax error: operator `:@>~` needs an array<string> field, `metadata.ids` is array<integer>"},
	{`c:avg(m.msg)`, "Query syntax error: chart aggregate avg needs a numeric field, `metadata.msg` is string"},
	{`m.status:info..error`, "Error while parsing `metadata.status` field metadata filter value: info..error"},
}

func TestParseSchemaErrors(t *testing.T) {
	for _, c := range schemaErrorCases {
		q, err := Parse(c.in, schemaOpts)
		if err == nil {
			t.Errorf("Parse(%q) = %+v, want error %q", c.in, q, c.msg)
			continue
		}
		if err.Error() != c.msg {
			t.Errorf("Parse(%q) error\n got %q\nwant %q", c.in, err.Error(), c.msg)
		}
	}
}
