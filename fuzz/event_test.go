package fuzz

import (
	"bytes"
	"fmt"
	"slices"
	"testing"

	"github.com/sediment/sediment/bench/gen"
	"github.com/sediment/sediment/event"
)

// FuzzNormalize: Logflare's ingest rules on any JSON value. The event must
// hold no empty value and only column-safe, unique keys, never an id or
// timestamp member; its binary encoding (the WAL's and array columns')
// must decode to the same event, and its JSON must parse.
func FuzzNormalize(f *testing.F) {
	for _, s := range []string{
		`{"message":{"a":null},"id":3,"timestamp":1.5e12,"a-b":1,"_a_b":2,"x":[[],{"y z":""}]}`,
		`{"log_entry":"l","metadata":{"1-key!":[null,{"k":1}]}}`,
		`{"event_message":"","message":null,"timestamp":"2025-07-10 12:00:00"}`,
		`{"timestamp":"2025-07-10T12:00:00+05:30","id":"","metadata":{"_PARTITIONTIME":1,"_TABLE_x":2}}`,
		`{"timestamp":9999999999999999999,"m":[{"a":[{"b":{}}]}]}`,
		`"a bare string"`, `[1,{"a":2}]`, `12.5`, `null`,
	} {
		f.Add([]byte(s))
	}
	for _, src := range gen.AllSources() {
		f.Add(gen.New(src, gen.Options{Seed: 3, Shape: gen.Platform, Projects: 2}).AppendEvent(nil))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > maxInput {
			t.Skip()
		}
		raw, err := event.Parse(data)
		if err != nil {
			return
		}
		e, _ := event.Normalize(raw, fixedNow, event.NormalizeOptions{NewID: idSeq()})
		if e.Fields.Kind != event.Object || e.ID == "" {
			t.Fatalf("bad event %+v", e)
		}
		if e.Fields.Get("id") != nil || e.Fields.Get("timestamp") != nil {
			t.Fatalf("id or timestamp left in fields: %s", event.AppendJSON(nil, e.Fields))
		}
		checkClean(t, e.Fields, 0)

		enc := event.AppendEvent(nil, e)
		back, rest, err := event.DecodeEvent(enc)
		if err != nil || len(rest) != 0 {
			t.Fatalf("decode of an encoded event: %v (%d bytes left)", err, len(rest))
		}
		if back.ID != e.ID || back.Timestamp != e.Timestamp || back.Message != e.Message || back.HasMessage != e.HasMessage || !event.Equal(back.Fields, e.Fields) {
			t.Fatalf("binary round trip changed the event:\n%+v\n%+v", e, back)
		}
		if _, err := event.Parse(event.AppendEventJSON(nil, e)); err != nil {
			t.Fatalf("event JSON does not parse: %v", err)
		}
	})
}

// checkClean asserts normalised members: no null, "", {} or [] left, keys
// safe as column names and unique within their object.
func checkClean(t *testing.T, v event.Value, depth int) {
	t.Helper()
	if depth > event.MaxDepth+1 {
		t.Fatal("tree deeper than MaxDepth")
	}
	seen := map[string]bool{}
	for _, k := range v.Kids {
		switch {
		case k.Kind == event.Null,
			k.Kind == event.String && k.Str == "",
			(k.Kind == event.Object || k.Kind == event.Array) && len(k.Kids) == 0:
			t.Fatalf("empty value left under %q: %s", k.Key, event.AppendJSON(nil, v))
		}
		if v.Kind == event.Object {
			if seen[k.Key] {
				t.Fatalf("duplicate key %q", k.Key)
			}
			seen[k.Key] = true
			if len(k.Key) <= event.MaxColumnNameLen && !event.IsSafeColumnName(k.Key) {
				t.Fatalf("key %q is not a safe column name", k.Key)
			}
		}
		checkClean(t, k, depth+1)
	}
}

// FuzzAppendNormalized: the one-pass encoding of an event the ingest path
// uses (event.Normalizer.AppendNormalized) stores what Normalize, CapFields
// and AppendEvent store, byte for byte, or hands back Normalize's event.
func FuzzAppendNormalized(f *testing.F) {
	for _, s := range []string{
		`{"message":{"a":null},"id":3,"timestamp":1.5e12,"a-b":1,"_a_b":2,"x":[[],{"y z":""}]}`,
		`{"log_entry":"l","metadata":{"1-key!":[null,{"k":1}],"a-b":1,"_a_b":2}}`,
		`{"timestamp":9999999999999999999,"m":[{"a":[{"b":{}}]}]}`,
		`{"metadata":{"a":{"b":{"c":1,"d":""}},"e":[null,"",{"f":null}]}}`,
		`"a bare string"`, `[1,{"a":2}]`, `null`,
	} {
		f.Add([]byte(s), uint8(8))
	}
	for _, src := range gen.AllSources() {
		f.Add(gen.New(src, gen.Options{Seed: 3, Shape: gen.Platform, Projects: 2}).AppendEvent(nil), uint8(100))
	}
	f.Fuzz(func(t *testing.T, data []byte, maxFields uint8) {
		if len(data) > maxInput {
			t.Skip()
		}
		raw, err := event.Parse(data)
		if err != nil {
			return
		}
		want, wantOutcome := event.Normalize(raw, fixedNow, event.NormalizeOptions{NewID: idSeq()})
		var n event.Normalizer
		out, e, outcome, encoded := n.AppendNormalized(nil, raw, fixedNow, event.NormalizeOptions{NewID: idSeq()}, int(maxFields))
		if outcome != wantOutcome {
			t.Fatalf("outcome %v, Normalize's %v", outcome, wantOutcome)
		}
		if !encoded {
			if len(out) != 0 || e.ID != want.ID || e.Timestamp != want.Timestamp || e.Message != want.Message || !event.Equal(e.Fields, want.Fields) {
				t.Fatalf("handed back %+v (%d bytes), Normalize gives %+v", e, len(out), want)
			}
			return
		}
		capped, dropped := event.CapFields(want.Fields, int(maxFields))
		want.Fields = capped
		if dropped != 0 || !bytes.Equal(out, event.AppendEvent(nil, want)) {
			t.Fatalf("encoded %q, the tree's way %q (%d fields cut)", out, event.AppendEvent(nil, want), dropped)
		}
	})
}

// FuzzTranscodeEvent: an array body read with the transcoder
// (event.Parser.TranscodeEvent, which the create and cloudflare routes
// use) stores, element by element, the bytes the tree's way stores
// (ParseArray, Normalize, CapFields, AppendEvent), and fails with the same
// error.
func FuzzTranscodeEvent(f *testing.F) {
	for _, s := range jsonSeeds() {
		f.Add([]byte(s), uint8(100))
	}
	f.Add([]byte(`[{"a":1,"a":2},{"m":{"b":{"c":null}},"message":"x","event_message":"y"}]`), uint8(3))
	f.Fuzz(func(t *testing.T, body []byte, maxFields uint8) {
		if len(body) > maxInput {
			t.Skip()
		}
		opts := event.NormalizeOptions{NewID: idSeq()}
		treeElement := func(n *event.Normalizer, v event.Value, out []string) []string {
			if v.Kind != event.Object {
				return append(out, "not an object")
			}
			n.Reset()
			e, outcome := n.Normalize(v, fixedNow, opts)
			if outcome != event.OutcomeKept {
				return append(out, outcome.String())
			}
			e.Fields, _ = event.CapFields(e.Fields, int(maxFields))
			return append(out, string(event.AppendEvent(nil, e)))
		}
		var p event.Parser
		var n event.Normalizer
		var want, got []string
		wantErr := p.ParseArray(body, func(_ int, v event.Value) error {
			want = treeElement(&n, v, want)
			return nil
		})
		var enc []byte
		gotErr := p.ParseArrayWith(body, func(int) bool {
			n.Reset()
			var outcome event.Outcome
			var ok bool
			if enc, outcome, ok = p.TranscodeEvent(enc[:0], &n, fixedNow, opts, int(maxFields)); !ok {
				return false
			}
			if outcome != event.OutcomeKept {
				got = append(got, outcome.String())
			} else {
				got = append(got, string(enc))
			}
			return true
		}, func(_ int, v event.Value) error {
			got = treeElement(&n, v, got)
			return nil
		})
		if !slices.Equal(got, want) || fmt.Sprint(gotErr) != fmt.Sprint(wantErr) {
			t.Fatalf("transcoded %q (error %v), tree's way %q (error %v)", got, gotErr, want, wantErr)
		}
	})
}
