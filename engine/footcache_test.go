package engine

import (
	"testing"

	"github.com/sediment/sediment/event"
	"github.com/sediment/sediment/segment"
)

// TestEvictedSegmentReloadsBlockDirectories: with the block directory
// cache emptied, a read of a segment kept only in the object store
// decodes its blocks' directories again from the store's copy; with the
// store away the read fails as the store's failure (not damage), and once
// it is back every event reads as before.
func TestEvictedSegmentReloadsBlockDirectories(t *testing.T) {
	_, rem, _, _, _, s := twoSegmentsWithRemote(t)
	evictOldest(t, s, rem)
	want := readAll(t, s)
	if len(want) != 200 {
		t.Fatalf("%d events before", len(want))
	}
	segment.DropCaches()
	rem.mu.Lock()
	rem.down = true
	rem.mu.Unlock()
	sn := s.Snapshot()
	err := sn.ForEachEvent(func(*event.Event) error { return nil })
	sn.Release()
	if err == nil {
		t.Fatal("read every event with the store away and no block directory cached")
	}
	rem.mu.Lock()
	rem.down = false
	rem.mu.Unlock()
	loads := segment.FooterMemory().Loads
	segment.DropCaches()
	got := readAll(t, s)
	if len(got) != len(want) {
		t.Fatalf("%d events after the store came back, want %d", len(got), len(want))
	}
	for id, ev := range want {
		if g := got[id]; !eventsEqual(&g, &ev) {
			t.Fatalf("event %s differs after reloading block directories", id)
		}
	}
	if segment.FooterMemory().Loads == loads {
		t.Fatal("no block directory was decoded again")
	}
	if info := s.Info(); info.Quarantined != 0 || info.QuarantinedBlocks != 0 || len(info.Lost) != 0 {
		t.Fatalf("the store's failure was taken for damage: %+v", info)
	}
}
