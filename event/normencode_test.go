package event

import (
	"bytes"
	"strconv"
	"strings"
	"testing"
	"time"
)

// appendNormalizedSeeds are bodies for the differential test of
// AppendNormalized against Normalize, CapFields and AppendEvent: every rule
// the normaliser applies, and each reason to hand an event back to the tree.
var appendNormalizedSeeds = []string{
	`{"message":"m","timestamp":"2025-07-10T11:00:00Z","metadata":{"a":1,"b":"x","c":true,"d":1.5}}`,
	`{"event_message":"e","id":"abc","metadata":{"request":{"headers":{"cf_ray":"r","host":"h"}},"status":200}}`,
	`{"message":{"a":null},"id":3,"timestamp":1.5e12,"a-b":1,"_a_b":2,"x":[[],{"y z":""}]}`,
	`{"log_entry":"l","metadata":{"1-key!":[null,{"k":1}]}}`,
	`{"log_entry":"l","message":"","event_message":null,"m":{"x":null,"y":"","z":{},"w":[]}}`,
	`{"metadata":{"a-b":1,"_a_b":2,"a b":3}}`,
	`{"metadata":{"list":[{"a-b":1,"_a_b":2},null,"",[null],{"k":{}}],"empty":[null,""]}}`,
	`{"a-b":1}`,
	`{"id":"","timestamp":"not a time","message":["x",null]}`,
	`{"id":1.25,"timestamp":9999999999999,"message":"future"}`,
	`{"id":null,"timestamp":-5,"event_message":{"k":[1,2]}}`,
	`{"id":"a","id":"b","timestamp":1,"timestamp":2,"message":"m","message":"n"}`,
	`{"x":{"_TABLE_x":1,"y":{"z":{"deep":[{"é":1}]}}}}`,
	`{"z":{"":1,"ok":null}}`,
	`{}`,
	`"just a string"`,
	`[1,{"a":2}]`,
	`12`,
	`null`,
}

// bigAppendNormalizedSeeds are seeds too large to write out: 130 members,
// 130 elements, and more fields than the tests' cap.
func bigAppendNormalizedSeeds() []string {
	var wide, long, many strings.Builder
	wide.WriteString(`{"metadata":{`)
	long.WriteString(`{"metadata":{"list":[`)
	many.WriteString(`{`)
	for i := range 130 {
		if i > 0 {
			wide.WriteByte(',')
			long.WriteByte(',')
			many.WriteByte(',')
		}
		wide.WriteString(`"k` + strconv.Itoa(i) + `":` + strconv.Itoa(i))
		long.WriteString(strconv.Itoa(i))
		many.WriteString(`"k` + strconv.Itoa(i) + `":{"a":1}`)
	}
	wide.WriteString(`}}`)
	long.WriteString(`]}}`)
	many.WriteString(`}`)
	return []string{wide.String(), long.String(), many.String()}
}

// testMaxFields is the field cap of the differential test: low enough for
// the seeds to cross it.
const testMaxFields = 40

// checkAppendNormalized requires AppendNormalized to store what the tree's
// path (Normalize, then CapFields and AppendEvent as the engine's Batch.Add
// does) stores for raw: the same bytes when it encodes the event, else the
// same Event and outcome, with the same id.
func checkAppendNormalized(t *testing.T, raw Value, now time.Time, maxFields int) {
	t.Helper()
	ids := func() func() string {
		k := 0
		return func() string { k++; return "gen-" + strconv.Itoa(k) }
	}
	want, wantOutcome := Normalize(raw, now, NormalizeOptions{NewID: ids()})
	capped, _ := CapFields(want.Fields, maxFields)
	wantEvent := want
	wantEvent.Fields = capped
	wantEnc := AppendEvent(nil, wantEvent)

	var n Normalizer
	prefix := []byte("prefix")
	out, e, outcome, encoded := n.AppendNormalized(bytes.Clone(prefix), raw, now, NormalizeOptions{NewID: ids()}, maxFields)
	if !bytes.HasPrefix(out, prefix) {
		t.Fatalf("AppendNormalized changed the bytes before dst's end")
	}
	if outcome != wantOutcome {
		t.Fatalf("outcome %v, Normalize's %v", outcome, wantOutcome)
	}
	if encoded {
		if got := out[len(prefix):]; !bytes.Equal(got, wantEnc) {
			t.Fatalf("encoding differs from the tree's:\n got  %q\n want %q", got, wantEnc)
		}
		return
	}
	if len(out) != len(prefix) {
		t.Fatalf("not encoded, yet %d bytes appended", len(out)-len(prefix))
	}
	if e.ID != want.ID || e.Timestamp != want.Timestamp || e.Message != want.Message || e.HasMessage != want.HasMessage || !Equal(e.Fields, want.Fields) {
		t.Fatalf("event handed back differs from Normalize's:\n got  %+v\n want %+v", e, want)
	}
}

func TestAppendNormalizedMatchesNormalize(t *testing.T) {
	now := time.Date(2025, 7, 10, 12, 0, 0, 0, time.UTC)
	for _, body := range append(appendNormalizedSeeds, bigAppendNormalizedSeeds()...) {
		raw, err := Parse([]byte(body))
		if err != nil {
			t.Fatalf("%s: %v", body, err)
		}
		for _, maxFields := range []int{0, 1, 3, testMaxFields, DefaultMaxFields} {
			checkAppendNormalized(t, raw, now, maxFields)
		}
	}
}

// TestAppendNormalizedEncodesCommonEvents checks that the ordinary events
// take the one-pass way, not the tree's: those are the ones whose cost it
// is there to cut.
func TestAppendNormalizedEncodesCommonEvents(t *testing.T) {
	now := time.Date(2025, 7, 10, 12, 0, 0, 0, time.UTC)
	for _, body := range []string{
		appendNormalizedSeeds[0], appendNormalizedSeeds[1], appendNormalizedSeeds[3],
		appendNormalizedSeeds[5], appendNormalizedSeeds[6],
	} {
		raw, _ := Parse([]byte(body))
		var n Normalizer
		if _, _, _, encoded := n.AppendNormalized(nil, raw, now, NormalizeOptions{}, DefaultMaxFields); !encoded {
			t.Errorf("%s: handed back to the tree", body)
		}
	}
	raw, _ := Parse([]byte(`{"a-b":1}`))
	var n Normalizer
	if _, e, _, encoded := n.AppendNormalized(nil, raw, now, NormalizeOptions{}, DefaultMaxFields); encoded || e.Fields.Get("_a_b") == nil {
		t.Errorf("a top-level key to rename: encoded %v, fields %s", encoded, AppendJSON(nil, e.Fields))
	}
}

func FuzzAppendNormalized(f *testing.F) {
	for _, s := range append(appendNormalizedSeeds, bigAppendNormalizedSeeds()...) {
		f.Add([]byte(s), uint8(testMaxFields))
	}
	now := time.Date(2025, 7, 10, 12, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, data []byte, maxFields uint8) {
		raw, err := Parse(data)
		if err != nil {
			return
		}
		checkAppendNormalized(t, raw, now, int(maxFields))
	})
}

// BenchmarkNormalizeEncode measures what the ingest path does with a parsed
// edge event between the parser and the log: .../tree normalises it
// (Normalizer), caps its fields and encodes the tree (the engine's
// Batch.Add); .../one-pass is AppendNormalized.
func BenchmarkNormalizeEncode(b *testing.B) {
	v, err := Parse(loadEdgeEvent(b))
	if err != nil {
		b.Fatal(err)
	}
	now := time.Date(2025, 7, 10, 12, 0, 6, 0, time.UTC)
	var n Normalizer
	var buf []byte
	b.Run("tree", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			n.Reset()
			e, _ := n.Normalize(v, now, NormalizeOptions{})
			e.Fields, _ = CapFields(e.Fields, DefaultMaxFields)
			buf = AppendEvent(buf[:0], e)
		}
	})
	b.Run("one-pass", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			n.Reset()
			var encoded bool
			if buf, _, _, encoded = n.AppendNormalized(buf[:0], v, now, NormalizeOptions{}, DefaultMaxFields); !encoded {
				b.Fatal("handed back to the tree")
			}
		}
	})
}
