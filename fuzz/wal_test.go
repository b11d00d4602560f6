package fuzz

import (
	"errors"
	"testing"

	"github.com/sediment/sediment/bench/gen"
	"github.com/sediment/sediment/engine"
	"github.com/sediment/sediment/event"
)

// sampleEvents returns n normalised events of src.
func sampleEvents(src gen.Source, seed int64, n int) []event.Event {
	g := gen.New(src, gen.Options{Seed: seed, Shape: gen.Platform, Projects: 2})
	out := make([]event.Event, 0, n)
	for range n {
		raw, err := event.Parse(g.AppendEvent(nil))
		if err != nil {
			panic(err) // the generator writes valid JSON; its tests say so
		}
		e, _ := event.Normalize(raw, fixedNow, event.NormalizeOptions{NewID: idSeq()})
		out = append(out, e.Clone())
	}
	return out
}

// walSeeds are whole log files: one record, several, a torn tail, and a
// record of odd events.
func walSeeds() [][]byte {
	edge := sampleEvents(gen.EdgeLogs, 1, 3)
	pg := sampleEvents(gen.PostgresLogs, 2, 2)
	odd := []event.Event{
		{ID: "x", Timestamp: -1, Fields: event.ObjectValue()},
		{ID: "y", Timestamp: 1 << 62, Message: "m", HasMessage: true, Fields: event.ObjectValue(
			event.Member("a", event.ArrayValue(event.IntValue(1), event.FloatValue(2.5), event.BoolValue(true), event.StringValue("s"))),
			event.Member("o", event.ObjectValue(event.Member("n", event.NullValue()))),
		)},
	}
	one := engine.EncodeWALRecord(edge, true)
	two := append(append([]byte(nil), one...), engine.EncodeWALRecord(pg, false)...)
	return [][]byte{
		one,
		two,
		two[:len(two)-3],
		engine.EncodeWALRecord(odd, true),
		engine.EncodeWALRecord(nil, true),
		{},
	}
}

// FuzzWALReplay: startup's log decoder on any file. It returns events or
// an error matching engine.ErrWALCorrupt (or a *WALVersionError for an
// intact header of a newer version), never panics, never allocates far
// beyond the file; the events it returns encode and decode again to
// themselves.
func FuzzWALReplay(f *testing.F) {
	for _, s := range walSeeds() {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > maxInput {
			t.Skip()
		}
		var evs []event.Event
		var err error
		checkAlloc(t, allocLimit(len(data)), func() { evs, err = engine.DecodeWAL(data) })
		var ve *engine.WALVersionError
		if err != nil {
			if !errors.Is(err, engine.ErrWALCorrupt) && !errors.As(err, &ve) {
				t.Fatalf("error is neither damage (ErrWALCorrupt) nor a newer version: %v", err)
			}
			return
		}
		checkWALRoundTrip(t, evs)
	})
}

// FuzzWALRoundTrip: any event the normaliser can produce (from JSON lines)
// survives a trip through the log: encode a record, replay it, compare.
func FuzzWALRoundTrip(f *testing.F) {
	for _, s := range jsonSeeds() {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > maxInput {
			t.Skip()
		}
		vals, _ := event.ParseNDJSON(data) // the lines before a bad one
		var evs []event.Event
		for _, v := range vals {
			e, _ := event.Normalize(v, fixedNow, event.NormalizeOptions{NewID: idSeq()})
			evs = append(evs, e)
		}
		checkWALRoundTrip(t, evs)
	})
}

func checkWALRoundTrip(t *testing.T, evs []event.Event) {
	t.Helper()
	back, err := engine.DecodeWAL(engine.EncodeWALRecord(evs, true))
	if err != nil {
		t.Fatalf("replay of a fresh record: %v", err)
	}
	if len(back) != len(evs) {
		t.Fatalf("replayed %d events of %d", len(back), len(evs))
	}
	for i := range evs {
		a, b := evs[i], back[i]
		if a.ID != b.ID || a.Timestamp != b.Timestamp || a.Message != b.Message || a.HasMessage != b.HasMessage || !event.Equal(a.Fields, b.Fields) {
			t.Fatalf("event %d changed through the log:\n%+v\n%+v", i, a, b)
		}
	}
}

// FuzzWALRepair: repairing any file never panics and never allocates far
// beyond it; the repaired file replays clean, with every event the
// damaged file's replay read.
func FuzzWALRepair(f *testing.F) {
	for _, s := range walSeeds() {
		f.Add(s)
		if len(s) > 20 {
			d := append([]byte(nil), s...)
			d[len(d)/2] ^= 0x10
			f.Add(d)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > maxInput {
			t.Skip()
		}
		evs, _ := engine.DecodeWAL(data)
		var fixed []byte
		var rep *engine.WALRepair
		var err error
		checkAlloc(t, allocLimit(len(data)), func() { fixed, rep, err = engine.RepairWALBytes(data) })
		if err != nil || rep == nil {
			return
		}
		back, err := engine.DecodeWAL(fixed)
		if err != nil || len(back) != len(evs) || rep.EventsKept != len(evs) {
			t.Fatalf("repaired file: %v, %d events, the damaged one's replay read %d", err, len(back), len(evs))
		}
	})
}
