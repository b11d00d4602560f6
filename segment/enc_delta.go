package segment

import (
	"encoding/binary"
	"errors"

	"github.com/sediment/sediment/internal/varint"
)

// encDelta: int64 and timestamp values as zigzag uvarints of the
// difference from the previous present value of the page (the first from
// 0). Writer and reader side by side.

// appendDeltaValues writes the present values of rows [from, to).
func appendDeltaValues(dst []byte, d *ColumnData, from, to int) []byte {
	prev := int64(0)
	for i := from; i < to; i++ {
		if d.present(i) {
			dst = binary.AppendUvarint(dst, varint.Zigzag(d.Ints[i]-prev))
			prev = d.Ints[i]
		}
	}
	return dst
}

// decodeDelta decodes sequentially from the page start to the last wanted
// row. The loop reads varints by index into a local slice: a decbuf's
// reslicing through a pointer costs a GC write barrier per value while
// GC runs.
func decodeDelta(pv *pageView, sel rowSel, out *pageOut) error {
	n := sel.n()
	last := sel.at(n - 1)
	prev := int64(0)
	vi, pos, i := 0, 0, 0
	next := sel.at(0)
	vals, ints := pv.vals, out.dst.Ints
	for r := 0; r <= last; r++ {
		if !pv.has(r) {
			if r == next {
				out.null(out.off + i)
				if i++; i < n {
					next = sel.at(i)
				}
			}
			continue
		}
		x, m := binary.Uvarint(vals[pos:])
		if m <= 0 {
			return errShort
		}
		pos += m
		prev += varint.Unzigzag(x)
		vi++
		if r == next {
			ints[out.off+i] = prev
			if i++; i < n {
				next = sel.at(i)
			}
		}
	}
	if vi > pv.present {
		return errors.New("delta values exceed present count")
	}
	return nil
}
