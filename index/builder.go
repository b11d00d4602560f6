package index

import (
	"cmp"
	"encoding/binary"
	"fmt"
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
}

// Builder accumulates the postings of one segment. Rows must be added in
// non-decreasing order for each field (blocks in order, rows in order).
// Not safe for concurrent use.
type Builder struct {
	opts   BuilderOptions
	fields map[fieldKey]*fieldBuilder
	// rows is one past the highest row added, for token frequencies.
	rows uint32
	// token scratch for dictionary-encoded text
	tokScratch []string
}

type fieldKey struct {
	path string
	kind Kind
}

type fieldBuilder struct {
	path    string
	kind    Kind
	ints    map[int64]*postings
	strs    map[string]*postings
	bools   [2]*postings
	long    postings
	dropped bool
}

type postings struct{ rows []uint32 }

func (p *postings) add(r uint32) {
	if n := len(p.rows); n == 0 || p.rows[n-1] != r {
		p.rows = append(p.rows, r)
	}
}

// NewBuilder returns an empty builder.
func NewBuilder(opts *BuilderOptions) *Builder {
	b := &Builder{fields: map[fieldKey]*fieldBuilder{}, opts: BuilderOptions{MaxValueTerms: 64, FrequentTokenShare: 1.0 / 128}}
	if opts != nil && opts.MaxValueTerms > 0 {
		b.opts.MaxValueTerms = opts.MaxValueTerms
	}
	if opts != nil && opts.FrequentTokenShare > 0 {
		b.opts.FrequentTokenShare = opts.FrequentTokenShare
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
			f.ints = map[int64]*postings{}
		case kindString, kindToken:
			f.strs = map[string]*postings{}
		case kindBool:
			f.bools = [2]*postings{{}, {}}
		}
		b.fields[k] = f
	}
	return f
}

func (b *Builder) checkTerms(f *fieldBuilder) {
	if f.kind == kindToken {
		return
	}
	if len(f.ints)+len(f.strs) > b.opts.MaxValueTerms {
		f.dropped, f.ints, f.strs = true, nil, nil
	}
}

// rowsByCode groups the selected rows of a dictionary vector by code.
func rowsByCode(v *vec.Vector, fn func(code uint32, rows []uint32)) {
	counts := make([]int32, len(v.Dict)+1)
	for i := 0; i < v.Len; i++ {
		if !v.IsNull(i) {
			counts[v.Codes[i]+1]++
		}
	}
	for i := 1; i < len(counts); i++ {
		counts[i] += counts[i-1]
	}
	rows := make([]uint32, counts[len(counts)-1])
	pos := slices.Clone(counts[:len(v.Dict)])
	for i := 0; i < v.Len; i++ {
		if !v.IsNull(i) {
			c := v.Codes[i]
			rows[pos[c]] = uint32(i)
			pos[c]++
		}
	}
	for c := range v.Dict {
		if counts[c+1] > counts[c] {
			fn(uint32(c), rows[counts[c]:counts[c+1]])
		}
	}
}

// AddStrings indexes the values of a string vector; row i of v is segment
// row base+i. NULL rows are skipped.
func (b *Builder) AddStrings(path string, base uint32, v *vec.Vector) {
	b.rows = max(b.rows, base+uint32(v.Len))
	f := b.field(path, kindString)
	if f.dropped {
		return
	}
	if v.Dict != nil {
		rowsByCode(v, func(code uint32, rows []uint32) {
			if f.dropped {
				return
			}
			s := v.Dict[code]
			p := f.strs[s]
			if p == nil {
				p = &postings{}
				f.strs[strings.Clone(s)] = p
				b.checkTerms(f)
			}
			for _, r := range rows {
				p.add(base + r)
			}
		})
		return
	}
	for i := 0; i < v.Len && !f.dropped; i++ {
		if v.IsNull(i) {
			continue
		}
		s := v.Strs[i]
		p := f.strs[s]
		if p == nil {
			p = &postings{}
			f.strs[strings.Clone(s)] = p
			b.checkTerms(f)
		}
		p.add(base + uint32(i))
	}
}

// AddInts indexes the values of an Int64 vector.
func (b *Builder) AddInts(path string, base uint32, v *vec.Vector) {
	b.rows = max(b.rows, base+uint32(v.Len))
	f := b.field(path, kindInt)
	for i := 0; i < v.Len && !f.dropped; i++ {
		if v.IsNull(i) {
			continue
		}
		x := v.Ints[i]
		p := f.ints[x]
		if p == nil {
			p = &postings{}
			f.ints[x] = p
			b.checkTerms(f)
		}
		p.add(base + uint32(i))
	}
}

// AddBools indexes the values of a Bool vector.
func (b *Builder) AddBools(path string, base uint32, v *vec.Vector) {
	b.rows = max(b.rows, base+uint32(v.Len))
	f := b.field(path, kindBool)
	for i := 0; i < v.Len; i++ {
		if v.IsNull(i) {
			continue
		}
		if v.Bools[i] {
			f.bools[1].add(base + uint32(i))
		} else {
			f.bools[0].add(base + uint32(i))
		}
	}
}

// AddText indexes the tokens of a string vector.
func (b *Builder) AddText(path string, base uint32, v *vec.Vector) {
	b.rows = max(b.rows, base+uint32(v.Len))
	f := b.field(path, kindToken)
	addRow := func(row uint32, s string) {
		Tokenize(s, func(tok string) {
			if len(tok) > MaxTokenLen {
				f.long.add(row)
				return
			}
			if IsOpaqueToken(tok) {
				return
			}
			p := f.strs[tok]
			if p == nil {
				p = &postings{}
				f.strs[strings.Clone(tok)] = p
			}
			p.add(row)
		})
	}
	if v.Dict != nil {
		// Tokenize each dictionary entry once.
		toks := make([][]string, len(v.Dict))
		long := make([]bool, len(v.Dict))
		for c, s := range v.Dict {
			Tokenize(s, func(tok string) {
				if len(tok) > MaxTokenLen {
					long[c] = true
					return
				}
				if !IsOpaqueToken(tok) {
					toks[c] = append(toks[c], tok)
				}
			})
		}
		for i := 0; i < v.Len; i++ {
			if v.IsNull(i) {
				continue
			}
			c := v.Codes[i]
			row := base + uint32(i)
			if long[c] {
				f.long.add(row)
			}
			for _, tok := range toks[c] {
				p := f.strs[tok]
				if p == nil {
					p = &postings{}
					f.strs[strings.Clone(tok)] = p
				}
				p.add(row)
			}
		}
		return
	}
	for i := 0; i < v.Len; i++ {
		if !v.IsNull(i) {
			addRow(base+uint32(i), v.Strs[i])
		}
	}
}

// Empty reports whether nothing would be written.
func (b *Builder) Empty() bool {
	for _, f := range b.fields {
		if !f.dropped {
			return false
		}
	}
	return true
}

// unitBuf collects serialized bitmaps into posting units.
type unitBuf struct {
	w     UnitWriter
	buf   []byte
	units [][2]int64
	err   error
}

// add appends a bitmap and returns (unit index, offset, length).
func (u *unitBuf) add(bm *roaring.Bitmap) (int, int, int) {
	bm.RunOptimize()
	start := len(u.buf)
	data, err := bm.ToBytes()
	if err != nil && u.err == nil {
		u.err = err
	}
	u.buf = append(u.buf, data...)
	idx, off, ln := len(u.units), start, len(data)
	if len(u.buf) >= postingUnitTarget {
		u.flush()
	}
	return idx, off, ln
}

func (u *unitBuf) flush() {
	if len(u.buf) == 0 || u.err != nil {
		return
	}
	off, ln, err := u.w.WriteUnit(u.buf)
	if err != nil {
		u.err = err
		return
	}
	u.units = append(u.units, [2]int64{off, ln})
	u.buf = u.buf[:0]
}

// Write stores the postings through w and returns the directory bytes.
func (b *Builder) Write(w UnitWriter) ([]byte, error) {
	keys := make([]fieldKey, 0, len(b.fields))
	for k, f := range b.fields {
		if !f.dropped {
			keys = append(keys, k)
		}
	}
	slices.SortFunc(keys, func(a, b fieldKey) int {
		if c := strings.Compare(a.path, b.path); c != 0 {
			return c
		}
		return cmp.Compare(a.kind, b.kind)
	})
	dir := []byte{FormatLatest}
	dir = binary.AppendUvarint(dir, uint64(len(keys)))
	for _, k := range keys {
		f := b.fields[k]
		ub := &unitBuf{w: w}
		var terms []byte
		nterms := 0
		frequent := uint64(math.MaxUint64)
		if f.kind == kindToken {
			frequent = max(64, uint64(float64(b.rows)*b.opts.FrequentTokenShare))
		}
		addTerm := func(rows []uint32) {
			nterms++
			switch {
			case len(rows) == 1:
				terms = append(terms, postSingle)
				terms = binary.AppendUvarint(terms, uint64(rows[0]))
				return
			case uint64(len(rows)) > frequent:
				terms = append(terms, postFrequent)
				terms = binary.AppendUvarint(terms, uint64(len(rows)))
				return
			}
			bm := roaring.New()
			bm.AddMany(rows)
			ui, off, ln := ub.add(bm)
			terms = append(terms, postBitmap)
			terms = binary.AppendUvarint(terms, uint64(ui))
			terms = binary.AppendUvarint(terms, uint64(off))
			terms = binary.AppendUvarint(terms, uint64(ln))
			terms = binary.AppendUvarint(terms, uint64(len(rows)))
		}
		switch f.kind {
		case kindInt:
			vals := make([]int64, 0, len(f.ints))
			for x := range f.ints {
				vals = append(vals, x)
			}
			slices.Sort(vals)
			prev := int64(0)
			for _, x := range vals {
				terms = binary.AppendUvarint(terms, zigzag(x-prev))
				prev = x
				addTerm(f.ints[x].rows)
			}
		case kindString, kindToken:
			vals := make([]string, 0, len(f.strs))
			for s := range f.strs {
				vals = append(vals, s)
			}
			slices.Sort(vals)
			for _, s := range vals {
				terms = binary.AppendUvarint(terms, uint64(len(s)))
				terms = append(terms, s...)
				addTerm(f.strs[s].rows)
			}
		case kindBool:
			for i, p := range f.bools {
				if len(p.rows) > 0 {
					terms = append(terms, byte(i))
					addTerm(p.rows)
				}
			}
		}
		longUnit, longOff, longLen := 0, 0, 0
		if len(f.long.rows) > 0 {
			bm := roaring.New()
			bm.AddMany(f.long.rows)
			ui, off, ln := ub.add(bm)
			longUnit, longOff, longLen = ui+1, off, ln
		}
		ub.flush()
		if ub.err != nil {
			return nil, fmt.Errorf("index %s: %w", f.path, ub.err)
		}
		termsOff, termsLen, err := w.WriteUnit(terms)
		if err != nil {
			return nil, fmt.Errorf("index %s terms: %w", f.path, err)
		}
		dir = binary.AppendUvarint(dir, uint64(len(f.path)))
		dir = append(dir, f.path...)
		dir = append(dir, byte(f.kind))
		dir = binary.AppendUvarint(dir, uint64(nterms))
		dir = binary.AppendUvarint(dir, uint64(termsOff))
		dir = binary.AppendUvarint(dir, uint64(termsLen))
		dir = binary.AppendUvarint(dir, uint64(len(ub.units)))
		for _, u := range ub.units {
			dir = binary.AppendUvarint(dir, uint64(u[0]))
			dir = binary.AppendUvarint(dir, uint64(u[1]))
		}
		dir = binary.AppendUvarint(dir, uint64(longUnit))
		dir = binary.AppendUvarint(dir, uint64(longOff))
		dir = binary.AppendUvarint(dir, uint64(longLen))
	}
	return dir, nil
}

func zigzag(x int64) uint64   { return uint64(x<<1) ^ uint64(x>>63) }
func unzigzag(u uint64) int64 { return int64(u>>1) ^ -int64(u&1) }
