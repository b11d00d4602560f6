package remote

import (
	"testing"

	"github.com/sediment/sediment/internal/vfs"
	"github.com/sediment/sediment/objstore"
)

// TestReconcileAfterRestart: changes still queued when the process stops
// (the store was away) are published at the next start by Reconcile, and
// this node's entries the engine no longer has (a compaction whose
// manifest update never happened) are delisted, so the manifest lists
// every event once.
func TestReconcileAfterRestart(t *testing.T) {
	store := objstore.NewMemStore(nil)
	fs := vfs.NewMemFS()
	r := newRig(t, store, fs, "/data", "/cache", 1<<20)
	for i := range 3 {
		r.ingest(i*300, 300)
	}
	r.drain() // three segments listed
	store.SetDown(true)
	if n, err := r.shard.Compact(); err != nil || n != 3 {
		t.Fatalf("compact: %d %v", n, err)
	}
	r.ingest(900, 300)
	if st := r.rem.Stats(); st.Pending == 0 {
		t.Fatalf("nothing pending with the store away: %+v", st)
	}
	// Stop: the queue is dropped, the engine keeps its files.
	r.eng.Close()
	r.rem.Close()
	store.SetDown(false)
	if m := r.manifest(); len(m.Segments) != 3 || liveRows(m) != 900 {
		t.Fatalf("before restart: %d segments, %d rows", len(m.Segments), liveRows(m))
	}

	r2 := newRig(t, store, fs, "/data", "/cache", 1<<20)
	r2.rem.Reconcile(r2.shard, false)
	r2.drain()
	m := r2.manifest()
	if len(m.Segments) != 2 || liveRows(m) != 1200 || len(m.Removed) != 3 {
		t.Fatalf("after reconcile: live %+v, removed %d", m.Segments, len(m.Removed))
	}
	if st := r2.rem.Stats(); st.Reconciled != 2 || st.Delisted != 3 {
		t.Fatalf("stats %+v, want two reconciled, three delisted", st)
	}
	// A second reconcile finds nothing to do.
	r2.rem.Reconcile(r2.shard, false)
	r2.drain()
	if m2 := r2.manifest(); m2.Generation != m.Generation {
		t.Fatalf("an idle reconcile changed the manifest: generation %d -> %d", m.Generation, m2.Generation)
	}
	// The held files were released: compacting and flushing still work.
	r2.ingest(1200, 300)
	r2.drain()
	if m := r2.manifest(); liveRows(m) != 1500 {
		t.Fatalf("after more ingest: %d rows", liveRows(m))
	}
}
