package engine

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// smallSlots makes packed columns' slots 64 bytes for one test, so that
// values start new slots, outgrow one, and are truncated across them.
func smallSlots(t *testing.T) {
	old := headSlotShift
	headSlotShift = 6
	t.Cleanup(func() { headSlotShift = old })
}

// TestPackedBytesKeepValues: every value reads back as added, from the
// packed bytes as they are and from every view taken on the way (a view
// keeps reading its values while the column grows); values longer than a
// slot, empty ones, and truncations in the middle of a slot or across
// several are included.
func TestPackedBytesKeepValues(t *testing.T) {
	smallSlots(t)
	rng := rand.New(rand.NewPCG(1, 2))
	type view struct {
		slots [][]byte
		last  []byte
		offs  []uint32
		vals  []string
	}
	var p packedBytes
	offs := []uint32{0}
	var vals []string
	var views []view
	// Views see published values only, and only unpublished ones are
	// taken back out (as in a head: truncate drops staged rows).
	published := 0
	check := func(v view) {
		t.Helper()
		for k, want := range v.vals {
			if got := string(packedAt(v.slots, v.last, v.offs[k], v.offs[k+1])); got != want {
				t.Fatalf("value %d: %q, want %q", k, got, want)
			}
		}
	}
	snapshot := func() view {
		v := view{offs: offs[: published+1 : published+1], vals: vals[:published:published]}
		if n := len(p.slots); n > 0 {
			v.slots, v.last = p.slots[:n-1:n-1], p.slots[n-1]
		}
		return v
	}
	for step := 0; step < 5000; step++ {
		switch r := rng.IntN(100); {
		case r < 3 && len(vals) > published:
			// Take some unpublished values back out.
			keep := len(vals) - 1 - rng.IntN(min(len(vals)-published, 8))
			offs, vals = offs[:keep+1], vals[:keep]
			p.truncate(offs[keep])
		case r < 8:
			published = len(vals)
		case r < 12:
			views = append(views, snapshot())
		default:
			n := rng.IntN(48)
			if rng.IntN(20) == 0 {
				n = 64 + rng.IntN(200) // longer than a slot
			}
			s := strings.Repeat(string(rune('a'+step%26)), n) + fmt.Sprint(step)
			if rng.IntN(15) == 0 {
				s = ""
			}
			offs = append(offs, p.add(s))
			vals = append(vals, s)
		}
	}
	published = len(vals)
	check(snapshot())
	for _, v := range views {
		check(v)
	}
	if len(p.slots) < 100 {
		t.Fatalf("%d slots: the test did not exercise slot changes", len(p.slots))
	}
}

// TestHeadSmallSlotsMatch: a head whose packed columns use small slots
// holds and returns the same values as one with the default slots, and
// queries reading it while events are added see consistent rows (run with
// -race: views and appends share the slots).
func TestHeadSmallSlotsMatch(t *testing.T) {
	evs, _ := edgeEvents(t, 2000, 4)
	fill := func() *head {
		h := newHead(time.Unix(0, 0), 1, 0)
		var sc []byte
		for i := range evs {
			sc = h.add(&evs[i], sc)
			h.publish()
		}
		return h
	}
	want := headContent(fill())
	smallSlots(t)
	if got := headContent(fill()); got != want {
		t.Fatal("a head with small slots holds other values")
	}

	e, err := Open(t.TempDir(), &Options{DisableBackground: true})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	s, err := e.Shard("slots")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	var sent atomic.Bool
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer sent.Store(true)
		for i := 0; i < len(evs); i += 100 {
			if err := s.Append(context.Background(), evs[i:i+100]); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	msgs := map[string]bool{}
	for i := range evs {
		msgs[evs[i].Message] = true
	}
	for done := false; !done; {
		finished := sent.Load()
		s.mu.RLock()
		h := s.head
		s.mu.RUnlock()
		v := h.view()
		done = v.rows == len(evs)
		if finished && !done {
			t.Fatalf("the head shows %d of %d events", v.rows, len(evs))
		}
		for ci := range v.cols {
			c := &v.cols[ci]
			if c.path != "event_message" || c.isDict() {
				continue
			}
			c.buildRank()
			for row := 0; row < v.rows; row++ {
				if k := c.valueIndex(row); k >= 0 && !msgs[c.str(k)] {
					t.Fatalf("row %d of %d: message %q was never sent", row, v.rows, c.str(k))
				}
			}
		}
	}
	wg.Wait()
}
