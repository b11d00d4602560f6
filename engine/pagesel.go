package engine

import (
	"sort"

	"github.com/sediment/sediment/internal/vec"
	"github.com/sediment/sediment/segment"
	"github.com/sediment/sediment/sql/scan"
)

// Page pruning: the footer of a version 2 segment gives, per page of an
// int64 or timestamp column, how many rows have a value and their range,
// and per page of a dictionary-encoded string column the range of its
// codes. A predicate on such a column then rules out pages without
// reading them, and the rows of the pages left are all the other
// predicates read. (A block sorted by a key, the project say, keeps each
// key in few pages: an equality on the key reads those.)

// pagePrunable reports whether pages of column c can rule out rows for pr.
func pagePrunable(c colRef, pr *pred) bool {
	switch {
	case pr.Op == scan.IsNotNull:
		return true
	case c.typ == segment.TypeInt64 && pr.Type == vec.Int64, c.typ == segment.TypeTimestamp && pr.Type == vec.Timestamp:
		return pr.Op == scan.Eq || pr.Op == scan.Lt || pr.Op == scan.Le || pr.Op == scan.Gt || pr.Op == scan.Ge || pr.Op == scan.In && !pr.Not
	case c.typ == segment.TypeString && pr.Type == vec.String:
		return pr.Op == scan.Eq || pr.Op == scan.In && !pr.Not
	}
	return false
}

// prunePages narrows the rows a predicate on column c of block b looks at
// ([lo, hi) when sel is nil, else sel) to those in pages that may hold a
// matching value. all says no page was ruled out (and kept is nil).
func prunePages(r *segment.Reader, b int, c colRef, pr *pred, lo, hi int, sel []int32) (kept []int32, all bool, err error) {
	if !pagePrunable(c, pr) {
		return nil, true, nil
	}
	ci, ok := r.Chunk(b, c.idx)
	if !ok {
		return nil, true, nil // no chunk: blockMayMatch decided
	}
	pages, err := r.Pages(b, c.idx)
	if err != nil {
		return nil, false, err
	}
	if pages.Len() < 2 {
		return nil, true, nil // one page: nothing to skip
	}
	var codes []int64 // the codes of the accepted strings, ascending
	if c.typ == segment.TypeString && pr.Op != scan.IsNotNull {
		if ci.DictEntries == 0 {
			return nil, true, nil
		}
		dict, err := r.DictStrings(b, c.idx)
		if err != nil {
			return nil, false, err
		}
		codes = matchingCodes(dict, pr)
	}
	mayMatch := func(p *segment.PageRange) bool {
		switch {
		case p.Present < 0:
			return true // a version 1 page: unknown
		case p.Present == 0:
			return false // no value: only IS NULL could hold, and it is not pruned
		case pr.Op == scan.IsNotNull || !p.HasRange:
			return true
		case codes != nil || c.typ == segment.TypeString:
			i := sort.Search(len(codes), func(k int) bool { return codes[k] >= p.MinInt })
			return i < len(codes) && codes[i] <= p.MaxInt
		}
		return rangeMayMatch(pr, p.MinInt, p.MaxInt)
	}
	ruledOut := false
	for i := range pages.Len() {
		p := pages.At(i)
		if p.FirstRow+p.Rows > lo && p.FirstRow < hi && !mayMatch(&p) {
			ruledOut = true
			break
		}
	}
	if !ruledOut {
		return nil, true, nil
	}
	kept = []int32{}
	if sel != nil {
		pi := 0
		for _, row := range sel {
			for pi < pages.Len() && pageEnd(pages, pi) <= int(row) {
				pi++
			}
			if pi < pages.Len() {
				if p := pages.At(pi); mayMatch(&p) {
					kept = append(kept, row)
				}
			}
		}
		return kept, false, nil
	}
	for i := range pages.Len() {
		p := pages.At(i)
		a, z := max(lo, p.FirstRow), min(hi, p.FirstRow+p.Rows)
		if a >= z || !mayMatch(&p) {
			continue
		}
		for row := a; row < z; row++ {
			kept = append(kept, int32(row))
		}
	}
	return kept, false, nil
}

// matchingCodes returns the codes (indexes in the sorted dictionary) of
// the strings an Eq or In predicate accepts, ascending.
func matchingCodes(dict []string, pr *pred) []int64 {
	codes := []int64{}
	find := func(s string) {
		if i := sort.SearchStrings(dict, s); i < len(dict) && dict[i] == s {
			codes = append(codes, int64(i))
		}
	}
	if pr.Op == scan.Eq {
		find(pr.Args[0].Str)
		return codes
	}
	for s := range pr.set {
		find(s)
	}
	sort.Slice(codes, func(i, j int) bool { return codes[i] < codes[j] })
	return codes
}

// pageEnd returns the block-relative row past page i of l.
func pageEnd(l segment.PageList, i int) int {
	_, end := l.Span(i)
	return end
}
