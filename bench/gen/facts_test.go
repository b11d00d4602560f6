package gen_test

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/sediment/sediment/bench/gen"
)

// TestEdgeFactsMatchTheEvent: the facts a generator reports for an edge
// event are what the event's JSON says, in both shapes and every
// timestamp form.
func TestEdgeFactsMatchTheEvent(t *testing.T) {
	forms := []gen.TimestampForm{gen.TimestampNative, gen.TimestampRFC3339Nano, gen.TimestampSeconds, gen.TimestampMillis, gen.TimestampMicros, gen.TimestampNanos, gen.TimestampOmitted}
	for _, shape := range shapes {
		for _, form := range forms {
			t.Run(fmt.Sprintf("%s/%d", shape, form), func(t *testing.T) {
				g := gen.New(gen.EdgeLogs, gen.Options{Seed: 3, Shape: shape, Projects: 7, Timestamps: form, RareEvery: 50, StorageObjects: 30})
				if _, ok := g.Facts(); ok {
					t.Fatal("facts before the first event")
				}
				for i := range 2000 {
					ev := g.AppendEvent(nil)
					f, ok := g.Facts()
					if !ok {
						t.Fatalf("event %d: no facts", i)
					}
					m := decode(t, ev)
					str := func(path string) string {
						v, _ := lookup(m, path)
						s, _ := v.(string)
						return s
					}
					if f.Project != str("project") || f.Method != str("metadata.request.method") || string(f.Path) != str("metadata.request.path") {
						t.Fatalf("event %d: facts %+v\n%s", i, f, ev)
					}
					if st, _ := lookup(m, "metadata.response.status_code"); fmt.Sprint(st) != fmt.Sprint(f.Status) {
						t.Fatalf("event %d: status %v, facts %d", i, st, f.Status)
					}
					if shape == gen.Platform {
						if url := string(f.URL(nil)); url != str("metadata.request.url") {
							t.Fatalf("event %d: url %q, facts %q", i, str("metadata.request.url"), url)
						}
					}
					if got := writtenTime(t, m); got != f.Time {
						t.Fatalf("event %d: timestamp %d, facts %d\n%s", i, got, f.Time, ev)
					}
					if has := strings.Contains(str("event_message"), gen.DefaultRareToken); has != f.Rare {
						t.Fatalf("event %d: rare token %v, facts %v", i, has, f.Rare)
					}
				}
			})
		}
	}
	g := gen.New(gen.PostgresLogs, gen.Options{Seed: 3})
	g.AppendEvent(nil)
	if _, ok := g.Facts(); ok {
		t.Fatal("postgres event has facts")
	}
}

// writtenTime reads the event's top-level timestamp in any of the forms as
// nanoseconds since the epoch (0 when omitted).
func writtenTime(t *testing.T, m map[string]any) int64 {
	t.Helper()
	v, ok := m["timestamp"]
	if !ok {
		return 0
	}
	switch x := v.(type) {
	case string:
		ts, err := time.Parse(time.RFC3339Nano, x)
		if err != nil {
			t.Fatal(err)
		}
		return ts.UnixNano()
	case interface{ Int64() (int64, error) }:
		n, err := x.Int64()
		if err != nil {
			t.Fatal(err)
		}
		switch digits := len(fmt.Sprint(n)); {
		case digits <= 10:
			return n * 1e9
		case digits <= 13:
			return n * 1e6
		case digits <= 16:
			return n * 1e3
		}
		return n
	}
	t.Fatalf("timestamp %v", v)
	return 0
}

// TestRareTokenChangesOnlyItsEvents: with RareEvery set, the stream is the
// same as without it except that the chosen events' messages carry the
// token; about one event in RareEvery is chosen.
func TestRareTokenChangesOnlyItsEvents(t *testing.T) {
	for _, shape := range shapes {
		plain := gen.New(gen.EdgeLogs, gen.Options{Seed: 8, Shape: shape})
		rare := gen.New(gen.EdgeLogs, gen.Options{Seed: 8, Shape: shape, RareEvery: 100, RareToken: "needle42"})
		const n = 50_000
		hits := 0
		for i := range n {
			a, b := plain.AppendEvent(nil), rare.AppendEvent(nil)
			f, _ := rare.Facts()
			if !f.Rare {
				if !bytes.Equal(a, b) {
					t.Fatalf("%s: event %d differs without the token:\n%s\n%s", shape, i, a, b)
				}
				continue
			}
			hits++
			ma, mb := decode(t, a), decode(t, b)
			msgA, msgB := ma["event_message"].(string), mb["event_message"].(string)
			if !strings.HasPrefix(msgB, msgA) || !strings.HasSuffix(msgB, "needle42") || len(msgB)-len(msgA) > len("needle42")+3 {
				t.Fatalf("%s: event %d message %q, plain %q", shape, i, msgB, msgA)
			}
			delete(ma, "event_message")
			delete(mb, "event_message")
			if fmt.Sprint(ma) != fmt.Sprint(mb) {
				t.Fatalf("%s: event %d differs beyond its message", shape, i)
			}
		}
		// Binomial(50000, 1/100): mean 500, sd 22.
		if hits < 400 || hits > 600 {
			t.Errorf("%s: %d rare events in %d, want about %d", shape, hits, n, n/100)
		}
	}
}

// TestStorageObjectsBoundPaths: with StorageObjects set, storage request
// paths come from that many objects (each seen under at most a few
// routes), so distinct paths stop growing; without it they keep growing.
func TestStorageObjectsBoundPaths(t *testing.T) {
	distinct := func(objects, n int) int {
		g := gen.New(gen.EdgeLogs, gen.Options{Seed: 2, Shape: gen.Platform, Projects: 5, StorageObjects: objects})
		seen := map[string]bool{}
		for range n {
			g.AppendEvent(nil)
			f, _ := g.Facts()
			if bytes.HasPrefix(f.Path, []byte("/storage/")) {
				seen[string(f.Path)] = true
			}
		}
		return len(seen)
	}
	small, large := distinct(50, 20_000), distinct(50, 80_000)
	// An object appears under public/, sign/, object/ and render/ at most
	// (list and delete paths name only the bucket).
	if large > 4*50+2*8 || large-small > 10 {
		t.Errorf("50 objects: %d distinct storage paths in 20k events, %d in 80k", small, large)
	}
	if a, b := distinct(0, 20_000), distinct(0, 80_000); b < 2*a {
		t.Errorf("unbounded names: %d distinct storage paths in 20k events, %d in 80k", a, b)
	}
}
