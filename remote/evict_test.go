package remote

import (
	"context"
	"errors"
	iofs "io/fs"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sediment/sediment/engine"
	"github.com/sediment/sediment/event"
	"github.com/sediment/sediment/internal/miniotest"
	"github.com/sediment/sediment/internal/vfs"
	"github.com/sediment/sediment/objstore"
	"github.com/sediment/sediment/sql/scan"
)

// segFiles lists the shard's segment files and stubs in dataDir.
func segFiles(t *testing.T, fs vfs.FS, dataDir string) (segs, stubs []string) {
	t.Helper()
	names, err := fs.List(filepath.Join(dataDir, "sources", source, "segments"))
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range names {
		switch {
		case strings.HasSuffix(n, ".seg"):
			segs = append(segs, n)
		case strings.HasSuffix(n, ".remote"):
			stubs = append(stubs, n)
		}
	}
	return segs, stubs
}

// wantAll checks that a query of the rig's engine answers want events
// with no warning.
func (r *rig) wantAll(want int) {
	r.t.Helper()
	ids, warns := queryAll(r.t, r.eng)
	if len(ids) != want || len(warns) != 0 {
		r.t.Fatalf("answered %d events (want %d), warnings %q", len(ids), want, warns)
	}
}

// evictTo sets the bound of local segment files and runs a pass.
func (r *rig) evictTo(limit int64) int {
	r.t.Helper()
	r.rem.evict.limit.Store(limit)
	n, _, err := r.rem.EvictOnce(context.Background(), r.eng)
	if err != nil {
		r.t.Fatal(err)
	}
	return n
}

// testEviction: past the bound, the listed segments of the oldest events
// give up their local file; every event is still answered, through the
// cache; a restart opens the evicted segments from the store, and its
// reconciliation delists nothing; compaction and retention work on
// evicted segments and publish their changes.
func testEviction(t *testing.T, store objstore.Store, fs vfs.FS, dataDir, cacheDir string) {
	r := newRig(t, store, fs, dataDir, cacheDir, 1<<20)
	for i := range 8 {
		r.ingest(i*300, 300)
	}
	r.drain()
	all, total := r.shard.LocalSegments()
	limit := total / 3
	n := r.evictTo(limit)
	_, left := r.shard.LocalSegments()
	if n == 0 || left > limit {
		t.Fatalf("evicted %d segments: %d local bytes left, bound %d", n, left, limit)
	}
	segs, stubs := segFiles(t, fs, dataDir)
	if len(segs) != 8-n || len(stubs) != n {
		t.Fatalf("%d segment files and %d stubs after evicting %d of 8", len(segs), len(stubs), n)
	}
	kept, _ := r.shard.LocalSegments()
	for _, k := range kept {
		for _, a := range all {
			if !containsID(kept, a.ID) && a.MaxTime > k.MaxTime {
				t.Fatalf("evicted segment %x (events to %d) while keeping %x (to %d): the newest stay", a.ID, a.MaxTime, k.ID, k.MaxTime)
			}
		}
	}
	r.wantAll(2400)
	gen := r.manifest().Generation

	// A restart opens the evicted segments from the store; reconciling
	// delists nothing.
	r.eng.Close()
	r.rem.Close()
	r = newRig(t, store, fs, dataDir, cacheDir, 1<<20)
	r.wantAll(2400)
	r.wantSnapshotStandsAlone(fs, dataDir, filepath.Join(filepath.Dir(dataDir), "snapshot"), 2400)
	r.rem.Reconcile(r.shard, false)
	r.drain()
	if m := r.manifest(); m.Generation != gen || len(m.Segments) != 8 || liveRows(m) != 2400 {
		t.Fatalf("reconcile after a restart changed the manifest: generation %d -> %d, %d segments, %d rows", gen, m.Generation, len(m.Segments), liveRows(m))
	}

	// Compaction reads evicted inputs through the cache.
	if c, err := r.shard.Compact(); err != nil || c == 0 {
		t.Fatalf("compact: %d, %v", c, err)
	}
	r.drain()
	r.wantAll(2400)
	if m := r.manifest(); liveRows(m) != 2400 || len(m.Segments) >= 8 {
		t.Fatalf("after compaction the manifest lists %d segments, %d rows", len(m.Segments), liveRows(m))
	}
	// Retention rewrites an evicted segment without its expired events,
	// and the store's manifest follows.
	r.evictTo(1)
	if _, stubs := segFiles(t, fs, dataDir); len(stubs) == 0 {
		t.Fatal("nothing evicted with a bound of one byte")
	}
	r.shard.SetRetentionDays(1)
	if _, err := r.shard.ApplyRetention(); err != nil {
		t.Fatal(err)
	}
	r.drain()
	r.wantAll(1200)
	if m := r.manifest(); liveRows(m) != 1200 {
		t.Fatalf("after retention the manifest lists %d rows", liveRows(m))
	}
	if st := r.rem.Stats(); st.Pending != 0 || st.Failures != 0 {
		t.Fatalf("stats %+v", st)
	}
}

// wantSnapshotStandsAlone takes a snapshot of the rig's engine with its
// evicted segments fetched from the store, and checks that an engine with
// no store opens it whole: want events, no warning, nothing damaged.
func (r *rig) wantSnapshotStandsAlone(fs vfs.FS, dataDir, snapDir string, want int) {
	r.t.Helper()
	_, stubs := segFiles(r.t, fs, dataDir)
	if len(stubs) == 0 {
		r.t.Fatal("no evicted segment to fetch")
	}
	st, err := r.eng.SnapshotToWith(snapDir, nil, engine.SnapshotDirOptions{FetchEvicted: true})
	if err != nil {
		r.t.Fatal(err)
	}
	if st.SegmentsFetched != len(stubs) {
		r.t.Fatalf("fetched %d segments, %d were evicted", st.SegmentsFetched, len(stubs))
	}
	alone, err := engine.Open(snapDir, &engine.Options{FS: fs, DisableBackground: true})
	if err != nil {
		r.t.Fatal(err)
	}
	defer alone.Close()
	if err := alone.Check(); err != nil {
		r.t.Fatal(err)
	}
	ids, warns := queryAll(r.t, alone)
	if len(ids) != want || len(warns) != 0 {
		r.t.Fatalf("the snapshot opened without a store answers %d events (want %d), warnings %q", len(ids), want, warns)
	}
}

func containsID(segs []engine.LocalSegment, id uint64) bool {
	for _, s := range segs {
		if s.ID == id {
			return true
		}
	}
	return false
}

func TestEvictionMem(t *testing.T) {
	testEviction(t, objstore.NewMemStore(nil), vfs.NewMemFS(), "/data", "/cache")
}

// TestEvictedSegmentsStoreAway: while the store cannot be reached, a
// query of evicted segments answers what it can with a warning that the
// store could not serve them (or fails with a PartialError where it has no
// place for warnings); nothing is recorded as damaged or quarantined. A
// restart with the store away leaves them pending, with the same
// warnings, and they open once it is back.
func TestEvictedSegmentsStoreAway(t *testing.T) {
	store := objstore.NewMemStore(nil)
	fs := vfs.NewMemFS()
	// A cache of one chunk: queries fetch from the store.
	r := newRig(t, store, fs, "/data", "/cache", 4200)
	store.SetDown(true)
	for i := range 4 {
		r.ingest(i*300, 300)
	}
	// A segment not yet listed is never evicted, whatever the bound.
	r.rem.evict.limit.Store(1)
	if n, _, _ := r.rem.EvictOnce(context.Background(), r.eng); n != 0 {
		t.Fatalf("evicted %d segments the store does not list", n)
	}
	if segs, _ := segFiles(t, fs, "/data"); len(segs) != 4 {
		t.Fatalf("%d segment files left of 4 unlisted", len(segs))
	}
	store.SetDown(false)
	r.drain()
	if n := r.evictTo(1); n != 4 {
		t.Fatalf("evicted %d of 4 listed segments", n)
	}
	store.SetDown(true)
	ids, warns := queryAll(t, r.eng)
	if len(ids) == 1200 || len(warns) == 0 || !strings.Contains(warns[0], "object store") {
		t.Fatalf("store away: %d events, warnings %q", len(ids), warns)
	}
	sn := r.shard.Snapshot()
	sc, err := sn.Table("t").Open(context.Background(), &scan.Request{TimeMin: scan.MinTime, TimeMax: scan.MaxTime})
	if err != nil {
		t.Fatal(err)
	}
	var pe *engine.PartialError
	failed := false
	for _, u := range sc.Units() {
		if _, err := u.Count(context.Background()); err != nil {
			if !errors.As(err, &pe) {
				t.Fatalf("a count without warnings failed with %v, want a PartialError", err)
			}
			failed = true
		}
	}
	sc.Close()
	sn.Release()
	if !failed {
		t.Fatal("a count without warnings succeeded with the store away")
	}
	noDamage := func() {
		t.Helper()
		names, _ := fs.List("/data/sources/src/segments")
		for _, n := range names {
			if strings.HasSuffix(n, ".dmg") || strings.HasSuffix(n, ".ixdmg") {
				t.Fatalf("store failures recorded as damage: %s", n)
			}
		}
		if q, _ := fs.List("/data/sources/src/quarantine"); len(q) != 0 {
			t.Fatalf("quarantine holds %v", q)
		}
	}
	noDamage()
	store.SetDown(false)
	r.wantAll(1200)

	// Restart while the store is away: the evicted segments are pending.
	r.eng.Close()
	r.rem.Close()
	store.SetDown(true)
	r = newRig(t, store, fs, "/data", "/cache", 4200)
	ids, warns = queryAll(t, r.eng)
	if len(ids) != 0 || len(warns) == 0 || !strings.Contains(warns[0], "object store") {
		t.Fatalf("restarted with the store away: %d events, warnings %q", len(ids), warns)
	}
	// Reconciling waits for the store; nothing is delisted meanwhile.
	r.rem.Reconcile(r.shard, false)
	store.SetDown(false)
	r.drain()
	if pending, err := r.shard.OpenRemoteSegments(context.Background()); err != nil || pending != 0 {
		t.Fatalf("pending %d, %v", pending, err)
	}
	r.wantAll(1200)
	if m := r.manifest(); len(m.Segments) != 4 || liveRows(m) != 1200 {
		t.Fatalf("manifest after the restart: %d segments, %d rows", len(m.Segments), liveRows(m))
	}
	noDamage()
}

// TestReplacementNodeAdopts: a node whose data directory is lost is
// replaced by one with the same node id on a new directory. It takes new
// events at once (their segments' ids never collide with its
// predecessor's), adopts the segments the store lists under its id, and
// answers every event; publishing goes on.
func TestReplacementNodeAdopts(t *testing.T) {
	store := objstore.NewMemStore(nil)
	old := newRig(t, store, vfs.NewMemFS(), "/data", "/cache", 1<<20)
	for i := range 3 {
		old.ingest(i*300, 300)
	}
	old.drain()
	old.eng.Close()
	old.rem.Close()

	fs := vfs.NewMemFS()
	r := newRigAt(t, store, fs, "/data", "/cache", 1<<20, old.now.Add(time.Hour))
	r.ingest(900, 300)
	r.drain() // before the fix: a collision with the old segment 0, retried forever
	r.rem.Reconcile(r.shard, true)
	r.drain()
	r.wantAll(1200)
	if err := r.rem.AdoptAll(context.Background(), r.eng); err != nil {
		t.Fatal(err)
	}
	r.wantAll(1200) // adopted once
	if st := r.rem.Stats(); st.Adopted != 3 {
		t.Fatalf("adopted %d segments, want 3", st.Adopted)
	}
	if m := r.manifest(); len(m.Segments) != 4 || liveRows(m) != 1200 {
		t.Fatalf("manifest: %d segments, %d rows", len(m.Segments), liveRows(m))
	}
	// Events only in the new directory's log survive a crash: the
	// adopted segments cover none of its log generations (their first
	// life's are another log).
	if err := r.shard.Append(context.Background(), []event.Event{{ID: "00000000-0000-4000-8000-0000000000ff", Timestamp: r.now.UnixMicro(),
		Message: "acknowledged, not flushed", HasMessage: true}}); err != nil {
		t.Fatal(err)
	}
	crashed := fs.CrashClone()
	r.rem.Close() // the crashed node publishes nothing more
	r.eng.Close()
	r = newRigAt(t, store, crashed, "/data", "/cache", 1<<20, r.now)
	r.wantAll(1201)
	// They are its segments now: compacted with the new one and published.
	if n, err := r.shard.Compact(); err != nil || n == 0 {
		t.Fatalf("compact: %d, %v", n, err)
	}
	r.drain()
	r.wantAll(1201)
	if m := r.manifest(); len(m.Segments) != 1 || liveRows(m) != 1200 {
		t.Fatalf("after compaction: %d segments, %d rows", len(m.Segments), liveRows(m))
	}
}

// TestAdoptAllCreatesShards: the replacement node has no directory for a
// source at all; AdoptAll creates its shard from the manifest.
func TestAdoptAllCreatesShards(t *testing.T) {
	store := objstore.NewMemStore(nil)
	old := newRig(t, store, vfs.NewMemFS(), "/data", "/cache", 1<<20)
	old.ingest(0, 300)
	old.drain()
	old.eng.Close()
	old.rem.Close()

	fs := vfs.NewMemFS()
	cache, err := objstore.OpenCache(store, objstore.CacheOptions{FS: fs, Dir: "/cache", ChunkBytes: 4096, MaxBytes: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	rem, err := New(Options{Store: store, Cache: cache, Node: "n1", FS: fs})
	if err != nil {
		t.Fatal(err)
	}
	defer rem.Close()
	eng, err := engine.Open("/data", &engine.Options{FS: fs, DisableBackground: true, Remote: rem})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	if len(eng.Shards()) != 0 {
		t.Fatal("a new data directory has shards")
	}
	if err := rem.AdoptAll(context.Background(), eng); err != nil {
		t.Fatal(err)
	}
	ids, warns := queryAll(t, eng)
	if len(ids) != 300 || len(warns) != 0 {
		t.Fatalf("after adopting: %d events, warnings %q", len(ids), warns)
	}
}

// TestEvictionMinIO ingests more than the bound of local segment files
// into a node publishing to MinIO: the data directory's segment files and
// the cache stay within --cache-size's worth (measured on disk), every
// event is answered, compaction and retention work, a restart keeps
// everything.
func TestEvictionMinIO(t *testing.T) {
	srv := miniotest.Start(t)
	dir := t.TempDir()
	dataDir, cacheDir := filepath.Join(dir, "data"), filepath.Join(dir, "cache")
	store := minioStore(t, srv)
	const cacheSize = 96 << 10 // --cache-size: half for local segments, half for the cache
	r := newRig(t, store, vfs.OS, dataDir, cacheDir, cacheSize/2)
	for i := range 12 {
		r.ingest(i*1000, 1000)
		r.drain()
		r.evictTo(cacheSize / 2)
	}
	onDisk := dirBytes(t, filepath.Join(dataDir, "sources", source, "segments")) + dirBytes(t, cacheDir)
	published := r.rem.Stats().UploadedBytes
	t.Logf("%d bytes published, %d on disk (segment files and cache), bound %d", published, onDisk, cacheSize)
	if onDisk > cacheSize || published <= cacheSize {
		t.Fatalf("%d bytes on disk for %d published, bound %d", onDisk, published, cacheSize)
	}
	r.wantAll(12000)
	onDisk = dirBytes(t, filepath.Join(dataDir, "sources", source, "segments")) + dirBytes(t, cacheDir)
	if onDisk > cacheSize+4096 { // stubs are a few bytes each
		t.Fatalf("%d bytes on disk after a full scan, bound %d", onDisk, cacheSize)
	}

	r.eng.Close()
	r.rem.Close()
	r = newRig(t, store, vfs.OS, dataDir, cacheDir, cacheSize/2)
	r.rem.Reconcile(r.shard, false)
	r.drain()
	r.wantAll(12000)
	r.wantSnapshotStandsAlone(vfs.OS, dataDir, filepath.Join(dir, "snapshot"), 12000)
	if m := r.manifest(); liveRows(m) != 12000 {
		t.Fatalf("after a restart the manifest lists %d rows", liveRows(m))
	}
	if n, err := r.shard.Compact(); err != nil || n == 0 {
		t.Fatalf("compact: %d, %v", n, err)
	}
	r.drain()
	r.evictTo(cacheSize / 2)
	r.wantAll(12000)
	r.shard.SetRetentionDays(1)
	if _, err := r.shard.ApplyRetention(); err != nil {
		t.Fatal(err)
	}
	r.drain()
	r.wantAll(6000)
	if m := r.manifest(); liveRows(m) != 6000 {
		t.Fatalf("after retention the manifest lists %d rows", liveRows(m))
	}
}

// dirBytes sums the sizes of the files under dir.
func dirBytes(t *testing.T, dir string) int64 {
	t.Helper()
	var n int64
	err := filepath.WalkDir(dir, func(p string, d iofs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			info, err := d.Info()
			if err != nil {
				return err
			}
			n += info.Size()
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}
