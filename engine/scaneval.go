package engine

import (
	"unsafe"

	"github.com/sediment/sediment/internal/predicate"
	"github.com/sediment/sediment/internal/vec"
	"github.com/sediment/sediment/segment"
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
		res, searched := searchHead(cr, cols, pr, a, z, rows, local, v)
		if !searched {
			var err error
			if res, searched, err = searchDerived(pcr, cols, pr, a, z, rows, local, v); err != nil {
				return nil, err
			}
		}
		if !searched {
			var err error
			if res, searched, err = searchPages(pcr, cols, pr, a, z, rows, local, v); err != nil {
				return nil, err
			}
		}
		if !searched {
			if err := readLogical(pcr, cols, predReadType(pr), a, z, rows, v); err != nil {
				return nil, err
			}
			if pr.Op == scan.IsNotNull && !v.HasNulls() {
				continue // every row read has a value: the selection stands
			}
			if pr.passesAll(v) {
				// Every row read passes (a project filter on a source of
				// one project): the selection stands, and is the answer
				// when it is all the unit's rows.
				if whole {
					cacheAllRows(unit, pr)
				}
				continue
			}
			res = pr.eval(v, local)
		}
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
		if sel == nil && len(res) == hi-lo {
			// Every row passed (a project filter on a source of one
			// project): the next predicates read all rows, as before,
			// without a list of them to map theirs through.
			continue
		}
		sel = res
	}
	if sel == nil {
		sel = rangeRows(lo, hi)
	}
	return sel, nil
}

// passesAll reports whether every row of v passes the predicate, decided
// on v's dictionary alone: v has no NULLs and every entry passes. It
// looks only at a dictionary of at most an eighth as many entries as v
// has rows (else false: eval decides the entries the rows use), and
// stops at the first entry that fails.
func (p *pred) passesAll(v *vec.Vector) bool {
	if v.Dict == nil || len(v.Dict)*8 > v.Len || v.Type != vec.String && v.Type != vec.JSON || v.HasNulls() {
		return false
	}
	switch p.Op {
	case scan.Eq, scan.Ne, scan.Lt, scan.Le, scan.Gt, scan.Ge, scan.In, scan.Contains, scan.StartsWith, scan.EndsWith,
		scan.Regex, scan.Like:
	default:
		return false
	}
	for _, s := range v.Dict {
		if !p.matchString(s) {
			return false
		}
	}
	return true
}

// rangeRows returns the rows lo, lo+1, …, hi-1.
func rangeRows(lo, hi int) []int32 {
	rows := make([]int32, hi-lo)
	for i := range rows {
		rows[i] = int32(lo + i)
	}
	return rows
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

// searchValues applies a regex, LIKE or substring test that has a
// Searcher to n values laid end to end (value i is data[offs[i]:
// offs[i+1]]; NULL rows, marked in nulls, are empty), returning the rows
// of sel (nil: all) that pass: one sweep over the bytes finds the values
// holding the test's literals, and only those are tested one by one (none
// when the literals decide). s is p.search, or the same anchored on a
// sample of the column (searchHead). It reports false when it does not
// apply: no Searcher, or a selection too sparse to pay for a sweep of
// every value.
func (p *pred) searchValues(s *predicate.Searcher, data []byte, offs []uint32, n int, nulls vec.Bitset, sel []int32) ([]int32, bool) {
	if sel != nil && len(sel)*searchSelShare < n {
		return nil, false
	}
	found, ok := p.appendFound(make([]int32, 0, n/16+8), s, data, offs, n)
	if !ok {
		return nil, false
	}
	if sel == nil && !p.Not && nulls == nil {
		return found, true
	}
	// Walk the rows asked about alongside the values found (both
	// ascending): a row passes when found (not found, for NOT) and not
	// NULL.
	out := make([]int32, 0, min(selLen(sel, n), len(found)+8))
	if p.Not {
		out = make([]int32, 0, selLen(sel, n))
	}
	k := 0
	pass := func(r int32) {
		for k < len(found) && found[k] < r {
			k++
		}
		in := k < len(found) && found[k] == r
		if in != p.Not && (nulls == nil || !nulls.Get(int(r))) {
			out = append(out, r)
		}
	}
	if sel == nil {
		for r := 0; r < n; r++ {
			pass(int32(r))
		}
	} else {
		for _, r := range sel {
			pass(r)
		}
	}
	return out, true
}

// appendFound appends to dst, ascending, the values of data/offs (n of
// them) that hold a match of the pattern (p.Not aside): the
// Searcher's sweep, each value found confirmed with the pattern unless
// the literals decide. It reports false, with dst unchanged, when there
// is no Searcher or offs does not describe n values within data.
func (p *pred) appendFound(dst []int32, s *predicate.Searcher, data []byte, offs []uint32, n int) ([]int32, bool) {
	if s == nil || len(offs) != n+1 {
		return dst, false
	}
	start := len(dst)
	dst, ok := s.AppendRows(dst, data, offs)
	if !ok || p.searchExact {
		return dst, ok
	}
	kept := dst[:start]
	for _, r := range dst[start:] {
		a, z := offs[r], offs[r+1]
		// matchString answers for NOT too: undone, this is the pattern's.
		if p.matchString(unsafe.String(unsafe.SliceData(data[a:z]), int(z-a))) != p.Not {
			kept = append(kept, r)
		}
	}
	return kept, true
}

// searchSelShare: a selection of fewer than one row in searchSelShare is
// tested row by row rather than by a sweep of every value.
const searchSelShare = 4

// searchPages applies a predicate with a Searcher to a segment block's
// text column page by page, when [a, z) spans several of its pages: each
// page is decoded into v (reused, so its bytes stay in the CPU's caches)
// and swept while they are there, instead of decoding the whole range
// into one vector, larger than the caches, and sweeping that. It returns
// the rows of sel (local to a; nil: all) that pass, and false when it
// does not apply: not a segment, a list of rows, several columns, or
// derived text (a read of each page would read the columns it refers to
// again, for their pages that span several of its own).
func searchPages(cr colReader, cols []colRef, pr *pred, a, z int, rows, sel []int32, v *vec.Vector) ([]int32, bool, error) {
	br, ok := cr.(*blockReader)
	if !ok || pr.search == nil || rows != nil || len(cols) != 1 || cols[0].typ != segment.TypeString ||
		segment.VecType(cols[0].typ) != predReadType(pr) {
		return nil, false, nil
	}
	ci, ok := br.r.Chunk(br.b, cols[0].idx)
	if !ok || ci.Derived {
		return nil, false, nil
	}
	pages, err := br.r.Pages(br.b, cols[0].idx)
	if err != nil || pages.Len() < 2 {
		return nil, false, err
	}
	// Not nil when nothing passes: a nil selection means every row.
	passed := make([]int32, 0, (z-a)/16+8)
	k := 0 // sel[:k] lie before the page
	var pageSel []int32
	for pi := range pages.Len() {
		first, end := pages.Span(pi)
		pa, pz := max(a, first), min(z, end)
		if pa >= pz {
			continue
		}
		var ps []int32 // the page's rows of sel, local to pa
		if sel != nil {
			pageSel = pageSel[:0]
			for ; k < len(sel) && int(sel[k])+a < pz; k++ {
				pageSel = append(pageSel, sel[k]+int32(a-pa))
			}
			if len(pageSel) == 0 {
				continue
			}
			ps = pageSel
		}
		if err := readLogical(cr, cols, predReadType(pr), pa, pz, nil, v); err != nil {
			return nil, false, err
		}
		for _, r := range pr.eval(v, ps) {
			passed = append(passed, r+int32(pa-a))
		}
	}
	return passed, true, nil
}

// searchDerived applies a predicate with a Searcher to a segment block's
// derived text without assembling every value (segment.SearchDerived:
// template by template, sweeping the referenced columns' values), then
// confirms the rows found with the predicate when the literals do not
// decide. It returns the rows of sel (local to a; nil: all) that pass,
// and false when it does not apply: not derived text, a negated test, a
// list of rows, or a block whose templates all need assembling.
func searchDerived(cr colReader, cols []colRef, pr *pred, a, z int, rows, sel []int32, v *vec.Vector) ([]int32, bool, error) {
	br, ok := cr.(*blockReader)
	if !ok || pr.search == nil || pr.Not || rows != nil || len(cols) != 1 || cols[0].typ != segment.TypeString ||
		segment.VecType(cols[0].typ) != predReadType(pr) {
		return nil, false, nil
	}
	if ci, ok := br.r.Chunk(br.b, cols[0].idx); !ok || !ci.Derived {
		return nil, false, nil
	}
	opts := segment.ReadOptions{Once: br.once || searchPassDone(br, cols[0].idx, a, z)}
	found, ok, err := br.r.SearchDerived(br.b, cols[0].idx, a, z, pr.search.Literals(), opts)
	if err != nil || !ok {
		return nil, false, err
	}
	if sel != nil {
		found = keepAsked(found, sel)
	}
	if pr.searchExact || len(found) == 0 {
		return found, true, nil
	}
	// Holding a literal does not decide: the rows found, read (assembled)
	// and tested.
	abs := make([]int32, len(found))
	for i, r := range found {
		abs[i] = r + int32(a)
	}
	if err := br.r.Read(br.b, cols[0].idx, 0, 0, abs, v, segment.ReadOptions{Once: br.once, Reuse: true}); err != nil {
		return nil, false, err
	}
	kept := found[:0]
	for i, r := range found {
		if !v.IsNull(i) && pr.matchString(v.StringAt(i)) {
			kept = append(kept, r)
		}
	}
	return kept, true, nil
}

// searchPassDone counts a search of column col's derived text over rows
// [a, z) of br's block with the scan's other reads (the column and those
// it is built from, which the search reads whole) and reports whether the
// scan has read so much that its reads keep no pages in the page cache
// (see passReads): a search whose limit is never met (a rare needle)
// reads every block once, and each page the cache took would be a fresh
// buffer pushing out pages interactive queries read again, where a read
// that keeps nothing decodes into a pooled one.
func searchPassDone(br *blockReader, col, a, z int) bool {
	if br.pass == nil {
		return false
	}
	done := br.pass.add(br.r, br.b, col, a, z, nil)
	refs, err := br.r.DerivedRefs(br.b, col)
	if err != nil {
		return done // the search reports the error
	}
	for _, ref := range refs {
		done = br.pass.add(br.r, br.b, ref, a, z, nil) || done
	}
	return done
}

// searchSampleBytes is the least text of a head run that searchHead
// chooses a chunk's anchor bytes on.
const searchSampleBytes = 4096

// searchHead applies a predicate with a Searcher to a head column's
// values where they lie (headView.packedRuns: one sweep per slot of
// values), without copying them into a vector, when it reads one packed
// string column with a value in every row of [a, z). It returns the rows
// of sel (local to a; nil: all) that pass, and false when it does not
// apply.
func searchHead(cr colReader, cols []colRef, pr *pred, a, z int, rows, sel []int32, v *vec.Vector) ([]int32, bool) {
	hr, ok := cr.(headReader)
	if !ok || pr.search == nil || rows != nil || len(cols) != 1 || cols[0].typ != segment.TypeString ||
		segment.VecType(cols[0].typ) != predReadType(pr) {
		return nil, false
	}
	if sel != nil && len(sel)*searchSelShare < z-a {
		return nil, false
	}
	// Not nil when nothing passes: a nil selection means every row.
	passed := make([]int32, 0, (z-a)/16+8)
	failed := false
	// The runs are a slot of values or less (a few values where a slot
	// ends): the sweep's anchor bytes are chosen once, on the first run
	// long enough to sample, rather than on each run.
	search := pr.search
	anchored := false
	// The runs' offsets are built in the scratch vector's.
	v.Offs, ok = hr.hv.packedRuns(cols[0].idx, a, z, v.Offs, func(data []byte, offs []uint32, first int) {
		if failed {
			return
		}
		if text := data[offs[0]:offs[len(offs)-1]]; !anchored && len(text) >= searchSampleBytes {
			search, anchored = pr.search.Anchored(text), true
		}
		n := len(offs) - 1
		if pr.Not {
			res, ok := pr.searchValues(search, data, offs, n, nil, nil)
			if !ok {
				failed = true
				return
			}
			for _, r := range res {
				passed = append(passed, r+int32(first))
			}
			return
		}
		// The values found go straight into passed, then are made chunk
		// rows.
		k := len(passed)
		var found bool
		if passed, found = pr.appendFound(passed, search, data, offs, n); !found {
			failed = true
			return
		}
		for i := k; i < len(passed); i++ {
			passed[i] += int32(first)
		}
	})
	if !ok || failed {
		return nil, false
	}
	if sel == nil {
		return passed, true
	}
	return keepAsked(passed, sel), true
}

// keepAsked keeps the rows of found (ascending) that sel (ascending)
// asks about, in found's own array.
func keepAsked(found, sel []int32) []int32 {
	kept := found[:0]
	k := 0
	for _, r := range sel {
		for k < len(found) && found[k] < r {
			k++
		}
		if k < len(found) && found[k] == r {
			kept = append(kept, r)
		}
	}
	return kept
}
