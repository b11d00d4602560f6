package predicate

import (
	"bytes"
	"math/bits"
	"slices"
	"sort"
)

// Searcher finds which of many values contain one of a set of literals,
// with the values laid end to end in one buffer (a column page, a head
// chunk): value i is data[offs[i]:offs[i+1]].
//
// Searching each value on its own costs a call and a restart per value,
// and a search for a needle's first byte stops at every occurrence of it
// (auth/v1/ stops at each 'a' of an access log line, several a line). A
// Searcher instead sweeps the whole buffer once per needle for the
// needle's rarest byte (bytes.IndexByte, vectorised), judged on a sample
// of the buffer, checks the needle where that byte lies, maps a hit to its
// value through the offsets, and resumes at the next value: values
// without the needle cost only the sweep over their bytes.
//
// A Searcher is immutable and safe for concurrent use.
type Searcher struct {
	needles []needle
}

// needle is one sweep: text is searched for; when exts is not nil, a hit
// counts only if one of exts (each starting with text) is found there.
// anchor, when not zero, is one past the position in text of the byte the
// sweep stops at (Anchored); zero: chosen on each buffer searched.
type needle struct {
	text   string
	exts   []string
	anchor int
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

// Anchored returns a Searcher for the same literals whose sweeps stop at
// the byte of each needle that is rarest in sample, chosen here once
// rather than on each buffer searched: a caller searching many small
// buffers of one column (a head chunk's runs of values, some of a few
// values only) samples the column once.
func (s *Searcher) Anchored(sample []byte) *Searcher {
	a := &Searcher{needles: slices.Clone(s.needles)}
	for i := range a.needles {
		a.needles[i].anchor = rarestByte(a.needles[i].text, sample) + 1
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
	k := nd.anchor - 1
	if k < 0 {
		k = rarestByte(t, data[offs[0]:offs[n]])
	}
	c := t[k]
	end := int(offs[n])
	row := 0
	// pos is where the sweep resumes: the anchor byte of a match starting
	// at or after the current value's start lies at or after it.
	first, last := t[0], t[len(t)-1]
	for pos := int(offs[0]) + k; pos < end; {
		j := bytes.IndexByte(data[pos:end], c)
		if j < 0 {
			break
		}
		p := pos + j
		pos = p + 1
		start := p - k // where the needle would begin
		stop := start + len(t)
		// Most stops are not the needle: its first and last bytes reject
		// them before anything else is looked at.
		if stop > end || data[start] != first || data[stop-1] != last || string(data[start:stop]) != t {
			continue
		}
		// The value holding start: offs[row] <= start < offs[row+1].
		if int(offs[row+1]) <= start {
			row = nextRow(offs, row, start)
		}
		rowEnd := int(offs[row+1])
		if stop > rowEnd || !nd.extends(data[start:rowEnd]) {
			continue // across two values, or not one of the literals
		}
		dst = append(dst, int32(row))
		row++
		if row == n {
			break
		}
		pos = int(offs[row]) + k
	}
	return dst
}

// nextRow returns the value after row holding byte position at: the r
// with offs[r] <= at < offs[r+1]. A neighbour is tried first, as hits are
// usually close; else a binary search.
func nextRow(offs []uint32, row, at int) int {
	for i := 0; i < 2; i++ {
		row++
		if at < int(offs[row+1]) {
			return row
		}
	}
	n := len(offs) - 1
	// The first value past row whose end is beyond at.
	return row + 1 + sort.Search(n-row-1, func(i int) bool { return int(offs[row+2+i]) > at })
}

// extends reports whether rest (from a hit of the needle to the end of
// its value) starts with one of the needle's extensions.
func (nd *needle) extends(rest []byte) bool {
	if nd.exts == nil {
		return true
	}
	for _, e := range nd.exts {
		if len(rest) >= len(e) && string(rest[:len(e)]) == e {
			return true
		}
	}
	return false
}

// rarestByte returns the position in t of the byte that occurs least in
// a sample of data: the sweep stops at each occurrence of it. Ties go to
// the later byte, which leaves more of a hit to check against what was
// already read.
func rarestByte(t string, data []byte) int {
	if len(t) == 1 {
		return 0
	}
	if len(t) > maxCountedNeedle {
		return rarestByteHistogram(t, data)
	}
	// Each byte of t counted over the sample windows with bytes.Count
	// (vectorised): a few passes over 4 KiB instead of a histogram of it,
	// whose increments of the same counters wait on one another.
	var counted [256]int32 // count+1; 0: not counted yet
	count := func(c byte) int32 {
		if counted[c] == 0 {
			n := 0
			forSampleWindows(data, func(w []byte) { n += bytes.Count(w, []byte{c}) })
			counted[c] = int32(n) + 1
		}
		return counted[c]
	}
	best, bestN := 0, count(t[0])
	for i := 1; i < len(t); i++ {
		if n := count(t[i]); n <= bestN {
			best, bestN = i, n
		}
	}
	return best
}

// maxCountedNeedle is the longest needle whose bytes rarestByte counts one
// by one; a longer one (more distinct bytes, more passes) takes a
// histogram of the sample.
const maxCountedNeedle = 24

// Sample windows of rarestByte: up to sixteen of 256 bytes spread over the
// buffer (four of 1 KiB picked the wrong byte on one in ten 1 MiB
// stretches of access logs).
const sampleWindow, sampleWindows = 256, 16

// forSampleWindows calls fn with each sample window of data: all of it
// when it is no longer than the windows together.
func forSampleWindows(data []byte, fn func(w []byte)) {
	if len(data) <= sampleWindow*sampleWindows {
		fn(data)
		return
	}
	step := len(data) / sampleWindows
	for w := 0; w < sampleWindows; w++ {
		fn(data[w*step : w*step+sampleWindow])
	}
}

// rarestByteHistogram is rarestByte from a histogram of every byte of
// the sample windows.
func rarestByteHistogram(t string, data []byte) int {
	var seen [256]uint32
	forSampleWindows(data, func(w []byte) {
		for _, b := range w {
			seen[b]++
		}
	})
	best := 0
	for i := 1; i < len(t); i++ {
		if seen[t[i]] <= seen[t[best]] {
			best = i
		}
	}
	return best
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
