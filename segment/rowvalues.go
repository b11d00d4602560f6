package segment

import (
	"encoding/binary"
	"math"
	"strconv"

	"github.com/sediment/sediment/internal/vec"
)

// Values of single rows kept among the row texts (rowtext.go). A
// search for a rare word verifies its candidate rows by reading the
// searched column at those rows: a derived message (format version 3)
// reads a page of each column it is built from for that (the URL's 128
// KiB pages), and a scan of much data keeps none of its pages in the
// page cache, so the same search run again decompressed them all again
// (issue 14's Q5 at 10M events: ~70% of its CPU once the records it
// returns were kept). A read of a few rows of a block of a text column
// (not dictionary encoded: those cost a dictionary entry and a code)
// keeps their values, and a later read of the same rows takes them from
// there, without a page. So does one of a number column's (the
// candidates' timestamps, whose delta pages decode from their start).

// maxKeptRowValues is the most rows of one block a read keeps the values
// of: more is a scan of many matches, whose values would push out the
// records and values kept for interactive queries.
const maxKeptRowValues = 64

// keepsRowValues reports whether a read of n rows of chunk c (column type
// t) of a block of blockRows rows goes through the kept row values.
func keepsRowValues(c *chunkMeta, t ColType, n, blockRows int, mode cacheMode) bool {
	switch t {
	case TypeString, TypeInt64, TypeTimestamp, TypeFloat64:
	default:
		return false
	}
	return mode != cacheBypass && c.enc != encDict && n <= maxKeptRowValues && n*memoSparseRows <= blockRows
}

// rowValueTag is the tag of column col's values among the row texts.
func rowValueTag(col int) string { return "value\x00" + strconv.Itoa(col) }

// Kept values: a NULL as keptNull, a value as keptValue followed by its
// bytes (a string's) or its 8 bytes little endian (an int64's, a
// timestamp's, a float64's bits).
const (
	keptNull  = "\x00"
	keptValue = '\x01'
)

// rowValuesKept fills dst (prepared as a String vector of len(rows) rows,
// Bytes+Offs) with the values kept of rows (of the block whose first row
// is first) and reports whether every one was kept; if not, dst is left
// for the read to fill.
func (r *Reader) rowValuesKept(first int, tag string, rows []int32, dst *vec.Vector) bool {
	var buf [8]string
	kept := buf[:0]
	for _, x := range rows {
		s, ok := r.RowText(first+int(x), tag)
		if !ok || s == "" || s != keptNull && dst.Type != vec.String && len(s) != 9 {
			return false
		}
		kept = append(kept, s)
	}
	for i, s := range kept {
		switch {
		case s == keptNull:
			if dst.Nulls == nil {
				dst.Nulls = vec.NewBitset(dst.Len)
			}
			dst.Nulls.Set(i)
		case dst.Type == vec.String:
			dst.Bytes = append(dst.Bytes, s[1:]...)
		case dst.Type == vec.Float64:
			dst.Floats[i] = math.Float64frombits(keptUint64(s))
		default:
			dst.Ints[i] = int64(keptUint64(s))
		}
		if dst.Type == vec.String {
			dst.Offs[i+1] = uint32(len(dst.Bytes))
		}
	}
	return true
}

// keepRowValues keeps the values dst holds of rows (of the block whose
// first row is first), read from the pages.
func (r *Reader) keepRowValues(first int, tag string, rows []int32, dst *vec.Vector) {
	if dst.Len != len(rows) || dst.Dict != nil {
		return
	}
	var num [9]byte
	num[0] = keptValue
	for i, x := range rows {
		v := keptNull
		if !dst.IsNull(i) {
			switch dst.Type {
			case vec.String:
				v = string(keptValue) + string(dst.Bytes[dst.Offs[i]:dst.Offs[i+1]])
			case vec.Float64:
				binary.LittleEndian.PutUint64(num[1:], math.Float64bits(dst.Floats[i]))
				v = string(num[:])
			case vec.Int64, vec.Timestamp:
				binary.LittleEndian.PutUint64(num[1:], uint64(dst.Ints[i]))
				v = string(num[:])
			default:
				return
			}
		}
		r.KeepRowText(first+int(x), tag, v)
	}
}

// keptUint64 returns the 8 bytes of a kept number, little endian.
func keptUint64(s string) uint64 {
	var x uint64
	for i := 8; i >= 1; i-- {
		x = x<<8 | uint64(s[i])
	}
	return x
}
