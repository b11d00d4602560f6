package lql

import (
	"reflect"
	"sort"
	"testing"
	"time"

	ev "github.com/sediment/sediment/event"
)

// matchNow is Friday 2024-03-15 10:30:45 UTC.
var matchNow = time.Date(2024, 3, 15, 10, 30, 45, 0, time.UTC)

func at(s string) int64 {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		panic(err)
	}
	return t.UnixMicro()
}

func obj(kv ...any) ev.Value {
	var ms []ev.Value
	for i := 0; i < len(kv); i += 2 {
		ms = append(ms, ev.Member(kv[i].(string), val(kv[i+1])))
	}
	return ev.ObjectValue(ms...)
}

func arr(xs ...any) ev.Value {
	var es []ev.Value
	for _, x := range xs {
		es = append(es, val(x))
	}
	return ev.ArrayValue(es...)
}

func val(x any) ev.Value {
	switch x := x.(type) {
	case ev.Value:
		return x
	case string:
		return ev.StringValue(x)
	case int:
		return ev.IntValue(int64(x))
	case float64:
		return ev.FloatValue(x)
	case bool:
		return ev.BoolValue(x)
	case nil:
		return ev.NullValue()
	}
	panic("bad test value")
}

func newEvent(id, ts, msg string, fields ev.Value) ev.Event {
	return ev.Event{ID: id, Timestamp: at(ts), Message: msg, HasMessage: msg != "", Fields: fields}
}

// testEvents are the fixed events every filter case selects from.
var testEvents = []ev.Event{
	newEvent("e1", "2024-03-15T10:00:00Z", "GET /rest/v1/users 200", obj(
		"project", "p1",
		"metadata", obj(
			"request", obj("method", "GET", "path", "/rest/v1/users", "headers", obj("user_agent", "Mozilla/5.0")),
			"response", obj("status_code", 200),
			"level", "info",
			"tags", arr("a", "b"),
			"ids", arr(1, 2, 3),
			"latency", 12.5,
		))),
	newEvent("e2", "2024-03-15T10:20:00Z", "POST /auth/v1/token 500 error", obj(
		"project", "p2",
		"metadata", obj(
			"request", obj("method", "POST", "path", "/auth/v1/token", "headers", obj("user_agent", "curl/8.0")),
			"response", obj("status_code", 500),
			"level", "error",
			"tags", arr("b", "c"),
			"latency", 250,
		))),
	newEvent("e3", "2024-03-14T23:00:00Z", "not found", obj(
		"project", "p1",
		"metadata", obj(
			"response", obj("status_code", 404),
			"level", "warning",
		))),
	newEvent("e4", "2024-03-15T10:29:59Z", "", obj()),
	newEvent("e5", "2024-03-15T10:30:00Z", "batch", obj(
		"project", "p3",
		"metadata", arr(obj(
			"items", arr(obj("name", "x", "qty", 1), obj("name", "y", "qty", 2)),
			"response", obj("status_code", "503"),
			"level", "debug",
			"at", "2024-03-15T10:30:00Z",
		)))),
	newEvent("e6", "2024-03-15T10:10:00Z", `GET /storage say "hi"`, obj(
		"project", "p4",
		"metadata", obj(
			"request", obj("method", "get", "headers", obj("user_agent", "Googlebot/2.1")),
			"response", obj("status_code", 201),
			"version", "2",
			"flag", true,
			"ratio", 0.5,
			"level", "critical",
			"nothing", nil,
		))),
}

var matchCases = []struct {
	in   string
	want []string
}{
	{``, []string{"e1", "e2", "e3", "e4", "e5", "e6"}},
	{`c:count(*) c:group_by(t::h) s:m.a f:x`, []string{"e1", "e2", "e3", "e4", "e5", "e6"}},
	{`error`, []string{"e2"}},
	{`-error`, []string{"e1", "e3", "e4", "e5", "e6"}},
	{`GET`, []string{"e1", "e6"}},
	{`GET /rest`, []string{"e1"}},
	{`"GET /rest"`, []string{"e1"}},
	{`"say \"hi\""`, []string{"e6"}},
	{`~"^(GET|POST) /(rest|auth)"`, []string{"e1", "e2"}},
	{`-~"^GET"`, []string{"e2", "e3", "e4", "e5"}},
	{`~"(?i)batch|FOUND"`, []string{"e3", "e5"}},
	{`event_message:batch`, []string{"e5"}},
	{`event_message:NULL`, []string{"e4"}},
	{`id:"e4"`, []string{"e4"}},
	{`-id:e4`, []string{"e1", "e2", "e3", "e5", "e6"}},
	{`m.request.method:GET`, []string{"e1"}},
	{`-m.request.method:GET`, []string{"e2", "e3", "e4", "e5", "e6"}},
	{`m.request.method:NULL`, []string{"e3", "e4", "e5"}},
	{`-m.request.method:NULL`, []string{"e1", "e2", "e6"}},
	{`m.request.method:~"(?i)^get$"`, []string{"e1", "e6"}},
	{`m.request.headers.user_agent:~bot`, []string{"e6"}},
	{`-m.request.headers.user_agent:~bot`, []string{"e1", "e2", "e3", "e4", "e5"}},
	{`m.request.headers.user_agent:~"^curl/\d"`, []string{"e2"}},
	{`m.response.status_code:200`, []string{"e1"}},
	{`m.response.status_code:>=500`, []string{"e2", "e5"}}, // "503" >= "500" as text
	{`m.response.status_code:<300`, []string{"e1", "e6"}},
	{`m.response.status_code:500..599`, []string{"e2", "e5"}},
	{`-m.response.status_code:200..299`, []string{"e2", "e3", "e4", "e5"}},
	{`m.response.status_code:"503"`, []string{"e5"}},
	{`m.response.status_code:"200"`, []string{"e1"}}, // integer 200 as text
	{`m.latency:>100`, []string{"e2"}},
	{`m.latency:<=12.5`, []string{"e1"}},
	{`m.latency:12.5`, []string{"e1"}},
	{`m.latency:250.0`, []string{"e2"}},
	{`m.latency:10..300`, []string{"e1", "e2"}},
	{`m.ratio:0.5`, []string{"e6"}},
	{`m.version:2`, []string{"e6"}}, // string "2" against the number 2, as text
	{`m.flag:true`, []string{"e6"}},
	{`-m.flag:true`, []string{"e1", "e2", "e3", "e4", "e5"}},
	{`m.flag:"true"`, []string{"e6"}},
	{`m.nothing:NULL`, []string{"e1", "e2", "e3", "e4", "e5", "e6"}},
	{`m.level:warning..critical`, []string{"e2", "e3", "e6"}},
	{`-m.level:warning..critical`, []string{"e1", "e4", "e5"}},
	{`m.level:debug`, []string{"e5"}},
	{`m.tags:@>b`, []string{"e1", "e2"}},
	{`-m.tags:@>b`, []string{"e3", "e4", "e5", "e6"}},
	{`m.tags:@>~"^c"`, []string{"e2"}},
	{`m.ids:@>2`, []string{"e1"}},
	{`m.ids:@>"2"`, []string{"e1"}},
	{`m.ids:@>7`, nil},
	{`m.items.name:y`, []string{"e5"}},
	{`m.items.name:y m.items.qty:2`, []string{"e5"}},
	{`m.items.name:x m.items.qty:2`, nil}, // one element must satisfy both
	{`m.items.qty:>1`, []string{"e5"}},
	{`-m.items.name:x`, []string{"e1", "e2", "e3", "e4", "e5", "e6"}}, // element y is not x
	{`-m.items.name:x -m.items.name:y`, []string{"e1", "e2", "e3", "e4", "e6"}},
	{`project:p1`, []string{"e1", "e3"}},
	{`-project:p1`, []string{"e2", "e4", "e5", "e6"}},
	{`project:NULL`, []string{"e4"}},
	{`metadata:NULL`, []string{"e4"}},
	{`t:>2024-03-15T10:20:00Z`, []string{"e4", "e5"}},
	{`t:>=2024-03-15T10:20:00Z`, []string{"e2", "e4", "e5"}},
	{`t:2024-03-15`, []string{"e1", "e2", "e4", "e5", "e6"}},
	{`-t:2024-03-15`, []string{"e3"}},
	{`t:2024-03-15T10:00:00Z`, []string{"e1"}},
	{`t:last@30m`, []string{"e1", "e2", "e4", "e5", "e6"}}, // from 10:00:00, inclusive
	{`t:last@1m`, []string{"e4", "e5"}},
	{`t:<now t:>1710496800`, []string{"e2", "e4", "e5", "e6"}},
	{`t:yesterday`, []string{"e3"}},
	{`m.request.method:GET m.response.status_code:200 project:p1 t:today GET`, []string{"e1"}},
	{`m.response.status_code:>=200 -m.request.method:GET -project:p3`, []string{"e2", "e3", "e6"}},
}

func TestMatch(t *testing.T) {
	for _, c := range matchCases {
		q, err := Parse(c.in, Options{Now: matchNow})
		if err != nil {
			t.Errorf("Parse(%q): %v", c.in, err)
			continue
		}
		m, err := Compile(q)
		if err != nil {
			t.Errorf("Compile(%q): %v", c.in, err)
			continue
		}
		var got []string
		for i := range testEvents {
			if m.Match(&testEvents[i]) {
				got = append(got, testEvents[i].ID)
			}
		}
		sort.Strings(got)
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("%q matches %v, want %v", c.in, got, c.want)
		}
	}
}

// TestMatchTyped: with a schema, timestamp columns compare with the ISO
// strings events carry.
func TestMatchTyped(t *testing.T) {
	schema := MapSchema{"metadata.at": {Kind: TypeTimestamp}}
	cases := []struct {
		in   string
		want bool
	}{
		{`m.at:>2024-03-15T10:00:00Z`, true},
		{`m.at:<2024-03-15T10:00:00Z`, false},
		{`m.at:2024-03-15`, true},
		{`m.at:2024-03-15T12:30:00+02:00`, true},
		{`-m.at:last@5m`, false},
	}
	for _, c := range cases {
		q, err := Parse(c.in, Options{Now: matchNow, Schema: schema})
		if err != nil {
			t.Fatalf("Parse(%q): %v", c.in, err)
		}
		m, err := Compile(q)
		if err != nil {
			t.Fatal(err)
		}
		if got := m.Match(&testEvents[4]); got != c.want {
			t.Errorf("%q on e5 = %v, want %v", c.in, got, c.want)
		}
	}
}

func TestCompileErrors(t *testing.T) {
	cases := []Query{
		{Filters: []Filter{{Path: "event_message", Op: OpRegex, Value: StringValue("(")}}},
		{Filters: []Filter{{Path: "a", Op: OpRegex, Value: IntValue(1)}}},
		{Filters: []Filter{{Path: "a", Op: OpRange, Values: []Value{IntValue(1)}}}},
		{Filters: []Filter{{Path: "a", Op: OpGt, Value: NullValue()}}},
		{Filters: []Filter{{Path: "a", Op: 0}}},
		{Filters: []Filter{{Path: "a..b", Op: OpEq, Value: IntValue(1)}}},
		{Filters: []Filter{{Path: "a.", Op: OpEq, Value: IntValue(1)}}},
	}
	for _, q := range cases {
		if _, err := Compile(&q); err == nil {
			t.Errorf("Compile(%+v) succeeded, want an error", q.Filters)
		}
	}
}

// FuzzMatch: whatever parses compiles and matches without panicking.
func FuzzMatch(f *testing.F) {
	for _, c := range matchCases {
		f.Add(c.in)
	}
	f.Fuzz(func(t *testing.T, in string) {
		q, err := Parse(in, Options{Now: matchNow})
		if err != nil {
			return
		}
		m, err := Compile(q)
		if err != nil {
			t.Fatalf("Compile(Parse(%q)): %v", in, err)
		}
		for i := range testEvents {
			m.Match(&testEvents[i])
		}
	})
}
