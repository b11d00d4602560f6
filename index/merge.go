package index

import (
	"fmt"
	"math"
	"slices"
	"strings"
)

// MergeInput is one index to merge: the index of a segment whose rows
// become rows [Offset, Offset+Rows) of the merged segment.
type MergeInput struct {
	Index  *Index // nil when the segment has none
	Offset uint32
	Rows   uint32
	// Has reports whether the segment holds values a field of this path and
	// kind would index. A field such a segment's index lacks was dropped
	// there (too many terms), so the merged index cannot have it either.
	Has func(path string, kind Kind) bool
}

// Merge writes the index of segments concatenated in the given order,
// shifting every posting by its input's offset, without reading the
// columns again. Frequent tokens stay frequent; a value field that ends
// with more than MaxValueTerms terms is dropped.
//
// Each field's terms are merged from the inputs' sorted term lists (a
// k-way merge: no map of terms, no sort), and each term's rows are decoded
// from the inputs' postings straight into one list, input after input,
// and written once (no bitmap per input and per term to shift and union):
// issue 14, where Merge was half of a time-ordered compaction's CPU. A
// term frequent in the merged segment has no postings read at all.
func Merge(inputs []MergeInput, w UnitWriter, opts *BuilderOptions) ([]byte, error) {
	b := NewBuilder(opts)
	total := uint32(0)
	fields := map[fieldKey]bool{}
	// inOrder: the inputs' row ranges ascend and do not overlap, so that
	// rows gathered input after input ascend.
	inOrder := true
	for i, in := range inputs {
		total = max(total, in.Offset+in.Rows)
		if i > 0 && uint64(in.Offset) < uint64(inputs[i-1].Offset)+uint64(inputs[i-1].Rows) {
			inOrder = false
		}
		if in.Index == nil {
			continue
		}
		for k := range in.Index.fields {
			fields[k] = true
		}
	}
	b.rows = total
	var keys []fieldKey
	for k := range fields {
		ok := true
		for _, in := range inputs {
			if in.Has != nil && in.Has(k.path, k.kind) && (in.Index == nil || !in.Index.Has(k.path, k.kind)) {
				ok = false
				break
			}
		}
		if ok {
			keys = append(keys, k)
		}
	}
	sortFieldKeys(keys)
	keys = keys[:min(len(keys), maxFields)]
	fw := newFieldWriter(w)
	m := &fieldMerger{inOrder: inOrder}
	for _, k := range keys {
		srcs := m.srcs[:0]
		for _, in := range inputs {
			if in.Index == nil || !in.Index.Has(k.path, k.kind) {
				continue
			}
			f, t, err := in.Index.lookupOnce(k.path, k.kind)
			if err != nil {
				return nil, err
			}
			srcs = append(srcs, mergeSrc{in: in, f: f, t: t, pr: postingReader{ix: in.Index, f: f, inOrder: true}})
		}
		m.srcs = srcs
		freq := uint64(math.MaxUint64)
		if k.kind == kindToken {
			freq = b.frequentAbove(kindToken)
		} else if m.countTerms(k.kind) > b.opts.MaxValueTerms {
			continue
		}
		if err := m.write(fw, k, freq); err != nil {
			return nil, err
		}
	}
	return fw.finish(), nil
}

// mergeSrc is one input of the field Merge is merging: its terms and the
// position of the next one.
type mergeSrc struct {
	in  MergeInput
	f   *field
	t   *terms
	pr  postingReader
	pos int
}

// key returns the term at the source's position.
func (s *mergeSrc) key(kind Kind) termKey {
	i := s.pos
	switch kind {
	case kindInt:
		return termKey{num: s.t.ints[i]}
	case kindString, kindToken:
		return termKey{str: s.t.strs[i]}
	case kindBool:
		if s.t.bools[i] {
			return termKey{num: 1}
		}
	}
	return termKey{}
}

// fieldMerger merges one field of Merge's inputs after another, its
// memory reused.
type fieldMerger struct {
	srcs    []mergeSrc
	inOrder bool
	// at lists the sources holding the current term.
	at   []int
	rows []uint32
	long []uint32
}

// next finds the smallest term at the sources' positions and the sources
// holding it (m.at), in input order; ok is false when every source is
// done.
func (m *fieldMerger) next(kind Kind) (key termKey, ok bool) {
	m.at = m.at[:0]
	for i := range m.srcs {
		s := &m.srcs[i]
		if s.pos >= s.f.Terms {
			continue
		}
		k := s.key(kind)
		if len(m.at) > 0 {
			c := compareTerms(kind, k, key)
			if c > 0 {
				continue
			}
			if c == 0 {
				m.at = append(m.at, i)
				continue
			}
		}
		key, m.at = k, append(m.at[:0], i)
	}
	return key, len(m.at) > 0
}

// advance moves the sources holding the current term past it.
func (m *fieldMerger) advance() {
	for _, i := range m.at {
		m.srcs[i].pos++
	}
}

// rewind puts every source back at its first term.
func (m *fieldMerger) rewind() {
	for i := range m.srcs {
		m.srcs[i].pos = 0
	}
}

// countTerms returns the distinct terms of the field over the sources.
func (m *fieldMerger) countTerms(kind Kind) int {
	n := 0
	for _, ok := m.next(kind); ok; _, ok = m.next(kind) {
		n++
		m.advance()
	}
	m.rewind()
	return n
}

// write writes the merged field k through fw; a token in more than freq
// rows keeps no postings.
func (m *fieldMerger) write(fw *fieldWriter, k fieldKey, freq uint64) error {
	fw.begin(k.kind, freq)
	for key, ok := m.next(k.kind); ok; key, ok = m.next(k.kind) {
		t := termOut{key: key}
		for _, i := range m.at {
			s := &m.srcs[i]
			t.card += uint64(s.t.card[s.pos])
			t.frequent = t.frequent || s.t.pk[s.pos] == postFrequent
		}
		if !t.frequent && t.card <= freq {
			rows := m.rows[:0]
			for _, i := range m.at {
				s := &m.srcs[i]
				var err error
				if rows, err = s.pr.appendTermRows(rows, s.t, s.pos, s.in.Offset, s.in.Rows); err != nil {
					return err
				}
			}
			m.rows = rows
			t.rows = m.sorted(rows)
		}
		m.advance()
		fw.term(t)
	}
	long := m.long[:0]
	for i := range m.srcs {
		s := &m.srcs[i]
		if s.f.longUnit == 0 {
			continue
		}
		b, err := s.pr.posting(s.f.longUnit-1, s.f.longOff, s.f.longLen)
		if err != nil {
			return err
		}
		if long, err = appendRoaringRows(long, b, s.in.Offset, s.in.Rows); err != nil {
			return fmt.Errorf("field %q long rows: %w", k.path, err)
		}
	}
	m.long = long
	return fw.end(k.path, nil, m.sorted(long))
}

// sorted returns rows gathered input after input as a set, ascending: as
// they are when the inputs' ranges ascend.
func (m *fieldMerger) sorted(rows []uint32) []uint32 {
	if m.inOrder || isStrictlyAscending(rows) {
		return rows
	}
	slices.Sort(rows)
	return slices.Compact(rows)
}

// MappedInput is the index of one segment whose rows are merged, in any
// order, into the segment being built: row r of the input is row
// RowMap[r] of the merged segment.
type MappedInput struct {
	Index  *Index
	RowMap []uint32
	// Values, when set, calls fn with the input's value of the field in
	// each row that has one, rows in ascending order. MergeText reads
	// them to find the rows of the tokens the input kept no postings for
	// (frequent there) that are not frequent in the merged segment;
	// without it such tokens stay frequent.
	Values func(fn func(row uint32, s string)) error
}

// mergedTerm is a token's rows in the merged segment and its count. It is
// frequent while the rows of some input are not known (freqIn lists those
// inputs). A large merge has hundreds of thousands of terms: the fields
// are sized to take 48 bytes.
type mergedTerm struct {
	rows rowList
	// card is the sum of the inputs' counts (at most the merged rows,
	// which a RowMap numbers in uint32).
	card uint32
	// lastRow is the input row last added while reading an input's values
	// (plus one; 0 none), so that a token twice in a row counts once.
	lastRow uint32
	// freqIn is 0, or one more than the index of the list, among those
	// MergeText keeps (freqLists), of the inputs the term is frequent in.
	freqIn   int32
	frequent bool
}

// freqLists are the lists of inputs the merged terms are frequent in
// (mergedTerm.freqIn), apart from the terms: few terms have one.
type freqLists [][]int

// add notes that m is frequent in input k.
func (fl *freqLists) add(m *mergedTerm, k int) {
	if m.freqIn == 0 {
		*fl = append(*fl, nil)
		m.freqIn = int32(len(*fl))
	}
	(*fl)[m.freqIn-1] = append((*fl)[m.freqIn-1], k)
}

// of returns the inputs m is frequent in.
func (fl freqLists) of(m *mergedTerm) []int {
	if m.freqIn == 0 {
		return nil
	}
	return fl[m.freqIn-1]
}

// mergedField is a token field MergeText built, written as it is: its
// terms in ascending order.
type mergedField struct {
	terms []mergedOut
	long  []uint32 // ascending
}

// mergedOut is a term of a mergedField: its rows, or for a frequent
// token only its count. 56 bytes where a termOut takes 104: a large merge
// holds hundreds of thousands of them from MergeText to Write (issue 14).
type mergedOut struct {
	key      string
	rows     rowList
	card     uint32
	frequent bool
}

// term returns the i-th term to write and lets its rows go (they are
// decoded when it is written, and a field is written once).
func (m *mergedField) term(i int) termOut {
	t := &m.terms[i]
	out := termOut{key: termKey{str: t.key}, card: uint64(t.card), frequent: t.frequent}
	if !t.frequent {
		out.list = t.rows
	}
	t.rows = rowList{}
	return out
}

// MergeText indexes the tokens of the text field path from the token
// indexes of the segments whose rows make up the one being built, instead
// of tokenising every value again: each input's postings and long rows
// are carried over through its RowMap. Every input holding values of the
// field must have its token field and every row of every input must be
// mapped (the caller checks both), so that every token of the merged
// column is a term. A token an input kept no postings for (frequent
// there) but that is not frequent in the merged segment gets its rows
// there from the input's Values (see recoverRows), so that the field is
// the one AddText over the merged values would build; without Values it
// stays frequent, which claims nothing absent. The field replaces one
// built by AddText for path.
func (b *Builder) MergeText(path string, inputs []MappedInput) error {
	return b.MergeTextRecovered(path, inputs, nil)
}

// MergeTextRecovered is MergeText taking the rows of the tokens to
// recover from tr (PlanTextRecovery, given every value of the inputs it
// wants) where it has them, and from the inputs' Values otherwise. tr may
// be nil.
func (b *Builder) MergeTextRecovered(path string, inputs []MappedInput, tr *TextRecovery) error {
	terms := map[string]*mergedTerm{}
	var slab []mergedTerm // terms are taken from slabs: one allocation for many
	var freqIn freqLists
	var long []uint32 // rows holding long tokens, in the merged segment
	var rows []uint32 // one term's rows in its input
	for _, in := range inputs {
		for _, r := range in.RowMap {
			b.rows = max(b.rows, r+1)
		}
	}
	frequent := b.frequentAbove(kindToken)
	for k, in := range inputs {
		if in.Index == nil || !in.Index.Has(path, kindToken) {
			continue
		}
		f, t, err := in.Index.lookupOnce(path, kindToken)
		if err != nil {
			return err
		}
		below := uint32(min(len(in.RowMap), math.MaxUint32))
		pr := &postingReader{ix: in.Index, f: f, inOrder: true}
		for i := 0; i < f.Terms; i++ {
			m := terms[t.strs[i]]
			if m == nil {
				if len(slab) == cap(slab) {
					slab = make([]mergedTerm, 0, postingsSlab)
				}
				slab = slab[:len(slab)+1]
				m = &slab[len(slab)-1]
				terms[strings.Clone(t.strs[i])] = m
			}
			m.card = uint32(min(uint64(m.card)+uint64(t.card[i]), math.MaxUint32))
			if uint64(m.card) > frequent {
				// Frequent in the merged segment whatever else comes.
				m.frequent, m.rows = true, rowList{}
				if m.freqIn > 0 {
					freqIn[m.freqIn-1] = nil
				}
				continue
			}
			if t.pk[i] == postFrequent {
				m.frequent = true
				freqIn.add(m, k)
				continue
			}
			// The term's rows in the input, then in the merged segment:
			// decoded into one list and mapped in a tight loop.
			if rows, err = pr.appendTermRows(rows[:0], t, i, 0, below); err != nil {
				return err
			}
			for _, r := range rows {
				m.rows.add(in.RowMap[r])
			}
		}
		if f.longUnit > 0 {
			b, err := pr.posting(f.longUnit-1, f.longOff, f.longLen)
			if err != nil {
				return err
			}
			if rows, err = appendRoaringRows(rows[:0], b, 0, below); err != nil {
				return fmt.Errorf("field %q long rows: %w", path, err)
			}
			for _, r := range rows {
				long = append(long, in.RowMap[r])
			}
		}
	}
	slices.Sort(long)
	long = slices.Compact(long)
	if tr != nil && tr.frequent != frequent {
		tr = nil // planned for another segment size: its choice of tokens may differ
	}
	if err := recoverRows(path, inputs, terms, freqIn, frequent, tr); err != nil {
		return err
	}
	out := make([]mergedOut, 0, len(terms))
	for key, m := range terms {
		if m.frequent {
			out = append(out, mergedOut{key: key, card: m.card, frequent: true})
			continue
		}
		// Rows are distinct (a RowMap maps rows one to one): sorted (when
		// written), they are the term's postings, their number its count.
		out = append(out, mergedOut{key: key, rows: m.rows, card: m.rows.n})
	}
	slices.SortFunc(out, func(a, b mergedOut) int { return strings.Compare(a.key, b.key) })
	k := fieldKey{path, kindToken}
	delete(b.fields, k)
	if b.merged == nil {
		b.merged = map[fieldKey]*mergedField{}
	}
	b.merged[k] = &mergedField{terms: out, long: long}
	return nil
}

// recoverRows finds, in the values of the inputs that kept no postings
// for them, the rows of the tokens that are not frequent in the merged
// segment (at most frequent rows), so that the merged index keeps their
// postings as indexing the merged values would. A token whose rows are
// not all found (an input without Values, or an index that disagrees with
// its values) stays frequent: that claims nothing absent.
func recoverRows(path string, inputs []MappedInput, terms map[string]*mergedTerm, freqIn freqLists, frequent uint64, tr *TextRecovery) error {
	wanted := map[int]map[string]*mergedTerm{} // by input
	for key, m := range terms {
		if !m.frequent || uint64(m.card) > frequent {
			continue
		}
		if tr != nil {
			if rt, ok := tr.covers(key, freqIn.of(m)); ok {
				// Found while the merge went by: rows of the merged segment.
				rt.rows.each(m.rows.add)
				if m.rows.n == m.card {
					m.frequent = false
				}
				continue
			}
		}
		for _, k := range freqIn.of(m) {
			if wanted[k] == nil {
				wanted[k] = map[string]*mergedTerm{}
			}
			wanted[k][key] = m
		}
	}
	lost := map[*mergedTerm]bool{}
	for k, want := range wanted {
		in := inputs[k]
		if in.Values == nil {
			for _, m := range want {
				lost[m] = true
			}
			continue
		}
		var maybe tokenFilter
		for tok, m := range want {
			m.lastRow = 0
			maybe.add(tok)
		}
		var bad error
		err := in.Values(func(row uint32, s string) {
			if bad != nil {
				return
			}
			if int64(row) >= int64(len(in.RowMap)) {
				bad = corrupt("field %q: value of row %d past the segment's %d rows", path, row, len(in.RowMap))
				return
			}
			maybe.tokens(s, func(tok string) {
				if m := want[tok]; m != nil && m.lastRow != row+1 {
					m.lastRow = row + 1
					m.rows.add(in.RowMap[row])
				}
			})
		})
		if err == nil {
			err = bad
		}
		if err != nil {
			return err
		}
	}
	for _, want := range wanted {
		for _, m := range want {
			if !lost[m] && m.rows.n == m.card {
				m.frequent = false
			}
		}
	}
	return nil
}

// tokenFilter is a bitset over a cheap hash of tokens: a token not in it
// is not one of those added, which spares most tokens a map lookup.
type tokenFilter [1 << 10]uint64

// tokenHash mixes a token's length and three of its bytes into 16 bits.
func tokenHash(tok string) uint32 {
	n := len(tok)
	if n == 0 {
		return 0
	}
	x := uint32(n) | uint32(tok[0])<<8 | uint32(tok[n/2])<<16 | uint32(tok[n-1])<<24
	return (x * 2654435761) >> 16
}

func (f *tokenFilter) add(tok string) {
	h := tokenHash(tok)
	f[h>>6] |= 1 << (h & 63)
}

func (f *tokenFilter) has(tok string) bool {
	h := tokenHash(tok)
	return f[h>>6]&(1<<(h&63)) != 0
}

// tokens calls fn with each token of s (as Tokenize finds them) that may
// be one of those added. It is Tokenize and has in one loop: recoverRows
// runs it over every value of an input, where most tokens are not wanted
// and a call for each was most of its time (issue 14).
func (f *tokenFilter) tokens(s string, fn func(tok string)) {
	start := -1
	for i := 0; i <= len(s); i++ {
		if i < len(s) && byteClass[s[i]]&classToken != 0 {
			if start < 0 {
				start = i
			}
			continue
		}
		if start < 0 {
			continue
		}
		n := i - start
		x := uint32(n) | uint32(s[start])<<8 | uint32(s[start+n/2])<<16 | uint32(s[i-1])<<24
		if h := (x * 2654435761) >> 16; f[h>>6]&(1<<(h&63)) != 0 {
			fn(s[start:i])
		}
		start = -1
	}
}
