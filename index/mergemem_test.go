package index

import (
	"math"
	"slices"
	"testing"
	"unsafe"
)

// TestRowListGivesRowsSorted: a rowList gives back every row added, in
// ascending order, whatever order they came in and however far apart.
func TestRowListGivesRowsSorted(t *testing.T) {
	for _, rows := range [][]uint32{
		{7},
		{0, 1, 2, 3, 1000, 1001, 70000, math.MaxUint32},
		{math.MaxUint32, 0, 5, 3, 1 << 20, 2},
		{10, 20, 30, 1, 2, 3, 11, 21, 31}, // three ascending runs: inputs of a merge
	} {
		var l rowList
		for _, r := range rows {
			l.add(r)
		}
		if int(l.n) != len(rows) {
			t.Fatalf("%v: %d rows counted", rows, l.n)
		}
		want := slices.Sorted(slices.Values(rows))
		got := l.appendSorted([]uint32{99}) // appends after what dst holds
		if got[0] != 99 || !slices.Equal(got[1:], want) {
			t.Fatalf("%v: got %v, want 99 then %v", rows, got, want)
		}
	}
	var asc rowList
	for r := uint32(0); r < 1000; r += 3 {
		asc.add(r)
	}
	if len(asc.enc) != int(asc.n) {
		t.Fatalf("%d rows 3 apart took %d bytes, want one each", asc.n, len(asc.enc))
	}
}

// TestMergeTextOrderedMapsMatchBuild: merged through row maps that keep
// each input's order (a sort-key compaction interleaves its inputs so),
// the token index is the one indexing the merged messages gives.
func TestMergeTextOrderedMapsMatchBuild(t *testing.T) {
	msgs := edgeMessages(4000, 5)
	const parts = 4
	// Output rows deal the parts' rows round-robin: part k's i-th row
	// lands after its (i-1)-th, as in a merge of sorted inputs.
	perm := make([]int, len(msgs))
	next := 0
	for i := 0; next < len(msgs); i++ {
		for k := 0; k < parts; k++ {
			from, to := k*len(msgs)/parts, (k+1)*len(msgs)/parts
			if from+i < to {
				perm[from+i] = next
				next++
			}
		}
	}
	merged, built := mergeTextPerm(t, msgs, parts, perm, nil, true)
	assertSameTerms(t, merged, built)
	if len(tokenTerms(t, merged)) < 100 {
		t.Fatal("too few terms to test anything")
	}
}

// TestMergesLeaveInputTermsUnloaded: a merge reads each input's terms for
// itself; an input's index keeps only the terms it had loaded before (a
// compaction's inputs are about to be replaced, and kept every field's
// terms to its end).
func TestMergesLeaveInputTermsUnloaded(t *testing.T) {
	msgs := edgeMessages(500, 3)
	codes := make([]string, len(msgs))
	notFound := uint64(0)
	for i := range codes {
		codes[i] = []string{"200", "404", "500"}[i%3]
		if codes[i] == "404" {
			notFound++
		}
	}
	in := build(t, func(b *Builder) {
		b.AddText("event_message", 0, strVec(msgs, 0))
		b.AddStrings("status", 0, strVec(codes, 0))
	})
	if _, _, _, err := in.Match("status", KindString, func(any) bool { return true }, false); err != nil {
		t.Fatal(err)
	}
	loaded := func(path string, kind Kind) bool {
		f := in.fields[fieldKey{path, kind}]
		f.mu.Lock()
		defer f.mu.Unlock()
		return f.loaded
	}
	if _, err := Merge([]MergeInput{{Index: in, Rows: uint32(len(msgs))}, {Index: in, Offset: uint32(len(msgs)), Rows: uint32(len(msgs))}}, &memUnits{}, nil); err != nil {
		t.Fatal(err)
	}
	rowMap := make([]uint32, len(msgs))
	for i := range rowMap {
		rowMap[i] = uint32(i)
	}
	if err := NewBuilder(nil).MergeText("event_message", []MappedInput{{Index: in, RowMap: rowMap}}); err != nil {
		t.Fatal(err)
	}
	if loaded("event_message", KindToken) {
		t.Fatal("the merges left the input's token terms loaded")
	}
	if !loaded("status", KindString) {
		t.Fatal("terms a query had loaded were let go")
	}
	// The input still answers as before.
	bm, _, ok, err := in.Match("status", KindString, func(v any) bool { return v == "404" }, true)
	if err != nil || !ok {
		t.Fatalf("status 404: ok %v, err %v", ok, err)
	}
	if bm.GetCardinality() != notFound {
		t.Fatalf("status 404: %d rows, want %d", bm.GetCardinality(), notFound)
	}
}

// TestMergedTermSizes: the per-term records of a large MergeText stay
// the size their comments give.
func TestMergedTermSizes(t *testing.T) {
	if s := unsafe.Sizeof(rowList{}); s != 32 {
		t.Errorf("rowList takes %d bytes, want 32", s)
	}
	if s := unsafe.Sizeof(mergedTerm{}); s != 48 {
		t.Errorf("mergedTerm takes %d bytes, want 48", s)
	}
	if s := unsafe.Sizeof(mergedOut{}); s != 56 {
		t.Errorf("mergedOut takes %d bytes, want 56", s)
	}
}
