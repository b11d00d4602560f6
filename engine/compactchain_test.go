package engine

import (
	"testing"

	"github.com/sediment/sediment/event"
	"github.com/sediment/sediment/internal/vfs"
)

// TestCrashDuringChainedCompactions crashes (a crash image of the file
// system, internal/vfs's CrashClone) before every file-system operation of
// two chained compactions: A and B merge into C while a query still reads
// A and B, then C and D merge into E, and C's deletion becomes durable
// (another flush syncs the directory) while A and B are still on disk.
// Every restart must read each acknowledged event exactly once: E, which
// holds A's and B's rows through C, must make recovery drop A and B even
// though C, which names them, is gone.
func TestCrashDuringChainedCompactions(t *testing.T) {
	cfs := &crashFS{MemFS: vfs.NewMemFS()}
	e := openTestEngine(t, cfs, nil)
	s, err := e.Shard(shardID)
	if err != nil {
		t.Fatal(err)
	}
	type batch struct {
		events map[string]event.Event
		ackAt  int // crash images with index >= ackAt were taken after the ack
	}
	var batches []batch
	base := int64(1_700_000_000_000_000)
	flushed := func(from, to int) {
		t.Helper()
		evs := appendRange(t, s, from, to, base)
		batches = append(batches, batch{events: evs, ackAt: len(cfs.clones)})
		if err := s.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	compact := func(want int) {
		t.Helper()
		n, err := s.Compact()
		if err != nil || n != want {
			t.Fatalf("compaction merged %d segments (%v), want %d", n, err, want)
		}
	}
	flushed(0, 40)  // A
	flushed(40, 80) // B
	reader := s.Snapshot()
	compact(2)        // A, B → C; A and B stay while reader reads them
	flushed(80, 120)  // D
	compact(2)        // C, D → E; C and D are deleted at once (not durably)
	flushed(120, 160) // F: its publication makes those deletions durable
	reader.Release()  // A and B are deleted now
	flushed(160, 200)
	compact(3) // E, F, G
	e.Close()
	t.Logf("%d crash points", len(cfs.clones))

	for k := range cfs.clones {
		e2, err := Open("/data", testOptions(cfs.clones[k].CrashClone()))
		if err != nil {
			t.Fatalf("crash point %d: reopen: %v", k, err)
		}
		s2, err := e2.Shard(shardID)
		if err != nil {
			t.Fatalf("crash point %d: %v", k, err)
		}
		got := map[string]int{}
		sn := s2.Snapshot()
		err = sn.ForEachEvent(func(ev *event.Event) error {
			got[ev.ID]++
			return nil
		})
		sn.Release()
		if err != nil {
			t.Fatalf("crash point %d: %v", k, err)
		}
		for id, n := range got {
			if n > 1 {
				t.Fatalf("crash point %d: event %s counted %d times (%d events read)", k, id, n, len(got))
			}
		}
		for bi, b := range batches {
			present := 0
			for id := range b.events {
				present += got[id]
			}
			if b.ackAt <= k && present != len(b.events) {
				t.Fatalf("crash point %d: acknowledged batch %d has %d of %d events", k, bi, present, len(b.events))
			}
		}
		if err := e2.Check(); err != nil {
			t.Fatalf("crash point %d: %v", k, err)
		}
		e2.Close()
	}
}
