package segment

import (
	"encoding/binary"
	"fmt"
	"math/bits"

	"github.com/klauspost/compress/zstd"
)

// Bit-packed dictionary codes (format version 4). A data page of an
// encDict chunk may hold its codes in b bits each, b the bits the
// dictionary's largest code needs, packed LSB first and stored raw; its
// validity byte then has validPacked, and a u8 b leads the values:
//
//	+----------------------+----------------+-------+----------------------------+
//	| validity u8          | [bitmap]       | b u8  | codes of the present rows, |
//	| validPacked |        | as any page    | 1..32 | b bits each, LSB first:    |
//	|   validAll/Bitmap    |                |       | ceil(present*b/8) bytes    |
//	+----------------------+----------------+-------+----------------------------+
//
// Code k (the k-th present row) is bits [k*b, k*b+b) of the bytes read
// as one little-endian number. A read of one row finds it with one
// 8-byte load, where a zstd page of byte codes costs a decompression of
// the whole page (3-20 us: the ~30 one-byte code columns and the big
// dictionaries of a platform event's record). The writer packs a page when
// the packed bytes are at most 1/packedMaxExtra more than what it would
// store otherwise (the zstd frame of the byte codes, or those raw): codes
// that repeat (status codes, methods) keep their zstd page, codes close
// to random (client addresses, coordinates: 13 bits of 16) get smaller.

// packedMaxExtra: a packed page may take up to 1/packedMaxExtra more
// bytes than the page of byte codes as stored.
const packedMaxExtra = 8

// packedSlackBytes: a packed page may take this many bytes more on top:
// a small zstd frame (the ~100-1,500 bytes of a page of one-byte codes)
// costs ~2 us to decode whatever its size (its Huffman and FSE tables),
// against ~0.3 us for a raw page. Measured with BenchmarkReadRecord (55
// columns of platform events at level 3): slack 0: 653 us a record at
// 66.03 bytes a row; 64: 660 us, 66.07; 128: 599 us, 67.19; 192: 567
// us, 68.05; 256: 570 us, 68.71 (version 3: 698 us, 67.37). With
// copies of columns stored once (samecols.go), 128 against 256: 656 ->
// 613 us, 63.81 -> 65.16 bytes a row.
const packedSlackBytes = 256

// packedBits returns the bits a code of a dictionary of n entries takes.
func packedBits(n int) int {
	return max(1, bits.Len(uint(max(n, 1)-1)))
}

// appendPackedCodes appends the codes of the present rows of [from, to),
// b bits each, LSB first.
func appendPackedCodes(dst []byte, b int, codes []uint32, d *ColumnData, from, to int) []byte {
	var acc uint64 // at most 7 + 32 bits pending
	n := 0
	for i := from; i < to; i++ {
		if !d.present(i) {
			continue
		}
		acc |= uint64(codes[i]) << n
		for n += b; n >= 8; n -= 8 {
			dst = append(dst, byte(acc))
			acc >>= 8
		}
	}
	if n > 0 {
		dst = append(dst, byte(acc))
	}
	return dst
}

// packCodePage appends to dst the packed form of body, a page of byte
// codes appendPage made of rows [from, to) of the chunk.
func (p *chunkPlan) packCodePage(dst, body []byte, d *ColumnData, from, to int) []byte {
	head := 1
	if body[0] == validBitmap {
		head += (to - from + 7) / 8
	}
	dst = append(dst, body[:head]...)
	dst[0] |= validPacked
	b := packedBits(len(p.dictStrs) + len(p.dictInts))
	dst = append(dst, byte(b))
	return appendPackedCodes(dst, b, p.codes, d, from, to)
}

// writeCodePage writes body, a data page of dictionary codes of rows
// [from, to), as the version allows and the rule above chooses: packed
// and raw, or as writeUnitSaving would.
func (w *Writer) writeCodePage(p *chunkPlan, d *ColumnData, from, to int, body []byte, enc *zstd.Encoder) (int64, int64) {
	if w.version < FormatV4 {
		return w.writeUnitSaving(body, true, enc, nil, p.pageMinSaving())
	}
	w.packScratch = p.packCodePage(w.packScratch[:0], body, d, from, to)
	stored, codec := body, byte(codecRaw)
	if len(body) > 64 {
		w.comp = enc.EncodeAll(body, w.comp[:0])
		if len(w.comp) < len(body)-len(body)/p.pageMinSaving() {
			stored, codec = w.comp, codecZstd
		}
	}
	if len(w.packScratch) <= len(stored)+len(stored)/packedMaxExtra+packedSlackBytes {
		return w.putUnit(w.packScratch, codecRaw)
	}
	return w.putUnit(stored, codec)
}

// decodePackedCodes is decodeDictCodes for a page of packed codes.
func decodePackedCodes(pv *pageView, t ColType, c *chunkMeta, sel rowSel, out *pageOut) error {
	if len(pv.vals) < 1 {
		return errShort
	}
	b := int(pv.vals[0])
	if b < 1 || b > 32 {
		return fmt.Errorf("packed code width %d", b)
	}
	codes := pv.vals[1:]
	// present <= rows <= maxBlockRows: no overflow.
	if len(codes) < (pv.present*b+7)/8 {
		return errShort
	}
	nd := c.dictEntries
	if out.dict != nil {
		nd = len(out.dict.strs) + len(out.dict.ints)
	}
	mask := uint64(1)<<b - 1
	n := sel.n()
	rk := ranker{bitmap: pv.bitmap}
	for i := 0; i < n; i++ {
		r := sel.at(i)
		j := out.off + i
		if !pv.has(r) {
			out.null(j)
			continue
		}
		code := packedCode(codes, rk.rank(r), b, mask)
		if code >= uint64(nd) {
			return fmt.Errorf("dictionary code %d of %d", code, nd)
		}
		if err := out.putCode(t, j, uint32(code)); err != nil {
			return err
		}
	}
	return nil
}

// packedCode returns code k of codes packed b bits each (mask: b ones);
// codes holds at least ceil((k+1)*b/8) bytes.
func packedCode(codes []byte, k, b int, mask uint64) uint64 {
	bit := k * b
	i := bit >> 3
	if i+8 <= len(codes) {
		return binary.LittleEndian.Uint64(codes[i:]) >> (bit & 7) & mask
	}
	var x uint64
	for j := 0; i+j < len(codes) && j < 8; j++ {
		x |= uint64(codes[i+j]) << (8 * j)
	}
	return x >> (bit & 7) & mask
}
