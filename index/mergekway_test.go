package index

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/sediment/sediment/internal/vec"
)

// TestMergeWritesTheBuiltIndex merges the indexes of three row ranges,
// given in order and out of order, and checks that the merged index is
// byte for byte the one built over all the rows at once: the same fields,
// terms, counts, postings (single rows, arrays, runs and bitsets across
// several 65536-row containers) and long rows.
func TestMergeWritesTheBuiltIndex(t *testing.T) {
	rng := rand.New(rand.NewPCG(14, 9))
	const n = 150_000
	msgs := make([]string, n)
	status := make([]int64, n)
	method := make([]string, n)
	ok := make([]bool, n)
	long := strings.Repeat("ab12", 17) // hex, longer than MaxTokenLen: a long row
	for i := range msgs {
		msgs[i] = fmt.Sprintf("req %d %s took %dms host-%d", rng.IntN(50), []string{"GET", "POST"}[i%2], rng.IntN(20), i%3000)
		if i%997 == 0 {
			msgs[i] += " key " + long
		}
		if i/40000 == 1 {
			msgs[i] += " batch" // a run of rows
		}
		status[i] = []int64{200, 404, 500}[rng.IntN(3)]
		method[i] = []string{"GET", "POST", "PUT"}[i%3]
		ok[i] = i%5 != 0
	}
	opts := &BuilderOptions{FrequentTokenShare: 1}
	add := func(b *Builder, from, to int) {
		b.AddText("event_message", 0, strVec(msgs[from:to], 0))
		b.AddInts("status", 0, &vec.Vector{Type: vec.Int64, Len: to - from, Ints: status[from:to]})
		b.AddStrings("method", 0, dictVec(method[from:to]))
		b.AddBools("ok", 0, &vec.Vector{Type: vec.Bool, Len: to - from, Bools: ok[from:to]})
	}
	write := func(fn func(b *Builder)) ([]byte, *memUnits) {
		b := NewBuilder(opts)
		fn(b)
		return writeIndex(t, b)
	}
	wholeDir, wholeUnits := write(func(b *Builder) { add(b, 0, n) })
	cuts := []int{0, 70_001, 70_002, n}
	var inputs []MergeInput
	for i := range len(cuts) - 1 {
		from, to := cuts[i], cuts[i+1]
		ix := buildWith(t, opts, func(b *Builder) { add(b, from, to) })
		inputs = append(inputs, MergeInput{Index: ix, Offset: uint32(from), Rows: uint32(to - from)})
	}
	for _, order := range [][]int{{0, 1, 2}, {2, 0, 1}} {
		var in []MergeInput
		for _, i := range order {
			in = append(in, inputs[i])
		}
		u := &memUnits{}
		dir, err := Merge(in, u, opts)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(dir, wholeDir) || !bytes.Equal(u.data, wholeUnits.data) {
			t.Fatalf("inputs in order %v: merged index (%d+%d bytes) differs from the built one (%d+%d)", order, len(dir), len(u.data), len(wholeDir), len(wholeUnits.data))
		}
	}
}

// TestMergeRejectsRowsPastInput: a posting naming a row past its input's
// rows is reported as corrupt, not shifted into the next input's rows.
func TestMergeRejectsRowsPastInput(t *testing.T) {
	opts := &BuilderOptions{FrequentTokenShare: 1}
	ix := buildWith(t, opts, func(b *Builder) {
		b.AddText("m", 0, strVec([]string{"a b", "a", "b", "a c"}, 0))
	})
	u := &memUnits{}
	_, err := Merge([]MergeInput{{Index: ix, Rows: 2}, {Index: ix, Offset: 2, Rows: 4}}, u, opts)
	if err == nil || !strings.Contains(err.Error(), "past") {
		t.Fatalf("merge of postings past the input's rows: %v", err)
	}
}

// TestMergeTextWritesTheBuiltIndex: the token field MergeText carries over
// from time-ordered parts into a segment ordered by a key (each part's
// rows spread over the whole segment, in order within a key) is byte for
// byte the field AddText builds over the reordered messages, tokens
// frequent in a part but not overall included.
func TestMergeTextWritesTheBuiltIndex(t *testing.T) {
	msgs := edgeMessages(9000, 4)
	for i := 0; i < len(msgs); i += 13 { // long hex tokens: long rows
		msgs[i] += " " + strings.Repeat(fmt.Sprintf("%016x", i), 5)
	}
	for i := range msgs {
		msgs[i] += fmt.Sprintf(" proj%d", i%7)
		if i < 400 {
			msgs[i] += " burst" // frequent in the first part, not overall
		}
	}
	// Output order: by project (i%7), then by input row.
	perm := make([]int, len(msgs))
	next := 0
	for p := range 7 {
		for i := p; i < len(msgs); i += 7 {
			perm[i] = next
			next++
		}
	}
	opts := &BuilderOptions{FrequentTokenShare: 1.0 / 16}
	out := make([]string, len(msgs))
	for i, p := range perm {
		out[p] = msgs[i]
	}
	write := func(b *Builder) ([]byte, []byte) {
		dir, u := writeIndex(t, b)
		return dir, u.data
	}
	built := NewBuilder(opts)
	for from := 0; from < len(out); from += 4096 {
		to := min(from+4096, len(out))
		built.AddText("event_message", uint32(from), strVec(out[from:to], 0))
	}
	wantDir, wantUnits := write(built)
	const parts = 3
	var inputs []MappedInput
	for k := range parts {
		from, to := k*len(msgs)/parts, (k+1)*len(msgs)/parts
		ix := buildWith(t, opts, func(b *Builder) { b.AddText("event_message", 0, strVec(msgs[from:to], 0)) })
		rowMap := make([]uint32, to-from)
		for i := range rowMap {
			rowMap[i] = uint32(perm[from+i])
		}
		part := msgs[from:to]
		inputs = append(inputs, MappedInput{Index: ix, RowMap: rowMap, Values: func(fn func(row uint32, s string)) error {
			for i, m := range part {
				fn(uint32(i), m)
			}
			return nil
		}})
	}
	// The case must hold tokens frequent in a part but not overall.
	builtIx, err := Open(wantDir, &memUnits{data: wantUnits})
	if err != nil {
		t.Fatal(err)
	}
	overall := tokenTerms(t, builtIx)
	recovered := 0
	for _, in := range inputs {
		for term, rows := range tokenTerms(t, in.Index) {
			if rows == nil && overall[term] != nil {
				recovered++
			}
		}
	}
	if recovered == 0 {
		t.Fatal("no token is frequent in a part only")
	}
	b := NewBuilder(opts)
	if err := b.MergeText("event_message", inputs); err != nil {
		t.Fatal(err)
	}
	gotDir, gotUnits := write(b)
	if !bytes.Equal(gotDir, wantDir) || !bytes.Equal(gotUnits, wantUnits) {
		t.Fatalf("merged token index (%d+%d bytes) differs from the built one (%d+%d)", len(gotDir), len(gotUnits), len(wantDir), len(wantUnits))
	}
}

// TestPostingReaderInOrder: a posting reader that keeps only its last
// unit reads every term's rows right in any order (units read again when
// the order goes back), as one keeping every unit does.
func TestPostingReaderInOrder(t *testing.T) {
	msgs := edgeMessages(20000, 5)
	ix := buildWith(t, &BuilderOptions{FrequentTokenShare: 1}, func(b *Builder) {
		b.AddText("event_message", 0, strVec(msgs, 0))
	})
	f, terms, err := ix.lookup("event_message", KindToken)
	if err != nil {
		t.Fatal(err)
	}
	if len(f.units) < 2 {
		t.Fatalf("%d posting units: the case needs several", len(f.units))
	}
	all := &postingReader{ix: ix, f: f}
	for _, order := range []string{"ascending", "descending"} {
		last := &postingReader{ix: ix, f: f, inOrder: true}
		for k := range f.Terms {
			i := k
			if order == "descending" {
				i = f.Terms - 1 - k
			}
			want, err := all.appendTermRows(nil, terms, i, 0, uint32(len(msgs)))
			if err != nil {
				t.Fatal(err)
			}
			got, err := last.appendTermRows(nil, terms, i, 0, uint32(len(msgs)))
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, want) {
				t.Fatalf("%s: term %q: %d rows, want %d", order, terms.strs[i], len(got), len(want))
			}
		}
	}
}
