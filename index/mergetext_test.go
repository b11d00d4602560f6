package index

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/RoaringBitmap/roaring/v2"
)

// mergeTextCase indexes msgs cut into parts (one index each), merges the
// parts' token indexes through a random permutation of the rows, and
// returns the merged index and the one built from the permuted messages.
func mergeTextCase(t *testing.T, msgs []string, parts int, seed uint64, opts *BuilderOptions, values bool) (merged, built *Index) {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 3))
	return mergeTextPerm(t, msgs, parts, rng.Perm(len(msgs)), opts, values)
}

// mappedTextInputs indexes msgs cut into parts, one index each, and
// returns them as a merge's inputs: input row i of the whole goes to
// output row perm[i].
func mappedTextInputs(t *testing.T, msgs []string, parts int, perm []int, opts *BuilderOptions) []MappedInput {
	t.Helper()
	var inputs []MappedInput
	for k := 0; k < parts; k++ {
		from, to := k*len(msgs)/parts, (k+1)*len(msgs)/parts
		ix := buildWith(t, opts, func(b *Builder) { b.AddText("event_message", 0, strVec(msgs[from:to], 0)) })
		rowMap := make([]uint32, to-from)
		for i := range rowMap {
			rowMap[i] = uint32(perm[from+i])
		}
		inputs = append(inputs, MappedInput{Index: ix, RowMap: rowMap})
	}
	return inputs
}

// mergeTextPerm is mergeTextCase with the permutation given: input row i
// goes to output row perm[i].
func mergeTextPerm(t *testing.T, msgs []string, parts int, perm []int, opts *BuilderOptions, values bool) (merged, built *Index) {
	t.Helper()
	out := make([]string, len(msgs))
	for i, p := range perm {
		out[p] = msgs[i]
	}
	built = buildWith(t, opts, func(b *Builder) { b.AddText("event_message", 0, strVec(out, 0)) })
	b := NewBuilder(opts)
	b.AddStrings("other", 0, strVec(make([]string, len(msgs)), 0)) // a field built beside the merged one
	inputs := mappedTextInputs(t, msgs, parts, perm, opts)
	if values {
		for k := range inputs {
			part := msgs[k*len(msgs)/parts : (k+1)*len(msgs)/parts]
			inputs[k].Values = func(fn func(row uint32, s string)) error {
				for i, m := range part {
					fn(uint32(i), m)
				}
				return nil
			}
		}
	}
	if err := b.MergeText("event_message", inputs); err != nil {
		t.Fatal(err)
	}
	merged = writeAndOpen(t, b)
	if !merged.Has("other", KindString) {
		t.Fatal("the field built beside the merged one is missing")
	}
	return merged, built
}

// tokenTerms returns a token field's terms: their rows, nil for frequent.
func tokenTerms(t *testing.T, ix *Index) map[string]*roaring.Bitmap {
	t.Helper()
	out := map[string]*roaring.Bitmap{}
	if err := ix.ForEachTerm("event_message", KindToken, func(term any, rows *roaring.Bitmap) error {
		out[term.(string)] = rows
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestMergeTextMatchesBuild: the token index merged from the parts'
// indexes through a permutation of their rows is the one indexing the
// permuted messages gives: the same terms with the same rows, the same
// long rows and the same frequent tokens, also for tokens frequent in a
// part but not overall (their rows found in the part's values). Without
// the parts' values those stay frequent, every other term is exact, and
// every substring search still finds every row.
func TestMergeTextMatchesBuild(t *testing.T) {
	msgs := edgeMessages(6000, 9)
	for i := 0; i < len(msgs); i += 9 { // long hex tokens: long rows
		msgs[i] += " " + strings.Repeat(fmt.Sprintf("%016x", i), 5)
	}
	merged, built := mergeTextCase(t, msgs, 5, 1, nil, true)
	g, w := tokenTerms(t, merged), tokenTerms(t, built)
	if len(g) != len(w) || len(w) < 100 {
		t.Fatalf("%d terms merged, %d built", len(g), len(w))
	}
	frequent := 0
	for term, wr := range w {
		gr, ok := g[term]
		if !ok || (gr == nil) != (wr == nil) || gr != nil && !gr.Equals(wr) {
			t.Fatalf("term %q: merged %v, built %v", term, gr, wr)
		}
		if wr == nil {
			frequent++
		}
	}
	if frequent == 0 {
		t.Fatal("the data should have frequent tokens")
	}
	gl, err := merged.LongRows("event_message")
	if err != nil {
		t.Fatal(err)
	}
	wl, err := built.LongRows("event_message")
	if err != nil {
		t.Fatal(err)
	}
	if wl == nil || gl == nil || !gl.Equals(wl) {
		t.Fatalf("long rows %v, want %v", gl, wl)
	}

	// Tokens of 1 part in 40 are frequent in a part of 600 rows (past 64)
	// but not overall (6000/40 = 150): with the parts' values, their rows
	// are found there, and the index is the same again.
	opts := &BuilderOptions{FrequentTokenShare: 1.0 / 40}
	for i := 0; i < 100; i++ { // 100 rows, all in the first part
		msgs[i] += " burst burst"
	}
	merged, built = mergeTextCase(t, msgs, 10, 2, opts, true)
	assertSameTerms(t, merged, built)
	if g := tokenTerms(t, merged)["burst"]; g == nil || g.GetCardinality() != 100 {
		t.Fatalf("burst: %v, want 100 rows", g)
	}

	// Without the values, such tokens stay frequent.
	merged, built = mergeTextCase(t, msgs, 10, 2, opts, false)
	g, w = tokenTerms(t, merged), tokenTerms(t, built)
	if len(g) != len(w) {
		t.Fatalf("%d terms merged, %d built", len(g), len(w))
	}
	promoted := 0
	for term, wr := range w {
		gr, ok := g[term]
		switch {
		case !ok || wr == nil && gr != nil:
			t.Fatalf("term %q: merged %v, built %v", term, gr, wr)
		case gr == nil && wr != nil:
			promoted++
		case gr != nil && !gr.Equals(wr):
			t.Fatalf("term %q: merged %v, built %v", term, gr, wr)
		}
	}
	if promoted == 0 {
		t.Fatal("no token is frequent in a part only: the case tests nothing")
	}
	rng := rand.New(rand.NewPCG(2, 3))
	perm := rng.Perm(len(msgs))
	out := make([]string, len(msgs))
	for i, p := range perm {
		out[p] = msgs[i]
	}
	for _, needle := range []string{"GET", "rest", "supabase", "timed out", "203.0.113.7", "kkkk", "burst"} {
		bm, _, ok, err := merged.TextCandidates("event_message", needle, false)
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			continue
		}
		for i, m := range out {
			if strings.Contains(m, needle) && !bm.Contains(uint32(i)) {
				t.Fatalf("%q: row %d holds it but is not a candidate", needle, i)
			}
		}
	}
}

// TestMergeTextRejectsRowsPastMap: postings of rows the row map does not
// cover are an error, not a panic or a wrong row.
func TestMergeTextRejectsRowsPastMap(t *testing.T) {
	ix := build(t, func(b *Builder) { b.AddText("event_message", 0, strVec([]string{"a b", "b c", "c d"}, 0)) })
	b := NewBuilder(nil)
	if err := b.MergeText("event_message", []MappedInput{{Index: ix, RowMap: []uint32{0, 1}}}); err == nil {
		t.Fatal("a posting past the row map was accepted")
	}
}

// FuzzMergeText: for any messages, cut into parts and permuted, the
// merged token index never misses a row of a token a built one has, and
// agrees with it on every term it keeps postings for.
func FuzzMergeText(f *testing.F) {
	f.Add("GET /rest/v1/users 200|POST auth 500|a b c|||"+strings.Repeat("k", 70)+" x|deadbeefdeadbeef y", uint8(2), uint64(1))
	f.Add(strings.Join(edgeMessages(50, 4), "|"), uint8(3), uint64(7))
	f.Fuzz(func(t *testing.T, joined string, parts uint8, seed uint64) {
		msgs := strings.Split(joined, "|")
		if len(msgs) > 2000 {
			msgs = msgs[:2000]
		}
		p := int(parts)%len(msgs) + 1
		merged, built := mergeTextCase(t, msgs, p, seed, &BuilderOptions{FrequentTokenShare: 1.0 / 8}, true)
		assertSameTerms(t, merged, built)
		gl, _ := merged.LongRows("event_message")
		wl, _ := built.LongRows("event_message")
		if !slices.Equal(rowsOrNil(gl), rowsOrNil(wl)) {
			t.Fatalf("long rows %v, want %v", gl, wl)
		}
		// The same merge with the tokens to recover found as the values
		// go by (TextRecovery) builds the same index.
		perm := rand.New(rand.NewPCG(seed, 3)).Perm(len(msgs))
		recovered, built, _ := mergeTextRecovered(t, msgs, p, perm, &BuilderOptions{FrequentTokenShare: 1.0 / 8}, len(msgs))
		assertSameTerms(t, recovered, built)
	})
}

// assertSameTerms fails unless two indexes have the same token terms,
// each frequent in both or with the same rows in both.
func assertSameTerms(t *testing.T, got, want *Index) {
	t.Helper()
	g, w := tokenTerms(t, got), tokenTerms(t, want)
	if len(g) != len(w) {
		t.Fatalf("%d terms merged, %d built", len(g), len(w))
	}
	for term, wr := range w {
		gr, ok := g[term]
		if !ok || (gr == nil) != (wr == nil) || gr != nil && !gr.Equals(wr) {
			t.Fatalf("term %q: merged %v, built %v", term, gr, wr)
		}
	}
}

func rowsOrNil(bm *roaring.Bitmap) []uint32 {
	if bm == nil {
		return nil
	}
	return bm.ToArray()
}
