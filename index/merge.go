package index

import (
	"math"

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
		terms := map[any]*acc{}
		long := roaring.New()
		for _, in := range inputs {
			if in.Index == nil || !in.Index.Has(k.path, k.kind) {
				continue
			}
			f, t, err := in.Index.lookup(k.path, k.kind)
			if err != nil {
				return nil, err
			}
			pr := &postingReader{ix: in.Index, f: f}
			for i := 0; i < f.Terms; i++ {
				var key any
				switch k.kind {
				case kindInt:
					key = t.ints[i]
				case kindString, kindToken:
					key = t.strs[i]
				case kindBool:
					key = t.bools[i]
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
