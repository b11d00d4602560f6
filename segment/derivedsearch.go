package segment

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"unsafe"

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
// values stored as they are (template id 0). A residual piece (version 5)
// is a value like a referenced one: its bytes, stored in the page, are
// swept for the literals.

// templateSearch is what a search does with the rows of one template.
type templateSearch uint8

const (
	tplAssemble templateSearch = iota // assemble the rows and search them
	tplAll                            // every row holds a literal
	tplRefs                           // a row holds one iff a referenced or residual value does
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
	var searcher *predicate.Searcher // for referenced columns searched in place
	var bsc *bytesScratch
	for k, need := range needRef {
		if !need {
			continue
		}
		// A column none of whose values can hold a literal is not read:
		// its rows' hits stay nil, as a number's.
		if may, err := r.columnMayHold(b, t.cols[k], from, to, lits, mode); err != nil || !may {
			if err != nil {
				return nil, false, err
			}
			continue
		}
		if rc, err := r.chunk(b, t.cols[k]); err != nil {
			return nil, false, err
		} else if rc != nil && rc.enc == encBytes {
			// Searched where its values lie (a read would copy them all).
			if searcher == nil {
				searcher, bsc = predicate.NewSearcher(lits), new(bytesScratch)
			}
			if refHits[k], refNulls[k], err = r.bytesColumnHolding(b, t.cols[k], rc, from, to, searcher, lits, mode, bsc); err != nil {
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
	ps := &pageSearch{plan: plan, refHits: refHits, refNulls: refNulls, lits: lits, checks: make([][]int, len(t.tpls))}
	for i, tpl := range t.tpls {
		if plan[i] != tplRefs {
			continue
		}
		for _, p := range tpl {
			if p.col >= 0 && refHits[p.ref] != nil && !slices.Contains(ps.checks[i], p.ref) {
				ps.checks[i] = append(ps.checks[i], p.ref)
			}
		}
	}
	ps.setRowKinds()
	if t.resid {
		for i, p := range plan {
			if p == tplRefs && t.nres[i+1] > 0 {
				ps.resSearch = true
				ps.searcher = predicate.NewSearcher(lits)
				break
			}
		}
	}
	hist := r.history(c, mode)
	for pi := range c.pages.Len() {
		pm := c.page(pi)
		lo, hi := max(from, pm.firstRow), min(to, pm.firstRow+pm.rows)
		if lo >= hi || pm.present == 0 {
			continue // no rows wanted, or no values (the footer says)
		}
		err := r.searchDerivedPage(c, &pm, lo-pm.firstRow, hi-pm.firstRow, from, ps, mode, hist)
		if err != nil {
			var ce *CorruptError
			if !errors.As(err, &ce) && err != errTooBig {
				err = corruptf(r.path, "page", pm.off, "column %q block %d: %v", r.ft.cols[col].Path, b, err)
			}
			return nil, false, err
		}
	}
	if len(ps.assemble) > 0 {
		// The rows no template decides, assembled as a read assembles them:
		// those rows, or the whole range when they are most of it (a read
		// of listed rows costs more per row).
		v := rv
		var err error
		assemble := ps.assemble
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
				ps.found = append(ps.found, j)
			}
		}
		slices.Sort(ps.found)
	}
	found := ps.found
	if found == nil {
		found = []int32{} // not nil: nil would mean every row to a caller
	}
	return found, true, nil
}

// DerivedRefs returns the columns the derived text of column col in block
// b is built from (the columns a SearchDerived of it may read besides
// col), or nil when the chunk is absent or not derived text.
func (r *Reader) DerivedRefs(b, col int) ([]int, error) {
	c, err := r.chunk(b, col)
	if c == nil || err != nil || c.enc != encDerived || c.derived == nil {
		return nil, err
	}
	return slices.Clone(c.derived.cols), nil
}

// searchVecPool holds the vectors SearchDerived reads columns into.
var searchVecPool = sync.Pool{New: func() any { return new(vec.Vector) }}

// pageSearch is what searchDerivedPage works with and gathers, from page
// to page of a SearchDerived.
type pageSearch struct {
	plan     []templateSearch
	refHits  [][]uint64   // per reference: the rows whose value holds a literal
	refNulls []vec.Bitset // per reference: its NULL rows
	lits     []string
	// checks, per template decided by its values: the references whose
	// values may hold a literal (refHits not nil), each once.
	checks [][]int
	// kinds and one, by template id: setRowKinds.
	kinds []uint8
	one   []int
	// resSearch: some template decided by its values has residual
	// pieces, whose values each page sweeps with searcher (nil: one
	// value at a time).
	resSearch   bool
	searcher    *predicate.Searcher
	offs        []uint32 // parseDerivedPage's scratch
	sectionOffs []uint32 // sectionMayHold's
	resRows     []int32  // the residual values holding a literal
	resHits     []uint64 // the same as a bitset
	// found holds the rows (relative to the search's from) decided to
	// hold a literal, assemble those no template decides.
	found, assemble []int32
}

// searchDerivedPage adds to ps.found the rows [lo, hi) of page pm
// (relative to the page; found holds rows relative to from) that the plan
// decides hold a literal, and to ps.assemble those it cannot decide.
func (r *Reader) searchDerivedPage(c *chunkMeta, pm *pageMeta, lo, hi, from int, ps *pageSearch, mode cacheMode, hist historyOf) error {
	pv, release, err := r.readValuesPage(pm, "derived text", mode, hist)
	if err != nil {
		return err
	}
	defer release()
	t := c.derived
	pg, buf, err := parseDerivedPage(&pv, t, ps.offs, false)
	ps.offs = buf
	if err != nil {
		return err
	}
	var resHits []uint64 // per residual value of the page: holds a literal
	if ps.resSearch && ps.sectionMayHold(pg.section) {
		// Some residual value may hold a literal: split them and see.
		if pg, ps.offs, err = parseDerivedPage(&pv, t, ps.offs, true); err != nil {
			return err
		}
		resHits = ps.residualHits(&pg)
	}
	if pv.bitmap == nil && resHits == nil {
		return ps.searchPresentPage(&pg, lo, hi, pm.firstRow-from, len(t.tpls))
	}
	tpls, plan, refHits, refNulls, lits := t.tpls, ps.plan, ps.refHits, ps.refNulls, ps.lits
	nres := t.nres
	rk := ranker{bitmap: pv.bitmap}
	// Values stored as they are, and residual values, among tids[:kAt].
	kAt, litsBefore, resBefore := 0, 0, 0
	for row := lo; row < hi; row++ {
		if !pv.has(row) {
			continue
		}
		k := rk.rank(row)
		for ; kAt < k; kAt++ {
			if pg.tids[kAt] == 0 {
				litsBefore++
			} else if resHits != nil {
				resBefore += int(nres[pg.tids[kAt]])
			}
		}
		j := pm.firstRow + row - from
		tid := int(pg.tids[k])
		if tid == 0 {
			if holdsAny(unsafeString(pg.stored[pg.offs[litsBefore]:pg.offs[litsBefore+1]]), lits) {
				ps.found = append(ps.found, int32(j))
			}
			continue
		}
		if tid > len(tpls) {
			return fmt.Errorf("template %d of %d", tid, len(tpls))
		}
		switch plan[tid-1] {
		case tplAll:
			ps.found = append(ps.found, int32(j))
		case tplAssemble:
			ps.assemble = append(ps.assemble, int32(j))
		case tplRefs:
			hit := false
			for _, ref := range ps.checks[tid-1] {
				if nulls := refNulls[ref]; nulls != nil && nulls.Get(j) {
					return fmt.Errorf("template %d: column %d has no value in the row", tid, t.cols[ref])
				}
				if h := refHits[ref]; h[j>>6]&(1<<(j&63)) != 0 {
					hit = true
				}
			}
			// The row's residual values: resBefore on (none holds a
			// literal when resHits is nil).
			for rv := resBefore; resHits != nil && rv < resBefore+int(t.nres[tid]); rv++ {
				if resHits[rv>>6]&(1<<(rv&63)) != 0 {
					hit = true
				}
			}
			if hit {
				ps.found = append(ps.found, int32(j))
			}
		}
	}
	return nil
}

// Per template, what searchPresentPage does with a row of it (rowKinds).
const (
	rowNone     = iota // holds no literal (decided by values none of which may hold one)
	rowAll             // holds one (tplAll)
	rowAssemble        // undecided (tplAssemble)
	rowOneRef          // holds one iff its value of one reference does
	rowRefs            // the general case of tplRefs (several references, NULLs to check)
)

// setRowKinds fills ps.kinds and ps.one from the plan and the
// references' hits (by template id; id 0 unused).
func (ps *pageSearch) setRowKinds() {
	ps.kinds = make([]uint8, len(ps.plan)+1)
	ps.one = make([]int, len(ps.plan)+1)
	for i, p := range ps.plan {
		k := &ps.kinds[i+1]
		switch {
		case p == tplAll:
			*k = rowAll
		case p == tplAssemble:
			*k = rowAssemble
		case len(ps.checks[i]) == 0:
			*k = rowNone
		case len(ps.checks[i]) == 1 && ps.refNulls[ps.checks[i][0]] == nil:
			*k, ps.one[i+1] = rowOneRef, ps.checks[i][0]
		default:
			*k = rowRefs
		}
	}
}

// searchPresentPage is searchDerivedPage's loop for a page where every
// row has a value and no residual value holds a literal (the common
// case): the present rows are the rows, and a row of a template decided
// by one reference is one bit of its hits.
func (ps *pageSearch) searchPresentPage(pg *derivedPage, lo, hi, base, ntpls int) error {
	litsBefore := bytes.Count(pg.tids[:lo], []byte{0})
	for row := lo; row < hi; row++ {
		tid := int(pg.tids[row])
		j := base + row
		if tid == 0 {
			if holdsAny(unsafeString(pg.stored[pg.offs[litsBefore]:pg.offs[litsBefore+1]]), ps.lits) {
				ps.found = append(ps.found, int32(j))
			}
			litsBefore++
			continue
		}
		if tid > ntpls {
			return fmt.Errorf("template %d of %d", tid, ntpls)
		}
		switch ps.kinds[tid] {
		case rowAll:
			ps.found = append(ps.found, int32(j))
		case rowAssemble:
			ps.assemble = append(ps.assemble, int32(j))
		case rowOneRef:
			if h := ps.refHits[ps.one[tid]]; h[j>>6]&(1<<(j&63)) != 0 {
				ps.found = append(ps.found, int32(j))
			}
		case rowRefs:
			hit := false
			for _, ref := range ps.checks[tid-1] {
				if nulls := ps.refNulls[ref]; nulls != nil && nulls.Get(j) {
					return fmt.Errorf("template %d: reference %d has no value in the row", tid, ref)
				}
				if h := ps.refHits[ref]; h[j>>6]&(1<<(j&63)) != 0 {
					hit = true
				}
			}
			if hit {
				ps.found = append(ps.found, int32(j))
			}
		}
	}
	return nil
}

// sectionMayHold reports whether a page's residual section, its lengths
// and bytes swept as one value, holds a literal: when it does not, no
// residual value does (a hit may be a length byte next to value bytes).
func (ps *pageSearch) sectionMayHold(section []byte) bool {
	if len(section) == 0 {
		return false
	}
	if ps.searcher == nil {
		return holdsAny(unsafeString(section), ps.lits)
	}
	ps.sectionOffs = append(ps.sectionOffs[:0], 0, uint32(len(section)))
	rows, ok := ps.searcher.AppendRows(ps.resRows[:0], section, ps.sectionOffs)
	ps.resRows = rows
	return !ok || len(rows) > 0
}

// residualHits returns, as a bitset, the residual values of page pg that
// hold a literal, or nil when none does.
func (ps *pageSearch) residualHits(pg *derivedPage) []uint64 {
	n := len(pg.roffs) - 1
	ps.resRows = ps.resRows[:0]
	swept := false
	if ps.searcher != nil {
		ps.resRows, swept = ps.searcher.AppendRows(ps.resRows, pg.resid, pg.roffs)
	}
	if !swept {
		ps.resRows = ps.resRows[:0]
		for k := 0; k < n; k++ {
			if holdsAny(unsafeString(pg.resid[pg.roffs[k]:pg.roffs[k+1]]), ps.lits) {
				ps.resRows = append(ps.resRows, int32(k))
			}
		}
	}
	if len(ps.resRows) == 0 {
		return nil
	}
	ps.resHits = grow(ps.resHits, (n+63)/64)
	clear(ps.resHits)
	for _, k := range ps.resRows {
		ps.resHits[k>>6] |= 1 << (k & 63)
	}
	return ps.resHits
}

// planTemplate decides how the rows of template tpl (referring to columns
// of types) are searched for lits.
func planTemplate(tpl []tplPiece, types []ColType, lits []string) templateSearch {
	// The template as literal runs (consecutive literal pieces joined) and
	// references.
	type item struct {
		lit string
		ref int // -1 for a literal run, residualCol for a residual
	}
	items := make([]item, 0, len(tpl))
	for _, p := range tpl {
		switch {
		case p.col >= 0:
			items = append(items, item{ref: p.ref})
		case p.col == residualCol:
			items = append(items, item{ref: residualCol})
		case p.lit == "":
		case len(items) > 0 && items[len(items)-1].ref == -1:
			items[len(items)-1].lit += p.lit
		default:
			items = append(items, item{lit: p.lit, ref: -1})
		}
	}
	for _, it := range items {
		if it.ref == -1 {
			for _, l := range lits {
				if strings.Contains(it.lit, l) {
					return tplAll
				}
			}
		}
	}
	for _, l := range lits {
		for i, it := range items {
			if it.ref != -1 {
				if i > 0 && items[i-1].ref != -1 {
					return tplAssemble // two values meet: anything can span them
				}
				if it.ref >= 0 && types[it.ref] != TypeString && decimalCouldHold(l) {
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

// columnMayHold reports whether a value of column col in block b (rows
// [from, to)) may hold one of lits, told without decoding its values: an
// IP address column's text has hex digits, dots and colons only (encIP
// keeps only values that read back byte for byte), a dictionary's entries
// are all its values, and a hex column's values are hex digits of one
// case then a suffix (hexSuffixesMayHold).
func (r *Reader) columnMayHold(b, col, from, to int, lits []string, mode cacheMode) (bool, error) {
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
	case encHex:
		tails := hexTails(lits, c.width&hexUpper != 0)
		if tails == nil {
			return true, nil // a literal of hex digits alone: the digits may hold it
		}
		return r.hexSuffixesMayHold(b, col, c, from, to, tails, mode)
	case encDict:
		dict, err := r.dictMode(b, c, mode)
		if err != nil {
			return false, err
		}
		// A large dictionary (a block's user agents) is swept where its
		// entries lie, as valuesHolding sweeps one (dictHolding); a small
		// one, or one it leaves undecided, an entry at a time.
		for k, d := range dictHolding(&vec.Vector{Dict: dict.strs}, lits) {
			if d == 2 || d == 0 && holdsAny(dict.strs[k], lits) {
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
		decided = dictHolding(v, lits)
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

// dictSweepMin is the fewest dictionary entries dictHolding sweeps laid
// end to end (fewer are searched one by one as rows need them).
const dictSweepMin = 64

// dictHolding returns, per entry of v's dictionary, 2 when it holds one
// of lits, 1 when not, or 0 (not decided yet) for every entry of a small
// dictionary. A large one (the paths of a block with their queries: tens
// of thousands) is swept by a Searcher, cheaper than a search per entry:
// a dictionary page's entries lie end to end in the page (dictData), so
// each run of entries that do is swept where it lies.
func dictHolding(v *vec.Vector, lits []string) []uint8 {
	decided := make([]uint8, len(v.Dict))
	if len(v.Dict) < dictSweepMin || v.Const {
		return decided
	}
	s := predicate.NewSearcher(lits)
	if s == nil {
		return decided
	}
	offs := make([]uint32, 0, len(v.Dict)+1)
	var hits []int32
	for from := 0; from < len(v.Dict); {
		// The run: entries from `from` on, each starting where the one
		// before ends (empty entries hold nothing and end a run).
		to := from
		var data []byte
		for ; to < len(v.Dict); to++ {
			e := v.Dict[to]
			if e == "" || to > from && addr(e) != addr(v.Dict[to-1])+uintptr(len(v.Dict[to-1])) {
				break
			}
		}
		if to == from { // an empty entry
			decided[from] = 1
			from++
			continue
		}
		first, last := v.Dict[from], v.Dict[to-1]
		size := int(addr(last)-addr(first)) + len(last)
		if size > math.MaxUint32 {
			return make([]uint8, len(v.Dict))
		}
		data = unsafe.Slice(unsafe.StringData(first), size)
		offs = append(offs[:0], 0)
		for k := from; k < to; k++ {
			offs = append(offs, offs[len(offs)-1]+uint32(len(v.Dict[k])))
		}
		var ok bool
		if hits, ok = s.AppendRows(hits[:0], data, offs); !ok {
			return make([]uint8, len(v.Dict))
		}
		for k := from; k < to; k++ {
			decided[k] = 1
		}
		for _, k := range hits {
			decided[from+int(k)] = 2
		}
		from = to
	}
	return decided
}

// addr is the address of s's first byte.
func addr(s string) uintptr { return uintptr(unsafe.Pointer(unsafe.StringData(s))) }

// holdsAny reports whether s holds one of lits.
func holdsAny(s string, lits []string) bool {
	for _, l := range lits {
		if strings.Contains(s, l) {
			return true
		}
	}
	return false
}
