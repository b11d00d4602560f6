package segment

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/sediment/sediment/internal/predicate"
	"github.com/sediment/sediment/internal/vec"
)

// Searching derived text (encDerived) for literals without assembling
// every value. A value of template t is its pieces laid end to end:
// literal bytes, and values of the columns it refers to. An occurrence of
// a literal in it lies either within one literal piece (then every value
// of t holds it), within one referenced value (then the referenced
// column's values, searched as they are stored, tell which rows), or
// across a boundary between pieces. Whether an occurrence can cross a
// boundary is decided on the template alone (templateCanSpan): when it
// can, the rows of t are assembled and searched in full, as are the
// values stored as they are (template id 0).

// templateSearch is what a search does with the rows of one template.
type templateSearch uint8

const (
	tplAssemble templateSearch = iota // assemble the rows and search them
	tplAll                            // every row holds a literal
	tplRefs                           // a row holds one iff a referenced value does
)

// SearchDerived returns the rows of [from, to) of block b (relative to
// from, ascending) whose value of column col holds one of lits, compared
// byte for byte, and true; or false when col is not derived text in the
// block, lits has an empty literal, or no template of the block can be
// decided without assembling its values (a read of the values answers as
// well then). It reads the template ids, the referenced columns that
// decide rows, and only the rows of the templates that cannot be decided
// so.
func (r *Reader) SearchDerived(b, col, from, to int, lits []string, opts ReadOptions) ([]int32, bool, error) {
	if b < 0 || b >= len(r.ft.blocks) {
		return nil, false, fmt.Errorf("segment: block %d of %d", b, len(r.ft.blocks))
	}
	bm := &r.ft.blocks[b]
	if from < 0 || to > bm.rows || from > to {
		return nil, false, fmt.Errorf("segment: rows [%d,%d) outside block of %d", from, to, bm.rows)
	}
	c, err := r.chunk(b, col)
	if c == nil || err != nil || c.enc != encDerived || c.derived == nil || len(lits) == 0 || slices.Contains(lits, "") {
		return nil, false, err
	}
	t := c.derived
	plan := make([]templateSearch, len(t.tpls))
	needRef := make([]bool, len(t.cols))
	decided := false
	for i, tpl := range t.tpls {
		plan[i] = planTemplate(tpl, t.types, lits)
		if plan[i] != tplAssemble {
			decided = true
		}
		if plan[i] == tplRefs {
			// A number's text cannot hold the literals (planTemplate):
			// only the string columns are searched.
			for _, p := range tpl {
				if p.col >= 0 && t.types[p.ref] == TypeString {
					needRef[p.ref] = true
				}
			}
		}
	}
	if !decided {
		return nil, false, nil
	}
	mode := opts.mode()
	n := to - from
	// Per referenced column a template decides rows by: which rows'
	// values hold a literal, and which have none (corruption, as for a
	// read).
	refHits := make([][]uint64, len(t.cols))
	refNulls := make([]vec.Bitset, len(t.cols))
	// One vector, reused by each column read (a block's URLs are
	// megabytes) and pooled across searches.
	rv := searchVecPool.Get().(*vec.Vector)
	defer func() {
		rv.Dict, rv.Strs, rv.Nulls = nil, nil, nil // pin nothing while pooled
		searchVecPool.Put(rv)
	}()
	for k, need := range needRef {
		if !need {
			continue
		}
		// A column none of whose values can hold a literal is not read:
		// its rows' hits stay nil, as a number's.
		if may, err := r.columnMayHold(b, t.cols[k], lits, mode); err != nil || !may {
			if err != nil {
				return nil, false, err
			}
			continue
		}
		if err := r.readColumnInto(b, t.cols[k], from, to, rv, readCtl{mode: mode, reuse: true, memo: opts.Memo}); err != nil {
			return nil, false, err
		}
		refHits[k] = valuesHolding(rv, n, lits)
		if rv.HasNulls() {
			refNulls[k] = slices.Clone(rv.Nulls) // the next read reuses them
		}
	}
	var found, assemble []int32
	hist := r.history(c, mode)
	for pi := range c.pages.Len() {
		pm := c.page(pi)
		lo, hi := max(from, pm.firstRow), min(to, pm.firstRow+pm.rows)
		if lo >= hi || pm.present == 0 {
			continue // no rows wanted, or no values (the footer says)
		}
		var err error
		found, assemble, err = r.searchDerivedPage(c, &pm, lo-pm.firstRow, hi-pm.firstRow, from, plan, refHits, refNulls, lits, found, assemble, mode, hist)
		if err != nil {
			var ce *CorruptError
			if !errors.As(err, &ce) && err != errTooBig {
				err = corruptf(r.path, "page", pm.off, "column %q block %d: %v", r.ft.cols[col].Path, b, err)
			}
			return nil, false, err
		}
	}
	if len(assemble) > 0 {
		// The rows no template decides, assembled as a read assembles them:
		// those rows, or the whole range when they are most of it (a read
		// of listed rows costs more per row).
		v := rv
		var err error
		at := func(i int, j int32) int { return i }
		if len(assemble)*2 > n {
			err = r.readColumnInto(b, col, from, to, v, readCtl{mode: mode, reuse: true, memo: opts.Memo})
			at = func(_ int, j int32) int { return int(j) }
		} else {
			abs := make([]int32, len(assemble))
			for i, j := range assemble {
				abs[i] = j + int32(from)
			}
			err = r.readRowsInto(b, col, abs, v, readCtl{mode: mode, reuse: true, memo: opts.Memo})
		}
		if err != nil {
			return nil, false, err
		}
		for i, j := range assemble {
			if k := at(i, j); !v.IsNull(k) && holdsAny(v.StringAt(k), lits) {
				found = append(found, j)
			}
		}
		slices.Sort(found)
	}
	if found == nil {
		found = []int32{} // not nil: nil would mean every row to a caller
	}
	return found, true, nil
}

// searchVecPool holds the vectors SearchDerived reads columns into.
var searchVecPool = sync.Pool{New: func() any { return new(vec.Vector) }}

// searchDerivedPage adds to found the rows [lo, hi) of page pm (relative
// to the page; found holds rows relative to from) that the plan decides
// hold a literal, and to assemble those it cannot decide.
func (r *Reader) searchDerivedPage(c *chunkMeta, pm *pageMeta, lo, hi, from int, plan []templateSearch, refHits [][]uint64,
	refNulls []vec.Bitset, lits []string, found, assemble []int32, mode cacheMode, hist historyOf) ([]int32, []int32, error) {
	body, pooled, err := r.page(pm.off, pm.len, "page", mode, hist)
	if err != nil {
		return found, assemble, err
	}
	if pooled {
		defer putBuf(body)
	}
	pv, err := parsePage(body, pm.rows, r.version)
	if err != nil {
		return found, assemble, err
	}
	if pv.packed {
		return found, assemble, errors.New("packed values in a derived page")
	}
	if pv.present > len(pv.vals) {
		return found, assemble, errShort
	}
	// The page as decodeDerived reads it: a template id per value, then
	// the lengths and bytes of the values stored as they are.
	tids, rest := pv.vals[:pv.present], pv.vals[pv.present:]
	nlit := bytes.Count(tids, []byte{0})
	if nlit > len(rest) {
		return found, assemble, errShort
	}
	ends := make([]uint32, nlit)
	pos, total := 0, uint64(0)
	for k := range ends {
		l, m := binary.Uvarint(rest[pos:])
		if m <= 0 || l > uint64(len(rest)) {
			return found, assemble, errShort
		}
		pos += m
		total += l
		if total > uint64(len(rest)) {
			return found, assemble, errShort
		}
		ends[k] = uint32(total)
	}
	stored := rest[pos:]
	if uint64(len(stored)) < total {
		return found, assemble, errShort
	}
	tpls := c.derived.tpls
	rk := ranker{bitmap: pv.bitmap}
	kAt, litsBefore := 0, 0 // values stored as they are among tids[:kAt]
	for row := lo; row < hi; row++ {
		if !pv.has(row) {
			continue
		}
		k := rk.rank(row)
		for ; kAt < k; kAt++ {
			if tids[kAt] == 0 {
				litsBefore++
			}
		}
		j := pm.firstRow + row - from
		tid := int(tids[k])
		if tid == 0 {
			start := uint32(0)
			if litsBefore > 0 {
				start = ends[litsBefore-1]
			}
			if holdsAny(unsafeString(stored[start:ends[litsBefore]]), lits) {
				found = append(found, int32(j))
			}
			continue
		}
		if tid > len(tpls) {
			return found, assemble, fmt.Errorf("template %d of %d", tid, len(tpls))
		}
		switch plan[tid-1] {
		case tplAll:
			found = append(found, int32(j))
		case tplAssemble:
			assemble = append(assemble, int32(j))
		case tplRefs:
			hit := false
			for pi := range tpls[tid-1] {
				p := &tpls[tid-1][pi]
				if p.col < 0 || refHits[p.ref] == nil {
					continue // a literal, or a number (holds no literal)
				}
				if nulls := refNulls[p.ref]; nulls != nil && nulls.Get(j) {
					return found, assemble, fmt.Errorf("template %d: column %d has no value in the row", tid, p.col)
				}
				if h := refHits[p.ref]; h[j>>6]&(1<<(j&63)) != 0 {
					hit = true
				}
			}
			if hit {
				found = append(found, int32(j))
			}
		}
	}
	return found, assemble, nil
}

// planTemplate decides how the rows of template tpl (referring to columns
// of types) are searched for lits.
func planTemplate(tpl []tplPiece, types []ColType, lits []string) templateSearch {
	// The template as literal runs (consecutive literal pieces joined) and
	// references.
	type item struct {
		lit string
		ref int // -1 for a literal run
	}
	items := make([]item, 0, len(tpl))
	for _, p := range tpl {
		switch {
		case p.col >= 0:
			items = append(items, item{ref: p.ref})
		case p.lit == "":
		case len(items) > 0 && items[len(items)-1].ref < 0:
			items[len(items)-1].lit += p.lit
		default:
			items = append(items, item{lit: p.lit, ref: -1})
		}
	}
	for _, it := range items {
		if it.ref < 0 {
			for _, l := range lits {
				if strings.Contains(it.lit, l) {
					return tplAll
				}
			}
		}
	}
	for _, l := range lits {
		for i, it := range items {
			if it.ref >= 0 {
				if i > 0 && items[i-1].ref >= 0 {
					return tplAssemble // two values meet: anything can span them
				}
				if types[it.ref] != TypeString && decimalCouldHold(l) {
					return tplAssemble // a number's text could hold it
				}
				continue
			}
			if templateCanSpan(l, it.lit, i > 0, i+1 < len(items)) {
				return tplAssemble
			}
		}
	}
	return tplRefs
}

// templateCanSpan reports whether an occurrence of l could cross an edge
// of literal run p that a value lies beyond (valueBefore, valueAfter):
// end inside p having started before it, start inside p and end after
// it, or hold p whole with bytes on either side.
func templateCanSpan(l, p string, valueBefore, valueAfter bool) bool {
	if len(l) > len(p) && strings.Contains(l, p) {
		return true
	}
	for k := 1; k < len(l) && k <= len(p); k++ {
		if valueBefore && l[len(l)-k:] == p[:k] {
			return true // a suffix of l opens p
		}
		if valueAfter && l[:k] == p[len(p)-k:] {
			return true // a prefix of l closes p
		}
	}
	return false
}

// decimalCouldHold reports whether l could lie within the decimal text of
// an int64 (digits, a leading minus).
func decimalCouldHold(l string) bool {
	for i := 0; i < len(l); i++ {
		if (l[i] < '0' || l[i] > '9') && l[i] != '-' {
			return false
		}
	}
	return true
}

// columnMayHold reports whether a value of column col in block b may hold
// one of lits, told by the chunk alone: an IP address column's text has
// hex digits, dots and colons only (encIP keeps only values that read
// back byte for byte), and a dictionary's entries are all its values.
func (r *Reader) columnMayHold(b, col int, lits []string, mode cacheMode) (bool, error) {
	c, err := r.chunk(b, col)
	if err != nil {
		return false, err
	}
	if c == nil {
		return true, nil // no values: the read says so (corruption if referred to)
	}
	switch c.enc {
	case encIP:
		for _, l := range lits {
			if strings.Trim(l, "0123456789abcdefABCDEF.:") == "" {
				return true, nil
			}
		}
		return false, nil
	case encDict:
		dict, err := r.dictMode(b, c, mode)
		if err != nil {
			return false, err
		}
		for _, s := range dict.strs {
			if holdsAny(s, lits) {
				return true, nil
			}
		}
		return false, nil
	}
	return true, nil
}

// valuesHolding returns, as a bitset of n rows, the rows of v whose value
// holds one of lits (NULL rows hold none).
func valuesHolding(v *vec.Vector, n int, lits []string) []uint64 {
	set := make([]uint64, (n+63)/64)
	mark := func(j int) { set[j>>6] |= 1 << (j & 63) }
	if v.IsBytes() && !v.Const && len(v.Offs) == n+1 {
		if s := predicate.NewSearcher(lits); s != nil {
			if rows, ok := s.AppendRows(nil, v.Bytes, v.Offs); ok {
				for _, j := range rows {
					if !v.IsNull(int(j)) {
						mark(int(j))
					}
				}
				return set
			}
		}
	}
	var decided []uint8 // per dictionary entry: 0 not yet, 1 no, 2 yes
	if v.Dict != nil {
		decided = make([]uint8, len(v.Dict))
	}
	for j := 0; j < n; j++ {
		if v.IsNull(j) {
			continue
		}
		if decided != nil && !v.Const {
			c := v.Codes[j]
			if decided[c] == 0 {
				decided[c] = 1
				if holdsAny(v.Dict[c], lits) {
					decided[c] = 2
				}
			}
			if decided[c] == 2 {
				mark(j)
			}
			continue
		}
		if holdsAny(v.StringAt(j), lits) {
			mark(j)
		}
	}
	return set
}

// holdsAny reports whether s holds one of lits.
func holdsAny(s string, lits []string) bool {
	for _, l := range lits {
		if strings.Contains(s, l) {
			return true
		}
	}
	return false
}
