package index

import (
	"math"
	"slices"
	"strings"

	"github.com/RoaringBitmap/roaring/v2"
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
func Merge(inputs []MergeInput, w UnitWriter, opts *BuilderOptions) ([]byte, error) {
	b := NewBuilder(opts)
	total := uint32(0)
	fields := map[fieldKey]bool{}
	for _, in := range inputs {
		total = max(total, in.Offset+in.Rows)
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
	for _, k := range keys {
		type acc struct {
			bm       *roaring.Bitmap
			card     uint64
			frequent bool
		}
		terms := map[termKey]*acc{}
		long := roaring.New()
		for _, in := range inputs {
			if in.Index == nil || !in.Index.Has(k.path, k.kind) {
				continue
			}
			f, t, err := in.Index.lookupOnce(k.path, k.kind)
			if err != nil {
				return nil, err
			}
			pr := &postingReader{ix: in.Index, f: f}
			for i := 0; i < f.Terms; i++ {
				var key termKey
				switch k.kind {
				case kindInt:
					key.num = t.ints[i]
				case kindString, kindToken:
					key.str = t.strs[i]
				case kindBool:
					if t.bools[i] {
						key.num = 1
					}
				}
				a := terms[key]
				if a == nil {
					a = &acc{}
					terms[key] = a
				}
				a.card += uint64(t.card[i])
				if t.pk[i] == postFrequent || a.frequent {
					a.frequent, a.bm = true, nil
					continue
				}
				rows, err := pr.termRows(t, i)
				if err != nil {
					return nil, err
				}
				rows = roaring.AddOffset(rows, in.Offset)
				if a.bm == nil {
					a.bm = rows
				} else {
					a.bm.Or(rows)
				}
			}
			if f.longUnit > 0 {
				lr, err := pr.bitmap(f.longUnit-1, f.longOff, f.longLen)
				if err != nil {
					return nil, err
				}
				long.Or(roaring.AddOffset(lr, in.Offset))
			}
		}
		if k.kind != kindToken && len(terms) > b.opts.MaxValueTerms {
			continue
		}
		out := make([]termOut, 0, len(terms))
		for key, a := range terms {
			out = append(out, termOut{key: key, bm: a.bm, card: a.card, frequent: a.frequent})
		}
		freq := uint64(math.MaxUint64)
		if k.kind == kindToken {
			freq = b.frequentAbove(kindToken)
		}
		if err := fw.field(k.path, k.kind, out, long, freq); err != nil {
			return nil, err
		}
	}
	return fw.finish(), nil
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
	long  *roaring.Bitmap
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
	terms := map[string]*mergedTerm{}
	var slab []mergedTerm // terms are taken from slabs: one allocation for many
	var freqIn freqLists
	long := roaring.New()
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
		mapRow := func(r uint32) (uint32, error) {
			if int64(r) >= int64(len(in.RowMap)) {
				return 0, corrupt("field %q: posting row %d past the segment's %d rows", path, r, len(in.RowMap))
			}
			return in.RowMap[r], nil
		}
		pr := &postingReader{ix: in.Index, f: f}
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
			if t.pk[i] == postSingle {
				r, err := mapRow(t.off[i])
				if err != nil {
					return err
				}
				m.rows.add(r)
				continue
			}
			bm, err := pr.termRows(t, i)
			if err != nil {
				return err
			}
			it := bm.ManyIterator()
			var buf [256]uint32
			for n := it.NextMany(buf[:]); n > 0; n = it.NextMany(buf[:]) {
				for _, r := range buf[:n] {
					mr, err := mapRow(r)
					if err != nil {
						return err
					}
					m.rows.add(mr)
				}
			}
		}
		if f.longUnit > 0 {
			lr, err := pr.bitmap(f.longUnit-1, f.longOff, f.longLen)
			if err != nil {
				return err
			}
			it := lr.Iterator()
			for it.HasNext() {
				mr, err := mapRow(it.Next())
				if err != nil {
					return err
				}
				long.Add(mr)
			}
		}
	}
	if err := recoverRows(path, inputs, terms, freqIn, frequent); err != nil {
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
func recoverRows(path string, inputs []MappedInput, terms map[string]*mergedTerm, freqIn freqLists, frequent uint64) error {
	wanted := map[int]map[string]*mergedTerm{} // by input
	for key, m := range terms {
		if !m.frequent || uint64(m.card) > frequent {
			continue
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
			Tokenize(s, func(tok string) {
				if !maybe.has(tok) {
					return
				}
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
