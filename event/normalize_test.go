package event

import (
	"github.com/google/uuid"

	"math"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestBigQueryColumnName holds every example of docs/compat/logflare.md §4.3.
func TestBigQueryColumnName(t *testing.T) {
	tests := []struct{ in, want string }{
		{"status-code", "_status_code"},
		{"a-b-c", "_a_b_c"},
		{"--", "___"},
		{"foo!", "_foo_"},
		{"a b", "_a_b"},
		{"x.y", "_x_y"},
		{"é", "__"},
		{"1foo", "_1foo"},
		{"1-key", "_1_key"},
		{"1key!", "__1key_"},
		{"a-b!", "__a_b_"},
		{"1-key!", "__1_key_"},
		{"_TABLE_x", "__TABLE_x"},
		{"_TABLE_-foo", "___TABLE__foo"},
		{"__ROOT__x", "___ROOT__x"},
		{"x_TABLE_y", "x_TABLE_y"},
		{"", ""},
		{strings.Repeat("a", 129), "_" + strings.Repeat("a", 128)},
		// More cases:
		{strings.Repeat("a", 128), strings.Repeat("a", 128)},
		{"cf-ray", "_cf_ray"},
		{"status_code", "status_code"},
		{"_PARTITIONTIME", "__PARTITIONTIME"},
		{"_table_x", "_table_x"}, // prefixes are case-sensitive
		{"a\xffb", "_a_b"},       // an invalid byte counts as one illegal character
		{"日本", "___"},            // one '_' per code point plus the illegal-rule '_'
		{"sample#db_size", "_sample_db_size"},
		{"PARTITION:", "__PARTITION_"}, // the rules made a reserved prefix: one more '_'
		{"_ROOT__:", "___ROOT___"},     // twice
	}
	for _, tc := range tests {
		if got := BigQueryColumnName(tc.in); got != tc.want {
			t.Errorf("BigQueryColumnName(%q) = %q, want %q", tc.in, got, tc.want)
		}
		if IsSafeColumnName(tc.in) != (tc.in == tc.want) {
			t.Errorf("IsSafeColumnName(%q) disagrees with BigQueryColumnName", tc.in)
		}
	}
}

func TestTimestampMicros(t *testing.T) {
	tests := []struct {
		name string
		v    Value
		want int64
		ok   bool
	}{
		{"RFC3339 Z", str("2024-01-01T00:00:00Z"), 1704067200000000, true},
		{"nanoseconds truncated", str("2025-07-10T12:00:05.123456789Z"), 1752148805123456, true},
		{"+00:00 with µs", str("2020-08-09T13:30:36.316601+00:00"), 1596979836316601, true},
		{"+02:00", str("2024-01-01T00:00:00+02:00"), 1704060000000000, true},
		{"-05:30", str("2024-01-01T00:00:00-05:30"), 1704067200000000 + (5*3600+30*60)*1_000_000, true},
		{"+0200 without colon", str("2024-01-01T00:00:00+0200"), 1704060000000000, true},
		{"+02 hours only", str("2024-01-01T00:00:00+02"), 1704060000000000, true},
		{"space separator", str("2024-01-01 00:00:00Z"), 1704067200000000, true},
		{"lower-case t and z", str("2024-01-01t00:00:00.5z"), 1704067200500000, true},
		{"comma fraction", str("2024-01-01T00:00:00,25Z"), 1704067200250000, true},
		{"milliseconds", str("2025-07-10T12:00:09.210Z"), 1752148809210000, true},
		{"leap day", str("2024-02-29T00:00:00Z"), 1709164800000000, true},
		{"before 1970", str("1969-12-31T23:59:59.5Z"), -500000, true},
		{"naive", str("2024-01-01T00:00:00"), 0, false},
		{"naive with fraction", str("2024-01-01T00:00:00.123"), 0, false},
		{"-00:00 refused", str("2024-01-01T00:00:00-00:00"), 0, false},
		{"date only", str("2024-01-01"), 0, false},
		{"empty", str(""), 0, false},
		{"garbage", str("yesterday"), 0, false},
		{"bad month", str("2024-13-01T00:00:00Z"), 0, false},
		{"Feb 30", str("2024-02-30T00:00:00Z"), 0, false},
		{"Feb 29 non-leap", str("2023-02-29T00:00:00Z"), 0, false},
		{"hour 24", str("2024-01-01T24:00:00Z"), 0, false},
		{"second 60", str("2024-01-01T00:00:60Z"), 0, false},
		{"empty fraction", str("2024-01-01T00:00:00.Z"), 0, false},
		{"trailing junk", str("2024-01-01T00:00:00Zx"), 0, false},
		{"bad offset minutes", str("2024-01-01T00:00:00+02:60"), 0, false},
		{"RFC 1123", str("Thu, 10 Jul 2025 12:00:05 GMT"), 0, false},
		{"19 digits ns", num(1752148805123456789), 1752148805123456, true},
		{"16 digits µs", num(1752148805123456), 1752148805123456, true},
		{"13 digits ms", num(1752148805123), 1752148805123000, true},
		{"10 digits s", num(1752148805), 1752148805000000, true},
		{"7 digits ×1e9", num(1752148), 1752148000000000, true},
		{"other length as µs", num(12345), 12345, true},
		{"zero", num(0), 0, true},
		{"18 digits as µs", num(175214880512345678), 175214880512345678, true},
		{"negative", num(-1752148805), 0, false},
		{"float rounded then 13 digits", flt(1752148805123.4), 1752148805123000, true},
		{"float rounds half away from zero", flt(1752148804.5), 1752148805000000, true},
		{"float s with fraction", flt(1752148805.123), 1752148805000000, true},
		{"negative float", flt(-3.5), 0, false},
		{"small negative float rounds to 0", flt(-0.4), 0, true},
		{"float beyond int64", flt(1e30), math.MaxInt64, true},
		{"bool", BoolValue(true), 0, false},
		{"null", NullValue(), 0, false},
		{"object", obj("a", num(1)), 0, false},
		{"array", arr(num(1)), 0, false},
	}
	for _, tc := range tests {
		got, ok := TimestampMicros(tc.v)
		if ok != tc.ok || (ok && got != tc.want) {
			t.Errorf("%s: TimestampMicros(%s) = %d, %v; want %d, %v", tc.name, AppendJSON(nil, tc.v), got, ok, tc.want, tc.ok)
		}
	}
}

func TestNormalize(t *testing.T) {
	now := time.Date(2025, 7, 10, 12, 0, 0, 0, time.UTC)
	nowUS := now.UnixMicro()
	tests := []struct {
		name    string
		in      string
		want    Event
		outcome Outcome
	}{
		{
			name: "message wins and removes event_message",
			in:   `{"message":"m","event_message":"e","log_entry":"l","metadata":{"a":1}}`,
			want: Event{ID: "gen-1", Timestamp: nowUS, Message: "m", HasMessage: true,
				Fields: obj("log_entry", str("l"), "metadata", obj("a", num(1)))},
		},
		{
			name: "event_message when no message",
			in:   `{"event_message":"e","log_entry":"l"}`,
			want: Event{ID: "gen-1", Timestamp: nowUS, Message: "e", HasMessage: true, Fields: obj("log_entry", str("l"))},
		},
		{
			name: "legacy log_entry as last resort",
			in:   `{"source":"b3b5c1f0-0000-4000-8000-000000000000","log_entry":"hello","metadata":{"request":{"url":"u"}}}`,
			want: Event{ID: "gen-1", Timestamp: nowUS, Message: "hello", HasMessage: true,
				Fields: obj("source", str("b3b5c1f0-0000-4000-8000-000000000000"), "metadata", obj("request", obj("url", str("u"))))},
		},
		{
			name: "empty or null message falls through",
			in:   `{"message":"","event_message":null,"log_entry":"l"}`,
			want: Event{ID: "gen-1", Timestamp: nowUS, Message: "l", HasMessage: true, Fields: obj()},
		},
		{
			name: "non-string messages become JSON",
			in:   `{"message":{"b":2,"c":null,"a":[1,{}]}}`,
			want: Event{ID: "gen-1", Timestamp: nowUS, Message: `{"b":2,"a":[1]}`, HasMessage: true, Fields: obj()},
		},
		{
			name: "numeric message",
			in:   `{"message":42.5}`,
			want: Event{ID: "gen-1", Timestamp: nowUS, Message: "42.5", HasMessage: true, Fields: obj()},
		},
		{
			name: "boolean message",
			in:   `{"message":false}`,
			want: Event{ID: "gen-1", Timestamp: nowUS, Message: "false", HasMessage: true, Fields: obj()},
		},
		{
			name: "no message",
			in:   `{"metadata":{"level":"info"}}`,
			want: Event{ID: "gen-1", Timestamp: nowUS, Fields: obj("metadata", obj("level", str("info")))},
		},
		{
			name: "given id and timestamp",
			in:   `{"id":"abc","timestamp":"2025-07-10T11:59:00Z","event_message":"x"}`,
			want: Event{ID: "abc", Timestamp: nowUS - 60_000_000, Message: "x", HasMessage: true, Fields: obj()},
		},
		{
			name: "numeric ids",
			in:   `{"id":12345,"timestamp":1752148740000}`,
			want: Event{ID: "12345", Timestamp: nowUS - 60_000_000, Fields: obj()},
		},
		{
			name: "float id",
			in:   `{"id":1.5}`,
			want: Event{ID: "1.5", Timestamp: nowUS, Fields: obj()},
		},
		{
			name: "empty and non-scalar ids are replaced",
			in:   `{"id":"","x":{"id":true}}`,
			want: Event{ID: "gen-1", Timestamp: nowUS, Fields: obj("x", obj("id", BoolValue(true)))},
		},
		{
			name: "bool id replaced",
			in:   `{"id":true}`,
			want: Event{ID: "gen-1", Timestamp: nowUS, Fields: obj()},
		},
		{
			name: "unusable timestamp means now",
			in:   `{"timestamp":"2025-07-10T11:59:00"}`,
			want: Event{ID: "gen-1", Timestamp: nowUS, Fields: obj()},
		},
		{
			name: "cleaning at every depth",
			in: `{"a":null,"b":"","c":{},"d":[],"e":{"f":null,"g":{"h":""}},"i":[null,"",{},[],[null],{"j":null},0,false,"k"],` +
				`"l":{"m":[{"n":null}]},"o":0,"p":false,"q":" "}`,
			want: Event{ID: "gen-1", Timestamp: nowUS,
				Fields: obj("i", arr(num(0), BoolValue(false), str("k")), "o", num(0), "p", BoolValue(false), "q", str(" "))},
		},
		{
			name: "renaming at every depth, arrays of objects included",
			in:   `{"metadata":{"request":{"headers":{"cf-ray":"r","x-real-ip":"1.2.3.4"}},"list":[{"a b":1},{"1st":2}]},"1top":true}`,
			want: Event{ID: "gen-1", Timestamp: nowUS,
				Fields: obj("metadata", obj("request", obj("headers", obj("_cf_ray", str("r"), "_x_real_ip", str("1.2.3.4"))),
					"list", arr(obj("_a_b", num(1)), obj("_1st", num(2)))), "_1top", BoolValue(true))},
		},
		{
			name: "collision: the already-safe key wins wherever it is",
			in:   `{"a-b":1,"_a_b":2,"x":{"c.d":3,"_c_d":4}}`,
			want: Event{ID: "gen-1", Timestamp: nowUS, Fields: obj("_a_b", num(2), "x", obj("_c_d", num(4)))},
		},
		{
			name: "collision: first renamed key wins among renamed ones",
			in:   `{"a-b":1,"a.b":2,"a b":3}`,
			want: Event{ID: "gen-1", Timestamp: nowUS, Fields: obj("_a_b", num(1))},
		},
		{
			name: "collision with safe key first",
			in:   `{"_a_b":2,"a-b":1}`,
			want: Event{ID: "gen-1", Timestamp: nowUS, Fields: obj("_a_b", num(2))},
		},
		{
			name: "member order kept",
			in:   `{"zeta":1,"project":"p","metadata":{"b":1,"a":2},"alpha":3}`,
			want: Event{ID: "gen-1", Timestamp: nowUS, Fields: obj("zeta", num(1), "project", str("p"), "metadata", obj("b", num(1), "a", num(2)), "alpha", num(3))},
		},
		{
			name:    "future timestamp is dropped",
			in:      `{"timestamp":"2025-07-10T13:00:01Z","message":"late"}`,
			want:    Event{ID: "gen-1", Timestamp: nowUS + 3601_000_000, Message: "late", HasMessage: true, Fields: obj()},
			outcome: OutcomeDroppedFuture,
		},
		{
			name: "exactly one hour ahead is kept",
			in:   `{"timestamp":"2025-07-10T13:00:00Z"}`,
			want: Event{ID: "gen-1", Timestamp: nowUS + 3600_000_000, Fields: obj()},
		},
		{
			name:    "far-future float timestamp is dropped",
			in:      `{"timestamp":1e30}`,
			want:    Event{ID: "gen-1", Timestamp: math.MaxInt64, Fields: obj()},
			outcome: OutcomeDroppedFuture,
		},
		{
			name: "string raw value becomes the message",
			in:   `"just text"`,
			want: Event{ID: "gen-1", Timestamp: nowUS, Message: "just text", HasMessage: true, Fields: obj()},
		},
		{
			name: "array raw value becomes its JSON",
			in:   `[1,null,"a"]`,
			want: Event{ID: "gen-1", Timestamp: nowUS, Message: `[1,"a"]`, HasMessage: true, Fields: obj()},
		},
	}
	for _, tc := range tests {
		raw, err := Parse([]byte(tc.in))
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		before := string(AppendJSON(nil, raw))
		n := 0
		opts := NormalizeOptions{NewID: func() string { n++; return "gen-" + itoa(n) }}
		got, outcome := Normalize(raw, now, opts)
		if outcome != tc.outcome {
			t.Errorf("%s: outcome %v, want %v", tc.name, outcome, tc.outcome)
		}
		if g, w := string(AppendEventJSON(nil, got)), string(AppendEventJSON(nil, tc.want)); g != w || got.HasMessage != tc.want.HasMessage {
			t.Errorf("%s:\n got  %s\n want %s", tc.name, g, w)
		}
		if got.Fields.Kind != Object {
			t.Errorf("%s: Fields kind %v", tc.name, got.Fields.Kind)
		}
		if after := string(AppendJSON(nil, raw)); after != before {
			t.Errorf("%s: Normalize modified its input:\n%s\n%s", tc.name, before, after)
		}
	}
}

func TestNormalizeDefaultID(t *testing.T) {
	raw, _ := Parse([]byte(`{"message":"x"}`))
	e, _ := Normalize(raw, time.Now(), NormalizeOptions{})
	if !regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`).MatchString(e.ID) {
		t.Errorf("default id %q is not a UUIDv4", e.ID)
	}
	e2, _ := Normalize(raw, time.Now(), NormalizeOptions{})
	if e2.ID == e.ID {
		t.Error("two generated ids are equal")
	}
}

// TestNormalizeUnchangedSubtreesShared documents that Normalize copies only
// what it changes.
func TestNormalizeUnchangedSubtreesShared(t *testing.T) {
	raw, _ := Parse([]byte(`{"metadata":{"clean":{"a":1},"dirty":{"b":null,"c":2}}}`))
	e, _ := Normalize(raw, time.Now(), NormalizeOptions{NewID: func() string { return "x" }})
	inClean := raw.Path("metadata", "clean")
	outClean := e.Fields.Path("metadata", "clean")
	if &inClean.Kids[0] != &outClean.Kids[0] {
		t.Error("unchanged sub-tree was copied")
	}
	if e.Fields.Path("metadata", "dirty").Len() != 1 || raw.Path("metadata", "dirty").Len() != 2 {
		t.Error("changed sub-tree not copied")
	}
}

func FuzzNormalize(f *testing.F) {
	f.Add([]byte(`{"message":{"a":null},"id":3,"timestamp":1.5e12,"a-b":1,"_a_b":2,"x":[[],{"y z":""}]}`))
	f.Add([]byte(`{"log_entry":"l","metadata":{"1-key!":[null,{"k":1}]}}`))
	now := time.Date(2025, 7, 10, 12, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, data []byte) {
		raw, err := Parse(data)
		if err != nil {
			return
		}
		e, _ := Normalize(raw, now, NormalizeOptions{NewID: func() string { return "id" }})
		if e.Fields.Kind != Object || e.ID == "" {
			t.Fatalf("bad event %+v", e)
		}
		checkNormalized(t, e.Fields)
		// Normalising is idempotent on its own output (except 129-byte names,
		// which the rules themselves rename again).
		again, _ := Normalize(e.Fields, now, NormalizeOptions{NewID: func() string { return "id" }})
		special := e.Fields.Get("message") != nil || e.Fields.Get("event_message") != nil || e.Fields.Get("log_entry") != nil
		if !special && !Equal(again.Fields, e.Fields) && !hasLongKey(e.Fields) {
			t.Fatalf("not idempotent: %s → %s", AppendJSON(nil, e.Fields), AppendJSON(nil, again.Fields))
		}
	})
}

func hasLongKey(v Value) bool {
	for i := range v.Kids {
		if len(v.Kids[i].Key) > MaxColumnNameLen || hasLongKey(v.Kids[i]) {
			return true
		}
	}
	return false
}

// checkNormalized asserts the invariants of a normalised tree: no empty
// values, column-safe unique keys.
func checkNormalized(t *testing.T, v Value) {
	t.Helper()
	seen := map[string]bool{}
	for _, k := range v.Kids {
		if isEmpty(k) {
			t.Fatalf("empty value left: %s", AppendJSON(nil, v))
		}
		if v.Kind == Object {
			if seen[k.Key] {
				t.Fatalf("duplicate key %q", k.Key)
			}
			seen[k.Key] = true
			if len(k.Key) <= MaxColumnNameLen && !IsSafeColumnName(k.Key) {
				t.Fatalf("unsafe key %q", k.Key)
			}
		}
		checkNormalized(t, k)
	}
}

// TestNormalizerMatchesNormalize checks the arena-backed Normalizer against
// Normalize over the table inputs, across Resets, and that it does not
// allocate when warm.
func TestNormalizerMatchesNormalize(t *testing.T) {
	inputs := []string{
		`{"message":"m","metadata":{"a":null,"b":{"c":"","d":[null,1]},"e-f":{"g h":1}},"x":{}}`,
		`{"event_message":"e","a-b":1,"_a_b":2,"list":[{"k":null,"j":1},[],{"1x":2}]}`,
		`{"timestamp":"2025-07-10T12:00:00Z","id":"i","metadata":{"request":{"headers":{"referer":null,"host":"h"}}}}`,
	}
	now := time.Date(2025, 7, 10, 12, 0, 0, 0, time.UTC)
	opts := NormalizeOptions{NewID: func() string { return "id" }}
	var n Normalizer
	for round := range 3 {
		n.Reset()
		var got []Event
		for _, in := range inputs {
			raw, _ := Parse([]byte(in))
			e, _ := n.Normalize(raw, now, opts)
			got = append(got, e)
		}
		for i, in := range inputs {
			raw, _ := Parse([]byte(in))
			want, _ := Normalize(raw, now, opts)
			if g, w := AppendEventJSON(nil, got[i]), AppendEventJSON(nil, want); string(g) != string(w) {
				t.Fatalf("round %d input %d:\n got  %s\n want %s", round, i, g, w)
			}
		}
	}
	raw, _ := Parse([]byte(inputs[2]))
	if allocs := testing.AllocsPerRun(100, func() { n.Reset(); n.Normalize(raw, now, opts) }); allocs != 0 {
		t.Errorf("warm Normalizer allocates %.1f times per event", allocs)
	}
}

// TestNormalizerGeneratesUUIDs: a Normalizer gives events without an id
// distinct random UUIDv4s, valid until Reset, without allocating.
func TestNormalizerGeneratesUUIDs(t *testing.T) {
	raw := obj("message", str("no id"))
	var n Normalizer
	now := time.Date(2025, 7, 10, 12, 0, 0, 0, time.UTC)
	seen := map[string]bool{}
	var ids []string
	for i := 0; i < 1000; i++ {
		e, _ := n.Normalize(raw, now, NormalizeOptions{})
		u, err := uuid.Parse(e.ID)
		if err != nil || u.Version() != 4 || u.Variant() != uuid.RFC4122 || u.String() != e.ID {
			t.Fatalf("id %q is not a canonical UUIDv4 (%v)", e.ID, err)
		}
		if seen[e.ID] {
			t.Fatalf("id %q generated twice", e.ID)
		}
		seen[e.ID] = true
		ids = append(ids, e.ID)
	}
	for _, id := range ids { // still valid: no Reset yet
		if !seen[id] {
			t.Fatalf("id %q changed before Reset", id)
		}
	}
	n.Reset()
	if allocs := testing.AllocsPerRun(100, func() {
		n.Reset()
		n.Normalize(raw, now, NormalizeOptions{})
	}); allocs > 0 {
		t.Errorf("warm Normalizer allocated %.0f times for an event without id", allocs)
	}
}
