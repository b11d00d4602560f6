package segment

import (
	"math/bits"

	"github.com/sediment/sediment/internal/vec"
)

// Which rows of a column have a value, a word of NULL bits at a time: a
// writer counts a chunk's and each page's present rows and writes each
// page's validity bitmap, and did so with a bit lookup a row (issue 14:
// ColumnData.present was 1.5% of the CPU of a flush and a compaction).

// presentIn returns how many of rows [from, to) have a value.
func (c *ColumnData) presentIn(from, to int) int {
	if c.Nulls == nil {
		return to - from
	}
	return to - from - countBits(c.Nulls, from, to)
}

// countBits returns how many bits of b in [from, to) are set; bits past
// b's end read as unset.
func countBits(b vec.Bitset, from, to int) int {
	n := 0
	for from < to {
		w := from >> 6
		if w >= len(b) {
			break
		}
		word := b[w] >> (uint(from) & 63)
		span := min(64-from&63, to-from)
		if span < 64 {
			word &= 1<<span - 1
		}
		n += bits.OnesCount64(word)
		from += span
	}
	return n
}

// bitsFrom returns the 64 bits of b from bit pos on, bit pos lowest; bits
// past b's end read as unset.
func bitsFrom(b vec.Bitset, pos int) uint64 {
	w, s := pos>>6, uint(pos)&63
	var v uint64
	if w < len(b) {
		v = b[w] >> s
	}
	if s != 0 && w+1 < len(b) {
		v |= b[w+1] << (64 - s)
	}
	return v
}

// appendValidity appends the validity bitmap of rows [from, to): bit r
// (byte r/8, bit r%8) is set when row from+r has a value; the bits past
// to-from in the last byte are 0.
func (c *ColumnData) appendValidity(dst []byte, from, to int) []byte {
	n := to - from
	for r := 0; r < n; r += 64 {
		present := ^bitsFrom(c.Nulls, from+r) // nil Nulls: every row
		if left := n - r; left < 64 {
			present &= 1<<left - 1
		}
		for k := 0; k < 64 && r+k < n; k += 8 {
			dst = append(dst, byte(present>>k))
		}
	}
	return dst
}
