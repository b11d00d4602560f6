package main

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestQueryFsckAndLock: while a server runs, a second server on the same
// data directory is refused, and `sediment query` and `sediment fsck` work
// read-only beside it; after a segment is damaged fsck says so and fails.
func TestQueryFsckAndLock(t *testing.T) {
	dir := t.TempDir()
	cfg := serveConfig{DataDir: dir, PrivateToken: "k"}
	r := start(t, cfg)
	r.mustDo("POST", "/api/sources", "k", `{"name":"app.logs"}`, 201)
	var batch []string
	for i := range 50 {
		status := 200
		if i%10 == 0 {
			status = 500
		}
		batch = append(batch, `{"message":"request `+string(rune('a'+i%26))+`","metadata":{"status":`+itoa(status)+`}}`)
	}
	r.mustDo("POST", "/api/logs?source_name=app.logs", "k", "["+strings.Join(batch, ",")+"]", 200)

	if _, err := startServer(serveConfig{DataDir: dir, Listen: "127.0.0.1:0"}, serveDeps{}, slog.New(slog.DiscardHandler)); err == nil || !strings.Contains(err.Error(), "in use") {
		t.Fatalf("second server on the same data directory: %v", err)
	}

	// The events are still in the write-ahead log: query reads them read-only.
	var out, errb bytes.Buffer
	q := "select m.status, count(*) as n from `app.logs` cross join unnest(metadata) as m where m.status >= cast(@min as int64) group by m.status order by m.status"
	if code := runQuery([]string{"--data-dir", dir, "--format", "json", "--param", "min=200", q}, &out, &errb); code != 0 {
		t.Fatalf("query: %d %s", code, errb.String())
	}
	var got struct{ Result []map[string]any }
	if err := json.Unmarshal(out.Bytes(), &got); err != nil {
		t.Fatalf("%v: %s", err, out.String())
	}
	if len(got.Result) != 2 || got.Result[0]["n"] != float64(45) || got.Result[1]["n"] != float64(5) || got.Result[1]["status"] != float64(500) {
		t.Fatalf("query result %s", out.String())
	}
	out.Reset()
	errb.Reset()
	if code := runQuery([]string{"--data-dir", dir, "select count(*) as n from `app.logs`"}, &out, &errb); code != 0 || !strings.Contains(out.String(), "50") || !strings.HasPrefix(out.String(), "n") {
		t.Fatalf("table query: %d %q %q", code, out.String(), errb.String())
	}
	errb.Reset()
	if code := runQuery([]string{"--data-dir", dir, "select id from `no.such`"}, &out, &errb); code != 1 || !strings.Contains(errb.String(), "no.such") {
		t.Fatalf("unknown table: %d %q", code, errb.String())
	}
	errb.Reset()
	if code := runQuery([]string{"--data-dir", dir, "--query-memory", "1KiB", "select id, event_message from `app.logs` order by id"}, &out, &errb); code != 1 ||
		!strings.Contains(errb.String(), "the limit of one query (1KiB, set by --query-memory)") {
		t.Fatalf("past --query-memory: %d %q", code, errb.String())
	}

	out.Reset()
	if code := runFsck([]string{"--data-dir", dir}, &out, &errb); code != 0 || !strings.Contains(out.String(), "app.logs") || !strings.HasSuffix(out.String(), "ok\n") {
		t.Fatalf("fsck beside a running server: %d %q %q", code, out.String(), errb.String())
	}

	if err := r.stop(); err != nil { // shutdown flushes the head to a segment
		t.Fatal(err)
	}
	var segs []string
	filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if err == nil && filepath.Ext(p) == ".seg" {
			segs = append(segs, p)
		}
		return nil
	})
	if len(segs) == 0 {
		t.Fatal("no segment after shutdown")
	}
	out.Reset()
	if code := runFsck([]string{"--data-dir", dir}, &out, &errb); code != 0 {
		t.Fatalf("fsck after shutdown: %d %q", code, out.String())
	}
	b, err := os.ReadFile(segs[0])
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)/2] ^= 0xff
	if err := os.WriteFile(segs[0], b, 0o644); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	if code := runFsck([]string{"--data-dir", dir}, &out, &errb); code != 1 || !strings.Contains(out.String(), "damaged") {
		t.Fatalf("fsck of a damaged segment: %d %q", code, out.String())
	}
	if code := runFsck([]string{"--data-dir", filepath.Join(dir, "missing")}, &out, &errb); code != 2 {
		t.Fatalf("fsck of a missing directory: %d", code)
	}
}

func itoa(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}

// TestQueryNestedUnnestThroughSortedCTE: `sediment query` over a CTE with
// an ORDER BY, read through two nested UNNESTs of an array of records,
// once panicked (issue 13). It answers the rows, in both table and JSON
// form, with the events in the write-ahead log and after a flush.
func TestQueryNestedUnnestThroughSortedCTE(t *testing.T) {
	dir := t.TempDir()
	r := start(t, serveConfig{DataDir: dir, PrivateToken: "k"})
	r.mustDo("POST", "/api/sources", "k", `{"name":"storage"}`, 201)
	r.mustDo("POST", "/api/logs?source_name=storage", "k", `[
		{"message":"a","timestamp":"2025-07-10T12:00:01Z","metadata":{"level":"info","context":[{"host":"h1","pid":1}]}},
		{"message":"b","timestamp":"2025-07-10T12:00:02Z","metadata":{"level":"warn","context":[{"host":"h1","pid":1},{"host":"h2","pid":7}]}},
		{"message":"c","timestamp":"2025-07-10T12:00:03Z"}]`, 200)
	q := "with s as (select t.timestamp, t.event_message, t.metadata from `storage` as t order by t.timestamp desc) " +
		"select event_message, c.host, c.pid from s cross join unnest(metadata) as m cross join unnest(m.context) as c order by event_message, c.pid"
	want := `{"result":[{"event_message":"a","host":"h1","pid":1},{"event_message":"b","host":"h1","pid":1},{"event_message":"b","host":"h2","pid":7}]}` + "\n"
	check := func(stage string) {
		t.Helper()
		var out, errb bytes.Buffer
		if code := runQuery([]string{"--data-dir", dir, "--format", "json", q}, &out, &errb); code != 0 || out.String() != want {
			t.Fatalf("%s: %d %s %s", stage, code, out.String(), errb.String())
		}
		out.Reset()
		if code := runQuery([]string{"--data-dir", dir, q}, &out, &errb); code != 0 || !strings.Contains(out.String(), "h2") {
			t.Fatalf("%s, table: %d %s %s", stage, code, out.String(), errb.String())
		}
	}
	check("in the log")
	if err := r.stop(); err != nil { // flushes to a segment
		t.Fatal(err)
	}
	check("flushed")
}
