package httpapi

import (
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	json "github.com/goccy/go-json"

	"github.com/sediment/sediment/catalog"
	"github.com/sediment/sediment/engine"
	"github.com/sediment/sediment/event"
	"github.com/sediment/sediment/internal/vfs"
	"github.com/sediment/sediment/query/endpoints"
	"github.com/sediment/sediment/segment"
)

// damageBlock flips a bit every 32 bytes of block b of a segment file, as
// a failing disk would: every unit of the block is damaged.
func damageBlock(t *testing.T, path string, b int) {
	t.Helper()
	f, err := vfs.OS.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	r, err := segment.Open(f, "x")
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for off := range data {
		if r.BlockAt(int64(off)) == b && off%32 == 0 {
			data[off] ^= 0x20
			n++
		}
	}
	r.Close()
	if n == 0 {
		t.Fatalf("no block %d in %s", b, path)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// noServerPath fails if a response body shows the data directory.
func noServerPath(t *testing.T, ts *testServer, body string) {
	t.Helper()
	if strings.Contains(body, ts.dir) || strings.Contains(body, "/sources/") {
		t.Fatalf("response shows a server path: %s", body)
	}
}

// TestDamagedBlockAnswersSayPartial: a damaged block in a segment makes
// the answers that would read it partial, and every one of them says so in
// a top-level "warnings" list beside Logflare's "result": ad-hoc SQL from
// the first query on (no error), a cached endpoint's second answer, the
// LQL search; /ready names the source; no answer shows a server path.
// Today the first query errors with the segment's full path and the later
// ones answer 300 instead of 400 without a word.
func TestDamagedBlockAnswersSayPartial(t *testing.T) {
	ts := startServer(t, serverConfig{
		engine:  engine.Options{DisableBackground: true, BlockRows: 100},
		service: &endpoints.Options{DisableBackground: true},
	})
	src := ts.source("cloudflare.logs.prod")
	sh, err := ts.eng.Shard(src.Token)
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2025, 7, 1, 0, 0, 0, 0, time.UTC)
	ts.ingestEdge(edgeBatch(300, t0, "p1")) // one segment of three blocks
	if err := sh.Flush(); err != nil {
		t.Fatal(err)
	}
	ts.ingestEdge(edgeBatch(200, t0.Add(24*time.Hour), "p1"))
	if err := sh.Flush(); err != nil {
		t.Fatal(err)
	}
	segs, _ := filepath.Glob(filepath.Join(ts.dir, "sources", src.Token, "segments", "*.seg"))
	slices.Sort(segs)
	damageBlock(t, segs[0], 1)
	want := fmt.Sprintf("source cloudflare.logs.prod: 100 events in segment %s (block 1) are quarantined and not in this answer",
		strings.TrimSuffix(filepath.Base(segs[0]), ".seg"))

	sql := func(q string) map[string]any {
		t.Helper()
		r := ts.do("GET", "/api/query?sql="+url.QueryEscape(q), nil, "x-api-key", privKey)
		noServerPath(t, ts, r.body)
		var out map[string]any
		if r.status != 200 || json.Unmarshal([]byte(r.body), &out) != nil || out["error"] != nil {
			t.Fatalf("%s: %d %s", q, r.status, r.body)
		}
		return out
	}
	checkPartial := func(what string, out map[string]any, n float64) {
		t.Helper()
		res, _ := out["result"].([]any)
		if len(res) != 1 || at(res[0].(map[string]any), "n") != n {
			t.Fatalf("%s: result %v, want n=%v", what, out["result"], n)
		}
		if ws, _ := out["warnings"].([]any); len(ws) != 1 || ws[0] != want {
			t.Fatalf("%s: warnings %v, want [%q]", what, out["warnings"], want)
		}
	}
	// The first query that meets the damage answers, marked.
	checkPartial("first query", sql("select count(id) as n from `cloudflare.logs.prod`"), 400)
	checkPartial("count(*) after", sql("select count(*) as n from `cloudflare.logs.prod`"), 400)
	// A query that does not reach the damaged block says nothing.
	late := sql("select count(*) as n from `cloudflare.logs.prod` where timestamp > '2025-07-01T23:00:00Z'")
	if late["warnings"] != nil || at(late["result"].([]any)[0].(map[string]any), "n") != float64(200) {
		t.Fatalf("query beside the damage: %v", late)
	}

	// A cached endpoint: the cached answer carries the warning too.
	r := ts.do("POST", "/api/endpoints", []byte(`{"name":"edge-count","query":"select count(*) as n from `+"`cloudflare.logs.prod`"+`","cache_duration_seconds":300}`),
		"x-api-key", privKey, "Content-Type", "application/json")
	if r.status != 201 {
		t.Fatalf("create endpoint: %d %s", r.status, r.body)
	}
	var ep struct{ Token string }
	json.Unmarshal([]byte(r.body), &ep)
	before := ts.service.Executions()
	for i := range 2 {
		r := ts.do("GET", "/api/endpoints/query/"+ep.Token, nil, "x-api-key", privKey)
		noServerPath(t, ts, r.body)
		var out map[string]any
		json.Unmarshal([]byte(r.body), &out)
		checkPartial(fmt.Sprintf("endpoint call %d", i+1), out, 400)
	}
	if n := ts.service.Executions() - before; n != 1 {
		t.Fatalf("the endpoint ran %d times; the second answer should come from the cache", n)
	}

	// The LQL search says so too.
	r = ts.do("GET", "/api/sources/cloudflare.logs.prod/search?limit=1000&lql="+url.QueryEscape("m.response.status_code:>=200"), nil, "x-api-key", queryKey)
	noServerPath(t, ts, r.body)
	var sr struct {
		Result   []map[string]any
		Warnings []string
	}
	if r.status != 200 || json.Unmarshal([]byte(r.body), &sr) != nil || len(sr.Result) != 400 || !slices.Equal(sr.Warnings, []string{want}) {
		t.Fatalf("search: %d, %d events, warnings %q: %.300s", r.status, len(sr.Result), sr.Warnings, r.body)
	}

	// /ready names the source and what it lost; the server stays ready.
	r = ts.do("GET", "/ready", nil)
	noServerPath(t, ts, r.body)
	if r.status != 200 || !strings.Contains(r.body, `"name":"cloudflare.logs.prod"`) || !strings.Contains(r.body, `"kind":"quarantined"`) || !strings.Contains(r.body, "100 events") {
		t.Fatalf("/ready: %d %s", r.status, r.body)
	}
	if in := sh.Info(); in.QuarantinedBlocks != 1 || in.QuarantinedEvents != 100 {
		t.Fatalf("counters: %+v", in)
	}
}

// TestDamagedWALOtherSourcesServe: one source's write-ahead log damaged in
// its middle record. The server starts; every other source takes events
// and answers; the damaged one answers what it read (the records before
// and after the damage, saying what it misses), refuses events with 503,
// and /ready names it with the command that repairs it. After the repair
// (POST .../repair-wal, no restart) it takes events again and has lost
// that record only. Today the server does not start at all.
func TestDamagedWALOtherSourcesServe(t *testing.T) {
	dir := t.TempDir()
	cat, err := catalog.Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cat.SeedSupabase(); err != nil {
		t.Fatal(err)
	}
	edge := cat.SourceByName("cloudflare.logs.prod").Token
	pg := cat.SourceByName("postgres.logs").Token

	// What a crash leaves: events in the sources' logs, nothing flushed.
	stage := t.TempDir()
	eng, err := engine.Open(stage, &engine.Options{DisableBackground: true})
	if err != nil {
		t.Fatal(err)
	}
	batch := func(from, n int) []event.Event {
		var evs []event.Event
		for i := from; i < from+n; i++ {
			evs = append(evs, event.Event{ID: fmt.Sprintf("e%04d", i), Timestamp: 1_751_328_000_000_000 + int64(i)*1000,
				Message: fmt.Sprintf("event %d", i), HasMessage: true, Fields: event.ObjectValue(event.Member("n", event.IntValue(int64(i))))})
		}
		return evs
	}
	batches := [][]event.Event{batch(0, 40), batch(40, 25), batch(65, 35)}
	es, _ := eng.Shard(edge)
	ps, _ := eng.Shard(pg)
	for _, b := range batches {
		if err := es.Append(t.Context(), b); err != nil {
			t.Fatal(err)
		}
	}
	if err := ps.Append(t.Context(), batch(500, 10)); err != nil {
		t.Fatal(err)
	}
	if err := os.CopyFS(filepath.Join(dir, "sources"), os.DirFS(filepath.Join(stage, "sources"))); err != nil {
		t.Fatal(err)
	}
	if err := eng.Close(); err != nil {
		t.Fatal(err)
	}
	wals, _ := filepath.Glob(filepath.Join(dir, "sources", edge, "wal", "*.wal"))
	if len(wals) != 1 {
		t.Fatalf("edge logs: %v", wals)
	}
	data, _ := os.ReadFile(wals[0])
	first := len(engine.EncodeWALRecord(batches[0], true))
	second := len(engine.EncodeWALRecord(batches[1], false))
	data[first+second/2] ^= 0x04 // the middle record's payload
	os.WriteFile(wals[0], data, 0o644)

	ts := startServer(t, serverConfig{dir: dir, service: &endpoints.Options{DisableBackground: true}})
	r := ts.do("GET", "/ready", nil)
	noServerPath(t, ts, r.body)
	var ready struct {
		Status  string
		Sources []struct {
			Name       string
			Conditions []struct {
				Kind          string
				RefusesIngest bool `json:"refuses_ingest"`
				Detail        string
			}
		}
	}
	json.Unmarshal([]byte(r.body), &ready)
	if r.status != 200 || ready.Status != "degraded" || len(ready.Sources) != 1 || ready.Sources[0].Name != "cloudflare.logs.prod" ||
		len(ready.Sources[0].Conditions) != 1 || ready.Sources[0].Conditions[0].Kind != "wal_damaged" || !ready.Sources[0].Conditions[0].RefusesIngest ||
		!strings.Contains(ready.Sources[0].Conditions[0].Detail, "sediment fsck --repair-wal --source "+edge) {
		t.Fatalf("/ready: %d %s", r.status, r.body)
	}
	ts.do("GET", "/health", nil).expect(t, 200, `{"status":"ok"}`)
	// Ingest: the damaged source refuses with 503, the others take events.
	r = ts.do("POST", "/api/logs?source_name=cloudflare.logs.prod", edgeBatch(3, time.Now(), "p"), "x-api-key", pubKey, "Content-Type", "application/json")
	if r.status != 503 || !strings.Contains(r.body, "read-only") || !strings.Contains(r.body, "write-ahead log is damaged") {
		t.Fatalf("ingest to the damaged source: %d %s", r.status, r.body)
	}
	ts.do("POST", "/api/logs?source_name=postgres.logs", []byte(`[{"event_message":"after","timestamp":"2025-07-10T12:00:05Z"}]`),
		"x-api-key", pubKey, "Content-Type", "application/json").expect(t, 200, `{"message":"Logged!"}`)
	count := func(source string) (float64, []any) {
		t.Helper()
		r := ts.do("GET", "/api/query?sql="+url.QueryEscape("select count(*) as n from `"+source+"`"), nil, "x-api-key", privKey)
		noServerPath(t, ts, r.body)
		var out map[string]any
		if json.Unmarshal([]byte(r.body), &out) != nil || out["error"] != nil {
			t.Fatalf("count %s: %s", source, r.body)
		}
		ws, _ := out["warnings"].([]any)
		return at(out["result"].([]any)[0].(map[string]any), "n").(float64), ws
	}
	if n, ws := count("postgres.logs"); n != 11 || ws != nil {
		t.Fatalf("postgres.logs: %v events, warnings %v", n, ws)
	}
	n, ws := count("cloudflare.logs.prod")
	if n != 75 || len(ws) != 1 || !strings.Contains(ws[0].(string), "write-ahead log is damaged") || !strings.Contains(ws[0].(string), "25 events") {
		t.Fatalf("damaged source: %v events, warnings %v", n, ws)
	}

	// The repair, while the server runs: only the damaged record goes.
	r = ts.do("POST", "/api/sources/cloudflare.logs.prod/repair-wal", nil, "x-api-key", pubKey)
	r.expect(t, 401, `{"error":"Unauthorized"}`)
	r = ts.do("POST", "/api/sources/cloudflare.logs.prod/repair-wal", nil, "x-api-key", privKey)
	noServerPath(t, ts, r.body)
	var rep struct {
		Repaired []struct {
			File          string
			DroppedEvents int64  `json:"dropped_events"`
			KeptRecords   int    `json:"kept_records"`
			KeptEvents    int    `json:"kept_events"`
			SavedAs       string `json:"original_kept_as"`
		}
	}
	if r.status != 200 || json.Unmarshal([]byte(r.body), &rep) != nil || len(rep.Repaired) != 1 || rep.Repaired[0].DroppedEvents != 25 ||
		rep.Repaired[0].KeptRecords != 2 || rep.Repaired[0].KeptEvents != 75 || rep.Repaired[0].SavedAs != "quarantine/0000000000000001.wal" {
		t.Fatalf("repair: %d %s", r.status, r.body)
	}
	ts.do("POST", "/api/sources/cloudflare.logs.prod/repair-wal", nil, "x-api-key", privKey).expect(t, 409, "")
	ts.do("GET", "/ready", nil).expect(t, 200, `{"status":"ok"}`)
	ts.do("POST", "/api/logs?source_name=cloudflare.logs.prod", edgeBatch(3, time.Now(), "p"), "x-api-key", pubKey, "Content-Type", "application/json").
		expect(t, 200, `{"message":"Logged!"}`)
	if n, ws := count("cloudflare.logs.prod"); n != 78 || ws != nil {
		t.Fatalf("after repair: %v events, warnings %v", n, ws)
	}
	// A restart finds the repaired log clean.
	ts.stop()
	ts = startServer(t, serverConfig{dir: dir, service: &endpoints.Options{DisableBackground: true}})
	ts.do("GET", "/ready", nil).expect(t, 200, `{"status":"ok"}`)
	if n, ws := count("cloudflare.logs.prod"); n != 78 || ws != nil {
		t.Fatalf("after a restart: %v events, warnings %v", n, ws)
	}
}
