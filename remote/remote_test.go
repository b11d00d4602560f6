package remote

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sediment/sediment/engine"
	"github.com/sediment/sediment/event"
	"github.com/sediment/sediment/internal/miniotest"
	"github.com/sediment/sediment/internal/vec"
	"github.com/sediment/sediment/internal/vfs"
	"github.com/sediment/sediment/objstore"
	"github.com/sediment/sediment/segment"
)

const source = "src"

var fastUpdates = &objstore.UpdateOptions{BackoffMin: time.Millisecond, BackoffMax: 5 * time.Millisecond}

// rig is an engine publishing to a store through Segments.
type rig struct {
	t     *testing.T
	fs    vfs.FS
	store objstore.Store
	cache *objstore.Cache
	rem   *Segments
	eng   *engine.Engine
	shard *engine.Shard
	now   time.Time
}

func newRig(t *testing.T, store objstore.Store, fs vfs.FS, dataDir, cacheDir string, cacheBytes int64) *rig {
	t.Helper()
	return newRigAt(t, store, fs, dataDir, cacheDir, cacheBytes, time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
}

// newRigAt is newRig with the engine's clock at now.
func newRigAt(t *testing.T, store objstore.Store, fs vfs.FS, dataDir, cacheDir string, cacheBytes int64, now time.Time) *rig {
	t.Helper()
	r := &rig{t: t, fs: fs, store: store, now: now}
	var err error
	r.cache, err = objstore.OpenCache(store, objstore.CacheOptions{FS: fs, Dir: cacheDir, ChunkBytes: 4096, MaxBytes: cacheBytes})
	if err != nil {
		t.Fatal(err)
	}
	r.rem, err = New(Options{Store: store, Cache: r.cache, Node: "n1", FS: fs, RetryMin: time.Millisecond, RetryMax: 20 * time.Millisecond,
		Publish: &objstore.PublishOptions{Update: fastUpdates}})
	if err != nil {
		t.Fatal(err)
	}
	r.eng, err = engine.Open(dataDir, &engine.Options{FS: fs, DisableBackground: true, CompactionMinInputs: 3, BlockRows: 256,
		Remote: r.rem, Now: func() time.Time { return r.now }})
	if err != nil {
		t.Fatal(err)
	}
	if r.shard, err = r.eng.Shard(source); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		r.eng.Close()
		r.rem.Close()
	})
	return r
}

// ingest appends n events, every other one three days old, and flushes.
func (r *rig) ingest(from, n int) {
	r.t.Helper()
	var batch []event.Event
	for i := from; i < from+n; i++ {
		age := time.Hour
		if i%2 == 0 {
			age = 72 * time.Hour
		}
		batch = append(batch, event.Event{
			ID:         fmt.Sprintf("%08x-0000-4000-8000-%012x", i, i),
			Timestamp:  r.now.Add(-age).UnixMicro() + int64(i),
			Message:    fmt.Sprintf("GET /rest/v1/table%d?select=* 200 in %dms from client %d", i%17, i%93, i*7919%10007),
			HasMessage: true,
			Fields: event.ObjectValue(
				event.Member("project", event.StringValue([]string{"alpha", "bravo"}[i%2])),
				event.Member("status", event.IntValue(int64([]int{200, 404, 500}[i%3]))),
			),
		})
	}
	if err := r.shard.Append(context.Background(), batch); err != nil {
		r.t.Fatal(err)
	}
	if err := r.shard.Flush(); err != nil {
		r.t.Fatal(err)
	}
}

func (r *rig) drain() {
	r.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := r.rem.Drain(ctx); err != nil {
		r.t.Fatal(err)
	}
}

func (r *rig) manifest() *objstore.Manifest {
	r.t.Helper()
	m, _, err := objstore.ReadManifest(context.Background(), r.store, source)
	if err != nil {
		r.t.Fatal(err)
	}
	return m
}

func liveRows(m *objstore.Manifest) (rows int64) {
	for _, e := range m.Segments {
		rows += e.Rows
	}
	return rows
}

// compareWithLocal opens the remote copy of segment id through the cache
// and checks it reads as the local file does, and that opening it fetched
// only a part of it.
func (r *rig) compareWithLocal(dataDir string, id uint64) {
	r.t.Helper()
	ctx := context.Background()
	before := r.cache.Stats()
	f, err := r.rem.OpenSegment(ctx, source, id)
	if err != nil {
		r.t.Fatal(err)
	}
	rr, err := segment.Open(f, "remote.seg")
	if err != nil {
		r.t.Fatal(err)
	}
	defer rr.Close()
	size, _ := f.Size()
	opened := r.cache.Stats()
	if fetched := opened.FetchedBytes - before.FetchedBytes; fetched > size/2 && opened.Fetches > before.Fetches {
		r.t.Errorf("opening a segment of %d bytes fetched %d: want the header and footer only", size, fetched)
	}
	lf, err := r.fs.Open(filepath.Join(dataDir, "sources", source, "segments", fmt.Sprintf("%016x.seg", id)))
	if err != nil {
		r.t.Fatal(err)
	}
	lr, err := segment.Open(lf, "local.seg")
	if err != nil {
		r.t.Fatal(err)
	}
	defer lr.Close()
	lmin, lmax := lr.TimeRange()
	rmin, rmax := rr.TimeRange()
	if rr.Rows() != lr.Rows() || rr.NumBlocks() != lr.NumBlocks() || lmin != rmin || lmax != rmax || size != lr.Size() {
		r.t.Fatalf("remote copy: %d rows %d blocks; local %d rows %d blocks", rr.Rows(), rr.NumBlocks(), lr.Rows(), lr.NumBlocks())
	}
	// One column of the last block: fetched on demand, equal to local.
	b := rr.NumBlocks() - 1
	col := rr.Column("event_message", segment.TypeString)
	var rv, lv vec.Vector
	if err := rr.ReadColumnOnce(b, col, 0, int(rr.Block(b).Rows), &rv); err != nil {
		r.t.Fatal(err)
	}
	if err := lr.ReadColumnOnce(b, lr.Column("event_message", segment.TypeString), 0, int(lr.Block(b).Rows), &lv); err != nil {
		r.t.Fatal(err)
	}
	for i := 0; i < rv.Len; i++ {
		if rv.StringAt(i) != lv.StringAt(i) {
			r.t.Fatalf("row %d: remote %q, local %q", i, rv.StringAt(i), lv.StringAt(i))
		}
	}
	if st := r.cache.Stats(); rr.NumBlocks() > 2 && st.FetchedBytes-before.FetchedBytes >= size {
		r.t.Errorf("one column of one block fetched %d of %d bytes", st.FetchedBytes-before.FetchedBytes, size)
	}
	// Everything the reader checks (every unit's CRC) holds remotely.
	if err := rr.Check(); err != nil {
		r.t.Fatal(err)
	}
}

// testLifecycle: flushes, a compaction and retention, each reflected in
// the manifest after Drain; the remote copies read as the local files;
// garbage collection deletes what was delisted.
func testLifecycle(t *testing.T, store objstore.Store, fs vfs.FS, dataDir, cacheDir string) {
	ctx := context.Background()
	r := newRig(t, store, fs, dataDir, cacheDir, 64<<10)
	for i := range 3 {
		r.ingest(i*2000, 2000)
	}
	r.drain()
	m := r.manifest()
	if len(m.Segments) != 3 || liveRows(m) != 6000 {
		t.Fatalf("after three flushes the manifest lists %d segments, %d rows", len(m.Segments), liveRows(m))
	}
	flushed := m.Segments

	if n, err := r.shard.Compact(); err != nil || n != 3 {
		t.Fatalf("compact: %d %v", n, err)
	}
	r.drain()
	m = r.manifest()
	if len(m.Segments) != 1 || liveRows(m) != 6000 || len(m.Removed) != 3 {
		t.Fatalf("after compaction: live %+v, removed %+v", m.Segments, m.Removed)
	}
	merged := m.Segments[0]
	r.compareWithLocal(dataDir, merged.Seq())

	r.shard.SetRetentionDays(1)
	if n, err := r.shard.ApplyRetention(); err != nil || n != 1 {
		t.Fatalf("retention: %d %v", n, err)
	}
	r.drain()
	m = r.manifest()
	if len(m.Segments) != 1 || liveRows(m) != 3000 || len(m.Removed) != 4 || m.Find(merged.Name) != nil {
		t.Fatalf("after retention: live %+v, removed %d", m.Segments, len(m.Removed))
	}
	r.compareWithLocal(dataDir, m.Segments[0].Seq())
	if st := r.cache.Stats(); st.Bytes > 64<<10 {
		t.Fatalf("cache holds %d bytes, over its 64 KiB", st.Bytes)
	}

	// Garbage collection a grace period later deletes the delisted.
	res, err := objstore.CollectGarbage(ctx, store, source, &objstore.GCOptions{Now: func() time.Time { return time.Now().Add(2 * objstore.DefaultGrace) }})
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, e := range flushed {
		want = append(want, objstore.SegmentsPrefix(source)+e.Name)
	}
	want = append(want, objstore.SegmentsPrefix(source)+merged.Name)
	slices.Sort(want)
	slices.Sort(res.Deleted)
	if !slices.Equal(res.Deleted, want) || res.Live != 1 {
		t.Fatalf("collected %v (live %d), want %v", res.Deleted, res.Live, want)
	}
	if st := r.rem.Stats(); st.Uploaded != 5 || st.Failures != 0 || st.Pending != 0 {
		t.Fatalf("stats %+v", st)
	}
}

func TestLifecycleMem(t *testing.T) {
	testLifecycle(t, objstore.NewMemStore(nil), vfs.NewMemFS(), "/data", "/cache")
}

func TestLifecycleMinIO(t *testing.T) {
	srv := miniotest.Start(t)
	dir := t.TempDir()
	testLifecycle(t, minioStore(t, srv), vfs.OS, filepath.Join(dir, "data"), filepath.Join(dir, "cache"))
}

func minioStore(t testing.TB, srv *miniotest.Server) *objstore.S3 {
	t.Helper()
	cfg, err := objstore.ParseS3URL("s3://sediment-remote/" + t.Name())
	if err != nil {
		t.Fatal(err)
	}
	cfg.SetEndpointURL("http://" + srv.Endpoint)
	cfg.PathStyle = true
	cfg.AccessKey, cfg.SecretKey = miniotest.AccessKey, miniotest.SecretKey
	cfg.MaxRetries = 1
	s, err := objstore.OpenS3(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.CreateBucket(context.Background()); err != nil {
		t.Fatal(err)
	}
	return s
}

// TestStoreAwayThenBack: while the store is away, the engine goes on
// (flushes and compactions publish locally) and changes queue up, retried
// with backoff; segments replaced before they could be uploaded are never
// uploaded; when it is back, the manifest catches up in one consistent
// step.
func TestStoreAwayThenBack(t *testing.T) {
	store := objstore.NewMemStore(nil)
	r := newRig(t, store, vfs.NewMemFS(), "/data", "/cache", 1<<20)
	store.SetDown(true)
	for i := range 3 {
		r.ingest(i*300, 300)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	err := r.rem.Drain(ctx)
	cancel()
	if err == nil {
		t.Fatal("drained with the store away")
	}
	st := r.rem.Stats()
	if st.Pending != 3 || st.Failures == 0 || !errors.Is(st.LastError, objstore.ErrUnavailable) {
		t.Fatalf("store away: %+v", st)
	}
	if n, err := r.shard.Compact(); err != nil || n != 3 {
		t.Fatalf("compact with the store away: %d %v", n, err)
	}
	store.SetDown(false)
	r.drain()
	// Usually the three flushed segments are skipped (the compaction
	// replaced them before they could be uploaded); but a publisher whose
	// retry of the first took it before the compaction was queued may
	// upload it as the store comes back, and the compaction's publication
	// then delists it. Either way the manifest lists the merged segment
	// alone, and what it delisted is exactly what was uploaded before.
	m := r.manifest()
	st = r.rem.Stats()
	if len(m.Segments) != 1 || liveRows(m) != 900 || int64(len(m.Removed)) != st.Uploaded-1 {
		t.Fatalf("after the store came back: %+v (stats %+v)", m, st)
	}
	if st.Uploaded+st.Skipped != 4 || st.Skipped < 2 || st.LastError != nil {
		t.Fatalf("stats %+v, want four changes uploaded or skipped, the compaction's uploaded", st)
	}
	// The skipped segments' files were released and deleted.
	names, _ := r.fs.List("/data/sources/src/segments")
	if len(names) != 1 {
		t.Fatalf("local segments %v, want the compacted one only", names)
	}
}

// TestSegmentGoneBeforeUpload: a segment whose file is gone before it
// could be uploaded (set aside as damaged) is abandoned, counted, and does
// not block the changes after it.
func TestSegmentGoneBeforeUpload(t *testing.T) {
	store := objstore.NewMemStore(nil)
	r := newRig(t, store, vfs.NewMemFS(), "/data", "/cache", 1<<20)
	store.SetDown(true)
	r.ingest(0, 100)
	names, _ := r.fs.List("/data/sources/src/segments")
	if len(names) != 1 {
		t.Fatalf("segments %v", names)
	}
	if err := r.fs.Rename("/data/sources/src/segments/"+names[0], "/data/sources/src/"+names[0]); err != nil {
		t.Fatal(err)
	}
	r.ingest(100, 100)
	store.SetDown(false)
	r.drain()
	if st := r.rem.Stats(); st.Abandoned != 1 || st.Uploaded != 1 {
		t.Fatalf("stats %+v, want one abandoned and one uploaded", st)
	}
	if m := r.manifest(); len(m.Segments) != 1 || liveRows(m) != 100 {
		t.Fatalf("manifest %+v", m.Segments)
	}
}

// stallingStore stalls every write under one prefix until released.
type stallingStore struct {
	objstore.Store
	prefix  string
	release chan struct{}
}

func (s *stallingStore) Put(ctx context.Context, key string, body io.ReaderAt, size int64, opts objstore.PutOptions) (objstore.ObjectInfo, error) {
	if strings.HasPrefix(key, s.prefix) {
		select {
		case <-s.release:
		case <-ctx.Done():
			return objstore.ObjectInfo{}, ctx.Err()
		}
	}
	return s.Store.Put(ctx, key, body, size, opts)
}

// TestSlowSourceHoldsUpNoOther: while one source's upload hangs, other
// sources' segments are published; the hung one follows once it can.
func TestSlowSourceHoldsUpNoOther(t *testing.T) {
	store := &stallingStore{Store: objstore.NewMemStore(nil), prefix: objstore.SourcePrefix("slow"), release: make(chan struct{})}
	r := newRig(t, store, vfs.NewMemFS(), "/data", "/cache", 1<<20)
	slow, err := r.eng.Shard("slow")
	if err != nil {
		t.Fatal(err)
	}
	main := r.shard
	r.shard = slow
	r.ingest(0, 100) // queued first; its upload hangs
	r.shard = main
	r.ingest(100, 100)
	deadline := time.Now().Add(time.Minute)
	for liveRows(r.manifest()) != 100 {
		if time.Now().After(deadline) {
			t.Fatalf("source %s not published while another source's upload hangs: %+v", source, r.rem.Stats())
		}
		time.Sleep(5 * time.Millisecond)
	}
	if st := r.rem.Stats(); st.Pending != 1 {
		t.Fatalf("pending %d, want the hung one", st.Pending)
	}
	close(store.release)
	r.drain()
	m, _, err := objstore.ReadManifest(context.Background(), store, "slow")
	if err != nil || liveRows(m) != 100 {
		t.Fatalf("slow source after release: %v %v", m, err)
	}
}
