package segment

import (
	"encoding/binary"
	"math"
)

// Fixed-width values: encNone (booleans that are all true: the page's
// validity is the whole page), encBits (booleans, one bit per present
// value) and encPlain64 (int64, timestamp and float64 values, 8 bytes
// little-endian each). Writer and reader of each are side by side here.

// appendBitsValues writes the present booleans of rows [from, to), one bit
// each in row order (present of them).
func appendBitsValues(dst []byte, d *ColumnData, from, to, present int) []byte {
	start := len(dst)
	dst = append(dst, make([]byte, (present+7)/8)...)
	k := 0
	for i := from; i < to; i++ {
		if d.present(i) {
			if d.Bools[i] {
				dst[start+k/8] |= 1 << (k % 8)
			}
			k++
		}
	}
	return dst
}

// appendPlain64Values writes the present values of rows [from, to) as 8
// bytes each.
func appendPlain64Values(dst []byte, t ColType, d *ColumnData, from, to int) []byte {
	for i := from; i < to; i++ {
		if d.present(i) {
			if t == TypeFloat64 {
				dst = binary.LittleEndian.AppendUint64(dst, math.Float64bits(d.Floats[i]))
			} else {
				dst = binary.LittleEndian.AppendUint64(dst, uint64(d.Ints[i]))
			}
		}
	}
	return dst
}

// decodeNone reads an encNone page: true where present.
func decodeNone(pv *pageView, sel rowSel, out *pageOut) error {
	dst := out.dst
	for i, n := 0, sel.n(); i < n; i++ {
		if pv.has(sel.at(i)) {
			dst.Bools[out.off+i] = true
		} else {
			out.null(out.off + i)
		}
	}
	return nil
}

// decodeBits reads an encBits page.
func decodeBits(pv *pageView, sel rowSel, out *pageOut) error {
	vals := pv.vals
	if len(vals) < (pv.present+7)/8 {
		return errShort
	}
	dst := out.dst
	rk := ranker{bitmap: pv.bitmap}
	for i, n := 0, sel.n(); i < n; i++ {
		r := sel.at(i)
		if !pv.has(r) {
			out.null(out.off + i)
			continue
		}
		k := rk.rank(r)
		dst.Bools[out.off+i] = vals[k>>3]&(1<<(k&7)) != 0
	}
	return nil
}

// decodePlain64 reads an encPlain64 page of column type t.
func decodePlain64(pv *pageView, t ColType, sel rowSel, out *pageOut) error {
	vals := pv.vals
	if len(vals) < 8*pv.present {
		return errShort
	}
	dst := out.dst
	rk := ranker{bitmap: pv.bitmap}
	for i, n := 0, sel.n(); i < n; i++ {
		r := sel.at(i)
		if !pv.has(r) {
			out.null(out.off + i)
			continue
		}
		u := binary.LittleEndian.Uint64(vals[8*rk.rank(r):])
		if t == TypeFloat64 {
			dst.Floats[out.off+i] = math.Float64frombits(u)
		} else {
			dst.Ints[out.off+i] = int64(u)
		}
	}
	return nil
}
