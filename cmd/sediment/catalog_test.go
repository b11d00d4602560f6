package main

import (
	"bytes"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sediment/sediment/catalog"
)

// TestDamagedCatalog: one flipped bit in an endpoint's SQL in catalog.json.
// The server refuses to start, naming the file and the recovery; fsck
// fails and says the same; `fsck --restore-catalog` (refused while a
// server runs) puts back the catalog before its last change, and the
// server starts on it with the endpoint's SQL intact.
func TestDamagedCatalog(t *testing.T) {
	dir := t.TempDir()
	cfg := serveConfig{DataDir: dir, PrivateToken: "k"}
	r := start(t, cfg)
	r.mustDo("POST", "/api/sources", "k", `{"name":"app.logs"}`, 201)
	r.mustDo("POST", "/api/endpoints", "k", `{"name":"mine","query":"select id from `+"`app.logs`"+` where event_message like '%error%'"}`, 201)
	r.mustDo("POST", "/api/logs?source_name=app.logs", "k", `{"message":"an error"}`, 200)
	r.mustDo("POST", "/api/endpoints", "k", `{"name":"last","query":"select 1 as one"}`, 201)

	var out, errb bytes.Buffer
	if code := runFsck([]string{"--data-dir", dir, "--restore-catalog"}, &out, &errb); code != 1 || !strings.Contains(errb.String(), "in use") {
		t.Fatalf("restore beside a running server: %d %q %q", code, out.String(), errb.String())
	}
	if err := r.stop(); err != nil {
		t.Fatal(err)
	}

	path := filepath.Join(dir, catalog.FileName)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	off := bytes.Index(data, []byte("like '%error%'"))
	data[off+6] ^= 0x04 // '%error%' -> '!error%'
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}

	_, err = startServer(serveConfig{DataDir: dir, Listen: "127.0.0.1:0", PrivateToken: "k"}, serveDeps{}, slog.New(slog.DiscardHandler))
	if err == nil {
		t.Fatal("the server started on a damaged catalog")
	}
	for _, want := range []string{path, "checksum mismatch", "--restore-catalog", catalog.PrevFileName} {
		if !strings.Contains(err.Error(), want) {
			t.Fatalf("start-up error does not say %q: %v", want, err)
		}
	}

	out.Reset()
	errb.Reset()
	if code := runFsck([]string{"--data-dir", dir}, &out, &errb); code != 1 || !strings.Contains(out.String(), "catalog: damaged") ||
		!strings.Contains(out.String(), "--restore-catalog") || !strings.Contains(out.String(), "(catalog unreadable)") {
		t.Fatalf("fsck of a damaged catalog: %d %q %q", code, out.String(), errb.String())
	}
	if data, _ := os.ReadFile(path); !bytes.Contains(data, []byte("'!error%'")) {
		t.Fatal("fsck without --restore-catalog changed the catalog")
	}

	out.Reset()
	errb.Reset()
	if code := runFsck([]string{"--data-dir", dir, "--restore-catalog"}, &out, &errb); code != 0 || !strings.Contains(out.String(), "catalog: restored") ||
		!strings.Contains(out.String(), ".damaged-") || !strings.HasSuffix(out.String(), "ok\n") {
		t.Fatalf("fsck --restore-catalog: %d %q %q", code, out.String(), errb.String())
	}

	r = start(t, cfg)
	ep := r.a.cat.EndpointByName("mine")
	if ep == nil || !strings.Contains(ep.Query, "like '%error%'") {
		t.Fatalf("endpoint after restore: %+v", ep)
	}
	if r.a.cat.EndpointByName("last") != nil {
		t.Fatal("the restored catalog should be the one before the last change")
	}
	if n := len(storedMessages(t, dir)); n != 1 {
		t.Fatalf("events of %d sources after restore", n)
	}
}

// TestFormat1CatalogUpgradedAtStart: a catalog.json written by the format 1
// writer (no checksum) is reported by fsck as such, loads, and is
// rewritten with a checksum when the server starts.
func TestFormat1CatalogUpgradedAtStart(t *testing.T) {
	dir := t.TempDir()
	v1, err := os.ReadFile("../../catalog/testdata/catalog-v1.json")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, catalog.FileName)
	if err := os.WriteFile(path, v1, 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	if code := runFsck([]string{"--data-dir", dir}, &out, &errb); code != 0 || !strings.Contains(out.String(), "format 1, without a checksum") {
		t.Fatalf("fsck of a format 1 catalog: %d %q %q", code, out.String(), errb.String())
	}
	if data, _ := os.ReadFile(path); !bytes.Equal(data, v1) {
		t.Fatal("fsck rewrote the catalog")
	}
	r := start(t, serveConfig{DataDir: dir, PrivateToken: "k"})
	if r.a.cat.SourceByName("my.app") == nil || r.a.cat.EndpointByName("errors") == nil {
		t.Fatal("format 1 catalog not loaded")
	}
	// (A request first: a shutdown right after the start can miss the
	// listener, which fasthttp only registers once Serve runs.)
	r.mustDo("GET", "/api/sources", "k", "", 200)
	if err := r.stop(); err != nil {
		t.Fatal(err)
	}
	cur, prev := catalog.CheckFiles(dir, nil)
	if !cur.OK() || cur.Format != catalog.FormatLatest || !prev.OK() {
		t.Fatalf("after start: %+v %+v", cur, prev)
	}
}
