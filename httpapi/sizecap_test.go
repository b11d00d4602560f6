package httpapi

import (
	"fmt"
	"net/url"
	"strings"
	"testing"

	json "github.com/goccy/go-json"

	"github.com/sediment/sediment/engine"
	"github.com/sediment/sediment/query/endpoints"
)

// sqlCount answers select count(*) over source through the query API.
func sqlCount(t *testing.T, ts *testServer, source string) float64 {
	t.Helper()
	r := ts.do("GET", "/api/query?sql="+url.QueryEscape("select count(*) as n from `"+source+"`"), nil, "x-api-key", privKey)
	var out map[string]any
	if json.Unmarshal([]byte(r.body), &out) != nil || out["error"] != nil || r.status != 200 {
		t.Fatalf("count %s: %d %s", source, r.status, r.body)
	}
	return at(out["result"].([]any)[0].(map[string]any), "n").(float64)
}

// ingestDay posts n events of day (2025-07-0<day>) to source and writes
// them out as one segment.
func ingestDay(t *testing.T, ts *testServer, source string, day, n int) {
	t.Helper()
	var b strings.Builder
	b.WriteString("[")
	for i := range n {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, `{"event_message":"day %d event %d","timestamp":"2025-07-%02dT10:00:%02dZ","metadata":{"n":%d}}`, day, i, day, i%60, i)
	}
	b.WriteString("]")
	ts.do("POST", "/api/logs?source_name="+url.QueryEscape(source), []byte(b.String()), withKey(pubKey, jsonCT...)...).expect(t, 200, logged)
	sh, err := ts.eng.Shard(ts.source(source).Token)
	if err != nil {
		t.Fatal(err)
	}
	if err := sh.Flush(); err != nil {
		t.Fatal(err)
	}
}

// TestSourceSizeCapAPI: max_disk_bytes is set, shown and validated through
// the management API and reaches the source's shard; the retention pass
// then deletes the source's oldest segments, a count answers what is
// left, and GET /api/sources/<token> and /metrics show what was deleted.
func TestSourceSizeCapAPI(t *testing.T) {
	ts := startServer(t, serverConfig{noSupabase: true, service: &endpoints.Options{DisableBackground: true},
		opts: Options{Now: serverNow}, engine: engine.Options{Now: serverNow, DisableBackground: true}})
	auth := withKey(privKey, jsonCT...)
	r := ts.do("POST", "/api/sources", []byte(`{"name":"capped"}`), auth...)
	r.expect(t, 201, "")
	created := decodeJSON[map[string]any](t, r.body)
	tok := created["token"].(string)
	if v, ok := created["max_disk_bytes"]; !ok || v != nil {
		t.Fatalf("a new source's max_disk_bytes: %v", created)
	}
	ts.do("PATCH", "/api/sources/"+tok, []byte(`{"max_disk_bytes":-1}`), auth...).
		expect(t, 422, `{"errors":{"max_disk_bytes":["must be greater than or equal to 0"]}}`)
	ts.do("PATCH", "/api/sources/"+tok, []byte(`{"max_disk_bytes":"1GiB"}`), auth...).
		expect(t, 422, `{"errors":{"max_disk_bytes":["is invalid"]}}`)

	for day := 1; day <= 4; day++ {
		ingestDay(t, ts, "capped", day, 50)
	}
	if n := sqlCount(t, ts, "capped"); n != 200 {
		t.Fatalf("count before the cap: %v", n)
	}
	sh := ts.eng.LookupShard(tok)
	in := sh.Info()
	// Room for about two of the four segments: the two oldest days go.
	limit := in.SegmentBytes / 2
	r = ts.do("PUT", "/api/sources/"+tok, []byte(fmt.Sprintf(`{"max_disk_bytes":%d}`, limit)), auth...)
	r.expect(t, 200, "")
	if got := decodeJSON[map[string]any](t, r.body)["max_disk_bytes"]; got != float64(limit) {
		t.Fatalf("PUT answered max_disk_bytes %v, want %d", got, limit)
	}
	if sh.MaxDiskBytes() != limit {
		t.Fatalf("the shard's cap is %d, want %d", sh.MaxDiskBytes(), limit)
	}
	if _, err := ts.eng.ApplyRetention(); err != nil {
		t.Fatal(err)
	}
	left := sh.Info()
	if left.SegmentBytes > limit || left.Segments < 1 || left.Segments > 2 {
		t.Fatalf("after the cap: %d segments, %d bytes (cap %d)", left.Segments, left.SegmentBytes, limit)
	}
	deletedEvents := 200 - 50*left.Segments
	if n := sqlCount(t, ts, "capped"); n != float64(50*left.Segments) {
		t.Fatalf("count after the cap: %v, want %d", n, 50*left.Segments)
	}
	// The oldest days went: what is left is the newest.
	for _, ev := range ts.events("capped") {
		if msg := ev["event_message"].(string); strings.HasPrefix(msg, "day 1 ") {
			t.Fatalf("an event of the oldest day is left: %s", msg)
		}
	}

	detail := decodeJSON[map[string]any](t, ts.do("GET", "/api/sources/"+tok, nil, auth...).body)
	events, _ := detail["deleted_events"].(map[string]any)
	bytes, _ := detail["deleted_bytes"].(map[string]any)
	if detail["max_disk_bytes"] != float64(limit) || len(events) != 1 || events["source_size_cap"] != float64(deletedEvents) ||
		len(bytes) != 1 || bytes["source_size_cap"] != float64(in.SegmentBytes-left.SegmentBytes) || detail["effective_retention_days"] != nil {
		t.Fatalf("GET /api/sources/<token>: %v", detail)
	}

	m := ts.scrape()
	if v := m.must(t, "sediment_storage_deleted_events_total", "source", "capped", "reason", "source_size_cap"); v != float64(deletedEvents) {
		t.Fatalf("deleted events metric %v, want %d", v, deletedEvents)
	}
	if v := m.must(t, "sediment_storage_deleted_bytes_total", "source", "capped", "reason", "source_size_cap"); v != float64(in.SegmentBytes-left.SegmentBytes) {
		t.Fatalf("deleted bytes metric %v", v)
	}
	if v := m.must(t, "sediment_storage_deleted_segments_total", "source", "capped", "reason", "source_size_cap"); v != float64(4-left.Segments) {
		t.Fatalf("deleted segments metric %v", v)
	}
	for _, reason := range []string{"retention", "global_size_cap"} {
		if v := m.must(t, "sediment_storage_deleted_events_total", "source", "capped", "reason", reason); v != 0 {
			t.Fatalf("reason %s: %v", reason, v)
		}
	}
	if v := m.must(t, "sediment_background_failures_total", "source", "capped", "task", "size_cap"); v != 0 {
		t.Fatalf("size_cap failures %v", v)
	}

	// 0 clears the cap (shown as null).
	r = ts.do("PUT", "/api/sources/"+tok, []byte(`{"max_disk_bytes":0}`), auth...)
	if got, ok := decodeJSON[map[string]any](t, r.body)["max_disk_bytes"]; r.status != 200 || !ok || got != nil || sh.MaxDiskBytes() != 0 {
		t.Fatalf("cleared: %d %s", r.status, r.body)
	}
}

// TestDefaultRetention: --retention-days (Options.DefaultRetentionDays)
// is the retention of every source without its own, those seeded at
// start and those created later; a source's own retention_days wins,
// shorter or longer, and clearing it returns the source to the default.
func TestDefaultRetention(t *testing.T) {
	// The server's clock is 2025-07-10 12:30; events of 2025-07-01..04.
	ts := startServer(t, serverConfig{service: &endpoints.Options{DisableBackground: true},
		opts: Options{Now: serverNow, DefaultRetentionDays: 8}, engine: engine.Options{Now: serverNow, DisableBackground: true}})
	auth := withKey(privKey, jsonCT...)
	// A seeded source (given its settings at start) has the default.
	ingestDay(t, ts, "postgres.logs", 1, 10) // 9 days old: past the default
	ingestDay(t, ts, "postgres.logs", 4, 10) // 6 days old: kept
	if n := sqlCount(t, ts, "postgres.logs"); n != 10 {
		t.Fatalf("a seeded source under the default retention counts %v, want 10", n)
	}

	for _, body := range []string{`{"name":"default"}`, `{"name":"own.long","retention_days":30}`, `{"name":"own.short","retention_days":7}`} {
		ts.do("POST", "/api/sources", []byte(body), auth...).expect(t, 201, "")
	}
	for _, name := range []string{"default", "own.long", "own.short"} {
		ingestDay(t, ts, name, 1, 10) // 9 days old
		ingestDay(t, ts, name, 2, 10) // 8 days old and a few hours
		ingestDay(t, ts, name, 4, 10) // 6 days old
	}
	want := map[string]float64{"default": 10, "own.long": 30, "own.short": 10}
	wantDays := map[string]any{"default": float64(8), "own.long": float64(30), "own.short": float64(7), "postgres.logs": float64(8)}
	for name, n := range want {
		if got := sqlCount(t, ts, name); got != n {
			t.Fatalf("%s counts %v, want %v", name, got, n)
		}
		detail := decodeJSON[map[string]any](t, ts.do("GET", "/api/sources/"+ts.source(name).Token, nil, auth...).body)
		if detail["effective_retention_days"] != wantDays[name] {
			t.Fatalf("%s: effective_retention_days %v, want %v", name, detail["effective_retention_days"], wantDays[name])
		}
	}
	// The retention pass deletes what the default expired, and counts it.
	if _, err := ts.eng.ApplyRetention(); err != nil {
		t.Fatal(err)
	}
	detail := decodeJSON[map[string]any](t, ts.do("GET", "/api/sources/"+ts.source("default").Token, nil, auth...).body)
	if ev, _ := detail["deleted_events"].(map[string]any); ev["retention"] != float64(20) || detail["retention_days"] != nil {
		t.Fatalf("default: %v", detail)
	}
	// Clearing a source's own retention returns it to the default.
	ts.do("PATCH", "/api/sources/"+ts.source("own.long").Token, []byte(`{"retention_days":0}`), auth...).expect(t, 204, "")
	if n := sqlCount(t, ts, "own.long"); n != 10 {
		t.Fatalf("own.long back on the default counts %v, want 10", n)
	}
	if m := ts.scrape(); m.must(t, "sediment_storage_deleted_events_total", "source", "default", "reason", "retention") != 20 {
		t.Fatal("retention's deletions are not in the metrics")
	}
}
