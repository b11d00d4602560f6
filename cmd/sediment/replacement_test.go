package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/sediment/sediment/internal/miniotest"
)

// TestReplacementNodeMinIO: an ingest node's data directory is lost; a
// new node with the same --node-id on a new directory takes events at
// once, adopts the segments the store lists under that id (its answers
// count the predecessor's events and its own, each once), and publishes
// its own segments under new names; the adoption marker goes once done.
func TestReplacementNodeMinIO(t *testing.T) {
	srv := miniotest.Start(t)
	store := minioConfig(t, srv)
	store.NodeID = "ingest-1"
	r := startWith(t, serveConfig{DataDir: t.TempDir(), PrivateToken: "k", Store: store}, productionDeps())
	created := r.mustDo("POST", "/api/sources", "k", `{"name":"app"}`, 201)
	var src struct{ Token string }
	json.Unmarshal([]byte(created), &src)
	for i := range 3 {
		r.ingestN("app", i*100, 100)
		r.flushAll()
	}
	r.drain()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	err := r.a.shutdown(ctx)
	cancel()
	r.a = nil
	if err != nil {
		t.Fatal(err)
	}

	dir := t.TempDir() // the disk is lost: a new one
	r = startWith(t, serveConfig{DataDir: dir, PrivateToken: "k", Store: store}, productionDeps())
	r.ingestN("app", 300, 50)
	r.flushAll()
	<-r.a.objs.adoptDone
	r.drain()
	if n, warns := r.sqlCount("app"); n != 350 || len(warns) != 0 {
		t.Fatalf("the replacement counts %d events (want 350), warnings %q", n, warns)
	}
	if rows, segs := storeRows(t, store, src.Token); rows != 350 || segs != 4 {
		t.Fatalf("the store lists %d rows in %d segments, want 350 in 4", rows, segs)
	}
	if _, err := os.Stat(filepath.Join(dir, adoptFile)); !os.IsNotExist(err) {
		t.Fatalf("the adoption marker is still there: %v", err)
	}
	if st := r.a.objs.rem.Stats(); st.Adopted != 3 {
		t.Fatalf("adopted %d segments, want 3", st.Adopted)
	}
}
