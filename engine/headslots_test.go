package engine

import (
	"fmt"
	"maps"
	"testing"

	"github.com/sediment/sediment/event"
	"github.com/sediment/sediment/internal/vfs"
)

// appendPayloads appends events from..to-1, each with a payload string
// of its own (so the column is packed, not a dictionary) tagged tag, and
// returns them by id.
func appendPayloads(t *testing.T, s *Shard, from, to int, tag string) map[string]event.Event {
	t.Helper()
	want := map[string]event.Event{}
	var batch []event.Event
	for i := from; i < to; i++ {
		ev := testEvent(i, 1_700_000_000_000_000+int64(i)*1000)
		ev.Fields.Kids = append(ev.Fields.Kids, event.Member("payload",
			event.StringValue(fmt.Sprintf("%s-%06d-%s", tag, i, "0123456789abcdefghijklmnopqrstuvwxyz"))))
		want[ev.ID] = ev
		if batch = append(batch, ev); len(batch) == 100 || i == to-1 {
			if err := s.Append(ctx, batch); err != nil {
				t.Fatal(err)
			}
			batch = batch[:0]
		}
	}
	return want
}

// readSnapshot reads every event of a snapshot taken earlier.
func readSnapshot(t *testing.T, sn *Snapshot) map[string]event.Event {
	t.Helper()
	out := map[string]event.Event{}
	if err := sn.ForEachEvent(func(e *event.Event) error {
		out[e.ID] = e.Clone()
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

func assertSame(t *testing.T, what string, got, want map[string]event.Event) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d events, want %d", what, len(got), len(want))
	}
	for id, w := range want {
		if g, ok := got[id]; !ok || !eventsEqual(&g, &w) {
			t.Fatalf("%s: event %s is %+v, want %+v", what, id, g, w)
		}
	}
}

// TestRecycledSlotsNeverReachAReader: a head that a snapshot viewed
// (a scan started before its flush) keeps its byte slots after the flush,
// so the scan reads what the head held even while later heads fill up;
// a head no snapshot viewed gives its slots to the next heads once it is
// flushed, and what those store reads back right.
func TestRecycledSlotsNeverReachAReader(t *testing.T) {
	old := headSlotShift
	headSlotShift = 8 // many full slots from a few thousand events
	t.Cleanup(func() { headSlotShift = old })
	e := openTestEngine(t, vfs.NewMemFS(), nil)
	defer e.Close()
	s, _ := e.Shard(shardID)

	wantA := appendPayloads(t, s, 0, 2000, "a")
	sn := s.Snapshot() // a scan in progress over head A
	defer sn.Release()
	if err := s.Flush(); err != nil {
		t.Fatal(err)
	}
	if n := e.slots.recycled.Load(); n != 0 {
		t.Fatalf("the flush of a head a snapshot viewed recycled %d slots", n)
	}
	wantB := appendPayloads(t, s, 2000, 4000, "b") // head B: never viewed
	assertSame(t, "snapshot of head A after its flush", readSnapshot(t, sn), wantA)

	if err := s.Flush(); err != nil {
		t.Fatal(err)
	}
	if e.slots.recycled.Load() == 0 {
		t.Fatal("the flush of a head no snapshot viewed recycled no slot")
	}
	wantC := appendPayloads(t, s, 4000, 6000, "c") // head C, in B's slots
	if e.slots.reused.Load() == 0 {
		t.Fatal("the head after a recycled one took no slot from the pool")
	}
	assertSame(t, "snapshot of head A after its slots' neighbours were reused", readSnapshot(t, sn), wantA)
	all := maps.Clone(wantA)
	maps.Copy(all, wantB)
	maps.Copy(all, wantC)
	assertEvents(t, s, all)

	// A server gone idle keeps no free slot.
	if err := s.Flush(); err != nil {
		t.Fatal(err)
	}
	e.ReleaseIdleMemory()
	if n := len(e.slots.free); n != 0 {
		t.Fatalf("%d free slots kept after ReleaseIdleMemory", n)
	}
}
