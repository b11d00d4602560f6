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

// uuidDigitPairs are the offsets in a canonical UUID of the first digit
// of each of its 16 bytes (two hex digits each, dashes skipped).
var uuidDigitPairs = [16]uint8{0, 2, 4, 6, 9, 11, 14, 16, 19, 21, 24, 26, 28, 30, 32, 34}

// notLowerHex marks the bytes that are not lower-case hex digits.
const notLowerHex = 0xff

// lowerHexVal[c] is the value of lower-case hex digit c, notLowerHex for
// any other byte: one table lookup a digit checks and converts it (every
// value of a column of ids passes isCanonicalUUID and appendUUIDBytes).
var lowerHexVal = func() (t [256]byte) {
	for c := range t {
		t[c] = notLowerHex
	}
	for i := range len(hexDigits) {
		t[hexDigits[i]] = byte(i)
	}
	return t
}()

// isCanonicalUUID reports whether s is a UUID in canonical lower-case text
// (8-4-4-4-12 hex digits), the form that round-trips through 16 bytes.
func isCanonicalUUID(s string) bool {
	if len(s) != 36 || s[8] != '-' || s[13] != '-' || s[18] != '-' || s[23] != '-' {
		return false
	}
	// OR of the digits' values: below 16 only if every one is a digit,
	// without a branch a digit.
	var all byte
	for _, at := range uuidDigitPairs {
		all |= lowerHexVal[s[at]] | lowerHexVal[s[at+1]]
	}
	return all < 16
}

// appendUUIDBytes appends the 16 bytes of s, a canonical UUID
// (isCanonicalUUID).
func appendUUIDBytes(dst []byte, s string) []byte {
	var out [16]byte
	for j, at := range uuidDigitPairs {
		out[j] = lowerHexVal[s[at]]<<4 | lowerHexVal[s[at+1]]
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
