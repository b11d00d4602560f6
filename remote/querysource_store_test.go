package remote

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/sediment/sediment/engine"
	"github.com/sediment/sediment/internal/vec"
	"github.com/sediment/sediment/internal/vfs"
	"github.com/sediment/sediment/objstore"
	"github.com/sediment/sediment/sql/scan"
)

// newQueryNode is a query engine over store asking nodes, its cache in
// dir/cache bounded as given.
func newQueryNode(t *testing.T, store objstore.Store, fs vfs.FS, dir string, cacheOpts objstore.CacheOptions, opts QueryOptions, nodes ...*ingestNode) (*QuerySource, *engine.Engine) {
	t.Helper()
	cacheOpts.FS, cacheOpts.Dir = fs, dir+"/cache"
	cache, err := objstore.OpenCache(store, cacheOpts)
	if err != nil {
		t.Fatal(err)
	}
	opts.Store, opts.Cache, opts.ClusterKey = store, cache, "secret"
	for _, n := range nodes {
		opts.IngestNodes = append(opts.IngestNodes, n.srv.URL)
	}
	qs, err := NewQuerySource(opts)
	if err != nil {
		t.Fatal(err)
	}
	q, err := engine.Open(dir+"/data", &engine.Options{FS: fs, DisableBackground: true, External: qs})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { q.Close(); qs.Close(); cache.Close() })
	return qs, q
}

// TestStaleManifestLosesNothing: a query node serving snapshots from a
// manifest read an hour ago (its staleness bound) still answers with
// every acknowledged event exactly once, after the ingest nodes published
// new segments and a compaction that delisted what the old manifest
// lists; a burst of snapshots downloads the manifest once.
func TestStaleManifestLosesNothing(t *testing.T) {
	store := objstore.NewMemStore(nil)
	fs := vfs.NewMemFS()
	a := newIngestNode(t, "a", store, fs)
	b := newIngestNode(t, "b", store, fs)
	a.append(t, 0, 100, true)
	a.append(t, 100, 100, true)
	b.append(t, 0, 50, true)
	a.drain(t)
	b.drain(t)
	qs, q := newQueryNode(t, store, fs, "/q", objstore.CacheOptions{}, QueryOptions{ManifestMaxAge: time.Hour}, a, b)
	if ids, warnings := queryAll(t, q); len(ids) != 250 || len(warnings) != 0 {
		t.Fatalf("first answer: %d events (want 250), warnings %v", len(ids), warnings)
	}
	gets := store.Stats().Gets
	for range 20 {
		sh, _ := q.Shard(source)
		sh.Snapshot().Release()
	}
	if st := qs.Stats().Manifests; st.Downloads != 1 || st.Hits != 20 {
		t.Fatalf("manifest reads after a burst of 20 snapshots: %+v", st)
	}
	if store.Stats().Gets != gets {
		t.Fatalf("the burst made %d GETs", store.Stats().Gets-gets)
	}

	// The ingest nodes move on: a compacts its two listed segments (the
	// manifest delists them), both publish new segments, and hold heads.
	if n, err := a.shard.Compact(); err != nil || n != 2 {
		t.Fatalf("compact: %d %v", n, err)
	}
	a.append(t, 200, 30, true)
	b.append(t, 50, 20, true)
	a.drain(t)
	b.drain(t)
	a.append(t, 230, 5, false)
	b.append(t, 70, 7, false)
	ids, warnings := queryAll(t, q)
	if len(ids) != 235+77 || len(warnings) != 0 {
		t.Fatalf("with a stale manifest: %d events (want 312), warnings %v", len(ids), warnings)
	}
	if st := qs.Stats().Manifests; st.Downloads != 1 {
		t.Fatalf("the manifest was read again within its age: %+v", st)
	}

	// Past the age bound (0 here), a read revalidates: 304 when nothing
	// changed.
	qs0, q0 := newQueryNode(t, store, fs, "/q0", objstore.CacheOptions{}, QueryOptions{ManifestMaxAge: -1}, a, b)
	for range 3 {
		if ids, warnings := queryAll(t, q0); len(ids) != 312 || len(warnings) != 0 {
			t.Fatalf("revalidating node: %d events, warnings %v", len(ids), warnings)
		}
	}
	if st := qs0.Stats().Manifests; st.Downloads != 1 || st.NotModified != 2 || st.Hits != 0 {
		t.Fatalf("revalidated reads: %+v", st)
	}
}

// queryMessages reads every event_message of the source, returning the
// count, the warnings, and the query's error.
func queryMessages(t *testing.T, eng *engine.Engine, withWarnings bool) (int, []string, error) {
	t.Helper()
	sh, err := eng.Shard(source)
	if err != nil {
		t.Fatal(err)
	}
	sn := sh.Snapshot()
	defer sn.Release()
	w := &scan.Warnings{}
	ctx := context.Background()
	if withWarnings {
		ctx = scan.WithWarnings(ctx, w)
	}
	req := scan.Request{TimeMin: scan.MinTime, TimeMax: scan.MaxTime, Columns: []scan.Column{{Path: "event_message", Type: vec.String}}}
	sc, err := sn.Table("t").Open(ctx, &req)
	if err != nil {
		return 0, nil, err
	}
	defer sc.Close()
	n := 0
	for _, u := range sc.Units() {
		if err := u.Read(ctx, func(b *vec.Batch) error { b.ForEach(func(int) { n++ }); return nil }); err != nil {
			return n, w.List(), err
		}
	}
	return n, w.List(), nil
}

// TestStoreDownIsNotDamage: a query node whose store stops answering
// while it reads a segment's pages answers without that segment, with a
// warning saying the object store is unreachable (or fails with a
// PartialError when the query has no place for warnings), never as
// quarantined data; once the store is back the same node answers in full.
func TestStoreDownIsNotDamage(t *testing.T) {
	mem := objstore.NewMemStore(nil)
	fs := vfs.NewMemFS()
	a := newIngestNode(t, "a", mem, fs)
	for i := range 4 {
		a.append(t, i*500, 500, true)
	}
	a.drain(t)
	// A cache of 256-byte chunks: the first query fetches the footers, the
	// metadata and the id column; the messages stay in the store.
	qs, q := newQueryNode(t, mem, fs, "/q", objstore.CacheOptions{ChunkBytes: 256}, QueryOptions{ManifestMaxAge: time.Hour}, a)
	if ids, warnings := queryAll(t, q); len(ids) != 2000 || len(warnings) != 0 {
		t.Fatalf("first answer: %d events, warnings %v", len(ids), warnings)
	}

	mem.SetDown(true)
	n, warnings, err := queryMessages(t, q, true)
	if err != nil {
		t.Fatalf("with the store down: %v", err)
	}
	if n >= 2000 || len(warnings) == 0 {
		t.Fatalf("with the store down: %d events, warnings %v", n, warnings)
	}
	for _, w := range warnings {
		if !strings.Contains(w, "the object store is unreachable") || strings.Contains(w, "quarantine") {
			t.Fatalf("warning %q", w)
		}
	}
	_, _, err = queryMessages(t, q, false)
	var pe *engine.PartialError
	if !errors.As(err, &pe) || !strings.Contains(err.Error(), "the object store is unreachable") {
		t.Fatalf("without warnings: %v (%T)", err, err)
	}

	mem.SetDown(false)
	if n, warnings, err := queryMessages(t, q, true); err != nil || n != 2000 || len(warnings) != 0 {
		t.Fatalf("store back: %d events, warnings %v, %v", n, warnings, err)
	}
	if st := qs.Stats(); st.ManifestFailures != 0 {
		t.Fatalf("stats %+v", st)
	}
}
