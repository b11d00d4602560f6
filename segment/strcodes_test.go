package segment

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/sediment/sediment/internal/vec"
)

// TestPlanDictMatchesValues: a string chunk planned as a dictionary, from
// values or from a caller's codes (into a dictionary that repeats entries
// and has some unused), gets the sorted distinct values present as its
// dictionary and, in every present row, the code of that row's value,
// for dictionaries of a few to tens of thousands of entries (the code
// table grows and is reused smaller and larger, chunk after chunk).
func TestPlanDictMatchesValues(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	var sc planScratch
	dicts := 0
	for _, rows := range []int{65536, 40, 9000, 65536, 300} {
		for _, distinct := range []int{2, 150, 3000, 30000} {
			nulls := vec.NewBitset(rows)
			strs := make([]string, rows)
			codes := make([]uint32, rows)
			dict := make([]string, 0, 2*distinct)
			for k := 0; k < distinct; k++ {
				dict = append(dict, fmt.Sprintf("host-%d.example", k*7919%100003))
			}
			dict = append(dict, dict[:distinct/2]...) // repeated entries
			for i := range strs {
				if rng.IntN(9) == 0 {
					nulls.Set(i)
					continue
				}
				codes[i] = uint32(rng.IntN(len(dict) * 3 / 4)) // some unused
				strs[i] = dict[codes[i]]
			}
			for _, d := range []*ColumnData{{Nulls: nulls, Strs: strs}, {Nulls: nulls, Codes: codes, Dict: dict}} {
				p := planChunk(TypeString, d, rows, FormatLatest, &sc)
				if p.enc != encDict {
					continue
				}
				dicts++
				var want []string
				for i := range rows {
					if d.present(i) {
						want = append(want, strs[i])
					}
				}
				slices.Sort(want)
				want = slices.Compact(want)
				if !slices.Equal(p.dictStrs, want) {
					t.Fatalf("%d rows, %d distinct, codes %v: dictionary of %d entries, want %d", rows, distinct, d.Dict != nil, len(p.dictStrs), len(want))
				}
				for i := range rows {
					if d.present(i) && p.dictStrs[p.codes[i]] != strs[i] {
						t.Fatalf("%d rows, %d distinct, codes %v: row %d has %q, want %q", rows, distinct, d.Dict != nil, i, p.dictStrs[p.codes[i]], strs[i])
					}
				}
			}
		}
	}
	if dicts < 20 {
		t.Fatalf("only %d chunks got a dictionary", dicts)
	}
}

// TestStrCodes: values get codes in order of first appearance, the same
// code every time after, through growth and resets of every size.
func TestStrCodes(t *testing.T) {
	var tb strCodes
	for _, n := range []int{5, 20000, 3, 100000, 700} {
		tb.reset(n)
		var distinct []string
		for round := 0; round < 2; round++ {
			for k := 0; k < n; k++ {
				c, isNew := tb.code(fmt.Sprint("v", k), &distinct)
				if c != uint32(k) || isNew != (round == 0) {
					t.Fatalf("%d values, round %d: value %d got code %d (new %v)", n, round, k, c, isNew)
				}
			}
		}
		if len(distinct) != n {
			t.Fatalf("%d distinct values kept, want %d", len(distinct), n)
		}
	}
}
