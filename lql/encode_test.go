package lql

import (
	"reflect"
	"strings"
	"testing"
)

var canonicalCases = []struct{ in, want string }{
	{``, ``},
	{`  error   `, `error`},
	{`"hello world" "plain"`, `"hello world" plain`},
	{`"-dash" "a\\b" "q\"q" ""`, `"-dash" "a\\b" "q\"q" ""`},
	{`foo\"bar`, `"foo\"bar"`},
	{`~"a|b" ~"x y" -~z`, `~a|b ~"x y" -~z`},
	{`metadata.status:500 m.x:"500" m.x:"abc" m.x:(a b) m.x:true m.x:"true" m.x:NULL m.x:"NULL"`,
		`m.status:500 m.x:"500" m.x:abc m.x:"a b" m.x:true m.x:"true" m.x:NULL m.x:"NULL"`},
	{`m.x:1.50 m.x:-0.0 m.x:99999999999999999999`, `m.x:1.5 m.x:-0.0 m.x:100000000000000000000.0`},
	{`m.x:>=1 m.x:<2 m.x:1..5 m.x:-1.5..2 m.d:2024-01-01..2024-02-01`, `m.x:>=1 m.x:<2 m.x:1..5 m.x:-1.5..2 m.d:2024-01-01..2024-02-01`},
	{`m.a:~"^GET /" m.a:~abc m.t:@>foo m.t:@>"a b" m.t:@>~"^b"`, `m.a:~"^GET /" m.a:~abc m.t:@>foo m.t:@>"a b" m.t:@>~"^b"`},
	{`metadata.level:error..info -m.level:debug..debug`, `m.level:info..error -m.level:debug..debug`},
	{`t:2024-01-01T10:00:00.500+02:00`, `t:2024-01-01T08:00:00.5Z`},
	{`timestamp:>1710498645`, `t:>2024-03-15T10:30:45Z`},
	{`t:2024-01-01`, `t:2024-01-01T00:00:00Z..2024-01-01T23:59:59.999999Z`},
	{`t:2022-04-{07..09}T00:{00..40}:00.{001..314}`, `t:2022-04-07T00:00:00.001Z..2022-04-09T00:40:00.314Z`},
	{`t:last@5m -t:this@mm t:>now t:today t:last@hour`, `t:last@5minute -t:this@month t:>now t:today t:last@1hour`},
	{`c:group_by(t::h) c:avg(metadata.latency) s:metadata.a@x s:* f:logs error`,
		`f:logs s:m.a@x s:* error c:avg(m.latency) c:group_by(t::hour)`},
	{`c:count(timestamp)`, `c:count(*) c:group_by(t::minute)`},
	{`project:abc a.b.c:1 id:xyz event_message:hi`, `project:abc a.b.c:1 id:xyz event_message:hi`},
}

func TestEncodeCanonical(t *testing.T) {
	for _, c := range canonicalCases {
		q, err := Parse(c.in, testOpts)
		if err != nil {
			t.Errorf("Parse(%q): %v", c.in, err)
			continue
		}
		got, err := Encode(q)
		if err != nil {
			t.Errorf("Encode(Parse(%q)): %v", c.in, err)
			continue
		}
		if got != c.want {
			t.Errorf("Encode(Parse(%q))\n got %q\nwant %q", c.in, got, c.want)
		}
		if q.String() != got {
			t.Errorf("String() = %q, Encode = %q", q.String(), got)
		}
	}
}

// roundTrip parses in, encodes, parses again and compares.
func roundTrip(t testing.TB, in string, opts Options) {
	t.Helper()
	q, err := Parse(in, opts)
	if err != nil {
		return // error cases are covered elsewhere
	}
	enc, err := Encode(q)
	if err != nil {
		t.Fatalf("Encode(Parse(%q)): %v", in, err)
	}
	q2, err := parse(enc, opts, 8*MaxQueryBytes)
	if err != nil {
		t.Fatalf("Parse(Encode(Parse(%q))) = Parse(%q): %v", in, enc, err)
	}
	if !reflect.DeepEqual(q, q2) {
		t.Fatalf("round trip of %q via %q\n got %+v\nwant %+v", in, enc, q2, q)
	}
}

func TestEncodeRoundTrip(t *testing.T) {
	for _, c := range filterCases {
		roundTrip(t, c.in, testOpts)
	}
	for _, c := range queryCases {
		roundTrip(t, c.in, testOpts)
	}
	for _, c := range canonicalCases {
		roundTrip(t, c.in, testOpts)
	}
	for _, c := range schemaCases {
		roundTrip(t, c.in, schemaOpts)
	}
	for _, c := range sqlCases {
		roundTrip(t, c.in, testOpts)
	}
}

func TestEncodeRejectsInexpressible(t *testing.T) {
	cases := []struct {
		name string
		q    Query
	}{
		{"m. path", Query{Filters: []Filter{eq("m.a", I(1))}}},
		{"keyword path", Query{Filters: []Filter{eq("f", I(1))}}},
		{"empty segment", Query{Filters: []Filter{eq("a..b", I(1))}}},
		{"contains off event_message", Query{Filters: []Filter{{Path: "project", Op: OpContains, Value: S("x")}}}},
		{"IN off levels", Query{Filters: []Filter{{Path: "project", Op: OpIn, Values: []Value{S("a")}}}}},
		{"IN with a gap", Query{Filters: []Filter{{Path: LevelPath, Op: OpIn, Values: []Value{S("info"), S("error")}}}}},
		{"non-timestamp on t:", Query{Filters: []Filter{eq("timestamp", I(5))}}},
		{"string range end", Query{Filters: []Filter{rng("metadata.a", S("a b"), S("c"))}}},
		{"NULL comparison", Query{Filters: []Filter{{Path: "metadata.a", Op: OpGt, Value: NullValue()}}}},
		{"range shorthand with >", Query{Filters: []Filter{{Path: "timestamp", Op: OpGt, Value: ts("2024-01-01T00:00:00Z"), Shorthand: "today"}}}},
		{"bad alias", Query{Selects: []Select{{Path: "metadata.a", Alias: "a-b"}}}},
		{"bad from", Query{From: "a b"}},
		{"avg(*)", Query{Chart: &Chart{AggAvg, "timestamp", PeriodMinute}}},
		{"zero chart", Query{Chart: &Chart{}}},
	}
	for _, c := range cases {
		s, err := Encode(&c.q)
		if err == nil {
			t.Errorf("%s: Encode = %q, want an error", c.name, s)
		}
		if !strings.HasPrefix(c.q.String(), "<lql: ") {
			t.Errorf("%s: String() = %q, want <lql: ...>", c.name, c.q.String())
		}
	}
}
