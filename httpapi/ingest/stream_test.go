package ingest

import (
	"errors"
	"testing"

	"github.com/sediment/sediment/bench/gen"
	"github.com/sediment/sediment/event"
)

// TestStreamMatchesDecode: a body read with Each, element by element, gives
// the events and the errors of the same body decoded whole, on every route.
func TestStreamMatchesDecode(t *testing.T) {
	vector := string(gen.New(gen.EdgeLogs, gen.Options{Seed: 3, Shape: gen.Platform}).AppendVectorBatch(nil, 20))
	bodies := []string{
		vector, ` [] `, `[{"a":1},{"b":[null]},{"message":"m","timestamp":"2025-07-10T12:00:05Z"}]`,
		`{"batch":[{"a":1}],"source":"s"}`, `{"message":"one object"}`,
		`[{"a":1},2,{"b":2}]`, `[{"a":1},2,{"b":]`, `[{"a":1}`, `[{"timestamp":1,"x":2},{"x":3}]`, `[{"x":"\u00e9\ud83d\ude00"}]`,
	}
	routes := []Route{RouteCreate, RouteCloudflare, RouteJSON, RouteBrowserReports, RouteVector, RouteCloudEvent, RouteElixirLogger, RouteGithub}
	d, sd := NewDecoder(), NewDecoder()
	for _, route := range routes {
		for _, body := range bodies {
			req := Request{Route: route, ContentType: "application/json", Body: []byte(body)}
			res, err := d.Decode(req)
			req.Stream = true
			got, serr := streamAll(sd, req)
			if (err == nil) != (serr == nil) || (err != nil && err.Error() != serr.Error()) {
				t.Errorf("%s %.40q: Decode error %v, streamed error %v", route, body, err, serr)
				continue
			}
			if err == nil && got != eventsJSON(res.Events) {
				t.Errorf("%s %.40q: streamed %s, want %s", route, body, got, eventsJSON(res.Events))
			}
		}
	}
}

// TestStreamLeavesArraysToEach: with Stream, Decode parses nothing of an
// array body (a syntax error shows only in Each), and a callback error
// stops Each and comes back as it is.
func TestStreamLeavesArraysToEach(t *testing.T) {
	d := NewDecoder()
	res, err := d.Decode(Request{Route: RouteCreate, ContentType: "application/json", Body: []byte(`[{"a":1},{"a":`), Stream: true})
	if err != nil || len(res.Events) != 0 {
		t.Fatalf("Decode: %v, %d events; want the body left to Each", err, len(res.Events))
	}
	if err := d.Each(&res, func(event.Value) error { return nil }); !errors.Is(err, ErrMalformed) || !errors.Is(err, event.ErrSyntax) {
		t.Errorf("Each: %v, want ErrMalformed wrapping a syntax error", err)
	}
	stop := errors.New("stop")
	res, _ = d.Decode(Request{Route: RouteCreate, ContentType: "application/json", Body: []byte(`[{"a":1},{"b":2},{"c":3}]`), Stream: true})
	calls := 0
	err = d.Each(&res, func(event.Value) error {
		calls++
		return stop
	})
	if err != stop || calls != 1 {
		t.Errorf("Each returned %v after %d calls, want the callback's error after 1", err, calls)
	}
}

// TestStreamAllocatesNothing: a warm Decoder reads a large Vector batch
// with Each without allocating: one event's memory is reused for the next.
func TestStreamAllocatesNothing(t *testing.T) {
	body := gen.New(gen.EdgeLogs, gen.Options{Seed: 4, Shape: gen.Platform}).AppendVectorBatch(nil, 2000)
	d := NewDecoder()
	n := 0
	run := func() {
		res, err := d.Decode(Request{Route: RouteCreate, ContentType: "application/json", Body: body, Stream: true})
		if err != nil {
			t.Fatal(err)
		}
		n = 0
		if err := d.Each(&res, func(event.Value) error { n++; return nil }); err != nil {
			t.Fatal(err)
		}
	}
	run()
	if n != 2000 {
		t.Fatalf("%d events, want 2000", n)
	}
	if allocs := testing.AllocsPerRun(3, run); allocs > 2 {
		t.Errorf("warm streamed decode of 2000 events allocated %.0f times", allocs)
	}
}
