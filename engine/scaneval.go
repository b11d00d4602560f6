package engine

import (
	"github.com/sediment/sediment/internal/vec"
	"github.com/sediment/sediment/sql/scan"
)

// evalPreds applies predicates (skipping those marked done) to the rows
// of [lo, hi) in sel (nil = all), returning the rows that pass. unit names
// the scan unit the rows are of, for the predicate cache.
func (sc *shardScan) evalPreds(p *part, cr colReader, unit predUnit, done []bool, lo, hi int, sel []int32) ([]int32, error) {
	// First the pages every predicate rules out, from the footer alone:
	// the rows left are all any predicate reads.
	if br, ok := cr.(*blockReader); ok && !sc.req.NoIndex {
		for i, pr := range sc.preds {
			if done != nil && done[i] {
				continue
			}
			cols := predCols(p, pr)
			if len(cols) != 1 {
				continue
			}
			kept, all, err := prunePages(br.r, br.b, cols[0], pr, lo, hi, sel)
			if err != nil {
				return nil, err
			}
			if !all {
				if sel = kept; len(sel) == 0 {
					return sel, nil
				}
			}
		}
	}
	// The predicates' columns are read into one scratch vector, only to
	// decide rows.
	v := getScratch()
	defer putScratch(v)
	pcr := scratchReader(cr)
	for i, pr := range sc.preds {
		if done != nil && done[i] {
			continue
		}
		if sel != nil && len(sel) == 0 {
			return sel, nil
		}
		if set, ok := cachedRows(unit, pr); ok && lo >= unit.lo && hi <= unit.hi {
			sel = rowsFromBits(set, unit, sel, lo, hi)
			continue
		}
		// The rows that pass are the unit's answer when every row of it is
		// evaluated (sel, ascending and within [lo, hi), holds them all).
		whole := lo == unit.lo && hi == unit.hi && (sel == nil || len(sel) == hi-lo)
		cols := predCols(p, pr)
		if len(cols) == 0 {
			if pr.Op == scan.IsNull {
				continue
			}
			return []int32{}, nil
		}
		a, z := lo, hi
		if sel != nil {
			a, z = int(sel[0]), int(sel[len(sel)-1])+1
		}
		var rows []int32
		if sel != nil && len(sel)*8 < z-a {
			rows = sel
		}
		if err := readLogical(pcr, cols, predReadType(pr), a, z, rows, v); err != nil {
			return nil, err
		}
		if pr.Op == scan.IsNotNull && !v.HasNulls() {
			continue // every row read has a value: the selection stands
		}
		var local []int32
		switch {
		case rows != nil:
			local = nil // evaluate over the compacted vector, all rows
		case sel != nil:
			local = make([]int32, len(sel))
			for k, r := range sel {
				local[k] = r - int32(a)
			}
		}
		// The rows that passed, as block rows (res is the predicate's own
		// slice: mapped in place).
		res := pr.eval(v, local)
		for k, r := range res {
			if rows != nil {
				res[k] = rows[r]
			} else {
				res[k] = r + int32(a)
			}
		}
		if whole {
			cacheRows(unit, pr, res)
		}
		sel = res
	}
	if sel == nil {
		sel = make([]int32, hi-lo)
		for i := range sel {
			sel[i] = int32(lo + i)
		}
	}
	return sel, nil
}

func predReadType(pr *pred) vec.Type {
	switch pr.Type {
	case vec.RowRef:
		return vec.RowRef
	case vec.List:
		return vec.List
	}
	return pr.Type
}
