package engine

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/sediment/sediment/event"
)

// TestInfoCountsWhatMetricsRead: the figures a metrics layer reads from
// ShardInfo follow what the shard does: head bytes while events are in
// memory and none after a flush, one flush per flush, a compaction backlog
// of the small segments waiting to be merged, then one compaction and no
// backlog.
func TestInfoCountsWhatMetricsRead(t *testing.T) {
	e, err := Open(t.TempDir(), &Options{DisableBackground: true, CompactionMinInputs: 3, SegmentMaxRows: 4096, BlockRows: 256})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	s, err := e.Shard("src")
	if err != nil {
		t.Fatal(err)
	}
	base := int64(1_700_000_000_000_000)
	for seg := range 4 {
		evs := testEvents(seg*10, 10, base+int64(seg)*1_000_000)
		if err := s.Append(ctx, evs); err != nil {
			t.Fatal(err)
		}
		in := s.Info()
		if in.HeadBytes <= 0 || in.HeadRows != 10 {
			t.Fatalf("after append %d: HeadBytes %d, HeadRows %d; want bytes > 0 and 10 rows", seg, in.HeadBytes, in.HeadRows)
		}
		if err := s.Flush(); err != nil {
			t.Fatal(err)
		}
		in = s.Info()
		if in.HeadBytes != 0 || in.Flushes != int64(seg+1) || in.Segments != seg+1 {
			t.Fatalf("after flush %d: HeadBytes %d, Flushes %d, Segments %d", seg, in.HeadBytes, in.Flushes, in.Segments)
		}
		wantBacklog := 0
		if seg+1 >= 3 {
			wantBacklog = seg + 1 // one run of every small segment
		}
		if in.CompactionBacklog != wantBacklog {
			t.Fatalf("after flush %d: CompactionBacklog %d, want %d", seg, in.CompactionBacklog, wantBacklog)
		}
	}
	if n, err := s.Compact(); err != nil || n != 4 {
		t.Fatalf("Compact: %d, %v; want 4 segments merged", n, err)
	}
	in := s.Info()
	if in.Compactions != 1 || in.CompactionBacklog != 0 || in.Segments != 1 {
		t.Fatalf("after compaction: Compactions %d, CompactionBacklog %d, Segments %d; want 1, 0, 1", in.Compactions, in.CompactionBacklog, in.Segments)
	}
}

// testEvents returns n test events numbered from first, a second apart
// from ts (µs).
func testEvents(first, n int, ts int64) []event.Event {
	out := make([]event.Event, n)
	for i := range out {
		out[i] = testEvent(first+i, ts+int64(i)*1_000_000)
	}
	return out
}

// TestObserveWALSync: the hook sees one fsync per acknowledged append in
// sync mode, and the periodic fsyncs in buffered mode.
func TestObserveWALSync(t *testing.T) {
	for _, mode := range []AckMode{AckSync, AckBuffered} {
		t.Run(mode.String(), func(t *testing.T) {
			var syncs atomic.Int64
			var total atomic.Int64
			e, err := Open(t.TempDir(), &Options{AckMode: mode, BufferedSyncInterval: 5 * time.Millisecond,
				ObserveWALSync: func(d time.Duration) {
					syncs.Add(1)
					total.Add(int64(d))
				}})
			if err != nil {
				t.Fatal(err)
			}
			defer e.Close()
			s, err := e.Shard("src")
			if err != nil {
				t.Fatal(err)
			}
			for i := range 3 {
				if err := s.Append(ctx, testEvents(i, 1, 1_700_000_000_000_000)); err != nil {
					t.Fatal(err)
				}
			}
			if mode == AckSync {
				if got := syncs.Load(); got != 3 {
					t.Fatalf("%d fsyncs observed for 3 appends in sync mode", got)
				}
			} else {
				// The syncer runs every 5 ms; wait for it (bounded).
				for deadline := time.Now().Add(10 * time.Second); syncs.Load() == 0 && time.Now().Before(deadline); {
					time.Sleep(5 * time.Millisecond)
				}
				if syncs.Load() == 0 {
					t.Fatal("no periodic fsync observed in buffered mode")
				}
			}
			if total.Load() <= 0 {
				t.Fatal("observed fsyncs took no time at all")
			}
		})
	}
}
