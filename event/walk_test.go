package event

import (
	"errors"
	"math"
	"os"
	"testing"
	"time"
)

// rebuild is a FieldVisitor that builds the event back as Values.
type rebuild struct {
	e     Event
	stack [][]Value // members of the objects open, innermost last
	keys  []string  // their keys
	err   error
}

func (r *rebuild) Begin(id string, ts int64, msg string, has bool) {
	r.e = Event{ID: id, Timestamp: ts, Message: msg, HasMessage: has, Fields: Value{Kind: Object}}
	r.stack = [][]Value{nil}
	r.keys = nil
}

func (r *rebuild) add(v Value) { r.stack[len(r.stack)-1] = append(r.stack[len(r.stack)-1], v) }

func (r *rebuild) Scalar(i int, key string, kind Kind, num uint64, str string) {
	r.checkIndex(i)
	r.add(Member(key, Value{Kind: kind, Num: num, Str: str}))
}

func (r *rebuild) Object(i int, key string) {
	r.checkIndex(i)
	r.stack = append(r.stack, nil)
	r.keys = append(r.keys, key)
}

func (r *rebuild) EndObject() {
	kids := r.stack[len(r.stack)-1]
	r.stack = r.stack[:len(r.stack)-1]
	key := r.keys[len(r.keys)-1]
	r.keys = r.keys[:len(r.keys)-1]
	r.add(Member(key, ObjectValue(kids...)))
}

func (r *rebuild) Array(i int, key string, enc []byte) {
	r.checkIndex(i)
	v, rest, err := DecodeValue(enc)
	if err != nil || len(rest) != 0 || v.Kind != Array {
		r.err = errors.New("Array got something that is not one encoded array")
	}
	r.add(Member(key, v))
}

// checkIndex: i is the member's position in its object.
func (r *rebuild) checkIndex(i int) {
	if i != len(r.stack[len(r.stack)-1]) {
		r.err = errors.New("member index out of order")
	}
}

func (r *rebuild) event() Event {
	e := r.e
	if len(r.stack) > 0 && len(r.stack[0]) > 0 {
		e.Fields.Kids = r.stack[0]
	}
	return e
}

func sameEvent(a, b Event) bool {
	return a.ID == b.ID && a.Timestamp == b.Timestamp && a.Message == b.Message &&
		a.HasMessage == b.HasMessage && Equal(a.Fields, b.Fields)
}

func walkSamples(t testing.TB) []Event {
	edge, err := os.ReadFile("testdata/edge_event.json")
	if err != nil {
		t.Fatal(err)
	}
	v, err := Parse(edge)
	if err != nil {
		t.Fatal(err)
	}
	e, _ := Normalize(v, time.Date(2025, 7, 10, 12, 0, 6, 0, time.UTC), NormalizeOptions{})
	return []Event{
		e,
		{ID: "x", Timestamp: math.MinInt64, Message: "m", HasMessage: true, Fields: obj()},
		{ID: "y", Timestamp: 5, Fields: obj("a", obj("b", obj("c", num(1)), "d", arr(str("x"), obj("e", flt(2.5)))), "n", NullValue(), "t", BoolValue(true))},
	}
}

// TestWalkEvent: walking an encoded event, and walking the Event itself
// (WalkFields), both give back the event.
func TestWalkEvent(t *testing.T) {
	for i, e := range walkSamples(t) {
		enc := AppendEvent(nil, e)
		var r rebuild
		rest, err := WalkEvent(append(enc, 0xAB), &r)
		if err != nil || r.err != nil {
			t.Fatalf("event %d: %v %v", i, err, r.err)
		}
		if len(rest) != 1 || rest[0] != 0xAB {
			t.Errorf("event %d: rest %x", i, rest)
		}
		if got := r.event(); !sameEvent(got, e) {
			t.Errorf("event %d: walked %+v, want %+v", i, got, e)
		}
		var r2 rebuild
		WalkFields(&e, &r2, nil)
		if got := r2.event(); r2.err != nil || !sameEvent(got, e) {
			t.Errorf("event %d: WalkFields gave %+v (%v)", i, got, r2.err)
		}
	}
}

// TestWalkEventAllocatesNothing: the walk itself allocates nothing.
func TestWalkEventAllocatesNothing(t *testing.T) {
	enc := AppendEvent(nil, walkSamples(t)[0])
	var c countVisitor
	if allocs := testing.AllocsPerRun(100, func() { WalkEvent(enc, &c) }); allocs > 0 {
		t.Errorf("WalkEvent allocated %.0f times", allocs)
	}
}

type countVisitor struct{ n int }

func (c *countVisitor) Begin(string, int64, string, bool)        {}
func (c *countVisitor) Scalar(int, string, Kind, uint64, string) { c.n++ }
func (c *countVisitor) Object(int, string)                       { c.n++ }
func (c *countVisitor) EndObject()                               {}
func (c *countVisitor) Array(int, string, []byte)                { c.n++ }

// FuzzWalkEvent: WalkEvent accepts exactly what DecodeEvent accepts, and
// gives the same event.
func FuzzWalkEvent(f *testing.F) {
	for _, e := range walkSamples(f) {
		f.Add(AppendEvent(nil, e))
	}
	f.Add(AppendEvent(nil, Event{}))
	f.Add([]byte{eventVersion1, 1, 'a', 0, 0, tagObject, 1, 1, 'k', tagObject, 0xff, 0xff, 0xff, 0xff, 0x0f})
	f.Fuzz(func(t *testing.T, data []byte) {
		var r rebuild
		rest, err := WalkEvent(data, &r)
		want, wrest, werr := DecodeEvent(data)
		if (err == nil) != (werr == nil) {
			t.Fatalf("WalkEvent error %v, DecodeEvent error %v", err, werr)
		}
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("error %v does not wrap ErrCorrupt", err)
			}
			return
		}
		if r.err != nil || len(rest) != len(wrest) {
			t.Fatalf("visitor: %v; rest %d bytes, want %d", r.err, len(rest), len(wrest))
		}
		if want.Fields.Kind != Object {
			want.Fields = Value{Kind: Object} // fields that are not an object hold no field
		}
		if got := r.event(); !sameEvent(got, want) {
			t.Fatal("WalkEvent and DecodeEvent disagree")
		}
	})
}

// TestDecodeValueReuses: EventDecoder.DecodeValue decodes as DecodeValue
// does, without allocating once warm.
func TestDecodeValueReuses(t *testing.T) {
	v := arr(str("x"), obj("e", flt(2.5), "f", arr(num(1))))
	enc := AppendValue(nil, v)
	var d EventDecoder
	got, rest, err := d.DecodeValue(enc)
	if err != nil || len(rest) != 0 || !Equal(got, v) {
		t.Fatalf("got %v, %d bytes left, %v", got, len(rest), err)
	}
	if allocs := testing.AllocsPerRun(100, func() { d.DecodeValue(enc) }); allocs > 0 {
		t.Errorf("warm DecodeValue allocated %.0f times", allocs)
	}
	if _, _, err := d.DecodeValue(enc[:len(enc)-1]); !errors.Is(err, ErrCorrupt) {
		t.Errorf("truncated: %v", err)
	}
}
