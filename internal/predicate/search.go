package predicate

import (
	"math/bits"
	"slices"

	"github.com/sediment/sediment/internal/bytesearch"
)

// Searcher finds which of many values contain one of a set of literals,
// with the values laid end to end in one buffer (a column page, a head
// chunk): value i is data[offs[i]:offs[i+1]].
//
// Searching each value on its own costs a call and a restart per value,
// and a search for one byte of a needle stops at every occurrence of it
// (auth/v1/ stops at each 'v' of an access log line, in every API's
// "/v1/" and every "Nov"). A Searcher instead sweeps the whole buffer
// once per needle with a packed pair search (bytesearch.Finder: two bytes
// of the needle, chosen on a sample of the buffer, compared 32 positions
// at a time), which stops only where both bytes are in place, checks the
// needle there, maps a hit to its value through the offsets, and resumes
// at the next value: values without the needle cost only the sweep over
// their bytes.
//
// A Searcher is immutable and safe for concurrent use.
type Searcher struct {
	needles []needle
}

// needle is one sweep: text is searched for; when exts is not nil, a hit
// counts only if one of exts (each starting with text) is found there.
// finder, when not nil, is the search for text with its pair chosen
// (Anchored); nil: chosen on each buffer searched.
type needle struct {
	text   string
	exts   []string
	finder *bytesearch.Finder
}

// maxSearchNeedles bounds the sweeps of one search: a set of literals
// needing more (with no shared prefix) is searched value by value.
const maxSearchNeedles = 4

// minSearchPrefix is the shortest shared prefix swept for instead of each
// literal.
const minSearchPrefix = 3

// NewSearcher returns a Searcher for values containing one of lits
// (compared byte for byte), or nil when none could be built: no
// literals, an empty one (every value contains it), or too many without
// a shared prefix.
func NewSearcher(lits []string) *Searcher {
	if len(lits) == 0 {
		return nil
	}
	for _, l := range lits {
		if l == "" {
			return nil
		}
	}
	if len(lits) > 1 {
		p := lits[0]
		for _, l := range lits[1:] {
			n := 0
			for n < len(p) && n < len(l) && p[n] == l[n] {
				n++
			}
			p = p[:n]
		}
		if len(p) >= minSearchPrefix {
			exts := append([]string(nil), lits...)
			return &Searcher{needles: []needle{{text: p, exts: exts}}}
		}
	}
	if len(lits) > maxSearchNeedles {
		return nil
	}
	s := &Searcher{}
	for _, l := range lits {
		s.needles = append(s.needles, needle{text: l})
	}
	return s
}

// Anchored returns a Searcher for the same literals whose sweeps compare
// the pair of bytes of each needle chosen on sample, here once rather
// than on each buffer searched: a caller searching many small buffers of
// one column (a head chunk's runs of values, some of a few values only)
// samples the column once.
func (s *Searcher) Anchored(sample []byte) *Searcher {
	a := &Searcher{needles: slices.Clone(s.needles)}
	for i := range a.needles {
		f := bytesearch.NewFinder(a.needles[i].text, sample)
		a.needles[i].finder = &f
	}
	return a
}

// Literals returns the literals the Searcher finds values holding (a
// new slice).
func (s *Searcher) Literals() []string {
	var out []string
	for _, nd := range s.needles {
		if nd.exts != nil {
			out = append(out, nd.exts...)
		} else {
			out = append(out, nd.text)
		}
	}
	return out
}

// validOffsets reports whether offs describes values within data: at
// least one offset, non-decreasing, the last within data.
func validOffsets(data []byte, offs []uint32) bool {
	if len(offs) == 0 || int64(offs[len(offs)-1]) > int64(len(data)) {
		return false
	}
	for i := 1; i < len(offs); i++ {
		if offs[i] < offs[i-1] {
			return false
		}
	}
	return true
}

// AppendRows appends to dst, ascending, the index of each value of
// data/offs (len(offs)-1 values) that contains one of the Searcher's
// literals, and reports true; or false, with dst unchanged, when offs
// does not describe values within data.
func (s *Searcher) AppendRows(dst []int32, data []byte, offs []uint32) ([]int32, bool) {
	if !validOffsets(data, offs) {
		return dst, false
	}
	if len(s.needles) == 1 {
		return s.needles[0].sweep(dst, data, offs), true
	}
	// Several sweeps: their rows merged through a bitset.
	n := len(offs) - 1
	set := make([]uint64, (n+63)/64)
	var rows []int32
	for i := range s.needles {
		rows = s.needles[i].sweep(rows[:0], data, offs)
		for _, r := range rows {
			set[r>>6] |= 1 << (r & 63)
		}
	}
	for wi, w := range set {
		for w != 0 {
			dst = append(dst, int32(wi*64+bits.TrailingZeros64(w)))
			w &= w - 1
		}
	}
	return dst, true
}

// sweep appends the values that contain the needle (and one of its
// extensions).
func (nd *needle) sweep(dst []int32, data []byte, offs []uint32) []int32 {
	n := len(offs) - 1
	if n <= 0 {
		return dst
	}
	t := nd.text
	f := nd.finder
	if f == nil {
		chosen := bytesearch.NewFinder(t, data[offs[0]:offs[n]])
		f = &chosen
	}
	end := int(offs[n])
	row := 0
	// pos is where the sweep resumes: past the last hit's start, or at the
	// start of the value after the last one found.
	for pos := int(offs[0]); pos < end; {
		j := f.Index(data[pos:end])
		if j < 0 {
			break
		}
		start := pos + j // a match of the needle
		stop := start + len(t)
		// The value holding start: offs[row] <= start < offs[row+1].
		if int(offs[row+1]) <= start {
			row = nextRow(offs, row, start)
		}
		rowEnd := int(offs[row+1])
		if stop > rowEnd || !nd.extends(data[start:rowEnd]) {
			pos = start + 1
			continue // across two values, or not one of the literals
		}
		dst = append(dst, int32(row))
		row++
		if row == n {
			break
		}
		pos = int(offs[row])
	}
	return dst
}

// nextRow returns the value after row holding byte position at: the r
// with offs[r] <= at < offs[r+1]. Hits are usually a few values apart:
// steps doubling from row find a value past at, then a binary search
// between the last two steps.
func nextRow(offs []uint32, row, at int) int {
	n := len(offs) - 1
	// The answer r is the first value with offs[r+1] > at, and r > row.
	lo, step := row+1, 1 // every value before lo ends at or before at
	hi := lo
	for {
		if int(offs[hi+1]) > at {
			break
		}
		lo = hi + 1
		if hi = lo + step - 1; hi >= n-1 {
			hi = n - 1 // the last value ends past at (at < offs[n])
			break
		}
		step *= 2
	}
	// The answer is in [lo, hi]: offs[hi+1] > at.
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if int(offs[m+1]) > at {
			hi = m
		} else {
			lo = m + 1
		}
	}
	return lo
}

// extends reports whether rest (from a hit of the needle to the end of
// its value) starts with one of the needle's extensions: rest starts with
// the needle, so only the bytes past it are compared.
func (nd *needle) extends(rest []byte) bool {
	if nd.exts == nil {
		return true
	}
	k := len(nd.text)
	for _, e := range nd.exts {
		if len(rest) >= len(e) && string(rest[k:len(e)]) == e[k:] {
			return true
		}
	}
	return false
}

// Searcher returns a Searcher that finds, among many values, every value
// holding a match (and maybe others), and whether holding one of its
// literals decides the match; nil when the pattern is better tested value
// by value: it has no literal of its own, compares one ignoring case, or
// is anchored at the start or a suffix or equality test (cheap on one
// value).
func (r *Regex) Searcher() (s *Searcher, exact bool) {
	return r.search, r.searchExact
}

// newRegexSearcher builds the Searcher of an analysed pattern.
func (r *Regex) newRegexSearcher() (*Searcher, bool) {
	switch r.shape {
	case regexContains:
		return NewSearcher([]string{r.lit}), true
	case regexGeneral:
	default:
		return nil, false
	}
	if len(r.need.lits) == 0 || r.need.anyFold {
		return nil, false
	}
	lits := make([]string, len(r.need.lits))
	for i, l := range r.need.lits {
		lits[i] = l.S
	}
	s := NewSearcher(lits)
	if r.prefix != "" || r.anchored != nil {
		// A pattern anchored at the start is rejected or decided by its
		// first bytes, cheaper value by value than a sweep of them all.
		return nil, false
	}
	return s, s != nil && r.exact
}

// Searcher returns, as Regex.Searcher does, a Searcher for the values
// that may match the pattern and whether containing its literal decides
// (%literal%); nil for the shapes cheap on one value.
func (l *Like) Searcher() (s *Searcher, exact bool) {
	switch l.shape {
	case likeContains:
		return NewSearcher([]string{l.lit}), true
	case likeGeneral:
		if l.need != "" {
			return NewSearcher([]string{l.need}), false
		}
	}
	return nil, false
}
