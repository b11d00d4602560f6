package gen_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/sediment/sediment/bench/gen"
)

func TestSourceNames(t *testing.T) {
	want := []struct{ name, table string }{
		{"cloudflare.logs.prod", "edge_logs"},
		{"postgres.logs", "postgres_logs"},
		{"deno-relay-logs", "function_edge_logs"},
		{"deno-subhosting-events", "function_logs"},
		{"gotrue.logs.prod", "auth_logs"},
		{"realtime.logs.prod", "realtime_logs"},
		{"storage.logs.prod.2", "storage_logs"},
		{"postgREST.logs.prod", "postgrest_logs"},
		{"pgbouncer.logs.prod", "pgbouncer_logs"},
	}
	all := gen.AllSources()
	if len(all) != len(want) {
		t.Fatalf("AllSources: %d sources, want %d", len(all), len(want))
	}
	for i, w := range want {
		s := all[i]
		if s.Name() != w.name || s.Table() != w.table || s.String() != w.name {
			t.Errorf("source %d: Name %q Table %q, want %q %q", i, s.Name(), s.Table(), w.name, w.table)
		}
		for _, key := range []string{w.name, w.table} {
			if got, ok := gen.SourceByName(key); !ok || got != s {
				t.Errorf("SourceByName(%q) = %v, %v; want %v", key, got, ok, s)
			}
		}
	}
	for _, bad := range []string{"", "postgrest.logs.prod", "edge-logs", "cloudflare.logs.prod "} {
		if _, ok := gen.SourceByName(bad); ok {
			t.Errorf("SourceByName(%q) found a source", bad)
		}
	}
}

func TestParseShape(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want gen.Shape
		ok   bool
	}{
		{"selfhosted", gen.SelfHosted, true},
		{"self-hosted", gen.SelfHosted, true},
		{"platform", gen.Platform, true},
		{"Platform", 0, false},
		{"", 0, false},
	} {
		got, ok := gen.ParseShape(tc.in)
		if got != tc.want || ok != tc.ok {
			t.Errorf("ParseShape(%q) = %v, %v; want %v, %v", tc.in, got, ok, tc.want, tc.ok)
		}
		if ok && got.String() != strings.ReplaceAll(tc.in, "-", "") {
			t.Errorf("%v.String() = %q", got, got.String())
		}
	}
}

// TestDeterminism: the same seed and options give the same bytes; another
// seed gives other bytes.
func TestDeterminism(t *testing.T) {
	for _, shape := range shapes {
		for _, src := range gen.AllSources() {
			t.Run(src.Table()+"/"+shape.String(), func(t *testing.T) {
				opts := gen.Options{Seed: 42, Shape: shape}
				a := gen.New(src, opts).AppendVectorBatch(nil, 500)
				b := gen.New(src, opts).AppendVectorBatch(nil, 500)
				if !bytes.Equal(a, b) {
					t.Fatal("same seed produced different bytes")
				}
				opts.Seed = 43
				c := gen.New(src, opts).AppendVectorBatch(nil, 500)
				if bytes.Equal(a, c) {
					t.Fatal("different seeds produced the same bytes")
				}
			})
		}
	}
}

// pinnedDigest is the SHA-256 of the first 200 events of every source and
// shape with seed 1 (see TestStreamsArePinned).
const pinnedDigest = "c873ac587b04935e41c5dbe95b53fb482fdac2967b006c1b66bccd188d5d6bf7"

// TestStreamsArePinned guards the "same bytes on every run and platform"
// promise: benchmark results are only comparable across commits while the
// data stays the same. A deliberate change to a generator changes the
// digest; update pinnedDigest in the same commit and say so.
func TestStreamsArePinned(t *testing.T) {
	h := sha256.New()
	for _, shape := range shapes {
		for _, src := range gen.AllSources() {
			h.Write(gen.New(src, gen.Options{Seed: 1, Shape: shape}).AppendNDJSON(nil, 200))
		}
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != pinnedDigest {
		t.Errorf("generated streams changed: digest %s, pinned %s", got, pinnedDigest)
	}
}

// TestAllEventsAreValidJSON checks every event of every source and shape
// parses, in each of the three body framings.
func TestAllEventsAreValidJSON(t *testing.T) {
	for _, shape := range shapes {
		for _, src := range gen.AllSources() {
			t.Run(src.Table()+"/"+shape.String(), func(t *testing.T) {
				opts := gen.Options{Seed: 9, Shape: shape}
				g := gen.New(src, opts)
				for i := range 1000 {
					ev := g.AppendEvent(nil)
					if !json.Valid(ev) {
						t.Fatalf("event %d is not valid JSON:\n%s", i, ev)
					}
					if ev[0] != '{' || bytes.ContainsAny(ev, "\n\r") {
						t.Fatalf("event %d is not a one-line object:\n%s", i, ev)
					}
				}
				var arr []json.RawMessage
				body := gen.New(src, opts).AppendVectorBatch(nil, 200)
				if err := json.Unmarshal(body, &arr); err != nil || len(arr) != 200 {
					t.Fatalf("vector batch: %v, %d elements", err, len(arr))
				}
				nd := gen.New(src, opts).AppendNDJSON(nil, 200)
				lines := bytes.Split(bytes.TrimSuffix(nd, []byte("\n")), []byte("\n"))
				if len(lines) != 200 {
					t.Fatalf("ndjson: %d lines", len(lines))
				}
				for i, l := range lines {
					if !bytes.Equal(l, arr[i]) {
						t.Fatalf("ndjson line %d differs from batch element", i)
					}
				}
			})
		}
	}
}

func TestEmptyBatch(t *testing.T) {
	g := gen.New(gen.EdgeLogs, gen.Options{})
	if got := string(g.AppendVectorBatch(nil, 0)); got != "[]" {
		t.Errorf("empty batch = %q", got)
	}
	if got := g.AppendNDJSON(nil, 0); len(got) != 0 {
		t.Errorf("empty ndjson = %q", got)
	}
}

// TestTimestamps: times start at Start, advance at Rate, mostly increase,
// and a small share arrives out of order unless InOrder is set.
func TestTimestamps(t *testing.T) {
	start := time.Date(2024, 2, 29, 23, 59, 58, 0, time.UTC)
	const n, rate = 3000, 500.0
	for _, shape := range shapes {
		for _, src := range gen.AllSources() {
			t.Run(src.Table()+"/"+shape.String(), func(t *testing.T) {
				for _, inOrder := range []bool{false, true} {
					opts := gen.Options{Seed: 5, Shape: shape, Start: start, Rate: rate, InOrder: inOrder, Timestamps: gen.TimestampRFC3339Nano}
					g := gen.New(src, opts)
					var prev, first, last time.Time
					decreases := 0
					for i := range n {
						next := g.Time()
						// The timestamp is the event's last member.
						ev := g.AppendEvent(nil)
						j := bytes.LastIndex(ev, []byte(`,"timestamp":"`))
						if j < 0 || !bytes.HasSuffix(ev, []byte(`"}`)) {
							t.Fatalf("event does not end with a timestamp: %s", ev)
						}
						ts := parseTime(t, string(ev[j+len(`,"timestamp":"`):len(ev)-2]))
						if !ts.Equal(next) {
							t.Fatalf("event %d: Time() said %v, event has %v", i, next, ts)
						}
						if i == 0 {
							first = ts
						} else if ts.Before(prev) {
							decreases++
							if d := prev.Sub(ts); d > 6*time.Second {
								t.Fatalf("event %d is %v out of order", i, d)
							}
						}
						prev = ts
						if ts.After(last) {
							last = ts
						}
					}
					if !first.Equal(start) {
						t.Errorf("first event at %v, want %v", first, start)
					}
					span := last.Sub(first).Seconds()
					if want := n / rate; span < want*0.9 || span > want*1.1 {
						t.Errorf("%d events span %.1fs, want about %.1fs", n, span, want)
					}
					share := float64(decreases) / n
					switch {
					case inOrder && decreases > 0:
						t.Errorf("InOrder: %d timestamps decrease", decreases)
					case !inOrder && (share < 0.003 || share > 0.03):
						t.Errorf("%.2f%% of timestamps decrease, want 0.3–3%%", 100*share)
					}
				}
			})
		}
	}
}

// TestNativeTimestamps checks each source's native timestamp form.
func TestNativeTimestamps(t *testing.T) {
	vector := regexp.MustCompile(`^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{3}|\.\d{6}|\.\d{9})?Z$`)
	seconds := regexp.MustCompile(`^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$`)
	micros := regexp.MustCompile(`^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$`)
	for _, tc := range []struct {
		src   gen.Source
		shape gen.Shape
		re    *regexp.Regexp
	}{
		{gen.EdgeLogs, gen.SelfHosted, seconds}, // Vector takes Kong's time from the log line
		{gen.PostgRESTLogs, gen.SelfHosted, vector},
		{gen.PostgresLogs, gen.SelfHosted, vector},
		{gen.AuthLogs, gen.SelfHosted, vector},
		{gen.EdgeLogs, gen.Platform, micros},
		{gen.PostgresLogs, gen.Platform, micros},
	} {
		evs, _ := events(t, tc.src, gen.Options{Seed: 1, Shape: tc.shape}, 500)
		nanos := 0
		for _, ev := range evs {
			s := str(ev, "timestamp")
			if !tc.re.MatchString(s) {
				t.Errorf("%v/%v: timestamp %q does not match %v", tc.src, tc.shape, s, tc.re)
				break
			}
			if len(s) == len("2025-07-10T12:00:05.123456789Z") {
				nanos++
			}
		}
		if tc.re == vector && tc.src != gen.PostgRESTLogs && nanos < 400 {
			t.Errorf("%v/%v: only %d of 500 timestamps have nanoseconds", tc.src, tc.shape, nanos)
		}
	}
}

func TestTimestampForms(t *testing.T) {
	start := time.Date(2025, 7, 10, 12, 0, 5, 123456789, time.UTC)
	for _, tc := range []struct {
		form gen.TimestampForm
		want string // "" means absent
	}{
		{gen.TimestampRFC3339Nano, `"2025-07-10T12:00:05.123456789Z"`},
		{gen.TimestampSeconds, `1752148805`},
		{gen.TimestampMillis, `1752148805123`},
		{gen.TimestampMicros, `1752148805123456`},
		{gen.TimestampNanos, `1752148805123456789`},
		{gen.TimestampOmitted, ``},
		{gen.TimestampNative, `"2025-07-10T12:00:05.123456789Z"`},
	} {
		ev := gen.New(gen.PostgresLogs, gen.Options{Start: start, Timestamps: tc.form}).AppendEvent(nil)
		var m map[string]json.RawMessage
		if err := json.Unmarshal(ev, &m); err != nil {
			t.Fatal(err)
		}
		if got := string(m["timestamp"]); got != tc.want {
			t.Errorf("form %d: timestamp %s, want %s", tc.form, got, tc.want)
		}
	}
}

func TestUseMessageKey(t *testing.T) {
	for _, shape := range shapes {
		for _, src := range gen.AllSources() {
			evs, _ := events(t, src, gen.Options{Seed: 3, Shape: shape, UseMessageKey: true}, 50)
			for _, ev := range evs {
				if _, ok := ev["event_message"]; ok {
					t.Fatalf("%v/%v: event_message present with UseMessageKey", src, shape)
				}
				if str(ev, "message") == "" {
					t.Fatalf("%v/%v: no message", src, shape)
				}
			}
		}
	}
}

func TestProjectRefs(t *testing.T) {
	refs := gen.ProjectRefs(11, 5000)
	valid := regexp.MustCompile(`^[a-z]{20}$`)
	seen := map[string]bool{}
	for _, r := range refs {
		if !valid.MatchString(r) {
			t.Fatalf("ref %q is not 20 lowercase letters", r)
		}
		if seen[r] {
			t.Fatalf("duplicate ref %q", r)
		}
		seen[r] = true
	}
	if again := gen.ProjectRefs(11, 10); strings.Join(again, ",") != strings.Join(refs[:10], ",") {
		t.Error("ProjectRefs is not deterministic or not prefix-stable")
	}
	if other := gen.ProjectRefs(12, 1); other[0] == refs[0] {
		t.Error("another seed gave the same first ref")
	}
	if len(gen.ProjectRefs(1, 0)) != 0 || len(gen.ProjectRefs(1, -3)) != 0 {
		t.Error("ProjectRefs with n <= 0 should be empty")
	}

	g := gen.New(gen.AuthLogs, gen.Options{Seed: 11, Shape: gen.Platform, Projects: 50})
	if got := g.Projects(); strings.Join(got, ",") != strings.Join(gen.ProjectRefs(11, 50), ",") {
		t.Error("Generator.Projects differs from ProjectRefs")
	}
	if got := gen.New(gen.AuthLogs, gen.Options{Seed: 11}).Projects(); len(got) != 1 || got[0] != gen.SelfHostedProject {
		t.Errorf("self-hosted projects = %v", got)
	}
}

// TestProjectSkew: events spread over the configured projects, with the
// first ranks busiest.
func TestProjectSkew(t *testing.T) {
	const n = 10000
	refs := gen.ProjectRefs(4, 100)
	rank := map[string]int{}
	for i, r := range refs {
		rank[r] = i
	}
	counts := make([]int, len(refs))
	g := gen.New(gen.PgBouncerLogs, gen.Options{Seed: 4, Shape: gen.Platform})
	var ev map[string]any
	for range n {
		ev = decode(t, g.AppendEvent(nil))
		p := str(ev, "project")
		i, ok := rank[p]
		if !ok {
			t.Fatalf("project %q is not among the seed's refs", p)
		}
		if str(ev, "metadata.host") != "db-"+p {
			t.Fatalf("metadata.host %q for project %q", str(ev, "metadata.host"), p)
		}
		counts[i]++
	}
	top := float64(counts[0]) / n
	if top < 0.12 || top > 0.30 {
		t.Errorf("busiest project has %.1f%% of events, want 12–30%%", 100*top)
	}
	if !(counts[0] > counts[1] && counts[1] > counts[9] && counts[9] > counts[99]) {
		t.Errorf("counts by rank not skewed: %d %d %d %d", counts[0], counts[1], counts[9], counts[99])
	}
	used := 0
	for _, c := range counts {
		if c > 0 {
			used++
		}
	}
	if used < 95 {
		t.Errorf("only %d of 100 projects got events", used)
	}
}

func TestDefaults(t *testing.T) {
	g := gen.New(gen.EdgeLogs, gen.Options{Rate: -1, Projects: -5})
	if !g.Time().Equal(gen.DefaultStart()) {
		t.Errorf("first time %v, want DefaultStart %v", g.Time(), gen.DefaultStart())
	}
	if g.Shape() != gen.SelfHosted || g.Source() != gen.EdgeLogs {
		t.Errorf("shape %v source %v", g.Shape(), g.Source())
	}
	g.AppendNDJSON(nil, 1000)
	// 1000 events at the default 100/s span about 10 s.
	if d := g.Time().Sub(gen.DefaultStart()); d < 8*time.Second || d > 12*time.Second {
		t.Errorf("1000 events at the default rate span %v", d)
	}
	if n := len(gen.New(gen.EdgeLogs, gen.Options{Shape: gen.Platform}).Projects()); n != gen.DefaultProjects {
		t.Errorf("default projects = %d", n)
	}
}
