package index

import "github.com/RoaringBitmap/roaring/v2"

// denseShare: a term of at least one row in this many of the rows its
// bitmap spans is built from a bitset (roaring.FromDense), a pass over
// span/64 words, rather than row by row (Bitmap.AddMany, a container
// lookup and an insert per row, several times the cost of a bit set).
const denseShare = 256

// rowsBitmap returns the bitmap of rows (ascending). words
// lends it a bitset's memory: the bitmap may share it, so it must be
// serialized before words is used again. Either way the bitmap holds the
// same containers, which serialize to the same bytes.
func rowsBitmap(rows []uint32, words *[]uint64) *roaring.Bitmap {
	if len(rows) == 0 {
		return roaring.New()
	}
	last := rows[len(rows)-1]
	if uint64(len(rows))*denseShare < uint64(last)+1 {
		bm := roaring.New()
		bm.AddMany(rows)
		return bm
	}
	n := int(last/64) + 1
	if cap(*words) < n {
		*words = make([]uint64, n)
	}
	w := (*words)[:n]
	clear(w)
	for _, r := range rows {
		if int(r/64) >= n {
			// Not ascending after all (callers sort them): row by row.
			bm := roaring.New()
			bm.AddMany(rows)
			return bm
		}
		w[r/64] |= 1 << (r % 64)
	}
	return roaring.FromDense(w, false)
}
