package segment

import "encoding/binary"

// encBytes: strings (and arrays' encoded values) as the uvarint lengths of
// every present value of the page, then their bytes. Writer and reader
// side by side.

// appendBytesValues writes the present values of rows [from, to).
func appendBytesValues(dst []byte, d *ColumnData, from, to int) []byte {
	for i := from; i < to; i++ {
		if d.present(i) {
			dst = binary.AppendUvarint(dst, uint64(len(d.str(i))))
		}
	}
	for i := from; i < to; i++ {
		if d.present(i) {
			dst = append(dst, d.str(i)...)
		}
	}
	return dst
}

// decodeBytes decodes encBytes values: the uvarint lengths of all the
// page's values, then their bytes.
func decodeBytes(pv *pageView, sel rowSel, out *pageOut) error {
	vals := pv.vals
	// Where the bytes start: after present varints.
	start, ok := varintsEnd(vals, pv.present)
	if !ok {
		return errShort
	}
	data := vals[start:]
	n := sel.n()
	last := sel.at(n - 1)
	if pv.present > 0 {
		out.reserve(int(int64(len(data)) * int64(n) / int64(pv.rows)))
	}
	dst := out.dst
	pos, off, i := 0, uint64(0), 0
	next := sel.at(0)
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
		l, m := binary.Uvarint(vals[pos:start])
		if m <= 0 || l > uint64(len(data))-off {
			return errShort
		}
		pos += m
		if r == next {
			dst.Bytes = append(dst.Bytes, data[off:off+l]...)
			if err := out.endStr(out.off + i); err != nil {
				return err
			}
			if i++; i < n {
				next = sel.at(i)
			}
		}
		off += l
	}
	return nil
}
