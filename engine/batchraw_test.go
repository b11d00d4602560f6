package engine

import (
	"bytes"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sediment/sediment/event"
)

// TestAddRawMatchesAdd: a batch built with AddRaw holds, byte for byte,
// what Normalize and Add put in one (events, chunks and log records), and
// counts the same cut fields: for events AddRaw encodes itself, events it
// hands to the tree (renamed top-level keys, too many fields), events
// dropped for their future timestamp, and enough bytes to fill several
// chunks.
func TestAddRawMatchesAdd(t *testing.T) {
	now := time.Date(2025, 7, 10, 12, 0, 0, 0, time.UTC)
	pad := strings.Repeat("abcdefghij", 1000)
	var bodies []string
	for i := range 1200 {
		switch i % 6 {
		case 0:
			bodies = append(bodies, `{"message":"m`+strconv.Itoa(i)+`","metadata":{"pad":"`+pad+`","n":`+strconv.Itoa(i)+`}}`)
		case 1:
			bodies = append(bodies, `{"a-b":1,"_a_b":2,"timestamp":1752148800000000}`)
		case 2:
			bodies = append(bodies, `{"message":"future","timestamp":"2030-01-01T00:00:00Z"}`)
		case 3:
			bodies = append(bodies, `{"f1":1,"f2":2,"f3":{"a":1,"b":2},"f4":4,"id":"`+strconv.Itoa(i)+`"}`)
		case 4:
			bodies = append(bodies, `{"metadata":{"x-y":[{"k":null}],"z":{"":""}},"event_message":"e"}`)
		default:
			bodies = append(bodies, `{"message":"future last","timestamp":"2031-01-01T00:00:00Z"}`)
		}
	}
	ids := func() event.NormalizeOptions {
		k := 0
		return event.NormalizeOptions{NewID: func() string { k++; return "gen-" + strconv.Itoa(k) }}
	}
	tree, raw := &Batch{maxFields: 4}, &Batch{maxFields: 4}
	treeOpts, rawOpts := ids(), ids()
	var treeNorm, rawNorm event.Normalizer
	for _, body := range bodies {
		v, err := event.Parse([]byte(body))
		if err != nil {
			t.Fatal(err)
		}
		treeNorm.Reset()
		ev, want := treeNorm.Normalize(v, now, treeOpts)
		if want == event.OutcomeKept {
			tree.Add(&ev)
		}
		rawNorm.Reset()
		if got := raw.AddRaw(&rawNorm, v, now, rawOpts); got != want {
			t.Fatalf("%s: outcome %v, Normalize's %v", body, got, want)
		}
	}
	if raw.Len() != tree.Len() || len(raw.chunks) != len(tree.chunks) {
		t.Fatalf("AddRaw: %d events in %d chunks; Add: %d in %d", raw.Len(), len(raw.chunks), tree.Len(), len(tree.chunks))
	}
	if len(tree.chunks) < 2 {
		t.Fatalf("only %d chunk: the test should cross a chunk's end", len(tree.chunks))
	}
	for i := range tree.Len() {
		if !bytes.Equal(raw.Event(i), tree.Event(i)) {
			t.Fatalf("event %d differs:\n got  %q\n want %q", i, raw.Event(i), tree.Event(i))
		}
	}
	if raw.cut != tree.cut || raw.lost != tree.lost || raw.firstCut != tree.firstCut || tree.cut == 0 {
		t.Fatalf("cut: AddRaw %d events, %d fields, first %q; Add %d, %d, %q", raw.cut, raw.lost, raw.firstCut, tree.cut, tree.lost, tree.firstCut)
	}
	if !bytes.Equal(raw.appendRecords(nil), tree.appendRecords(nil)) {
		t.Fatal("log records differ")
	}

	// The same events as one array body, each stored straight from its
	// JSON when AddJSON takes it and through AddRaw when not.
	jsonBatch := &Batch{maxFields: 4}
	jsonOpts := ids()
	var p event.Parser
	var norm event.Normalizer
	took := 0
	err := p.ParseArrayWith([]byte("["+strings.Join(bodies, ",")+"]"), func(int) bool {
		norm.Reset()
		_, ok := jsonBatch.AddJSON(&p, &norm, now, jsonOpts)
		if ok {
			took++
		}
		return ok
	}, func(_ int, v event.Value) error {
		norm.Reset()
		jsonBatch.AddRaw(&norm, v, now, jsonOpts)
		return nil
	})
	if err != nil || took == 0 || took == len(bodies) {
		t.Fatalf("AddJSON took %d of %d events (it should take some, not all); error %v", took, len(bodies), err)
	}
	if !bytes.Equal(jsonBatch.appendRecords(nil), tree.appendRecords(nil)) || jsonBatch.cut != tree.cut || jsonBatch.lost != tree.lost {
		t.Fatal("AddJSON: log records or cut fields differ from Add's")
	}
}
