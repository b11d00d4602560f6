package jsonstr

import (
	"unicode/utf16"
	"unicode/utf8"
)

// AppendEscaped decodes the JSON escape sequence whose backslash is s[i]
// and appends its character to dst. It returns the length of the sequence
// (2 for \n, 6 for \u00e9, 12 for a surrogate pair), or 0 when it is not a
// valid escape; badHex then tells a \u without four hex digits from an
// unknown escape character (or a backslash at the end). A lone surrogate
// decodes to U+FFFD, as encoding/json's does.
func AppendEscaped[T ~string | ~[]byte](dst []byte, s T, i int) (out []byte, n int, badHex bool) {
	if i+1 >= len(s) {
		return dst, 0, false
	}
	switch c := s[i+1]; c {
	case '"', '\\', '/':
		return append(dst, c), 2, false
	case 'b':
		return append(dst, '\b'), 2, false
	case 'f':
		return append(dst, '\f'), 2, false
	case 'n':
		return append(dst, '\n'), 2, false
	case 'r':
		return append(dst, '\r'), 2, false
	case 't':
		return append(dst, '\t'), 2, false
	case 'u':
	default:
		return dst, 0, false
	}
	r, ok := hex4(s, i+2)
	if !ok {
		return dst, 0, true
	}
	n = 6
	if utf16.IsSurrogate(r) {
		j := i + 6
		if r < 0xDC00 && j+6 <= len(s) && s[j] == '\\' && s[j+1] == 'u' {
			if r2, ok := hex4(s, j+2); ok && r2 >= 0xDC00 && r2 <= 0xDFFF {
				return utf8.AppendRune(dst, utf16.DecodeRune(r, r2)), 12, false
			}
		}
		r = utf8.RuneError
	}
	return utf8.AppendRune(dst, r), n, false
}

// hex4 reads four hex digits at s[i:].
func hex4[T ~string | ~[]byte](s T, i int) (rune, bool) {
	if i+4 > len(s) {
		return 0, false
	}
	var r rune
	for k := i; k < i+4; k++ {
		c := s[k]
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			c = c - 'A' + 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}
