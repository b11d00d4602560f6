// Package index implements a segment's inverted indexes: roaring bitmaps
// from (field, value) to the rows holding that value, and from the tokens of
// text fields to the rows containing them. The engine builds one Index per
// segment when it writes the segment and stores it beside the columns; a
// query consults it before decompressing anything.
//
// # Layout (format version 2; version 1 has the same layout)
//
// An index is a directory (stored by the engine as the segment section
// "index") plus units it points to, written through the segment's unit
// writer and each checksummed on its own:
//
//	directory:
//	  version u8
//	  nfields uvarint, then per field:
//	    path (uvarint len + bytes) | kind u8 | nterms uvarint
//	    terms unit: off uvarint, len uvarint
//	    npostingUnits uvarint, then per unit: off uvarint, len uvarint
//	    longRows: unit index uvarint (0 = none, else index+1), off, len
//
//	terms unit (terms in ascending order), per term:
//	  term  (kindInt: zigzag uvarint delta from the previous term;
//	         kindString/kindToken: uvarint len + bytes; kindBool: u8)
//	  posting kind u8, then
//	    0 bitmap:   posting unit index uvarint | offset in unit uvarint |
//	                length uvarint | cardinality uvarint
//	    1 single:   the one row uvarint
//	    2 frequent: cardinality uvarint (token fields only: rows not kept)
//
//	posting unit: serialized roaring bitmaps (portable format) back to back
//
// Row numbers are segment-wide (uint32). Cardinalities live in the terms
// unit so that a count over an indexed value needs no posting reads.
//
// # Tokens
//
// A token is a maximal run of ASCII letters, digits, '_' and bytes >= 0x80
// (so UTF-8 text stays whole). The term dictionary holds every token, so a
// substring search can be answered exactly: a needle made only of token
// characters occurs in a row iff it occurs inside one of the row's tokens.
// Tokens longer than MaxTokenLen (API keys in URLs, say) are terms too, up
// to maxLongTerms distinct ones per field; the rows holding further ones
// are kept in a "long rows" bitmap that every text lookup includes (in
// format version 1, the rows holding any long token).
//
// Two kinds of token keep no postings, because they cost far more bytes
// than they save: frequent tokens (in more than a small share of rows; a
// search for one reads the column anyway) are in the dictionary marked
// frequent; opaque tokens (IsOpaqueToken: long runs of hex digits, such as
// request ids and UUID parts, nearly all unique) are left out altogether.
// A needle part that could lie inside an opaque token (it is made of hex
// digits only) therefore cannot be answered from the index and is left to
// the scan, which keeps every answer exact.
package index

import (
	"errors"
	"fmt"
)

// These constants are part of the on-disk format and must not change.
const (
	// FormatV1: every row holding a token longer than MaxTokenLen is a
	// long row.
	FormatV1 = 1
	// FormatV2: long tokens are terms too (up to maxLongTerms distinct
	// ones per field); the long rows hold the rows of the others. Same
	// layout: a reader of either version answers the same way.
	FormatV2           = 2
	FormatLatest       = FormatV2
	FormatMinSupported = FormatV1

	kindInt    Kind = 1
	kindString Kind = 2
	kindBool   Kind = 3
	kindToken  Kind = 4

	postBitmap   = 0
	postSingle   = 1
	postFrequent = 2
)

// Kind is what a field's terms are. Persisted.
type Kind uint8

// Exported kinds.
const (
	KindInt    = kindInt
	KindString = kindString
	KindBool   = kindBool
	KindToken  = kindToken
)

func (k Kind) String() string {
	switch k {
	case kindInt:
		return "int"
	case kindString:
		return "string"
	case kindBool:
		return "bool"
	case kindToken:
		return "token"
	}
	return fmt.Sprintf("kind(%d)", uint8(k))
}

// MaxTokenLen is the longest token indexed.
const MaxTokenLen = 64

// Limits checked when decoding. Writers keep within them: a field past
// maxFields is left out of the index (queries on it scan).
const (
	maxFields      = 1 << 17
	maxTerms       = 1 << 26
	maxPostingUnit = 1 << 30
	maxPathLen     = 1 << 14
)

// ErrCorrupt is matched by errors from decoding a damaged index.
var ErrCorrupt = errors.New("index: corrupt")

// ErrUnsupportedVersion is returned by Open for an index written in a
// format version this build does not read. The index only speeds queries
// up: callers can go on without it.
var ErrUnsupportedVersion = errors.New("index: unsupported format version")

func corrupt(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrCorrupt, fmt.Sprintf(format, args...))
}

// UnitWriter stores a unit and returns where it went.
type UnitWriter interface {
	WriteUnit(payload []byte) (off, length int64, err error)
}

// UnitReader reads back, checksum-verified, a unit written by UnitWriter.
type UnitReader interface {
	ReadUnit(off, length int64) ([]byte, error)
}

// IsTokenByte reports whether c belongs to tokens.
func IsTokenByte(c byte) bool { return byteClass[c]&classToken != 0 }

// Classes of bytes for tokenizing: byteClass[c] has classToken when c
// belongs to tokens (letters, digits, '_', and every byte of a multi-byte
// UTF-8 character), and classHex when c is a hex digit.
const (
	classToken = 1 << iota
	classHex
)

var byteClass = func() (t [256]uint8) {
	for c := range 256 {
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c >= 0x80 {
			t[c] |= classToken
		}
		if c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' {
			t[c] |= classHex
		}
	}
	return t
}()

// IsOpaqueToken reports whether a token is an opaque identifier the token
// index leaves out: at least 8 characters, all hex digits.
func IsOpaqueToken(tok string) bool {
	if len(tok) < 8 {
		return false
	}
	return isHexOnly(tok)
}

func isHexOnly(s string) bool {
	for i := 0; i < len(s); i++ {
		if byteClass[s[i]]&classHex == 0 {
			return false
		}
	}
	return true
}

// Tokenize calls fn for each token of s, in order (duplicates included).
func Tokenize(s string, fn func(tok string)) {
	start := -1
	for i := 0; i < len(s); i++ {
		if IsTokenByte(s[i]) {
			if start < 0 {
				start = i
			}
			continue
		}
		if start >= 0 {
			fn(s[start:i])
			start = -1
		}
	}
	if start >= 0 {
		fn(s[start:])
	}
}
