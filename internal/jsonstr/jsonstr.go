// Package jsonstr writes JSON values: strings as JSON string literals (the
// one escaper that event encoding, query results, record materialisation,
// SQL's JSON functions and error bodies share) and floats, in the form
// query results carry (AppendFloat) and the form event JSON keeps
// (AppendTypedFloat); and it decodes JSON escape sequences (AppendEscaped)
// for the event parser and SQL's JSON functions alike.
package jsonstr

import "unicode/utf8"

const hexDigits = "0123456789abcdef"

// plain marks bytes written as they are: ASCII, not '"' or '\\', not a
// control character.
var plain = func() (t [256]bool) {
	for c := 0x20; c < 0x80; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// Append appends s as a JSON string literal. Control characters are
// escaped (short forms where JSON has them), invalid UTF-8 becomes
// U+FFFD, and U+2028/U+2029 are escaped so that the text is also safe to
// embed in JavaScript.
func Append(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if plain[c] {
			i++
			continue
		}
		if c >= utf8.RuneSelf {
			r, size := utf8.DecodeRuneInString(s[i:])
			switch {
			case r == utf8.RuneError && size == 1:
				dst = append(dst, s[start:i]...)
				dst = append(dst, `\ufffd`...)
			case r == '\u2028' || r == '\u2029':
				dst = append(dst, s[start:i]...)
				dst = append(dst, `\u202`...)
				dst = append(dst, hexDigits[r&15])
			default:
				i += size
				continue
			}
			i += size
			start = i
			continue
		}
		dst = append(dst, s[start:i]...)
		switch c {
		case '"', '\\':
			dst = append(dst, '\\', c)
		case '\n':
			dst = append(dst, '\\', 'n')
		case '\r':
			dst = append(dst, '\\', 'r')
		case '\t':
			dst = append(dst, '\\', 't')
		case '\b':
			dst = append(dst, '\\', 'b')
		case '\f':
			dst = append(dst, '\\', 'f')
		default:
			dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
		}
		i++
		start = i
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}
