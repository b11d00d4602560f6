package segment

import "math/bits"

// intCodes numbers the distinct values of an int64 chunk in order of first
// appearance, for planInts. It stands in for a map[int64]uint32 (issue
// 14: the map's lookups were most of planInts in a flush and a
// compaction): a value's slot comes from one multiplication, a slot holds
// the value's code plus 1 (0: empty), and the values themselves sit in
// vals, by code.
type intCodes struct {
	slots []uint32 // open addressing, linear probing, a power of two long
	shift uint     // 64 - log2(len(slots))
	vals  []int64  // by code
}

// minIntCodeSlots is the fewest slots a table has.
const minIntCodeSlots = 256

// reset empties the table for a chunk of rows values, keeping its memory
// unless clearing it would cost more than the chunk (see strCodes.reset).
func (t *intCodes) reset(rows int) {
	if len(t.slots) > max(keepStrCodeSlots, 2*rows) {
		t.slots = nil
	}
	clear(t.slots)
	t.vals = t.vals[:0]
}

// slotOf is the first slot of x's probe sequence: the high bits of x
// times 2^64 over the golden ratio, which spreads runs of nearby values.
func (t *intCodes) slotOf(x int64) uint64 {
	return uint64(x) * 0x9E3779B97F4A7C15 >> t.shift
}

// code returns the code of x, numbering it when it is new.
func (t *intCodes) code(x int64) (c uint32, isNew bool) {
	if 2*(len(t.vals)+1) > len(t.slots) {
		t.grow()
	}
	mask := uint64(len(t.slots) - 1)
	for i := t.slotOf(x); ; i = (i + 1) & mask {
		k := t.slots[i]
		if k == 0 {
			c = uint32(len(t.vals))
			t.vals = append(t.vals, x)
			t.slots[i] = c + 1
			return c, true
		}
		if t.vals[k-1] == x {
			return k - 1, false
		}
	}
}

// find returns the code of x, which the table holds.
func (t *intCodes) find(x int64) uint32 {
	mask := uint64(len(t.slots) - 1)
	for i := t.slotOf(x); ; i = (i + 1) & mask {
		if k := t.slots[i]; t.vals[k-1] == x {
			return k - 1
		}
	}
}

// grow doubles the slots and places every value again.
func (t *intCodes) grow() {
	n := max(minIntCodeSlots, 2*len(t.slots))
	t.slots = make([]uint32, n)
	t.shift = uint(64 - bits.TrailingZeros(uint(n)))
	mask := uint64(n - 1)
	for c, x := range t.vals {
		i := t.slotOf(x)
		for t.slots[i] != 0 {
			i = (i + 1) & mask
		}
		t.slots[i] = uint32(c + 1)
	}
}
