package index

import (
	"slices"
	"strings"
)

// valueField is a value field being built: its terms, numbered from 1 in
// the order they came, and its rows as chunks of term codes (see
// codeChunk).
type valueField struct {
	strs map[string]uint32 // string fields: term → code
	ints map[int64]uint32  // int fields
	bool [2]uint32         // bool fields: the codes of false and true, 0 until seen
	keys []termKey         // the terms by code-1
	card []uint32          // their rows by code-1
	// chunks are in the order added.
	chunks []codeChunk
	// overlap says some chunk begins before the end of the one before
	// (rows added out of order or twice): a term's rows must then be
	// sorted when written.
	overlap bool
}

// addChunk keeps the codes of a block.
func (vf *valueField) addChunk(c codeChunk) {
	if n := len(vf.chunks); n > 0 {
		prev := &vf.chunks[n-1]
		vf.overlap = vf.overlap || uint64(c.base) < uint64(prev.base)+uint64(prev.n)
	}
	vf.chunks = append(vf.chunks, c)
}

// stringCode returns the code of term s, numbering it if new.
func (vf *valueField) stringCode(s string) uint32 {
	if c, ok := vf.strs[s]; ok {
		return c
	}
	s = strings.Clone(s)
	c := vf.newTerm(termKey{str: s})
	vf.strs[s] = c
	return c
}

// intCode returns the code of term x, numbering it if new.
func (vf *valueField) intCode(x int64) uint32 {
	if c, ok := vf.ints[x]; ok {
		return c
	}
	c := vf.newTerm(termKey{num: x})
	vf.ints[x] = c
	return c
}

// boolCode returns the code of term x, numbering it if new.
func (vf *valueField) boolCode(x bool) uint32 {
	i := 0
	if x {
		i = 1
	}
	if vf.bool[i] == 0 {
		vf.bool[i] = vf.newTerm(termKey{num: int64(i)})
	}
	return vf.bool[i]
}

func (vf *valueField) newTerm(k termKey) uint32 {
	vf.keys = append(vf.keys, k)
	vf.card = append(vf.card, 0)
	return uint32(len(vf.keys))
}

// terms returns the field's terms with their rows, ascending, in the
// memory of rows (which it returns grown) and terms.
func (vf *valueField) terms(terms []termOut, rows []uint32, codes *[]uint32) ([]termOut, []uint32) {
	n := len(vf.keys)
	// Each term's rows go to its own stretch of rows, sized by its count.
	total := 0
	for _, c := range vf.card {
		total += int(c)
	}
	rows = slices.Grow(rows[:0], total)[:total]
	pos := make([]int, n+1) // pos[k]: where term k+1's next row goes
	for k := 1; k <= n; k++ {
		pos[k] = pos[k-1] + int(vf.card[k-1])
	}
	end := slices.Clone(pos[1:])
	for i := range vf.chunks {
		c := &vf.chunks[i]
		*codes = c.decode(*codes)
		for r, code := range *codes {
			if code == 0 || int(code) > n {
				continue
			}
			if p := pos[code-1]; p < end[code-1] {
				rows[p] = c.base + uint32(r)
				pos[code-1]++
			}
		}
	}
	start := 0
	for k := range n {
		tr := rows[start:pos[k]]
		start = end[k]
		if vf.overlap && !isStrictlyAscending(tr) {
			// Blocks added out of order or twice: a term's rows are
			// still a set.
			slices.Sort(tr)
			tr = slices.Compact(tr)
		}
		if len(tr) == 0 {
			continue
		}
		terms = append(terms, termOut{key: vf.keys[k], rows: tr, card: uint64(len(tr))})
	}
	return terms, rows
}

func isStrictlyAscending(rows []uint32) bool {
	for i := 1; i < len(rows); i++ {
		if rows[i] <= rows[i-1] {
			return false
		}
	}
	return true
}
