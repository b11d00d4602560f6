package predicate

import (
	"strings"
	"unicode/utf8"
)

// ContainsFold reports whether s contains needle ignoring case, needle
// being lower case already (strings.ToLower). ASCII occurrences are found
// without allocating; text or needles beyond ASCII are compared lower-cased
// (strings.ToLower), as CONTAINS_SUBSTR does.
func ContainsFold(s, needle string) bool {
	if needle == "" {
		return true
	}
	if !isASCII(needle) {
		return strings.Contains(strings.ToLower(s), needle)
	}
	if containsFoldASCII(s, needle) {
		return true
	}
	// Lower-casing can turn a non-ASCII character into an ASCII one (K,
	// the Kelvin sign, into k).
	return !isASCII(s) && strings.Contains(strings.ToLower(s), needle)
}

// containsFoldASCII reports whether s contains sub (ASCII, lower case)
// ignoring ASCII case. It jumps between occurrences of sub's first byte in
// either case. Bytes beyond ASCII never equal an ASCII byte, so s may hold
// any UTF-8.
func containsFoldASCII(s, sub string) bool {
	if len(sub) == 0 {
		return true
	}
	lo, up := lowerASCII(sub[0]), upperASCII(sub[0])
	for i := 0; i+len(sub) <= len(s); {
		j := indexEitherByte(s[i:len(s)-len(sub)+1], lo, up)
		if j < 0 {
			return false
		}
		i += j
		if equalFoldASCII(s[i:i+len(sub)], sub) {
			return true
		}
		i++
	}
	return false
}

func indexEitherByte(s string, a, b byte) int {
	if a == b {
		return strings.IndexByte(s, a)
	}
	i, j := strings.IndexByte(s, a), strings.IndexByte(s, b)
	switch {
	case i < 0:
		return j
	case j < 0 || i < j:
		return i
	}
	return j
}

// equalFoldASCII compares a with b (lower case) ignoring ASCII case.
func equalFoldASCII(a, b string) bool {
	for i := 0; i < len(a); i++ {
		if lowerASCII(a[i]) != b[i] {
			return false
		}
	}
	return true
}

func lowerASCII(c byte) byte {
	if c >= 'A' && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

func upperASCII(c byte) byte {
	if c >= 'a' && c <= 'z' {
		return c - ('a' - 'A')
	}
	return c
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}
