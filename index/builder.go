package index

import (
	"cmp"
	"math"
	"slices"
	"strings"

	"github.com/RoaringBitmap/roaring/v2"

	"github.com/sediment/sediment/internal/vec"
)

// postingUnitTarget is the size at which a posting unit is closed.
const postingUnitTarget = 64 << 10

// BuilderOptions bound what a Builder indexes.
type BuilderOptions struct {
	// MaxValueTerms drops a value field (int, string, bool) from the index
	// once it has more distinct values than this: postings of a
	// medium-cardinality field cost more bytes than the block dictionaries
	// and a decode of its codes save. Default 64.
	MaxValueTerms int
	// FrequentTokenShare: a token in more than this share of rows keeps no
	// postings (a search for it reads the column anyway). Default 1/128.
	FrequentTokenShare float64
	// RowsHint, when not 0, is at least the rows the segment will have. A
	// token's postings are then let go as soon as they pass the frequent
	// share of it, since the token will be frequent whatever comes; only
	// its count is kept. Without it, every token's rows are held until
	// Write, which for the common words of a few million messages is
	// hundreds of megabytes.
	RowsHint uint32
}

// Builder accumulates the postings of one segment. Rows must be added in
// non-decreasing order for each field (blocks in order, rows in order).
// Not safe for concurrent use.
type Builder struct {
	opts   BuilderOptions
	fields map[fieldKey]*fieldBuilder
	// rows is one past the highest row added, for token frequencies.
	rows uint32
	// codes, byDict and sparse are the memory the Adds of value fields
	// reuse, vector after vector (see codeChunk).
	codes  []uint32
	byDict []uint32
	sparse []byte
	// merged holds the token fields MergeText built, written as they are.
	merged map[fieldKey]*mergedField
}

type fieldKey struct {
	path string
	kind Kind
}

type fieldBuilder struct {
	path string
	kind Kind
	// vals is a value field's terms and rows.
	vals valueField
	// toks, long: a token field's terms and long rows.
	toks    tokenTable
	long    postings
	dropped bool
	// frequentCap (token fields with a RowsHint) is the count past which
	// a token's postings are let go (see BuilderOptions.RowsHint).
	frequentCap uint32
	// longTerms counts the terms longer than MaxTokenLen (token fields).
	longTerms int
	// slab is where newPostings takes postings from.
	slab []postings
}

// maxLongTerms bounds the distinct tokens longer than MaxTokenLen a text
// field of one segment keeps as terms; rows holding further ones go to the
// long rows. (API keys and other long tokens that recur are few; random
// blobs would be many and large.)
const maxLongTerms = 4096

// addToken adds row to the postings of token tok of a token field: a term,
// or for a long token past maxLongTerms (or made of hex digits only), the
// long rows.
func (f *fieldBuilder) addToken(tok string, row uint32) {
	f.addClassified(tok, len(tok) >= 8 && isHexOnly(tok), row)
}

// addClassified is addToken for a token whose bytes are known to be all
// hex digits (hex) or not.
func (f *fieldBuilder) addClassified(tok string, hex bool, row uint32) {
	long := len(tok) > MaxTokenLen
	if hex && len(tok) >= 8 { // IsOpaqueToken
		if long {
			f.long.add(row)
		}
		return
	}
	var h uint64
	var p *postings
	if len(tok) <= maxShort {
		x := packShort(tok)
		h = hashShort(x)
		p = f.toks.getShort(x, h)
	} else {
		h = hashToken(tok)
		p = f.toks.get(tok, h)
	}
	if p == nil {
		if long && f.longTerms >= maxLongTerms {
			f.long.add(row)
			return
		}
		p = f.newPostings()
		f.toks.put(strings.Clone(tok), h, p)
		if long {
			f.longTerms++
		}
	}
	p.add(row)
	if f.frequentCap > 0 && p.n > f.frequentCap && !p.gone {
		p.enc, p.bm, p.gone = nil, nil, true
	}
}

// newPostings returns empty postings for a new term, from slabs: one
// allocation for many terms instead of one each.
func (f *fieldBuilder) newPostings() *postings {
	if len(f.slab) == cap(f.slab) {
		f.slab = make([]postings, 0, postingsSlab)
	}
	f.slab = f.slab[:len(f.slab)+1]
	return &f.slab[len(f.slab)-1]
}

// postingsSlab is how many terms' postings one allocation holds.
const postingsSlab = 256

// NewBuilder returns an empty builder.
func NewBuilder(opts *BuilderOptions) *Builder {
	b := &Builder{fields: map[fieldKey]*fieldBuilder{}, opts: BuilderOptions{MaxValueTerms: 64, FrequentTokenShare: 1.0 / 128}}
	if opts != nil && opts.MaxValueTerms > 0 {
		b.opts.MaxValueTerms = opts.MaxValueTerms
	}
	if opts != nil && opts.FrequentTokenShare > 0 {
		b.opts.FrequentTokenShare = opts.FrequentTokenShare
	}
	if opts != nil {
		b.opts.RowsHint = opts.RowsHint
	}
	return b
}

func (b *Builder) field(path string, kind Kind) *fieldBuilder {
	k := fieldKey{path, kind}
	f := b.fields[k]
	if f == nil {
		f = &fieldBuilder{path: path, kind: kind}
		switch kind {
		case kindInt:
			f.vals.ints = map[int64]uint32{}
		case kindString:
			f.vals.strs = map[string]uint32{}
		case kindToken:
			if b.opts.RowsHint > 0 {
				// At or past frequentAbove's count for any row count up
				// to the hint, so a token let go is one Write would have
				// found frequent.
				f.frequentCap = uint32(min(uint64(math.MaxUint32), frequentCount(uint64(b.opts.RowsHint), b.opts.FrequentTokenShare)))
			}
		}
		b.fields[k] = f
	}
	return f
}

// codeScratch returns the builder's per-row code memory for n codes.
// What it holds is not cleared: the Adds set every code, 0 for a NULL.
func (b *Builder) codeScratch(n int) []uint32 {
	b.codes = slices.Grow(b.codes[:0], n)[:n]
	return b.codes
}

// addCodes ends an Add of a value field: drops the field if it has more
// terms than MaxValueTerms, else keeps the codes of rows base on.
func (b *Builder) addCodes(f *fieldBuilder, base uint32, codes []uint32, present int) {
	if len(f.vals.keys) > b.opts.MaxValueTerms {
		f.dropped, f.vals = true, valueField{}
		return
	}
	if present == 0 {
		return
	}
	f.vals.addChunk(encodeCodes(base, codes, present, uint32(len(f.vals.keys)), &b.sparse))
}

// AddStrings indexes the values of a string vector; row i of v is segment
// row base+i. NULL rows are skipped.
func (b *Builder) AddStrings(path string, base uint32, v *vec.Vector) {
	b.rows = max(b.rows, base+uint32(v.Len))
	f := b.field(path, kindString)
	if f.dropped {
		return
	}
	vf := &f.vals
	codes := b.codeScratch(v.Len)
	present := 0
	if v.Dict != nil {
		// Look each dictionary entry up once: byDict[c] is the code of
		// entry c, 0 until a row holds it.
		b.byDict = slices.Grow(b.byDict[:0], len(v.Dict))[:len(v.Dict)]
		byDict := b.byDict
		clear(byDict)
		for i := 0; i < v.Len; i++ {
			if v.IsNull(i) {
				codes[i] = 0
				continue
			}
			dc := v.Codes[i]
			code := byDict[dc]
			if code == 0 {
				code = vf.stringCode(v.Dict[dc])
				if len(vf.keys) > b.opts.MaxValueTerms {
					break // addCodes drops the field
				}
				byDict[dc] = code
			}
			codes[i] = code
			vf.card[code-1]++
			present++
		}
	} else {
		for i := 0; i < v.Len; i++ {
			if v.IsNull(i) {
				codes[i] = 0
				continue
			}
			code := vf.stringCode(v.StringAt(i))
			if len(vf.keys) > b.opts.MaxValueTerms {
				break
			}
			codes[i] = code
			vf.card[code-1]++
			present++
		}
	}
	b.addCodes(f, base, codes, present)
}

// AddInts indexes the values of an Int64 vector.
func (b *Builder) AddInts(path string, base uint32, v *vec.Vector) {
	b.rows = max(b.rows, base+uint32(v.Len))
	f := b.field(path, kindInt)
	if f.dropped {
		return
	}
	vf := &f.vals
	codes := b.codeScratch(v.Len)
	present := 0
	for i := 0; i < v.Len; i++ {
		if v.IsNull(i) {
			codes[i] = 0
			continue
		}
		code := vf.intCode(v.Ints[i])
		if len(vf.keys) > b.opts.MaxValueTerms {
			break
		}
		codes[i] = code
		vf.card[code-1]++
		present++
	}
	b.addCodes(f, base, codes, present)
}

// AddBools indexes the values of a Bool vector.
func (b *Builder) AddBools(path string, base uint32, v *vec.Vector) {
	b.rows = max(b.rows, base+uint32(v.Len))
	f := b.field(path, kindBool)
	vf := &f.vals
	codes := b.codeScratch(v.Len)
	present := 0
	for i := 0; i < v.Len; i++ {
		if v.IsNull(i) {
			codes[i] = 0
			continue
		}
		code := vf.boolCode(v.Bools[i])
		codes[i] = code
		vf.card[code-1]++
		present++
	}
	if present > 0 {
		// Two terms at most: never dropped.
		vf.addChunk(encodeCodes(base, codes, present, uint32(len(vf.keys)), &b.sparse))
	}
}

// AddText indexes the tokens of a string vector.
func (b *Builder) AddText(path string, base uint32, v *vec.Vector) {
	b.rows = max(b.rows, base+uint32(v.Len))
	f := b.field(path, kindToken)
	if v.Dict != nil {
		// Tokenize each dictionary entry once.
		toks := make([][]string, len(v.Dict))
		for c, s := range v.Dict {
			Tokenize(s, func(tok string) {
				if !IsOpaqueToken(tok) || len(tok) > MaxTokenLen {
					toks[c] = append(toks[c], tok)
				}
			})
		}
		for i := 0; i < v.Len; i++ {
			if v.IsNull(i) {
				continue
			}
			row := base + uint32(i)
			for _, tok := range toks[v.Codes[i]] {
				f.addToken(tok, row)
			}
		}
		return
	}
	for i := 0; i < v.Len; i++ {
		if !v.IsNull(i) {
			f.addText(v.StringAt(i), base+uint32(i))
		}
	}
}

// addText adds row to the postings of each token of s: Tokenize's
// tokens, found by one table lookup a byte that also tells whether each
// token is all hex digits (an opaque token when long enough).
func (f *fieldBuilder) addText(s string, row uint32) {
	start := -1
	var all uint8 // the classes every byte of the token has
	for i := 0; i < len(s); i++ {
		c := byteClass[s[i]]
		if c&classToken != 0 {
			if start < 0 {
				start, all = i, c
			}
			all &= c
			continue
		}
		if start >= 0 {
			f.addClassified(s[start:i], all&classHex != 0, row)
			start = -1
		}
	}
	if start >= 0 {
		f.addClassified(s[start:], all&classHex != 0, row)
	}
}

// Empty reports whether nothing would be written.
func (b *Builder) Empty() bool {
	if len(b.merged) > 0 {
		return false
	}
	for _, f := range b.fields {
		if !f.dropped {
			return false
		}
	}
	return true
}

// termOut is one term to write: its rows (a sorted list or a bitmap) or,
// for a frequent token, only its count.
type termOut struct {
	key  termKey
	rows []uint32
	// list holds the rows instead (tokens' and MergeText's terms),
	// decoded when the term is written.
	list rowList
	bm   *roaring.Bitmap
	// one is the row of a term of one row given by none of the above.
	one      uint32
	card     uint64
	frequent bool
}

// termKey is a term: str for string and token fields, num for int64
// ones and bool ones (0 or 1). A struct rather than an interface, whose
// strings and most ints would be boxed, an allocation per term of every
// segment written.
type termKey struct {
	str string
	num int64
}

// Write stores the postings through w and returns the directory bytes.
// It lets each field's memory go once the field is written: a Builder is
// written once.
func (b *Builder) Write(w UnitWriter) ([]byte, error) {
	keys := make([]fieldKey, 0, len(b.fields)+len(b.merged))
	for k, f := range b.fields {
		if !f.dropped {
			keys = append(keys, k)
		}
	}
	for k := range b.merged {
		keys = append(keys, k)
	}
	sortFieldKeys(keys)
	keys = keys[:min(len(keys), maxFields)]
	fw := newFieldWriter(w)
	var terms []termOut // one field's, its memory reused by the next
	var rows []uint32   // a value field's rows, reused by the next
	for _, k := range keys {
		if m := b.merged[k]; m != nil {
			fw.begin(k.kind, b.frequentAbove(k.kind))
			for i := range m.terms {
				fw.term(m.term(i))
			}
			if err := fw.end(k.path, nil, m.long); err != nil {
				return nil, err
			}
			delete(b.merged, k)
			continue
		}
		f := b.fields[k]
		clear(terms) // let the previous field's bitmaps go
		terms = terms[:0]
		var err error
		if f.kind == kindToken {
			err = b.writeTokens(fw, f)
		} else {
			terms, rows = f.vals.terms(slices.Grow(terms, len(f.vals.keys)), rows, &b.codes)
			err = fw.field(f.path, f.kind, terms, nil, b.frequentAbove(f.kind))
		}
		if err != nil {
			return nil, err
		}
		delete(b.fields, k)
	}
	return fw.finish(), nil
}

// tokenRef is a token of a field being written.
type tokenRef struct {
	key string
	p   *postings
}

// writeTokens writes token field f: its terms are taken in order from
// their postings as they are written, each let go once written, rather
// than all first made into termOuts (a flush's token field has tens of
// thousands).
func (b *Builder) writeTokens(fw *fieldWriter, f *fieldBuilder) error {
	refs := make([]tokenRef, 0, f.toks.len())
	for k, x := range f.toks.keys {
		refs = append(refs, tokenRef{x, f.toks.posts[k]})
	}
	f.toks = tokenTable{}
	slices.SortFunc(refs, func(a, b tokenRef) int { return strings.Compare(a.key, b.key) })
	var long *roaring.Bitmap
	if f.long.n > 0 {
		lo := f.long.out(termKey{})
		if long = lo.bm; long == nil {
			long = roaring.New()
			if lo.card == 1 {
				long.Add(lo.one)
			}
			if lo.list.n > 0 {
				long.AddMany(lo.list.appendSorted(nil))
			}
		}
	}
	return fw.sortedField(f.path, f.kind, len(refs), func(i int) termOut {
		r := &refs[i]
		t := r.p.out(termKey{str: r.key})
		*r = tokenRef{}
		return t
	}, long, b.frequentAbove(f.kind))
}

// frequentAbove is the count past which a token keeps no postings.
func (b *Builder) frequentAbove(kind Kind) uint64 {
	if kind != kindToken {
		return math.MaxUint64
	}
	return frequentCount(uint64(b.rows), b.opts.FrequentTokenShare)
}

// frequentCount is the count past which a token of a segment of rows rows
// is frequent; it never falls as rows grow.
func frequentCount(rows uint64, share float64) uint64 {
	return max(64, uint64(float64(rows)*share))
}

func sortFieldKeys(keys []fieldKey) {
	slices.SortFunc(keys, func(a, b fieldKey) int {
		if c := strings.Compare(a.path, b.path); c != 0 {
			return c
		}
		return cmp.Compare(a.kind, b.kind)
	})
}

// compareTerms orders the terms of a field of kind.
func compareTerms(kind Kind, a, b termKey) int {
	if kind == kindString || kind == kindToken {
		return strings.Compare(a.str, b.str)
	}
	return cmp.Compare(a.num, b.num)
}
