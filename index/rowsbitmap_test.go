package index

import (
	"bytes"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/RoaringBitmap/roaring/v2"
)

// TestRowsBitmapSameBytes: a bitmap rowsBitmap builds, dense or sparse,
// serializes (after RunOptimize, as a posting unit holds it) to the bytes
// of one built row by row, whatever the rows' density and runs, the bitset
// it lends reused from term to term.
func TestRowsBitmapSameBytes(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 14))
	var words []uint64
	serialize := func(bm *roaring.Bitmap) []byte {
		bm.RunOptimize()
		var buf bytes.Buffer
		if _, err := bm.WriteTo(&buf); err != nil {
			t.Fatal(err)
		}
		return buf.Bytes()
	}
	for i := range 120 {
		span := 1 + rng.IntN(1<<20)
		var rows []uint32
		switch i % 4 {
		case 0: // a share of rows at random
			p := rng.Float64() * rng.Float64()
			for r := range span {
				if rng.Float64() < p {
					rows = append(rows, uint32(r))
				}
			}
		case 1: // runs
			for r := 0; r < span; r += 1 + rng.IntN(5000) {
				for k := range rng.IntN(3000) {
					rows = append(rows, uint32(r+k))
				}
				r += 3000
			}
		case 2: // just over and under an array container's 4096
			base := uint32(rng.IntN(8)) << 16
			for k := range 4090 + rng.IntN(12) {
				rows = append(rows, base+uint32(k*15))
			}
		case 3: // a few
			for range rng.IntN(5) {
				rows = append(rows, uint32(rng.IntN(span)))
			}
		}
		slices.Sort(rows)
		rows = slices.Compact(rows)
		want := roaring.New()
		want.AddMany(rows)
		got := rowsBitmap(rows, &words)
		if !bytes.Equal(serialize(got), serialize(want)) {
			t.Fatalf("case %d (%d rows over %d): bytes differ", i, len(rows), span)
		}
	}
	// Rows out of order are still a set.
	got := rowsBitmap([]uint32{5, 9, 1, 2, 3, 4, 6, 7, 8}, &words)
	if !slices.Equal(got.ToArray(), []uint32{1, 2, 3, 4, 5, 6, 7, 8, 9}) {
		t.Fatalf("unsorted rows gave %v", got.ToArray())
	}
}
