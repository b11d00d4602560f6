package engine

import (
	"math"
	"slices"

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
// the merged segment has its rows found in that input's values, matching
// only such tokens: the merged index is the one indexing the merged
// values gives (TestCompactionMergesTokenIndexes). The tokens are chosen
// before the merge (index.PlanTextRecovery) and looked for in the values
// the merge reads to write the column (textScan); only if that missed
// some are the input's values read again after
// (TestCompactionRecoversTokensAsItMerges).
//
// Measured on BenchmarkCompactMerge/key=project: the token field costs
// about a quarter less CPU than tokenising the merged values (0.52 s
// against 0.69 s of a 6.3 s profile); most of the rest is mapping the
// postings and, for tokens frequent in some input only, reading and
// tokenising those inputs' values again. Looking for those tokens in the
// values as the merge reads them instead took the field from 0.37 s to
// 0.19 s (0.07 merging, 0.10 scanning, 0.02 planning) of a 3.0 s
// compaction profile of BenchmarkStoreCPU/key=project.

// textMerger is a rowSource whose token index fields can be merged from
// the indexes of the segments its rows come from.
type textMerger interface {
	// mergeTextPaths returns which of the text fields will be merged
	// (nil: none), and from then on tracks where each input row goes
	// and, for the tokens the merge of ib will recover from the inputs'
	// values, finds their rows in the values as they go by (textScan).
	// It is called before any row is asked for.
	mergeTextPaths(text map[string]bool, ib *index.Builder) map[string]bool
	// mergeText adds those fields to ib once every row has been produced.
	mergeText(ib *index.Builder, paths map[string]bool) error
}

var _ textMerger = (*mergeSource)(nil)

func (ms *mergeSource) mergeTextPaths(text map[string]bool, ib *index.Builder) map[string]bool {
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
	ms.planTextScans(paths, ixs, ib)
	return paths
}

// textScan finds, in the values of one merged text field as the merge
// fills its column, the rows of the tokens the field's index merge would
// otherwise recover by reading inputs' values again (index.TextRecovery).
type textScan struct {
	path string
	tr   *index.TextRecovery
	// next is the first output row not scanned yet: a block filled again
	// (blockColumns fills a column twice past its bound) is not scanned
	// twice, and a block missed (none should be) leaves the recovery
	// unused.
	next   int
	missed bool
}

// planTextScans plans the recovery of each merged text field's tokens
// (nothing when no input's values need reading, or the plan fails: the
// index merge then reads the values itself, as before).
func (ms *mergeSource) planTextScans(paths map[string]bool, ixs []*index.Index, ib *index.Builder) {
	if ib == nil || ms.total > math.MaxUint32 {
		return
	}
	inputs := make([]index.MappedInput, len(ixs))
	for i, ix := range ixs {
		inputs[i].Index = ix
	}
	for p := range paths {
		ci := slices.IndexFunc(ms.cols, func(c segment.ColumnDesc) bool { return c.Path == p && c.Type == segment.TypeString })
		if ci < 0 {
			continue
		}
		tr, err := ib.PlanTextRecovery(p, inputs, uint32(ms.total))
		if err != nil || tr == nil {
			continue
		}
		if ms.textScans == nil {
			ms.textScans = map[int]*textScan{}
		}
		ms.textScans[ci] = &textScan{path: p, tr: tr}
	}
}

// scanPiece gives the recovery of column ci the values of a piece just
// read from input in: v's first len(pos) rows, which become rows
// from+pos[k].
func (ts *textScan) scanPiece(in int, v *vec.Vector, from int, pos []int32) {
	if !ts.tr.Wants(in) {
		return
	}
	for k, r := range pos {
		if !v.IsNull(k) {
			ts.tr.Add(in, uint32(from+int(r)), v.StringAt(k))
		}
	}
}

// recovery returns the recovery of path's tokens, if every row of the
// merge was scanned for it.
func (ms *mergeSource) recovery(path string) *index.TextRecovery {
	for _, ts := range ms.textScans {
		if ts.path == path && !ts.missed && ts.next == ms.total {
			return ts.tr
		}
	}
	return nil
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
				g.shard.stats.textValuesReread.Add(1)
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
		if err := ib.MergeTextRecovered(p, inputs, ms.recovery(p)); err != nil {
			return err
		}
		ms.group[0].shard.stats.textIndexMerges.Add(1)
	}
	return nil
}
