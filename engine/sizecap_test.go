package engine

import (
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/sediment/sediment/event"
	"github.com/sediment/sediment/internal/vfs"
)

// capNow is the clock of the size cap tests.
var capNow = time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)

// flushDaysAgo writes n events, all of them daysAgo days old, as one
// segment, and returns the segment's id and size.
func flushDaysAgo(t testing.TB, s *Shard, from, n, daysAgo int) (uint64, int64) {
	t.Helper()
	base := capNow.Add(-time.Duration(daysAgo) * 24 * time.Hour).UnixMicro()
	batch := make([]event.Event, 0, n)
	for i := from; i < from+n; i++ {
		batch = append(batch, testEvent(i, base+int64(i)))
	}
	if err := s.Append(ctx, batch); err != nil {
		t.Fatal(err)
	}
	if err := s.Flush(); err != nil {
		t.Fatal(err)
	}
	sn := s.Snapshot()
	defer sn.Release()
	var newest *segRef
	for _, sg := range sn.segs {
		if newest == nil || sg.id > newest.id {
			newest = sg
		}
	}
	return newest.id, newest.r.Size()
}

// capOptions are the test options with the size cap tests' clock.
func capOptions(fs vfs.FS, logs *logBuffer) *Options {
	opts := testOptions(fs)
	opts.Now = func() time.Time { return capNow }
	if logs != nil {
		opts.Logger = logs.logger()
	}
	return opts
}

// deletedBy returns what reason deleted from s.
func deletedBy(s *Shard, r DeleteReason) Deleted { return s.Deletions()[r] }

// TestSourceSizeCapDeletesOldest: a source over its cap loses its oldest
// segments by event time (not by the order they were written) until it
// fits, a query counts only what is left, each deletion is logged at warn
// level and counted; a cap smaller than one segment keeps the newest.
func TestSourceSizeCapDeletesOldest(t *testing.T) {
	fs := vfs.NewMemFS()
	var logs logBuffer
	e := openTestEngine(t, fs, capOptions(fs, &logs))
	defer e.Close()
	s, _ := e.Shard(shardID)
	// Written in this order; by event time the oldest is the one of 5 days ago.
	id3, size3 := flushDaysAgo(t, s, 0, 100, 3)
	id5, size5 := flushDaysAgo(t, s, 100, 100, 5)
	id1, size1 := flushDaysAgo(t, s, 200, 100, 1)
	id0, size0 := flushDaysAgo(t, s, 300, 100, 0)
	// Room for the two newest and part of a third.
	s.SetMaxDiskBytes(size1 + size0 + size3/2)
	if n, err := s.ApplySizeCap(); err != nil || n != 2 {
		t.Fatalf("deleted %d: %v", n, err)
	}
	if got := segmentIDs(s); len(got) != 2 || !containsAll(got, id1, id0) {
		t.Fatalf("segments left %v, want %d and %d (deleted %d and %d)", got, id1, id0, id5, id3)
	}
	if n := countScan(t, s); n != 200 {
		t.Fatalf("a scan counts %d events, want 200", n)
	}
	d := deletedBy(s, DeleteSourceSizeCap)
	if d.Segments != 2 || d.Events != 200 || d.Bytes != size5+size3 {
		t.Fatalf("counted %+v, want 2 segments, 200 events, %d bytes", d, size5+size3)
	}
	if r := deletedBy(s, DeleteRetention); r != (Deleted{Reason: DeleteRetention}) {
		t.Fatalf("retention counted %+v", r)
	}
	out := logs.String()
	if strings.Count(out, "level=WARN msg=\"size cap deleted a segment") != 2 ||
		!strings.Contains(out, "segment="+segName(id5)) || !strings.Contains(out, "reason=source_size_cap") ||
		!strings.Contains(out, "events=100") || !strings.Contains(out, "min_time=2026-11-20T12:00:00.0001Z") {
		t.Fatalf("log:\n%s", out)
	}
	// Within the cap: nothing more goes.
	if n, err := s.ApplySizeCap(); err != nil || n != 0 {
		t.Fatalf("deleted %d within the cap: %v", n, err)
	}
	// A cap below one segment keeps the newest.
	s.SetMaxDiskBytes(1)
	if n, err := s.ApplySizeCap(); err != nil || n != 1 {
		t.Fatalf("deleted %d: %v", n, err)
	}
	if got := segmentIDs(s); len(got) != 1 || got[0] != id0 {
		t.Fatalf("segments left %v, want the newest, %d", got, id0)
	}
	if n := countScan(t, s); n != 100 {
		t.Fatalf("a scan counts %d events, want 100", n)
	}
	if d := deletedBy(s, DeleteSourceSizeCap); d.Segments != 3 || d.Events != 300 {
		t.Fatalf("counted %+v", d)
	}
	// The head is never deleted: events not yet flushed stay.
	mixed := []event.Event{testEvent(1000, capNow.Add(-10*24*time.Hour).UnixMicro())}
	if err := s.Append(ctx, mixed); err != nil {
		t.Fatal(err)
	}
	s.ApplySizeCap()
	if n := countScan(t, s); n != 101 {
		t.Fatalf("with an old event in the head: a scan counts %d, want 101", n)
	}
	checkClean(t, e)
	// After a restart the deleted segments stay deleted.
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	e = openTestEngine(t, fs, capOptions(fs, nil))
	defer e.Close()
	s, _ = e.Shard(shardID)
	if n := countScan(t, s); n != 101 {
		t.Fatalf("after a restart a scan counts %d, want 101", n)
	}
	checkClean(t, e)
}

func containsAll(ids []uint64, want ...uint64) bool {
	for _, w := range want {
		found := false
		for _, id := range ids {
			found = found || id == w
		}
		if !found {
			return false
		}
	}
	return true
}

// TestGlobalSizeCapAcrossSources: over the global cap, the oldest
// segments by event time go first whichever source they belong to, and
// every source keeps its newest segment; each source counts its own.
func TestGlobalSizeCapAcrossSources(t *testing.T) {
	fs := vfs.NewMemFS()
	var logs logBuffer
	opts := capOptions(fs, &logs)
	e := openTestEngine(t, fs, opts)
	defer e.Close()
	const other = "22222222-2222-4333-8444-555555555555"
	a, _ := e.Shard(shardID)
	b, _ := e.Shard(other)
	// a: 10, 8 and 2 days old; b: 9, 4 and 1 day old.
	a10, sa10 := flushDaysAgo(t, a, 0, 100, 10)
	a8, sa8 := flushDaysAgo(t, a, 100, 100, 8)
	a2, sa2 := flushDaysAgo(t, a, 200, 100, 2)
	b9, sb9 := flushDaysAgo(t, b, 0, 50, 9)
	b4, sb4 := flushDaysAgo(t, b, 50, 50, 4)
	b1, sb1 := flushDaysAgo(t, b, 100, 50, 1)
	// Room for all but the three oldest (a10, b9, a8) and a bit.
	e.opts.MaxDiskBytes = sa2 + sb4 + sb1 + 10
	n, err := e.ApplyRetention()
	if err != nil || n != 3 {
		t.Fatalf("deleted %d: %v", n, err)
	}
	if got := segmentIDs(a); len(got) != 1 || got[0] != a2 {
		t.Fatalf("source a keeps %v, want [%d] (deleted %d, %d)", got, a2, a10, a8)
	}
	if got := segmentIDs(b); len(got) != 2 || !containsAll(got, b4, b1) {
		t.Fatalf("source b keeps %v, want %d and %d (deleted %d)", got, b4, b1, b9)
	}
	if na, nb := countScan(t, a), countScan(t, b); na != 100 || nb != 100 {
		t.Fatalf("scans count %d and %d, want 100 each", na, nb)
	}
	if d := deletedBy(a, DeleteGlobalSizeCap); d.Segments != 2 || d.Events != 200 || d.Bytes != sa10+sa8 {
		t.Fatalf("source a counted %+v", d)
	}
	if d := deletedBy(b, DeleteGlobalSizeCap); d.Segments != 1 || d.Events != 50 || d.Bytes != sb9 {
		t.Fatalf("source b counted %+v", d)
	}
	if c := strings.Count(logs.String(), "reason=global_size_cap"); c != 3 {
		t.Fatalf("%d deletions logged, want 3:\n%s", c, logs.String())
	}
	// A cap below what the newest segments take: each source keeps its
	// newest, however old (a's is older than b's second newest).
	e.opts.MaxDiskBytes = 1
	if n, err := e.ApplyRetention(); err != nil || n != 1 {
		t.Fatalf("deleted %d: %v", n, err)
	}
	if ga, gb := segmentIDs(a), segmentIDs(b); len(ga) != 1 || ga[0] != a2 || len(gb) != 1 || gb[0] != b1 {
		t.Fatalf("left %v and %v, want [%d] and [%d]", ga, gb, a2, b1)
	}
	checkClean(t, e)
}

// TestSizeCapsSourceBeforeGlobal: a source's own cap applies first; the
// global cap then counts what is left.
func TestSizeCapsSourceBeforeGlobal(t *testing.T) {
	fs := vfs.NewMemFS()
	e := openTestEngine(t, fs, capOptions(fs, nil))
	defer e.Close()
	const other = "22222222-2222-4333-8444-555555555555"
	a, _ := e.Shard(shardID)
	b, _ := e.Shard(other)
	_, sa3 := flushDaysAgo(t, a, 0, 100, 3)
	_, sa2 := flushDaysAgo(t, a, 100, 100, 2)
	_, sb5 := flushDaysAgo(t, b, 0, 100, 5)
	_, sb1 := flushDaysAgo(t, b, 100, 100, 1)
	a.SetMaxDiskBytes(sa2) // a keeps its newest
	e.opts.MaxDiskBytes = sa2 + sb5 + sb1
	if n, err := e.ApplyRetention(); err != nil || n != 1 {
		t.Fatalf("deleted %d: %v", n, err)
	}
	// a's own cap took its oldest; the rest fits the global cap, so b's
	// older segment (older than a's) stays.
	if d := deletedBy(a, DeleteSourceSizeCap); d.Segments != 1 || d.Bytes != sa3 {
		t.Fatalf("a: %+v", a.Deletions())
	}
	if d := deletedBy(b, DeleteGlobalSizeCap); d.Segments != 0 || len(segmentIDs(b)) != 2 {
		t.Fatalf("b: %+v, %d segments", b.Deletions(), len(segmentIDs(b)))
	}
}

// TestSizeCapWithCompactionInFlight: while a compaction reads a shard's
// segments, neither cap deletes any of them (the compaction's output would
// bring their events back); the next pass, after it published its output,
// deletes the oldest of what is there then.
func TestSizeCapWithCompactionInFlight(t *testing.T) {
	fs := newFaultFS()
	opts := capOptions(fs, nil)
	e := openTestEngine(t, fs, opts)
	defer e.Close()
	s, _ := e.Shard(shardID)
	// Two small old segments compaction merges, and a large new one
	// (over a quarter of SegmentMaxRows: not merged).
	flushDaysAgo(t, s, 0, 50, 6)
	flushDaysAgo(t, s, 50, 50, 5)
	newest, newestSize := flushDaysAgo(t, s, 100, 400, 1)
	s.SetMaxDiskBytes(newestSize)
	e.opts.MaxDiskBytes = newestSize

	writing := make(chan struct{})
	release := make(chan struct{})
	var once sync.Once
	fs.set(func(op, path string) error {
		if op == "create" && isSegmentTemp(path) {
			once.Do(func() { close(writing) })
			<-release
		}
		return nil
	})
	compacted := make(chan error, 1)
	go func() {
		n, err := s.Compact()
		if err == nil && n != 2 {
			err = errors.New("compaction merged a different group")
		}
		compacted <- err
	}()
	<-writing
	// The compaction holds both old segments: nothing is deleted.
	if n, err := e.ApplyRetention(); err != nil || n != 0 {
		t.Fatalf("deleted %d during a compaction: %v", n, err)
	}
	if len(segmentIDs(s)) != 3 || countScan(t, s) != 500 {
		t.Fatalf("during a compaction: %d segments, %d events", len(segmentIDs(s)), countScan(t, s))
	}
	close(release)
	if err := <-compacted; err != nil {
		t.Fatal(err)
	}
	fs.set(nil)
	// The merged segment (the two old ones) goes; its events do not come back.
	if n, err := e.ApplyRetention(); err != nil || n != 1 {
		t.Fatalf("deleted %d after the compaction: %v", n, err)
	}
	if got := segmentIDs(s); len(got) != 1 || got[0] != newest {
		t.Fatalf("left %v, want [%d]", got, newest)
	}
	if n := countScan(t, s); n != 400 {
		t.Fatalf("a scan counts %d, want 400", n)
	}
	if d := deletedBy(s, DeleteSourceSizeCap); d.Segments != 1 || d.Events != 100 {
		t.Fatalf("counted %+v", d)
	}
	checkClean(t, e)
}

// TestRetentionCountsDeletions: segments retention deletes whole and the
// rows its rewrites drop are counted as retention's, events and bytes.
func TestRetentionCountsDeletions(t *testing.T) {
	fs := vfs.NewMemFS()
	var logs logBuffer
	e := openTestEngine(t, fs, capOptions(fs, &logs))
	defer e.Close()
	s, _ := e.Shard(shardID)
	_, size := flushDaysAgo(t, s, 0, 100, 5)
	flushDaysAgo(t, s, 100, 100, 1)
	s.SetRetentionDays(3)
	if n, err := e.ApplyRetention(); err != nil || n != 1 {
		t.Fatalf("retention deleted %d: %v", n, err)
	}
	d := deletedBy(s, DeleteRetention)
	if d.Segments != 1 || d.Events != 100 || d.Bytes != size {
		t.Fatalf("counted %+v, want 1 segment, 100 events, %d bytes", d, size)
	}
	if in := s.Info(); in.SegmentsPurged != 1 || in.RowsExpired != 100 {
		t.Fatalf("retention counters %d segments, %d rows", in.SegmentsPurged, in.RowsExpired)
	}
	if !strings.Contains(logs.String(), "level=INFO msg=\"retention deleted a segment") {
		t.Fatalf("log:\n%s", logs.String())
	}
}

// TestSizeCapInBackgroundPass: the engine's background retention pass
// applies the global cap by itself.
func TestSizeCapInBackgroundPass(t *testing.T) {
	fs := vfs.NewMemFS()
	opts := backgroundOptions(fs)
	opts.Now = func() time.Time { return capNow }
	opts.RetentionInterval = 5 * time.Millisecond
	opts.MaxDiskBytes = 1
	e := openTestEngine(t, fs, opts)
	defer e.Close()
	s, _ := e.Shard(shardID)
	flushDaysAgo(t, s, 0, 50, 3)
	flushDaysAgo(t, s, 50, 50, 2)
	newest, _ := flushDaysAgo(t, s, 100, 50, 1)
	waitFor(t, "the background pass", func() bool { return deletedBy(s, DeleteGlobalSizeCap).Segments == 2 })
	if got := segmentIDs(s); len(got) != 1 || got[0] != newest {
		t.Fatalf("left %v, want [%d]", got, newest)
	}
	if n := countScan(t, s); n != 50 {
		t.Fatalf("a scan counts %d, want 50", n)
	}
}

// TestSizeCapFailureIsSupervised: a cap pass that fails (the deletion
// cannot be made durable: the directory's fsync fails) is counted as task
// size_cap and shown as a condition; the next pass that succeeds clears
// it. Retention's own task is not affected.
func TestSizeCapFailureIsSupervised(t *testing.T) {
	fs := newFaultFS()
	opts := capOptions(fs, nil)
	opts.BackgroundRetryMin, opts.BackgroundRetryMax = time.Millisecond, time.Millisecond
	e := openTestEngine(t, fs, opts)
	defer e.Close()
	s, _ := e.Shard(shardID)
	flushDaysAgo(t, s, 0, 50, 3)
	flushDaysAgo(t, s, 50, 50, 2)
	flushDaysAgo(t, s, 100, 50, 1)
	s.SetMaxDiskBytes(1)
	var failSync atomic.Bool
	failSync.Store(true)
	fs.set(func(op, path string) error {
		if failSync.Load() && op == "syncdir" && strings.HasSuffix(path, "segments") {
			return syscall.EIO
		}
		return nil
	})
	if _, err := e.ApplyRetention(); !errors.Is(err, syscall.EIO) {
		t.Fatalf("a pass whose fsync fails: %v", err)
	}
	if st := taskStatsOf(s, "size_cap"); st.Failures != 1 || st.Consecutive != 1 {
		t.Fatalf("size_cap stats %+v", st)
	}
	if c, ok := hasCondition(s, ConditionBackgroundFailing); !ok || !strings.Contains(c.Detail, "size_cap") {
		t.Fatalf("condition while the size cap fails: %+v %v", c, ok)
	}
	if st := taskStatsOf(s, "retention"); st.Failures != 0 {
		t.Fatalf("retention stats %+v", st)
	}
	failSync.Store(false)
	waitFor(t, "the retry to be due", func() bool { return s.taskDue(taskSizeCap) })
	if _, err := e.ApplyRetention(); err != nil {
		t.Fatal(err)
	}
	if _, failing := hasCondition(s, ConditionBackgroundFailing); failing || taskStatsOf(s, "size_cap").Consecutive != 0 {
		t.Fatal("the size cap's failure is not cleared by a pass that succeeds")
	}
	if len(segmentIDs(s)) != 1 || countScan(t, s) != 50 {
		t.Fatalf("left %d segments, %d events", len(segmentIDs(s)), countScan(t, s))
	}
	checkClean(t, e)
}
