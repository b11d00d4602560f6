package httpapi

import (
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	json "github.com/goccy/go-json"

	"github.com/sediment/sediment/catalog"
	"github.com/sediment/sediment/engine"
)

// TestSnapshotRestore: POST /api/admin/snapshot while the server runs
// writes a snapshot that, opened as a data directory, holds every event
// acknowledged before the request (flushed or not), none after it, the
// catalog, and the extra files; restoring is starting on it.
func TestSnapshotRestore(t *testing.T) {
	snaps := filepath.Join(t.TempDir(), "snapshots")
	keysFile := filepath.Join(t.TempDir(), "generated-keys.json")
	if err := os.WriteFile(keysFile, []byte(`{"private_access_token":"x"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	ts := startServer(t, serverConfig{opts: Options{SnapshotDir: snaps, SnapshotFiles: []string{keysFile, "/nonexistent/file"}, Version: "v1"}})
	priv := withKey(privKey, jsonCT...)
	ts.do("POST", "/api/sources", []byte(`{"name":"app.logs"}`), priv...).expect(t, 201, "")
	acked := map[string][]string{}
	send := func(source string, n int, tag string) {
		for i := range n {
			msg := fmt.Sprintf("%s %d", tag, i)
			ts.do("POST", "/api/logs?source_name="+source, []byte(`{"message":"`+msg+`","metadata":{"i":`+fmt.Sprint(i)+`}}`), withKey(pubKey, jsonCT...)...).expect(t, 200, logged)
			acked[source] = append(acked[source], msg)
		}
	}
	send("app.logs", 30, "flushed")
	send("postgres.logs", 5, "flushed")
	for _, sh := range ts.eng.Shards() {
		if err := sh.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	send("app.logs", 20, "in the head")
	send("gotrue.logs.prod", 3, "in the head")

	for _, key := range []string{pubKey, queryKey, ""} {
		ts.do("POST", "/api/admin/snapshot", nil, withKey(key)...).expect(t, 401, `{"error":"Unauthorized"}`)
	}
	ts.do("POST", "/api/admin/snapshot?name=../escape", nil, priv...).expect(t, 400, "")
	ts.do("POST", "/api/admin/snapshot?fetch_evicted=maybe", nil, priv...).expect(t, 400, `{"error":"fetch_evicted must be true or false"}`)
	// fetch_evicted changes nothing on a node with no evicted segment.
	res := ts.do("POST", "/api/admin/snapshot?fetch_evicted=true", []byte(`{"name":"nightly-1"}`), priv...)
	res.expect(t, 201, "")
	var info SnapshotInfo
	if err := json.Unmarshal([]byte(res.body), &info); err != nil {
		t.Fatal(err)
	}
	// Every shard is in the snapshot: the three sources written to, and
	// the seeded edge source, whose shard opens at start to take its sort key.
	if info.Path != filepath.Join(snaps, "nightly-1") || info.Sources != len(ts.eng.Shards()) || info.Segments < 2 || info.Segments+info.WALFiles < 4 || info.Version != "v1" || info.SegmentsFetched != 0 {
		t.Fatalf("snapshot answer %s", res.body)
	}
	ts.do("POST", "/api/admin/snapshot", []byte(`{"name":"nightly-1"}`), priv...).expect(t, 409, "")
	send("app.logs", 10, "after the snapshot")
	ts.do("POST", "/api/sources", []byte(`{"name":"created.after"}`), priv...).expect(t, 201, "")
	ts.stop()

	// Restore: the snapshot is a data directory.
	dir := info.Path
	if _, err := os.Stat(dir + ".partial"); !os.IsNotExist(err) {
		t.Fatalf("partial directory left: %v", err)
	}
	if data, err := os.ReadFile(filepath.Join(dir, "generated-keys.json")); err != nil || string(data) != `{"private_access_token":"x"}` {
		t.Fatalf("extra file: %q %v", data, err)
	}
	if st, _ := os.Stat(filepath.Join(dir, "generated-keys.json")); st.Mode().Perm() != 0o600 {
		t.Fatalf("extra file mode %v", st.Mode().Perm())
	}
	eng, err := engine.Open(dir, &engine.Options{DisableBackground: true})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	if err := eng.Check(); err != nil {
		t.Fatal(err)
	}
	cat, err := catalog.Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	if cat.SourceByName("created.after") != nil || cat.SourceByName("app.logs") == nil || cat.Authenticate(privKey) == nil {
		t.Fatal("the snapshot's catalog is not the catalog at the snapshot")
	}
	for _, name := range []string{"app.logs", "postgres.logs", "gotrue.logs.prod"} {
		var got []string
		for _, ev := range readEvents(t, eng, cat.SourceByName(name).Token) {
			got = append(got, ev["event_message"].(string))
		}
		want := acked[name]
		if name == "app.logs" {
			want = want[:50] // not the events sent after the snapshot
		}
		sort.Strings(got)
		sort.Strings(want)
		if strings.Join(got, "|") != strings.Join(want, "|") {
			t.Fatalf("%s restored %d events %q, want %d %q", name, len(got), got, len(want), want)
		}
	}
	for _, sh := range eng.Shards() {
		if cat.SourceByToken(sh.ID()) == nil {
			t.Fatalf("shard %s of no source in the snapshot", sh.ID())
		}
	}
}

// TestSnapshotNotConfigured: without a snapshot directory the route says
// so.
func TestSnapshotNotConfigured(t *testing.T) {
	ts := startServer(t, serverConfig{})
	ts.do("POST", "/api/admin/snapshot", nil, withKey(privKey)...).expect(t, 503, "")
}

// TestUnknownSourceLogged: ingest into a source that does not exist keeps
// Logflare's 401 body, and the server logs why at info level, once per
// name.
func TestUnknownSourceLogged(t *testing.T) {
	var logs syncBuffer
	ts := startServer(t, serverConfig{opts: Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))}})
	for range 3 {
		ts.do("POST", "/api/logs?source_name=not.created", []byte(`{"message":"x"}`), withKey(pubKey, jsonCT...)...).expect(t, 401, `{"error":"Unauthorized"}`)
	}
	ts.do("POST", "/api/logs", []byte(`{"message":"x","source_name":"other.one"}`), withKey(pubKey, jsonCT...)...).expect(t, 401, `{"error":"Unauthorized"}`)
	ts.do("POST", "/api/logs", []byte(`{"message":"x"}`), withKey(pubKey, jsonCT...)...).expect(t, 401, `{"error":"Unauthorized"}`)
	out := logs.String()
	if n := strings.Count(out, "source_name=not.created"); n != 1 {
		t.Fatalf("not.created logged %d times:\n%s", n, out)
	}
	if !strings.Contains(out, "level=INFO") || !strings.Contains(out, "POST /api/sources") || !strings.Contains(out, "source_name=other.one") ||
		!strings.Contains(out, "names no source") {
		t.Fatalf("log:\n%s", out)
	}

	// The names remembered are bounded.
	var u unknownSourceLog
	for i := range maxUnknownSourcesLogged + 10 {
		u.first(fmt.Sprint(i))
	}
	if len(u.seen) != maxUnknownSourcesLogged || u.first("new") {
		t.Fatalf("%d names remembered", len(u.seen))
	}
}
