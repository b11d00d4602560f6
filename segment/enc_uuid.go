package segment

// encUUID: canonical lower-case UUIDs (8-4-4-4-12 hex digits) as their
// 16 bytes, read back as the same text. Writer and reader side by side.

// appendUUIDValues writes the present values of rows [from, to).
func appendUUIDValues(dst []byte, d *ColumnData, from, to int) []byte {
	for i := from; i < to; i++ {
		if d.present(i) {
			dst = appendUUIDBytes(dst, d.str(i))
		}
	}
	return dst
}

// decodeUUID reads an encUUID page.
func decodeUUID(pv *pageView, sel rowSel, out *pageOut) error {
	vals := pv.vals
	if len(vals) < 16*pv.present {
		return errShort
	}
	n := sel.n()
	out.reserve(36 * n)
	dst := out.dst
	rk := ranker{bitmap: pv.bitmap}
	for i := 0; i < n; i++ {
		r := sel.at(i)
		if !pv.has(r) {
			out.null(out.off + i)
			continue
		}
		k := rk.rank(r)
		dst.Bytes = appendUUIDText(dst.Bytes, vals[16*k:16*k+16])
		if err := out.endStr(out.off + i); err != nil {
			return err
		}
	}
	return nil
}

const hexDigits = "0123456789abcdef"

// isCanonicalUUID reports whether s is a UUID in canonical lower-case text
// (8-4-4-4-12 hex digits), the form that round-trips through 16 bytes.
func isCanonicalUUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i := 0; i < 36; i++ {
		c := s[i]
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return false
			}
		default:
			if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
				return false
			}
		}
	}
	return true
}

func hexVal(c byte) byte {
	if c <= '9' {
		return c - '0'
	}
	return c - 'a' + 10
}

func appendUUIDBytes(dst []byte, s string) []byte {
	j := 0
	var out [16]byte
	for i := 0; i < 36; {
		if s[i] == '-' {
			i++
			continue
		}
		out[j] = hexVal(s[i])<<4 | hexVal(s[i+1])
		j++
		i += 2
	}
	return append(dst, out[:]...)
}

func appendUUIDText(dst []byte, b []byte) []byte {
	for i := 0; i < 16; i++ {
		if i == 4 || i == 6 || i == 8 || i == 10 {
			dst = append(dst, '-')
		}
		dst = append(dst, hexDigits[b[i]>>4], hexDigits[b[i]&15])
	}
	return dst
}
