package segment

import "hash/maphash"

// strCodes numbers the distinct string values of a chunk in order of
// first appearance, for planStrings. It stands in for a map[string]uint32
// (issue 14: the map's lookups and assignments were most of planStrings,
// a third of a flush's planning): a value is hashed once whether it is new
// or not, a probe reads 8-byte slots (a tag of the hash above the value's
// code plus 1) and compares a value's bytes only when the tags agree, and
// the values themselves are the caller's slice of distinct values, in
// code order, so that nothing is stored twice.
type strCodes struct {
	slots  []uint64 // open addressing, linear probing; 0 is empty
	hashes []uint64 // by code: for growing without hashing again
}

// strCodesSeed seeds every strCodes' hash: codes never leave the writer.
var strCodesSeed = maphash.MakeSeed()

// minStrCodeSlots is the fewest slots a table has.
const minStrCodeSlots = 256

// reset empties the table for a chunk of rows values. A table is kept
// (cleared) while clearing it costs at most 16 bytes a row, else let go:
// a table grown for one chunk of many distinct values is not cleared
// whole for every later chunk of few rows.
func (t *strCodes) reset(rows int) {
	if len(t.slots) > max(keepStrCodeSlots, 2*rows) {
		t.slots = nil
	}
	clear(t.slots)
	t.hashes = t.hashes[:0]
}

// keepStrCodeSlots is the most slots reset keeps whatever the rows.
const keepStrCodeSlots = 8192

// code returns the code of s, appending it to *distinct (the values by
// code, which the caller keeps between calls) when it is new.
func (t *strCodes) code(s string, distinct *[]string) (c uint32, isNew bool) {
	if 2*(len(*distinct)+1) > len(t.slots) {
		t.grow()
	}
	h := maphash.String(strCodesSeed, s)
	tag := h >> 32
	mask := uint64(len(t.slots) - 1)
	for i := h & mask; ; i = (i + 1) & mask {
		sl := t.slots[i]
		if sl == 0 {
			c = uint32(len(*distinct))
			*distinct = append(*distinct, s)
			t.hashes = append(t.hashes, h)
			t.slots[i] = tag<<32 | uint64(c+1)
			return c, true
		}
		if sl>>32 == tag {
			if k := uint32(sl) - 1; (*distinct)[k] == s {
				return k, false
			}
		}
	}
}

// grow doubles the slots and places every code again.
func (t *strCodes) grow() {
	t.slots = make([]uint64, max(minStrCodeSlots, 2*len(t.slots)))
	mask := uint64(len(t.slots) - 1)
	for c, h := range t.hashes {
		i := h & mask
		for t.slots[i] != 0 {
			i = (i + 1) & mask
		}
		t.slots[i] = h>>32<<32 | uint64(c+1)
	}
}
