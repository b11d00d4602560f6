package engine

import (
	"github.com/sediment/sediment/index"
	"github.com/sediment/sediment/internal/vec"
	"github.com/sediment/sediment/segment"
)

// Compaction merges the token indexes of its inputs instead of tokenising
// every text value again (issue 14: tokenising was a tenth of the
// compaction's CPU). The merge knows where each input row goes; each
// input's postings are carried over through that map (index.MergeText).
// It applies only when the merged segment is exactly its inputs' rows and
// every input's token index is whole, so that every token of the merged
// column is a term with all its rows, or frequent:
//   - no row left out (retention's cutoff, blocks set aside as damaged);
//   - every input holding a string column of the field has a readable
//     index with the field's tokens.
// Otherwise the field's tokens are indexed from the values, as a flush
// does. A token frequent in an input (no postings kept there) but not in
// the merged segment has its rows found by reading that input's values
// and matching only such tokens: the merged index is the one indexing the
// merged values gives (TestCompactionMergesTokenIndexes).
//
// Measured on BenchmarkCompactMerge/key=project: the token field costs
// about a quarter less CPU than tokenising the merged values (0.52 s
// against 0.69 s of a 6.3 s profile); most of the rest is mapping the
// postings and, for tokens frequent in some input only, reading and
// tokenising those inputs' values again.

// textMerger is a rowSource whose token index fields can be merged from
// the indexes of the segments its rows come from.
type textMerger interface {
	// mergeTextPaths returns which of the text fields will be merged
	// (nil: none), and from then on tracks where each input row goes.
	// It is called before any row is asked for.
	mergeTextPaths(text map[string]bool) map[string]bool
	// mergeText adds those fields to ib once every row has been produced.
	mergeText(ib *index.Builder, paths map[string]bool) error
}

var _ textMerger = (*mergeSource)(nil)

func (ms *mergeSource) mergeTextPaths(text map[string]bool) map[string]bool {
	if len(text) == 0 {
		return nil
	}
	inputRows := 0
	for _, r := range ms.inputs {
		inputRows += r.Rows()
	}
	if inputRows != ms.total {
		return nil // rows left out: their postings must not come along
	}
	ixs := make([]*index.Index, len(ms.group))
	for i, g := range ms.group {
		ix, err := g.index()
		if err != nil {
			return nil // the values are read instead; the error shows there if it lasts
		}
		ixs[i] = ix
	}
	paths := map[string]bool{}
	for p := range text {
		ok, held := true, false
		for i, r := range ms.inputs {
			if r.Column(p, segment.TypeString) < 0 {
				continue
			}
			held = true
			if ixs[i] == nil || !ixs[i].Has(p, index.KindToken) {
				ok = false
				break
			}
		}
		if ok && held {
			paths[p] = true
		}
	}
	if len(paths) == 0 {
		return nil
	}
	ms.rowMaps = make([][]uint32, len(ms.inputs))
	for i, r := range ms.inputs {
		ms.rowMaps[i] = make([]uint32, r.Rows())
	}
	return paths
}

func (ms *mergeSource) mergeText(ib *index.Builder, paths map[string]bool) error {
	if ms.to != ms.total {
		return errMergeOrder
	}
	inputs := make([]index.MappedInput, len(ms.group))
	var v vec.Vector
	for p := range paths {
		for i, g := range ms.group {
			ix, err := g.index()
			if err != nil {
				return err
			}
			r := g.r
			inputs[i] = index.MappedInput{Index: ix, RowMap: ms.rowMaps[i], Values: func(fn func(row uint32, s string)) error {
				col := r.Column(p, segment.TypeString)
				if col < 0 {
					return nil
				}
				for b := 0; b < r.NumBlocks(); b++ {
					bi := r.Block(b)
					if err := r.Read(b, col, 0, bi.Rows, nil, &v, segment.ReadOptions{Once: true, Reuse: true}); err != nil {
						return err
					}
					for k := 0; k < bi.Rows; k++ {
						if !v.IsNull(k) {
							fn(uint32(bi.FirstRow+k), v.StringAt(k))
						}
					}
				}
				return nil
			}}
		}
		if err := ib.MergeText(p, inputs); err != nil {
			return err
		}
		ms.group[0].shard.stats.textIndexMerges.Add(1)
	}
	return nil
}
