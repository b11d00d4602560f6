package engine

import (
	"context"
	"errors"
	"slices"

	"github.com/RoaringBitmap/roaring/v2"

	"github.com/sediment/sediment/index"
	"github.com/sediment/sediment/internal/vec"
	"github.com/sediment/sediment/segment"
	"github.com/sediment/sediment/sql/scan"
)

// scalarCols returns the scalar columns of path in a part.
func scalarCols(p *part, path string) []colRef {
	var out []colRef
	for _, c := range p.byPath[path] {
		if c.typ != segment.TypeObject && c.typ != segment.TypeArray {
			out = append(out, c)
		}
	}
	return out
}

// predCols returns the physical columns a predicate reads.
func predCols(p *part, pr *pred) []colRef {
	switch pr.Type {
	case vec.RowRef:
		return typedCols(p, pr.Path, segment.TypeObject)
	case vec.List:
		return typedCols(p, pr.Path, segment.TypeArray)
	}
	return scalarCols(p, pr.Path)
}

func typedCols(p *part, path string, t segment.ColType) []colRef {
	for _, c := range p.byPath[path] {
		if c.typ == t {
			return []colRef{c}
		}
	}
	return nil
}

// indexKind says which value index answers a predicate on a column.
func indexKind(c colRef, t vec.Type) (index.Kind, bool) {
	switch {
	case c.typ == segment.TypeInt64 && t == vec.Int64:
		return index.KindInt, true
	case c.typ == segment.TypeString && t == vec.String:
		return index.KindString, true
	case c.typ == segment.TypeBool && t == vec.Bool:
		return index.KindBool, true
	}
	return 0, false
}

// termMatcher evaluates a predicate on an index term.
func (p *pred) matchTerm(term any) bool {
	switch x := term.(type) {
	case string:
		return p.matchString(x)
	case int64:
		if p.Op == scan.In {
			_, ok := p.intSet[x]
			return ok != p.Not
		}
		return cmpOK(p.Op, cmpInt(x, p.Args[0].Int))
	case bool:
		if p.Op == scan.In {
			_, ok := p.intSet[b2i(x)]
			return ok != p.Not
		}
		return cmpOK(p.Op, cmpInt(b2i(x), b2i(p.Args[0].Bool)))
	}
	return false
}

// indexCandidates ANDs the rows the segment's index gives for the
// predicates it can answer. exact[i] says predicate i needs no evaluation.
func (sc *shardScan) indexCandidates(p *part) (*roaring.Bitmap, []bool, error) {
	exact := make([]bool, len(sc.preds))
	if sc.req.NoIndex || p.seg.ixBroken.Load() {
		return nil, exact, nil
	}
	ix, err := p.seg.index()
	if err != nil || ix == nil {
		return nil, exact, err
	}
	var cand *roaring.Bitmap
	and := func(bm *roaring.Bitmap) {
		if cand == nil {
			cand = bm
		} else {
			cand.And(bm)
		}
	}
	for i, pr := range sc.preds {
		if pr.Op == scan.IsNull || pr.Op == scan.IsNotNull || pr.Type == vec.RowRef || pr.Type == vec.List {
			continue
		}
		cols := scalarCols(p, pr.Path)
		if len(cols) != 1 {
			continue
		}
		if kind, ok := indexKind(cols[0], pr.Type); ok && ix.Has(pr.Path, kind) {
			bm, _, _, err := ix.Match(pr.Path, kind, pr.matchTerm, true)
			if err != nil {
				return nil, nil, err
			}
			and(bm)
			exact[i] = true
			continue
		}
		if cols[0].typ != segment.TypeString || pr.Not {
			continue
		}
		switch {
		case pr.Op == scan.Regex && len(pr.anyOf) > 0:
			// Rows containing one of the regex's literals: a union.
			union, allExact := roaring.New(), pr.anyExact
			for _, l := range pr.anyOf {
				bm, ex, ok, err := ix.TextCandidates(pr.Path, l.s, l.fold)
				if err != nil {
					return nil, nil, err
				}
				if !ok {
					union = nil
					break
				}
				union.Or(bm)
				allExact = allExact && ex
			}
			if union != nil {
				and(union)
				exact[i] = allExact
			}
		case pr.lit != "" && (pr.Op == scan.Contains || pr.Op == scan.Like):
			bm, ex, ok, err := ix.TextCandidates(pr.Path, pr.lit, false)
			if err != nil {
				return nil, nil, err
			}
			if ok {
				and(bm)
				exact[i] = ex && pr.litExact
			}
		}
	}
	return cand, exact, nil
}

func (sc *shardScan) addSegmentUnits(ctx context.Context, p *part) error {
	cand, exact, err := sc.indexCandidates(p)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if lu, ok := readLoss(ctx, p.seg, -1, err); ok {
			// The store did not serve the index: this query goes without
			// the segment (its blocks would be read from the store too).
			sc.units = append(sc.units, &lostScanUnit{sc: sc, u: lu})
			return nil
		}
		if errors.Is(err, segment.ErrRead) {
			return sc.clientError(err)
		}
		// A damaged index loses nothing: scan the segment without it.
		p.seg.shard.noteIndexDamage(p.seg, err)
		cand, exact = nil, make([]bool, len(sc.preds))
	}
	if cand != nil && cand.IsEmpty() {
		return nil
	}
	r := p.seg.r
	for b := 0; b < r.NumBlocks(); b++ {
		bi := r.Block(b)
		if bi.MaxTime < sc.req.TimeMin || bi.MinTime > sc.req.TimeMax {
			continue
		}
		if cand != nil && !cand.IntersectsWithInterval(uint64(bi.FirstRow), uint64(bi.FirstRow+bi.Rows)) {
			continue
		}
		if lu, ok := p.seg.damaged(b); ok {
			// Set aside: the footer's statistics still tell whether the
			// query could have wanted its rows.
			if ok, _ := sc.blockMayMatch(p, b, false); ok {
				sc.units = append(sc.units, &lostScanUnit{sc: sc, u: lu})
			}
			continue
		}
		ok, err := sc.blockMayMatch(p, b, true)
		if err != nil {
			if lu, ok := readLoss(ctx, p.seg, b, err); ok {
				sc.units = append(sc.units, &lostScanUnit{sc: sc, u: lu})
				continue
			}
			if !errors.Is(err, segment.ErrCorrupt) {
				return sc.clientError(err)
			}
			lu := p.seg.shard.markBlockDamaged(p.seg, b, err)
			sc.units = append(sc.units, &lostScanUnit{sc: sc, u: lu})
			continue
		}
		if ok {
			sc.units = append(sc.units, &segUnit{sc: sc, p: p, b: b, bi: bi, cand: cand, exact: exact})
		}
	}
	return nil
}

// blockMayMatch prunes a block by its chunks' presence, value ranges and,
// with dicts, dictionaries (without: from the footer alone, for a block
// whose units cannot be read).
func (sc *shardScan) blockMayMatch(p *part, b int, dicts bool) (bool, error) {
	if sc.req.NoIndex {
		return true, nil
	}
	r := p.seg.r
	for _, pr := range sc.preds {
		if pr.Op == scan.IsNull {
			continue
		}
		cols := predCols(p, pr)
		present := false
		for _, c := range cols {
			if _, ok := r.Chunk(b, c.idx); ok {
				present = true
			}
		}
		if !present {
			return false, nil // NULL everywhere: no row can satisfy it
		}
		if len(cols) != 1 || pr.Op == scan.IsNotNull {
			continue
		}
		c := cols[0]
		ci, _ := r.Chunk(b, c.idx)
		switch {
		case (c.typ == segment.TypeInt64 && pr.Type == vec.Int64 || c.typ == segment.TypeTimestamp && pr.Type == vec.Timestamp) && ci.HasNumRange:
			if !rangeMayMatch(pr, ci.MinInt, ci.MaxInt) {
				return false, nil
			}
		case c.typ == segment.TypeString && pr.Type == vec.String:
			if pr.Op == scan.Eq {
				x := pr.Args[0].Str
				if ci.HasMinStr && x < ci.MinStr || ci.HasMaxStr && x > ci.MaxStr {
					return false, nil
				}
			}
			if dicts && ci.DictEntries > 0 && (pr.Op == scan.Eq || pr.Op == scan.In || pr.Op == scan.Regex || pr.Op == scan.Contains || pr.Op == scan.StartsWith) {
				dict, err := r.DictStrings(b, c.idx)
				if err != nil {
					return false, err
				}
				if !slices.ContainsFunc(dict, pr.matchString) {
					return false, nil
				}
			}
		}
	}
	return true, nil
}

func rangeMayMatch(pr *pred, lo, hi int64) bool {
	if pr.Op == scan.In {
		for x := range pr.intSet {
			if x >= lo && x <= hi {
				return true
			}
		}
		return pr.Not
	}
	if len(pr.Args) == 0 {
		return true
	}
	x := pr.Args[0].Int
	switch pr.Op {
	case scan.Eq:
		return x >= lo && x <= hi
	case scan.Lt:
		return lo < x
	case scan.Le:
		return lo <= x
	case scan.Gt:
		return hi > x
	case scan.Ge:
		return hi >= x
	}
	return true
}
