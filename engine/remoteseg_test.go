package engine

import (
	"bytes"
	"context"
	"errors"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sediment/sediment/internal/vfs"
	"github.com/sediment/sediment/sql/scan"
)

// copyingRemote keeps a copy of every segment it is told of, in memory,
// and serves the copies it lists.
type copyingRemote struct {
	fs     vfs.FS
	mu     sync.Mutex
	copies map[uint64][]byte
	listed map[uint64]bool
	down   bool
}

func (c *copyingRemote) SegmentsReplaced(shard string, added *RemoteSegment, removed []uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if added != nil {
		b, err := vfs.ReadFile(c.fs, added.Path)
		if err == nil {
			c.copies[added.ID] = b
		}
		added.Done()
	}
	for _, id := range removed {
		delete(c.listed, id)
	}
}

func (c *copyingRemote) OpenSegment(ctx context.Context, shard string, id uint64) (vfs.File, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.down {
		return nil, errors.New("store unreachable")
	}
	if !c.listed[id] {
		return nil, errors.New("not listed")
	}
	return &memFile{r: bytes.NewReader(c.copies[id]), c: c}, nil
}

// memFile reads a copy; it fails while the remote is down.
type memFile struct {
	vfs.File
	r *bytes.Reader
	c *copyingRemote
}

func (f *memFile) ReadAt(p []byte, off int64) (int, error) {
	f.c.mu.Lock()
	down := f.c.down
	f.c.mu.Unlock()
	if down {
		return 0, errors.New("store unreachable")
	}
	return f.r.ReadAt(p, off)
}
func (f *memFile) Size() (int64, error) { return f.r.Size(), nil }
func (f *memFile) Close() error         { return nil }

// twoSegmentsWithRemote opens an engine on a memory file system with a
// copyingRemote and flushes two segments of 100 events each into shard
// "src".
func twoSegmentsWithRemote(t *testing.T) (vfs.FS, *copyingRemote, time.Time, *Options, *Engine, *Shard) {
	t.Helper()
	fs := vfs.NewMemFS()
	rem := &copyingRemote{fs: fs, copies: map[uint64][]byte{}, listed: map[uint64]bool{}}
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	opts := &Options{FS: fs, DisableBackground: true, Remote: rem, Now: func() time.Time { return now }}
	e, err := Open("/data", opts)
	if err != nil {
		t.Fatal(err)
	}
	s, err := e.Shard("src")
	if err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		mixedAges(t, s, now, i*100, 100)
		if err := s.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	return fs, rem, now, opts, e, s
}

// evictOldest lists s's oldest local segment in rem and evicts it.
func evictOldest(t *testing.T, s *Shard, rem *copyingRemote) uint64 {
	t.Helper()
	local, _ := s.LocalSegments()
	id := local[0].ID
	rem.mu.Lock()
	rem.listed[id] = true
	rem.mu.Unlock()
	if _, err := s.EvictSegment(context.Background(), id); err != nil {
		t.Fatal(err)
	}
	return id
}

// TestEvictSegmentNeedsListing: EvictSegment keeps the local file of a
// segment the remote does not list, and of one it lists; evicted, the
// segment answers through the remote, a restart finds it by its stub, and
// a read-only open (fsck) without a remote says what its answers miss
// instead of calling it damage.
func TestEvictSegmentNeedsListing(t *testing.T) {
	fs, rem, _, opts, e, s := twoSegmentsWithRemote(t)
	local, _ := s.LocalSegments()
	if len(local) != 2 {
		t.Fatalf("%d local segments", len(local))
	}
	id := local[0].ID
	segPath := filepath.Join("/data/sources/src/segments", segName(id))
	if _, err := s.EvictSegment(context.Background(), id); err == nil || !fs.Exists(segPath) {
		t.Fatalf("evicting an unlisted segment: %v; file kept: %v", err, fs.Exists(segPath))
	}
	rem.mu.Lock()
	rem.listed[id] = true
	rem.mu.Unlock()
	freed, err := s.EvictSegment(context.Background(), id)
	if err != nil || freed != local[0].Size || fs.Exists(segPath) || !fs.Exists(filepath.Join("/data/sources/src/segments", remoteStubName(id))) {
		t.Fatalf("evict: %d, %v", freed, err)
	}
	if _, err := s.EvictSegment(context.Background(), id); !errors.Is(err, ErrNotEvictable) {
		t.Fatalf("evicting twice: %v", err)
	}
	if got := countScan(t, s); got != 200 {
		t.Fatalf("%d events after evicting", got)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}

	e, err = Open("/data", opts)
	if err != nil {
		t.Fatal(err)
	}
	s, _ = e.Shard("src")
	if got := countScan(t, s); got != 200 {
		t.Fatalf("%d events after a restart", got)
	}
	segs := s.RemoteSegments()
	if len(segs) != 2 || !segs[0].Remote || segs[1].Remote {
		t.Fatalf("RemoteSegments: %+v %+v", segs[0], segs[1])
	}
	for _, sg := range segs {
		sg.Done()
	}
	e.Close()

	ro, err := Open("/data", &Options{FS: fs, ReadOnly: true, Now: opts.Now})
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	rs := ro.LookupShard("src")
	if probs := rs.CheckProblems(); len(probs) != 0 {
		t.Fatalf("fsck of a directory with an evicted segment: %v", probs)
	}
	sn := rs.Snapshot()
	defer sn.Release()
	w := &scan.Warnings{}
	ctx := scan.WithWarnings(context.Background(), w)
	sc, err := sn.Table("t").Open(ctx, &scan.Request{TimeMin: scan.MinTime, TimeMax: scan.MaxTime})
	if err != nil {
		t.Fatal(err)
	}
	var n int64
	for _, u := range sc.Units() {
		c, err := u.Count(ctx)
		if err != nil {
			t.Fatal(err)
		}
		n += c
	}
	if n != 100 || len(w.List()) != 1 || !strings.Contains(w.List()[0], "object store") {
		t.Fatalf("read-only: %d events, warnings %q", n, w.List())
	}
}

func TestRemoteStubRoundTrip(t *testing.T) {
	for _, st := range remoteStubSeeds() {
		got, err := decodeRemoteStub(st.encode())
		if err != nil || got != st {
			t.Fatalf("%+v: got %+v, %v", st, got, err)
		}
	}
	b := remoteStub{size: 10, rows: 1, minTime: 5, maxTime: 5}.encode()
	for i := range b {
		bad := bytes.Clone(b)
		bad[i] ^= 0x40
		if _, err := decodeRemoteStub(bad); !errors.Is(err, ErrRemoteStubCorrupt) {
			t.Fatalf("byte %d flipped: %v", i, err)
		}
	}
	if _, err := decodeRemoteStub(b[:len(b)-1]); !errors.Is(err, ErrRemoteStubCorrupt) {
		t.Fatalf("cut: %v", err)
	}
}

func remoteStubSeeds() []remoteStub {
	return []remoteStub{{}, {size: 1 << 40, rows: 1 << 30, minTime: -1 << 62, maxTime: 1 << 62, walLast: 1<<64 - 1}, {size: 4096, rows: 300, minTime: 1, maxTime: 2, walLast: 7}}
}

// FuzzRemoteStub: decoding never panics, and what decodes encodes back to
// the same bytes.
func FuzzRemoteStub(f *testing.F) {
	for _, st := range remoteStubSeeds() {
		f.Add(st.encode())
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		st, err := decodeRemoteStub(b)
		if err != nil {
			return
		}
		if !bytes.Equal(st.encode(), b) {
			t.Fatalf("%x decodes to %+v, which encodes to %x", b, st, st.encode())
		}
	})
}

// TestSnapshotFetchesEvictedSegments: a snapshot with FetchEvicted holds
// every segment as a file, the evicted one read back from the store, so
// that an engine without a store opens it whole (going back to one node);
// without the option it holds the stub; with the store away it fails
// rather than write a snapshot that misses events.
func TestSnapshotFetchesEvictedSegments(t *testing.T) {
	fs, rem, now, opts, e, s := twoSegmentsWithRemote(t)
	defer e.Close()
	mixedAges(t, s, now, 200, 10) // in the head: a sealed log file in the snapshot
	evicted := evictOldest(t, s, rem)

	st, err := e.SnapshotTo("/snap-stub", nil)
	if err != nil || st.SegmentsFetched != 0 || !fs.Exists(filepath.Join("/snap-stub/sources/src/segments", remoteStubName(evicted))) {
		t.Fatalf("plain snapshot: %+v, %v", st, err)
	}
	st, err = e.SnapshotToWith("/snap", nil, SnapshotDirOptions{FetchEvicted: true})
	if err != nil {
		t.Fatal(err)
	}
	segDir := "/snap/sources/src/segments"
	if st.Segments != 2 || st.SegmentsFetched != 1 || fs.Exists(filepath.Join(segDir, remoteStubName(evicted))) || !fs.Exists(filepath.Join(segDir, segName(evicted))) {
		t.Fatalf("snapshot with evicted segments fetched: %+v", st)
	}
	alone, err := Open("/snap", &Options{FS: fs, DisableBackground: true, Now: opts.Now})
	if err != nil {
		t.Fatal(err)
	}
	as, err := alone.Shard("src")
	if err != nil {
		t.Fatal(err)
	}
	if got := countScan(t, as); got != 210 {
		t.Fatalf("%d events in the snapshot opened without a store, want 210", got)
	}
	if probs := as.CheckProblems(); len(probs) != 0 {
		t.Fatalf("fsck of the snapshot: %v", probs)
	}
	alone.Close()

	rem.mu.Lock()
	rem.down = true
	rem.mu.Unlock()
	if _, err := e.SnapshotToWith("/snap-down", nil, SnapshotDirOptions{FetchEvicted: true}); err == nil || !strings.Contains(err.Error(), "object store") {
		t.Fatalf("snapshot with the store away: %v", err)
	}
}

// TestCompactionGoesOnWithoutTheStore: a merge that needs an evicted
// segment fails while the store is away; the local segments are merged
// meanwhile, and the evicted one joins a merge once the store is back.
func TestCompactionGoesOnWithoutTheStore(t *testing.T) {
	_, rem, now, _, _, s := twoSegmentsWithRemote(t)
	clock := now
	s.opts.Now = func() time.Time { return clock }
	evictOldest(t, s, rem)
	for i := range 3 {
		mixedAges(t, s, now, 200+i*100, 100)
		if err := s.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	rem.mu.Lock()
	rem.down = true
	rem.mu.Unlock()
	if _, err := s.compact(); err == nil {
		t.Fatal("a merge with an evicted input succeeded with the store away")
	}
	n, err := s.compact()
	if err != nil || n != 4 {
		t.Fatalf("merging the local segments with the store away: %d merged, %v", n, err)
	}
	if got := len(s.RemoteSegments()); got != 2 {
		t.Fatalf("%d segments after merging the local ones, want the evicted one and the merged one", got)
	}
	rem.mu.Lock()
	rem.down = false
	rem.mu.Unlock()
	mixedAges(t, s, now, 600, 100)
	if err := s.Flush(); err != nil {
		t.Fatal(err)
	}
	mixedAges(t, s, now, 700, 100)
	if err := s.Flush(); err != nil {
		t.Fatal(err)
	}
	if n, err := s.compact(); err != nil || n != 0 {
		// 4 segments now, but the evicted one is still left out and the
		// merged one is not small: no run of 4 is left.
		t.Fatalf("within the retry window: %d merged, %v", n, err)
	}
	clock = clock.Add(evictedRetryAfter + time.Second)
	if n, err := s.compact(); err != nil || n == 0 {
		t.Fatalf("after the retry window: %d merged, %v", n, err)
	}
	if got := countScan(t, s); got != 700 {
		t.Fatalf("%d events, want 700", got)
	}
}
