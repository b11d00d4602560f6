package httpapi

import (
	"bytes"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/sediment/sediment/catalog"
)

// syncBuffer is a bytes.Buffer safe for a logger and a test to share.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestDropsCountedPerSource: every event an accepted (200) request does
// not store is counted per source and reason, shown by GET
// /api/sources/:token as "dropped_events", and the first drop of each
// reason for a source is logged at warn level (only the first).
func TestDropsCountedPerSource(t *testing.T) {
	var logs syncBuffer
	ts := startServer(t, serverConfig{opts: Options{Now: serverNow, Logger: slog.New(slog.NewTextHandler(&logs, nil))}})
	pg, bouncer := ts.source("postgres.logs"), ts.source("pgbouncer.logs.prod")
	drop := "m.level:debug"
	if _, err := ts.cat.UpdateSource(pg.Token, catalog.SourceParams{DropLQL: &drop}); err != nil {
		t.Fatal(err)
	}
	post := func(src *catalog.Source, route, contentType, body string) {
		t.Helper()
		ts.do("POST", route+"?source="+src.Token, []byte(body), withKey(pubKey, "Content-Type", contentType)...).expect(t, 200, logged)
	}
	const future = "2025-07-10T14:00:00Z" // serverNow + 1h30
	for range 2 {
		post(pg, "/api/logs", "application/json", `[{"message":"ahead","timestamp":"`+future+`"},{"message":"ok"},{"message":"dbg","metadata":{"level":"debug"}}]`)
		post(pg, "/api/logs", "application/json", ``)
		post(pg, "/api/logs", "application/json", `{"batch":[]}`)
		post(pg, "/api/logs", "application/json", `[]`)
		post(pg, "/logs/logplex", "application/logplex-1", "garbage line that is not syslog\n")
	}
	post(bouncer, "/api/logs", "application/json", `[{"message":"ahead","timestamp":"`+future+`"}]`)
	post(bouncer, "/api/logs/cloudflare", "text/plain", "{\"a\":1}\nnot json\n")

	// A batch member that is not an array is no batch: the object is one
	// event, stored as Logflare stores it, and nothing is dropped.
	post(bouncer, "/api/logs", "application/json", `{"batch":"notarray"}`)
	stored := false
	for _, ev := range ts.events("pgbouncer.logs.prod") {
		stored = stored || ev["batch"] == "notarray"
	}
	if !stored {
		t.Fatal(`{"batch":"notarray"} was not stored as an event`)
	}

	dropped := func(src *catalog.Source) map[string]any {
		t.Helper()
		r := ts.do("GET", "/api/sources/"+src.Token, nil, withKey(privKey)...)
		r.expect(t, 200, "")
		return decodeJSON[map[string]any](t, r.body)["dropped_events"].(map[string]any)
	}
	want := map[*catalog.Source]map[string]any{
		pg:      {"future_timestamp": float64(2), "drop_rule": float64(2), "empty_batch": float64(6), "unparseable_line": float64(2)},
		bouncer: {"future_timestamp": float64(1), "unparseable_line": float64(1)},
	}
	for src, w := range want {
		got := dropped(src)
		if len(got) != len(w) {
			t.Errorf("%s: dropped_events %v, want %v", src.Name, got, w)
		}
		for k, v := range w {
			if got[k] != v {
				t.Errorf("%s: dropped_events %v, want %v", src.Name, got, w)
			}
		}
	}
	if st := ts.srv.Stats(); st.Dropped(DropFutureTimestamp) != 3 || st.Sources[pg.Token].Events != 2 || st.Sources[pg.Token].IngestRequests != 10 {
		t.Fatalf("stats %+v", st)
	}

	// One warn line per source and reason: 4 for postgres.logs, 2 for
	// pgbouncer.logs.prod, whatever the number of drops.
	out := logs.String()
	if n := strings.Count(out, "level=WARN msg=\"ingest dropped events"); n != 6 {
		t.Fatalf("%d warn lines, want 6:\n%s", n, out)
	}
	for _, r := range []string{"future_timestamp", "drop_rule", "empty_batch", "unparseable_line"} {
		if !strings.Contains(out, "source=postgres.logs source_token="+pg.Token+" reason="+r) {
			t.Errorf("no warn line for %s of postgres.logs:\n%s", r, out)
		}
	}

	// A deleted source's counts go with it.
	ts.do("DELETE", "/api/sources/"+bouncer.Token, nil, withKey(privKey)...).expect(t, 204, "")
	if _, ok := ts.srv.Stats().Sources[bouncer.Token]; ok {
		t.Fatal("counts of a deleted source kept")
	}
}
