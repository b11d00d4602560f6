package engine

import (
	"context"
	"slices"
	"testing"

	"github.com/sediment/sediment/event"
	"github.com/sediment/sediment/segment"
	"github.com/sediment/sediment/sql/scan"
)

// TestRecordsKeptPerPathAndForm: records of a segment read a second time
// come from the texts the first read kept (segment.Reader.KeepRowText),
// and are what a read with every cache empty gives, for each path and
// each form (an array, an object) asked: none is taken for another.
func TestRecordsKeptPerPathAndForm(t *testing.T) {
	obj, str, m := event.ObjectValue, event.StringValue, event.Member
	s, _, _ := storeMetadataEvents(t, 300, func(i int) event.Value {
		return obj(m("request", obj(m("method", str([]string{"GET", "POST"}[i%2])), m("path", str("/p"+string(rune('a'+i%26)))))),
			m("response", obj(m("status", str([]string{"200", "404", "500"}[i%3])))))
	})
	sc, refs := flushedRecordRefs(t, s)
	// A few records of each block, as a search for a rare word finds.
	var some []int64
	for k := 0; k < len(refs); k += 7 {
		some = append(some, refs[k])
	}
	type form struct {
		path    string
		asArray bool
	}
	forms := []form{{"metadata", true}, {"metadata", false}, {"metadata.request", true}, {"metadata.response", false}}
	read := func(f form) []string {
		out := make([]string, len(some))
		if err := sc.Materialize(context.Background(), f.path, f.asArray, some, out); err != nil {
			t.Fatal(err)
		}
		return out
	}
	cold := map[form][]string{}
	for _, f := range forms {
		segment.DropCaches()
		cold[f] = read(f)
	}
	segment.DropCaches()
	for round := 0; round < 2; round++ {
		for _, f := range forms {
			if got := read(f); !slices.Equal(got, cold[f]) {
				t.Fatalf("round %d, %s (array %v): %q, want %q", round, f.path, f.asArray, got[:2], cold[f][:2])
			}
		}
	}
	if segment.RowTextBytes() == 0 {
		t.Fatal("no record was kept")
	}
}

// TestLargeAnswerKeepsNoRecords: an answer of more records than
// maxKeptRecords (an export) leaves the cache of row texts as it was, so
// that the records of interactive queries stay kept.
func TestLargeAnswerKeepsNoRecords(t *testing.T) {
	obj, str, m := event.ObjectValue, event.StringValue, event.Member
	s, _, _ := storeMetadataEvents(t, maxKeptRecords+200, func(i int) event.Value {
		return obj(m("request", obj(m("path", str("/p"+string(rune('a'+i%26)))))))
	})
	sc, refs := flushedRecordRefs(t, s)
	if len(refs) <= maxKeptRecords {
		t.Fatalf("%d records, want more than %d", len(refs), maxKeptRecords)
	}
	segment.DropCaches()
	out := make([]string, len(refs))
	if err := sc.Materialize(context.Background(), "metadata", true, refs, out); err != nil {
		t.Fatal(err)
	}
	if n := segment.RowTextBytes(); n != 0 {
		t.Fatalf("an answer of %d records kept %d bytes of row texts", len(refs), n)
	}
	// The same records a few at a time are kept.
	if err := sc.Materialize(context.Background(), "metadata", true, refs[:10], out[:10]); err != nil {
		t.Fatal(err)
	}
	if segment.RowTextBytes() == 0 {
		t.Fatal("an answer of 10 records kept nothing")
	}
}

// flushedRecordRefs flushes s and returns a scan of its segment's
// records (closed with its snapshot when the test ends) and their refs.
func flushedRecordRefs(t *testing.T, s *Shard) (scan.Scan, []int64) {
	t.Helper()
	if err := s.Flush(); err != nil {
		t.Fatal(err)
	}
	sn := s.Snapshot()
	t.Cleanup(sn.Release)
	sc, _, refs := scanRecordRefs(t, sn)
	t.Cleanup(func() { sc.Close() })
	return sc, refs
}
