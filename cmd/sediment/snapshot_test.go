package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
)

// TestSnapshotCommandOffline: on a data directory no server holds, the
// command writes the snapshot itself; it restores every event.
func TestSnapshotCommandOffline(t *testing.T) {
	dir := t.TempDir()
	r := start(t, serveConfig{DataDir: dir, PublicToken: "pub", PrivateToken: "priv"})
	r.mustDo("POST", "/api/sources", "priv", `{"name":"app"}`, 201)
	var acked []string
	for i := range 25 {
		msg := fmt.Sprintf("e%02d", i)
		r.mustDo("POST", "/api/logs?source_name=app", "pub", `{"message":"`+msg+`"}`, 200)
		acked = append(acked, msg)
	}
	src := r.a.cat.SourceByName("app")
	if err := r.stop(); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "backup")
	var stdout, stderr bytes.Buffer
	if code := snapshotCommand([]string{"--data-dir", dir, "--out", out}, func(string) string { return "" }, &stdout, &stderr); code != 0 {
		t.Fatalf("%d %s", code, stderr.String())
	}
	if !strings.HasPrefix(stdout.String(), out+" (1 sources") {
		t.Fatalf("output %q", stdout.String())
	}
	if got := storedMessages(t, out)[src.Token]; !reflect.DeepEqual(got, acked) {
		t.Fatalf("restored %q, want %q", got, acked)
	}
	// The restored directory serves.
	r = start(t, serveConfig{DataDir: out, PrivateToken: "priv"})
	r.mustDo("GET", "/api/sources/app", "priv", "", 200)
	if code := snapshotCommand([]string{"--data-dir", dir, "--out", out}, func(string) string { return "" }, io.Discard, io.Discard); code == 0 {
		t.Fatal("a snapshot over an existing directory")
	}
}

// TestSnapshotCommandOnline: on a data directory a server holds, the
// server writes the snapshot and the command moves it to --out; the
// server keeps serving. --url alone prints the server's path.
func TestSnapshotCommandOnline(t *testing.T) {
	dir := t.TempDir()
	r := start(t, serveConfig{DataDir: dir, SnapshotDir: filepath.Join(dir, "snapshots")})
	keys := mustKeys(t, dir)
	r.mustDo("POST", "/api/sources", keys.Private, `{"name":"app"}`, 201)
	var acked []string
	for i := range 15 {
		msg := fmt.Sprintf("e%02d", i)
		r.mustDo("POST", "/api/logs?source_name=app", keys.Public, `{"message":"`+msg+`"}`, 200)
		acked = append(acked, msg)
	}
	out := filepath.Join(t.TempDir(), "backup")
	var stdout, stderr bytes.Buffer
	// The key comes from the data directory's generated keys file.
	code := snapshotCommand([]string{"--data-dir", dir, "--out", out, "--url", r.base}, func(string) string { return "" }, &stdout, &stderr)
	if code != 0 {
		t.Fatalf("%d %s", code, stderr.String())
	}
	if !strings.Contains(stdout.String(), "written by the running server") {
		t.Fatalf("output %q", stdout.String())
	}
	r.mustDo("POST", "/api/logs?source_name=app", keys.Public, `{"message":"after"}`, 200)
	src := r.a.cat.SourceByName("app")
	got := storedMessages(t, out)[src.Token]
	sort.Strings(acked)
	if !reflect.DeepEqual(got, acked) {
		t.Fatalf("snapshot holds %q, want %q", got, acked)
	}
	if left, _ := os.ReadDir(filepath.Join(dir, "snapshots")); len(left) != 0 {
		t.Fatalf("left in the server's snapshot directory: %v", left)
	}

	stdout.Reset()
	env := map[string]string{"LOGFLARE_PRIVATE_ACCESS_TOKEN": keys.Private}
	if code := snapshotCommand([]string{"--url", r.base, "--name", "kept"}, func(k string) string { return env[k] }, &stdout, &stderr); code != 0 {
		t.Fatalf("%d %s", code, stderr.String())
	}
	if got := strings.TrimSpace(stdout.String()); got != filepath.Join(dir, "snapshots", "kept") {
		t.Fatalf("printed %q", got)
	}
	if code := snapshotCommand([]string{"--url", r.base, "--api-key", keys.Public}, func(string) string { return "" }, io.Discard, io.Discard); code != 1 {
		t.Fatalf("a public key got a snapshot: %d", code)
	}
	for _, args := range [][]string{nil, {"--data-dir", dir}, {"--out", out}} {
		if code := snapshotCommand(args, func(string) string { return "" }, io.Discard, io.Discard); code != 2 {
			t.Fatalf("%q: %d", args, code)
		}
	}
}
