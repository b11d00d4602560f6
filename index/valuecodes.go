package index

import (
	"encoding/binary"
	"math/bits"
	"slices"

	"github.com/sediment/sediment/internal/varint"
)

// A value field (int, string, bool) holds at most one value per row, and
// few distinct ones (MaxValueTerms). Until Write, the builder keeps such a
// field as a column of term codes rather than as each term's postings:
// code 0 for a row without a value, k for a row holding the field's k-th
// term. Codes take the fewest bits that hold the field's term count (or
// less, as runs or as the rows that have a value), so a field of fewer
// than 128 terms takes at most 7 bits a row, and its terms' postings, 2 to 4 bytes a row as roaring
// array containers grown by doubling (issue 14: 48 MB of the heap while a
// flush ran), are built one field at a time, as it is written.

// codeChunk is the term codes of rows [base, base+n) of the segment: one
// block of a value field.
type codeChunk struct {
	base uint32
	n    uint32
	// width is the bits per code of a dense chunk, whose data packs one
	// code per row, least significant bits first; 0 for a sparse chunk,
	// whose data lists the rows with a value as uvarint pairs: the row's
	// distance from the previous such row (the first one's from base)
	// and its code.
	width uint8
	data  []byte
	// runs says data lists the chunk's rows as runs of one code instead
	// (width 0): uvarint pairs of the run's length (at least 1) and its
	// code, in row order, covering every row. Compaction's outputs are
	// ordered by a key (the project) first, so that the fields that
	// follow it come in runs: the index builder's codes were 22-28 MB of
	// the heap at 10M events (issue 14), mostly for compaction's outputs.
	runs bool
}

// codeWidth is the bits a dense chunk gives a code when the field has
// nterms terms: the fewest that hold codes 0 to nterms. (Widths were
// rounded up to 1, 2, 4, 8, 16 or 32 bits until the fields of platform
// events, mostly of 5 to 50 terms, were seen to take a third less at the
// exact width.)
func codeWidth(nterms uint32) uint8 {
	return uint8(max(1, bits.Len32(nterms)))
}

// encodeCodes packs codes (one per row, rows base on; present of them not
// 0; none above nterms) into the smallest of a dense chunk, a sparse one
// and one of runs. sparse lends the sparse and runs encodings their
// memory; the chunk's data is an allocation of its exact size.
func encodeCodes(base uint32, codes []uint32, present int, nterms uint32, sparse *[]byte) codeChunk {
	c := codeChunk{base: base, n: uint32(len(codes)), width: codeWidth(nterms)}
	dense := (len(codes)*int(c.width) + 7) / 8
	best := dense
	var sparseData []byte
	// A sparse row takes at least two bytes: try it only when that is
	// less than the dense chunk.
	if present*2 < dense {
		buf := (*sparse)[:0]
		prev := 0
		for i, code := range codes {
			if code == 0 {
				continue
			}
			buf = binary.AppendUvarint(buf, uint64(i-prev))
			buf = binary.AppendUvarint(buf, uint64(code))
			prev = i
		}
		*sparse = buf
		if len(buf) < best {
			best, sparseData = len(buf), buf
		}
	}
	if runsSize(codes, best) < best {
		buf := (*sparse)[:0]
		for i := 0; i < len(codes); {
			j := i + 1
			for j < len(codes) && codes[j] == codes[i] {
				j++
			}
			buf = binary.AppendUvarint(buf, uint64(j-i))
			buf = binary.AppendUvarint(buf, uint64(codes[i]))
			i = j
		}
		*sparse = buf
		c.width, c.runs, c.data = 0, true, slices.Clone(buf)
		return c
	}
	if sparseData != nil {
		c.width, c.data = 0, slices.Clone(sparseData)
		return c
	}
	c.data = make([]byte, dense)
	// Codes are packed least significant bits first, one after another.
	w := uint(c.width)
	var acc uint64
	var nbits uint
	at := 0
	for _, code := range codes {
		acc |= uint64(code) << nbits
		for nbits += w; nbits >= 8; nbits -= 8 {
			c.data[at] = byte(acc)
			acc >>= 8
			at++
		}
	}
	if nbits > 0 {
		c.data[at] = byte(acc)
	}
	return c
}

// runsSize returns the bytes codes take as runs (see codeChunk.runs), or
// limit once they take that many.
func runsSize(codes []uint32, limit int) int {
	size := 0
	for i := 0; i < len(codes) && size < limit; {
		j := i + 1
		for j < len(codes) && codes[j] == codes[i] {
			j++
		}
		size += varint.Len(uint64(j-i)) + varint.Len(uint64(codes[i]))
		i = j
	}
	return min(size, limit)
}

// uvarintPair reads two uvarints (a run's length or a row gap, then a
// code) from b and returns what follows them; ok is false when b ends
// inside them.
func uvarintPair(b []byte) (first, second uint64, rest []byte, ok bool) {
	first, k := binary.Uvarint(b)
	if k <= 0 {
		return 0, 0, nil, false
	}
	second, k2 := binary.Uvarint(b[k:])
	if k2 <= 0 {
		return 0, 0, nil, false
	}
	return first, second, b[k+k2:], true
}

// decode returns the chunk's codes, one per row, in dst's memory. A chunk
// that does not decode whole (it cannot: encodeCodes wrote it) gives 0 for
// the rows it does not reach.
func (c *codeChunk) decode(dst []uint32) []uint32 {
	dst = slices.Grow(dst[:0], int(c.n))[:c.n]
	if c.runs {
		clear(dst)
		b, row := c.data, uint64(0)
		for len(b) > 0 && row < uint64(c.n) {
			n, code, rest, ok := uvarintPair(b)
			if !ok {
				break
			}
			b = rest
			end := min(row+n, uint64(c.n))
			for ; row < end; row++ {
				dst[row] = uint32(min(code, 1<<32-1))
			}
		}
		return dst
	}
	if c.width == 0 {
		clear(dst)
		b, row := c.data, uint64(0)
		for len(b) > 0 {
			gap, code, rest, ok := uvarintPair(b)
			if !ok {
				break
			}
			b = rest
			if row += gap; row >= uint64(c.n) || gap > uint64(c.n) {
				break
			}
			dst[row] = uint32(min(code, 1<<32-1))
		}
		return dst
	}
	w := uint(c.width)
	if w > 32 || uint64(len(c.data))*8 < uint64(c.n)*uint64(w) {
		clear(dst)
		return dst
	}
	mask := uint64(1)<<w - 1
	var acc uint64
	var nbits uint
	at := 0
	for i := range dst {
		for nbits < w {
			acc |= uint64(c.data[at]) << nbits
			at++
			nbits += 8
		}
		dst[i] = uint32(acc & mask)
		acc >>= w
		nbits -= w
	}
	return dst
}
