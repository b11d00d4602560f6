package engine

import (
	"context"
	"maps"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/sediment/sediment/event"
	"github.com/sediment/sediment/internal/vfs"
	"github.com/sediment/sediment/sql/scan"
)

// countScan counts the shard's events through a scan (what SQL and search
// read), with no filter and no time range of its own.
func countScan(t testing.TB, s *Shard) int64 {
	t.Helper()
	sn := s.Snapshot()
	defer sn.Release()
	sc, err := sn.Table("t").Open(context.Background(), &scan.Request{TimeMin: scan.MinTime, TimeMax: scan.MaxTime})
	if err != nil {
		t.Fatal(err)
	}
	var n int64
	for _, u := range sc.Units() {
		c, err := u.Count(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		n += c
	}
	return n
}

// mixedAges appends n events, alternately three days old and one hour
// old, and returns the recent ones.
func mixedAges(t testing.TB, s *Shard, now time.Time, from, n int) map[string]event.Event {
	t.Helper()
	recent := map[string]event.Event{}
	var batch []event.Event
	for i := from; i < from+n; i++ {
		age := time.Hour
		if i%2 == 0 {
			age = 3 * 24 * time.Hour
		}
		ev := testEvent(i, now.Add(-age).UnixMicro()+int64(i))
		batch = append(batch, ev)
		if i%2 != 0 {
			recent[ev.ID] = ev
		}
	}
	if err := s.Append(ctx, batch); err != nil {
		t.Fatal(err)
	}
	return recent
}

// TestRetentionByEventTime is issue 12's item 6: with a retention of one
// day, events three days old that share a segment (or the head) with
// newer ones are not returned, before retention runs, after it rewrote the
// segment, and after a restart.
func TestRetentionByEventTime(t *testing.T) {
	fs := vfs.NewMemFS()
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	opts := testOptions(fs)
	opts.Now = func() time.Time { return now }
	e := openTestEngine(t, fs, opts)
	s, _ := e.Shard(shardID)
	s.SetRetentionDays(1)

	want := mixedAges(t, s, now, 0, 1000)
	// In the head: the old half is hidden already.
	if n := countScan(t, s); n != 500 {
		t.Fatalf("head: a scan counts %d events, want 500", n)
	}
	assertEvents(t, s, want)
	if err := s.Flush(); err != nil {
		t.Fatal(err)
	}
	// One segment straddling the cutoff, before retention runs.
	if ids := segmentIDs(s); len(ids) != 1 {
		t.Fatalf("%d segments", len(ids))
	}
	if n := countScan(t, s); n != 500 {
		t.Fatalf("straddling segment: a scan counts %d events, want 500", n)
	}
	assertEvents(t, s, want)

	n, err := s.ApplyRetention()
	if err != nil || n != 1 {
		t.Fatalf("retention rewrote %d: %v", n, err)
	}
	sn := s.Snapshot()
	if len(sn.segs) != 1 || sn.segs[0].r.Rows() != 500 {
		t.Fatalf("after retention: %d segments, %d rows stored", len(sn.segs), sn.segs[0].r.Rows())
	}
	sn.Release()
	if in := s.Info(); in.SegmentsRewritten != 1 || in.RowsExpired != 500 {
		t.Fatalf("retention counters: %+v", in)
	}
	assertEvents(t, s, want)
	checkClean(t, e)

	// Old events arriving later stay hidden in the head too.
	maps.Copy(want, mixedAges(t, s, now, 1000, 10))
	assertEvents(t, s, want)
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}

	// After a restart (the catalog sets the retention again).
	e = openTestEngine(t, fs, opts)
	defer e.Close()
	s, _ = e.Shard(shardID)
	s.SetRetentionDays(1)
	assertEvents(t, s, want)
	if n := countScan(t, s); n != int64(len(want)) {
		t.Fatalf("after restart: a scan counts %d, want %d", n, len(want))
	}
	checkClean(t, e)
}

// TestRetentionRewriteThreshold leaves a segment with few expired rows as
// it is (queries hide them) and rewrites it once a quarter has expired.
func TestRetentionRewriteThreshold(t *testing.T) {
	fs := vfs.NewMemFS()
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	opts := testOptions(fs)
	opts.Now = func() time.Time { return now }
	e := openTestEngine(t, fs, opts)
	defer e.Close()
	s, _ := e.Shard(shardID)
	// 100 events, one per hour over the last 100 hours.
	start := now.Add(-100 * time.Hour)
	var batch []event.Event
	for i := 0; i < 100; i++ {
		batch = append(batch, testEvent(i, start.Add(time.Duration(i)*time.Hour).UnixMicro()))
	}
	s.Append(ctx, batch)
	s.Flush()
	s.SetRetentionDays(3)          // 28 of 100 are older than 72 hours
	now = now.Add(-10 * time.Hour) // 18 expired: under a quarter
	if n, err := s.ApplyRetention(); err != nil || n != 0 {
		t.Fatalf("rewrote %d with 18%% expired: %v", n, err)
	}
	if c := countScan(t, s); c != 82 {
		t.Fatalf("%d visible, want 82", c)
	}
	now = now.Add(10 * time.Hour) // 28 expired
	if n, err := s.ApplyRetention(); err != nil || n != 1 {
		t.Fatalf("rewrote %d with 28%% expired: %v", n, err)
	}
	if c, stored := countScan(t, s), s.Info().SegmentRows; c != 72 || stored != 72 {
		t.Fatalf("%d visible, %d stored; want 72", c, stored)
	}
	checkClean(t, e)
}

// TestCompactionDropsExpiredRows merges segments that hold expired rows:
// the merged segment keeps only the rows inside the retention.
func TestCompactionDropsExpiredRows(t *testing.T) {
	fs := vfs.NewMemFS()
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	opts := testOptions(fs)
	opts.Now = func() time.Time { return now }
	e := openTestEngine(t, fs, opts)
	defer e.Close()
	s, _ := e.Shard(shardID)
	s.SetRetentionDays(1)
	want := map[string]event.Event{}
	for k := 0; k < 3; k++ {
		maps.Copy(want, mixedAges(t, s, now, k*100, 100))
		s.Flush()
	}
	if n, err := s.Compact(); err != nil || n != 3 {
		t.Fatalf("compacted %d: %v", n, err)
	}
	if in := s.Info(); in.SegmentRows != 150 || in.Segments != 1 {
		t.Fatalf("after compaction: %d rows in %d segments, want 150 in 1", in.SegmentRows, in.Segments)
	}
	assertEvents(t, s, want)
	checkClean(t, e)

	// Segments whose rows have all expired go without a replacement.
	for k := 3; k < 5; k++ {
		mixedAges(t, s, now, k*100, 100)
		s.Flush()
	}
	now = now.Add(48 * time.Hour)
	if n, err := s.Compact(); err != nil || n != 3 {
		t.Fatalf("compacted %d: %v", n, err)
	}
	if in := s.Info(); in.Segments != 0 {
		t.Fatalf("%d segments left of fully expired inputs", in.Segments)
	}
	if c := countScan(t, s); c != 0 {
		t.Fatalf("%d events visible, all expired", c)
	}
	checkClean(t, e)
}

// TestRetentionRewriteFailureKeepsSegment fails retention's rewrite (no
// space for the new segment): the straddling segment stays as it was, no
// temporary file is left, queries still hide the expired rows, and the
// next run rewrites it.
func TestRetentionRewriteFailureKeepsSegment(t *testing.T) {
	fs := newFaultFS()
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	opts := testOptions(fs)
	opts.Now = func() time.Time { return now }
	e := openTestEngine(t, fs, opts)
	defer e.Close()
	s, _ := e.Shard(shardID)
	s.SetRetentionDays(1)
	want := mixedAges(t, s, now, 0, 200)
	s.Flush()
	before := segmentIDs(s)
	fs.set(func(op, path string) error {
		if op == "write" && isSegmentTemp(path) {
			return &vfsError{op, path, syscall.ENOSPC}
		}
		return nil
	})
	if n, err := s.ApplyRetention(); err == nil || n != 0 {
		t.Fatalf("retention without space: %d, %v", n, err)
	}
	if got := segmentIDs(s); !slices.Equal(got, before) {
		t.Fatalf("segments %v after a failed rewrite, were %v", got, before)
	}
	assertNoTempFiles(t, fs, shardID)
	assertEvents(t, s, want)
	if st := taskStatsOf(s, "retention"); st.Failures != 1 || st.Consecutive != 1 {
		t.Fatalf("retention stats: %+v", st)
	}
	fs.set(nil)
	if n, err := s.ApplyRetention(); err != nil || n != 1 {
		t.Fatalf("retry rewrote %d: %v", n, err)
	}
	if _, failing := hasCondition(s, ConditionBackgroundFailing); failing {
		t.Fatal("condition not cleared by the successful retry")
	}
	assertEvents(t, s, want)
	checkClean(t, e)
}
