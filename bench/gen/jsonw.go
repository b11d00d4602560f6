package gen

import "strconv"

// JSON writing helpers. Generators append JSON text directly to the caller's
// buffer. Vocabulary strings (user agents, cities, paths) are known not to
// need escaping — TestVocabularyNeedsNoEscaping checks every list — and are
// appended raw on the hot paths; free text that may contain quotes, control
// characters or backslashes goes through appendEscaped.

const hexDigits = "0123456789abcdef"

// needsEscape marks the bytes that must be escaped inside a JSON string.
var needsEscape = func() (t [256]bool) {
	for c := range 0x20 {
		t[c] = true
	}
	t['"'] = true
	t['\\'] = true
	return t
}()

// appendEscaped appends s as the inside of a JSON string (no quotes).
func appendEscaped[S ~string | ~[]byte](dst []byte, s S) []byte {
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !needsEscape[c] {
			continue
		}
		dst = append(dst, s[start:i]...)
		switch c {
		case '"':
			dst = append(dst, '\\', '"')
		case '\\':
			dst = append(dst, '\\', '\\')
		case '\n':
			dst = append(dst, '\\', 'n')
		case '\r':
			dst = append(dst, '\\', 'r')
		case '\t':
			dst = append(dst, '\\', 't')
		default:
			dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
		}
		start = i + 1
	}
	return append(dst, s[start:]...)
}

// appendSafe appends s as a JSON string without escaping; s must contain no
// byte that needsEscape marks.
func appendSafe(dst []byte, s string) []byte {
	dst = append(dst, '"')
	dst = append(dst, s...)
	return append(dst, '"')
}

func appendInt(dst []byte, v int) []byte { return strconv.AppendInt(dst, int64(v), 10) }

// appendIntString appends v as a JSON string ("123"): HTTP header values such
// as content_length are strings in the real events.
func appendIntString(dst []byte, v int) []byte {
	dst = append(dst, '"')
	dst = strconv.AppendInt(dst, int64(v), 10)
	return append(dst, '"')
}

// hexPairs holds the two hex digits of every byte value.
var hexPairs = func() (t [512]byte) {
	for i := range 256 {
		t[2*i], t[2*i+1] = hexDigits[i>>4], hexDigits[i&0xf]
	}
	return t
}()

// appendHex appends the low n nibbles of v as lowercase hex, most significant
// first.
func appendHex(dst []byte, v uint64, n int) []byte {
	var b [16]byte
	for i := 14; i >= 0; i -= 2 {
		p := (v & 0xff) * 2
		b[i], b[i+1] = hexPairs[p], hexPairs[p+1]
		v >>= 8
	}
	return append(dst, b[16-n:]...)
}

// appendUUID appends a random version-4 UUID in its 36-character text form.
func appendUUID(dst []byte, r *rng) []byte {
	return appendUUIDBits(dst, r.next(), r.next())
}

// appendUUIDBits formats hi/lo as a version-4, RFC 4122 variant UUID.
func appendUUIDBits(dst []byte, hi, lo uint64) []byte {
	hi = hi&^(0xf<<12) | 4<<12
	lo = lo&^(3<<62) | 2<<62
	dst = appendHex(dst, hi>>32, 8)
	dst = append(dst, '-')
	dst = appendHex(dst, hi>>16, 4)
	dst = append(dst, '-')
	dst = appendHex(dst, hi, 4)
	dst = append(dst, '-')
	dst = appendHex(dst, lo>>48, 4)
	dst = append(dst, '-')
	return appendHex(dst, lo, 12)
}

// uuidString is appendUUIDBits for set-up code that wants a string.
func uuidString(hi, lo uint64) string {
	var b [36]byte
	return string(appendUUIDBits(b[:0], hi, lo))
}

// appendIPv4 appends v as a dotted quad.
func appendIPv4(dst []byte, v uint32) []byte {
	dst = strconv.AppendUint(dst, uint64(v>>24), 10)
	dst = append(dst, '.')
	dst = strconv.AppendUint(dst, uint64(v>>16&0xff), 10)
	dst = append(dst, '.')
	dst = strconv.AppendUint(dst, uint64(v>>8&0xff), 10)
	dst = append(dst, '.')
	return strconv.AppendUint(dst, uint64(v&0xff), 10)
}
