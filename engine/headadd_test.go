package engine

import (
	"errors"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/sediment/sediment/event"
)

// headContent renders what a head holds, column by column, to compare
// heads filled in different ways.
func headContent(h *head) string {
	out := fmt.Sprintf("rows %d+%d bytes %d dropped %d skipped %d min %d max %d\n",
		h.rows, h.staged, h.bytes, h.droppedFields, h.capSkipped, h.stagedMin, h.stagedMax)
	for _, c := range h.cols {
		elem := map[string]bool{}
		for f := range c.elem {
			elem[fmt.Sprint(f)] = true
		}
		out += fmt.Sprintf("%s/%d n=%d present=%v ints=%v floats=%v bools=%v dict=%q codes=%v data=%q elem=%v\n",
			c.path, c.typ, c.n, c.present, c.ints, c.floats, c.bools, c.dictStrs, c.codes, packedValues(c), elem)
	}
	return out
}

// packedValues returns the values of a packed column.
func packedValues(c *headColumn) []string {
	var slots [][]byte
	var last []byte
	if n := len(c.packed.slots); n > 0 {
		slots, last = c.packed.slots[:n-1], c.packed.slots[n-1]
	}
	var out []string
	for k := 0; k+1 < len(c.offs); k++ {
		out = append(out, string(packedAt(slots, last, c.offs[k], c.offs[k+1])))
	}
	return out
}

// TestAddEncodedMatchesAdd: staging events from their encoding fills a
// head exactly as staging the events does, column cap and long paths
// included.
func TestAddEncodedMatchesAdd(t *testing.T) {
	evs, _ := edgeEvents(t, 300, 3)
	evs = append(evs,
		event.Event{ID: "arr", Timestamp: 7, Fields: event.ObjectValue(
			event.Member("list", event.ArrayValue(event.StringValue("a"), event.ObjectValue(event.Member("k", event.IntValue(1)), event.Member("o", event.ObjectValue(event.Member("z", event.FloatValue(0.5))))))),
			event.Member("flag", event.BoolValue(true)),
			event.Member("none", event.NullValue()),
			event.Member(string(make([]byte, 600)), event.IntValue(3)), // a path too long for a segment
		)},
		event.Event{ID: "nofields", Timestamp: 8, Message: "m", HasMessage: true},
	)
	for _, maxCols := range []int{0, 12} {
		h1 := newHead(time.Unix(0, 0), 1, maxCols)
		h2 := newHead(time.Unix(0, 0), 1, maxCols)
		var scratch []byte
		for i := range evs {
			scratch = h1.add(&evs[i], scratch)
			if err := h2.addEncoded(event.AppendEvent(nil, evs[i])); err != nil {
				t.Fatalf("event %d: %v", i, err)
			}
		}
		if a, b := headContent(h1), headContent(h2); a != b {
			t.Fatalf("maxCols %d: heads differ:\nadd:\n%s\naddEncoded:\n%s", maxCols, a, b)
		}
	}
}

// TestAddEncodedAllocatesLittle: once the head's columns and trie exist,
// staging an event from its encoding allocates only for column growth.
func TestAddEncodedAllocatesLittle(t *testing.T) {
	evs, _ := edgeEvents(t, 1, 4)
	enc := event.AppendEvent(nil, evs[0])
	h := newHead(time.Unix(0, 0), 1, 0)
	for range 2000 { // grow the columns past the runs below
		if err := h.addEncoded(enc); err != nil {
			t.Fatal(err)
		}
	}
	h.truncate(headMark{stagedMin: h.stagedMin, stagedMax: h.stagedMax, cols: len(h.cols)})
	if allocs := testing.AllocsPerRun(1000, func() { h.addEncoded(enc) }); allocs > 0.1 {
		t.Errorf("addEncoded allocated %.2f times per event", allocs)
	}
}

// FuzzHeadAddEncoded: any bytes either stage like the event they decode
// to, or fail with event.ErrCorrupt; nothing panics.
func FuzzHeadAddEncoded(f *testing.F) {
	evs, _ := edgeEvents(f, 3, 5)
	for i := range evs {
		f.Add(event.AppendEvent(nil, evs[i]))
	}
	f.Add(event.AppendEvent(nil, event.Event{ID: "x", Fields: event.ObjectValue(event.Member("a", event.ArrayValue(event.IntValue(1))))}))
	f.Fuzz(func(t *testing.T, data []byte) {
		h := newHead(time.Unix(0, 0), 1, 20)
		err := h.addEncoded(data)
		e, rest, derr := event.DecodeEvent(data)
		if derr == nil && len(rest) != 0 {
			derr = errors.New("trailing bytes")
		}
		if (err == nil) != (derr == nil) {
			t.Fatalf("addEncoded: %v; DecodeEvent: %v", err, derr)
		}
		if err != nil {
			if !errors.Is(err, event.ErrCorrupt) {
				t.Fatalf("error %v does not wrap event.ErrCorrupt", err)
			}
			h.truncate(headMark{stagedMin: h.stagedMin, stagedMax: h.stagedMax})
			return
		}
		h2 := newHead(time.Unix(0, 0), 1, 20)
		h2.add(&e, nil)
		if a, b := headContent(h), headContent(h2); !reflect.DeepEqual(a, b) {
			t.Fatalf("heads differ:\n%s\n%s", a, b)
		}
	})
}

// BenchmarkHeadAdd measures staging platform edge events in a head, from
// their encoding (what the committer does) and from value trees (what
// replay does). The head is emptied every 8192 events, keeping its
// columns' memory. One op is one event; cpu-ns/op is the process's CPU
// time per event.
//
//	go test ./engine -run '^$' -bench HeadAdd -count 6 | tee new.txt
func BenchmarkHeadAdd(b *testing.B) {
	evs, raw := edgeEvents(b, 8192, 6)
	encs := make([][]byte, len(evs))
	for i := range evs {
		encs[i] = event.AppendEvent(nil, evs[i])
	}
	run := func(b *testing.B, add func(h *head, i int)) {
		h := newHead(time.Unix(0, 0), 1, 0)
		b.SetBytes(raw / int64(len(evs)))
		b.ReportAllocs()
		cpu := processCPU()
		for i := 0; b.Loop(); i++ {
			k := i % len(evs)
			if k == 0 && i > 0 {
				h.truncate(headMark{stagedMin: h.stagedMin, stagedMax: h.stagedMax, cols: len(h.cols)})
			}
			add(h, k)
		}
		b.ReportMetric(float64(processCPU()-cpu)/float64(b.N), "cpu-ns/op")
	}
	b.Run("encoded", func(b *testing.B) {
		run(b, func(h *head, i int) {
			if err := h.addEncoded(encs[i]); err != nil {
				b.Fatal(err)
			}
		})
	})
	b.Run("value", func(b *testing.B) {
		var scratch []byte
		run(b, func(h *head, i int) { scratch = h.add(&evs[i], scratch) })
	})
}
