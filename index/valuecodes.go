package index

import (
	"encoding/binary"
	"math/bits"
	"slices"
)

// A value field (int, string, bool) holds at most one value per row, and
// few distinct ones (MaxValueTerms). Until Write, the builder keeps such a
// field as a column of term codes rather than as each term's postings:
// code 0 for a row without a value, k for a row holding the field's k-th
// term. Codes take the fewest bits (1, 2, 4, 8, 16 or 32) that hold the
// field's term count, so a field of fewer than 256 terms takes at most a
// byte a row, and its terms' postings, 2 to 4 bytes a row as roaring
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
}

// codeWidth is the bits a dense chunk gives a code when the field has
// nterms terms.
func codeWidth(nterms uint32) uint8 {
	w := uint8(1)
	for w < 32 && uint32(bits.Len32(nterms)) > uint32(w) {
		w *= 2
	}
	return w
}

// encodeCodes packs codes (one per row, rows base on; present of them not
// 0; none above nterms) into the smaller of a dense and a sparse chunk.
// sparse lends the sparse encoding its memory; the chunk's data is an
// allocation of its exact size.
func encodeCodes(base uint32, codes []uint32, present int, nterms uint32, sparse *[]byte) codeChunk {
	c := codeChunk{base: base, n: uint32(len(codes)), width: codeWidth(nterms)}
	dense := (len(codes)*int(c.width) + 7) / 8
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
		if len(buf) < dense {
			c.width, c.data = 0, slices.Clone(buf)
			return c
		}
	}
	c.data = make([]byte, dense)
	switch c.width {
	case 8:
		for i, code := range codes {
			c.data[i] = byte(code)
		}
	case 16:
		for i, code := range codes {
			binary.LittleEndian.PutUint16(c.data[2*i:], uint16(code))
		}
	case 32:
		for i, code := range codes {
			binary.LittleEndian.PutUint32(c.data[4*i:], code)
		}
	default: // 1, 2 or 4 bits: several codes a byte
		w := uint(c.width)
		for i, code := range codes {
			bit := uint(i) * w
			c.data[bit/8] |= byte(code) << (bit % 8)
		}
	}
	return c
}

// decode returns the chunk's codes, one per row, in dst's memory. A chunk
// that does not decode whole (it cannot: encodeCodes wrote it) gives 0 for
// the rows it does not reach.
func (c *codeChunk) decode(dst []uint32) []uint32 {
	dst = slices.Grow(dst[:0], int(c.n))[:c.n]
	if c.width == 0 {
		clear(dst)
		b, row := c.data, uint64(0)
		for len(b) > 0 {
			gap, k := binary.Uvarint(b)
			if k <= 0 {
				break
			}
			b = b[k:]
			code, k := binary.Uvarint(b)
			if k <= 0 {
				break
			}
			b = b[k:]
			if row += gap; row >= uint64(c.n) || gap > uint64(c.n) {
				break
			}
			dst[row] = uint32(min(code, 1<<32-1))
		}
		return dst
	}
	w := uint64(c.width)
	if uint64(len(c.data))*8 < uint64(c.n)*w {
		clear(dst)
		return dst
	}
	switch c.width {
	case 8:
		for i := range dst {
			dst[i] = uint32(c.data[i])
		}
	case 16:
		for i := range dst {
			dst[i] = uint32(binary.LittleEndian.Uint16(c.data[2*i:]))
		}
	case 32:
		for i := range dst {
			dst[i] = binary.LittleEndian.Uint32(c.data[4*i:])
		}
	default:
		mask := uint32(1)<<w - 1
		for i := range dst {
			bit := uint64(i) * w
			dst[i] = uint32(c.data[bit/8]>>(bit%8)) & mask
		}
	}
	return dst
}
