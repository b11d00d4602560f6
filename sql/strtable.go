package sql

import (
	"hash/maphash"
	"unsafe"

	"github.com/sediment/sediment/internal/vec"
)

// strTable maps string keys to group numbers for hash aggregation: an
// open-addressing table whose slots hold a key's full hash and its entry,
// with the keys copied into one byte arena. A GROUP BY over request paths
// can have millions of groups; held this way they cost no allocation per
// key, and the garbage collector has no pointer to follow in them, which
// matters most when the process runs near its memory limit and collects
// often.
type strTable struct {
	seed  maphash.Seed
	slots []strSlot // len is a power of two
	mask  uint64
	arena []byte
	// Entry e's key is arena[ends[e-1]:ends[e]] (ends[-1] = 0) and its
	// group groups[e].
	ends   []int
	groups []int32
}

type strSlot struct {
	hash  uint64
	entry int32 // -1: empty
}

func newStrTable() *strTable {
	t := &strTable{seed: maphash.MakeSeed()}
	t.resize(1024)
	return t
}

func (t *strTable) resize(n int) {
	old := t.slots
	t.slots = make([]strSlot, n)
	for i := range t.slots {
		t.slots[i].entry = -1
	}
	t.mask = uint64(n - 1)
	for _, s := range old {
		if s.entry < 0 {
			continue
		}
		i := s.hash & t.mask
		for t.slots[i].entry >= 0 {
			i = (i + 1) & t.mask
		}
		t.slots[i] = s
	}
}

func (t *strTable) key(e int32) []byte {
	start := 0
	if e > 0 {
		start = t.ends[e-1]
	}
	return t.arena[start:t.ends[e]]
}

// lookup returns the group of key k; for a new key it calls add for the
// group and keeps a copy of k.
func (t *strTable) lookup(k string, add func() int32) int32 {
	h := maphash.String(t.seed, k)
	i := h & t.mask
	for {
		s := t.slots[i]
		if s.entry < 0 {
			break
		}
		if s.hash == h && string(t.key(s.entry)) == k {
			return t.groups[s.entry]
		}
		i = (i + 1) & t.mask
	}
	g := add()
	e := int32(len(t.groups))
	t.arena = append(t.arena, k...)
	t.ends = append(t.ends, len(t.arena))
	t.groups = append(t.groups, g)
	t.slots[i] = strSlot{hash: h, entry: e}
	if len(t.groups)*4 >= len(t.slots)*3 { // load factor 3/4
		t.resize(2 * len(t.slots))
	}
	return g
}

// find returns the group of key k, if the table has it.
func (t *strTable) find(k string) (int32, bool) {
	h := maphash.String(t.seed, k)
	for i := h & t.mask; ; i = (i + 1) & t.mask {
		s := t.slots[i]
		if s.entry < 0 {
			return 0, false
		}
		if s.hash == h && string(t.key(s.entry)) == k {
			return t.groups[s.entry], true
		}
	}
}

// bytes is the heap the table holds.
func (t *strTable) bytes() int64 {
	return int64(cap(t.slots))*int64(unsafe.Sizeof(strSlot{})) + int64(cap(t.arena)) + int64(cap(t.ends))*8 + int64(cap(t.groups))*4
}

// keyVector returns the keys as a column of n groups: group g's key, NULL
// for nullGroup (-1: none). The strings point into the arena, which is not
// written again.
func (t *strTable) keyVector(typ vec.Type, n int, nullGroup int32) *vec.Vector {
	v := &vec.Vector{Type: typ, Len: n, Strs: make([]string, n)}
	all := unsafe.String(unsafe.SliceData(t.arena), len(t.arena))
	start := 0
	for e, g := range t.groups {
		v.Strs[g] = all[start:t.ends[e]]
		start = t.ends[e]
	}
	if nullGroup >= 0 {
		v.Nulls = vec.NewBitset(n)
		v.Nulls.Set(int(nullGroup))
	}
	return v
}
