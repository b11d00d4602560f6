package engine

import (
	"context"
	"errors"
	"fmt"
	iofs "io/fs"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/RoaringBitmap/roaring/v2"

	"github.com/sediment/sediment/event"
	"github.com/sediment/sediment/index"
	"github.com/sediment/sediment/internal/recovered"
	"github.com/sediment/sediment/internal/vec"
	"github.com/sediment/sediment/segment"
	"github.com/sediment/sediment/sql/scan"
)

// maxBatchRows bounds the rows of one emitted batch.
const maxBatchRows = 1 << 16

type shardScan struct {
	sn    *Snapshot
	req   *scan.Request
	name  string // the source's name in the query: warnings and errors say it
	preds []*pred
	units []scan.Unit
	// once: the scan reads many blocks in one pass (no limit to stop it
	// early), so its pages do not go to the page cache, where they would
	// push out the pages interactive queries read again and again.
	once bool
}

// A scan without a limit whose pages would take more than a
// onceCacheShare of the page cache reads them without keeping them; the
// pages of its columns are estimated at onceExpansion times their
// compressed size.
const (
	onceCacheShare = 4
	onceExpansion  = 4
)

func openScan(ctx context.Context, sn *Snapshot, req *scan.Request, name string) (*shardScan, error) {
	if sn.cutoff > req.TimeMin {
		// Retention by event time: older events are gone for queries,
		// whether or not their segment has been rewritten yet.
		r := *req
		r.TimeMin = sn.cutoff
		req = &r
	}
	sc := &shardScan{sn: sn, req: req, name: name}
	for _, p := range withoutImpliedNotNull(req.Filters) {
		cp, err := compilePred(p)
		if err != nil {
			return nil, err
		}
		sc.preds = append(sc.preds, cp)
	}
	// Cheap predicates first: ints and dictionaries before regexes.
	sort.SliceStable(sc.preds, func(i, j int) bool { return predCost(sc.preds[i]) < predCost(sc.preds[j]) })
	for _, p := range sn.partList() {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		minT, maxT := p.timeRange()
		if maxT < req.TimeMin || minT > req.TimeMax {
			continue
		}
		if p.hv != nil {
			sc.addHeadUnits(p)
			continue
		}
		if err := sc.addSegmentUnits(ctx, p); err != nil {
			return nil, sc.clientError(err)
		}
	}
	// Data set aside for good that the query's time range covers: a unit
	// that reads nothing and says so, when the executor reaches it.
	// Data older than the source's retention would be gone anyway: its
	// loss is no longer news.
	cutoff := int64(scan.MinTime)
	if days := sn.shard.retentionDays.Load(); days > 0 {
		cutoff = sn.shard.opts.Now().Add(-time.Duration(days) * 24 * time.Hour).UnixMicro()
	}
	for _, lost := range [][]lostUnit{sn.lost, sn.walLost} {
		for i := range lost {
			u := &lost[i]
			if u.overlaps(max(req.TimeMin, cutoff), req.TimeMax) {
				sc.units = append(sc.units, &lostScanUnit{sc: sc, u: *u})
			}
		}
	}
	sc.once = req.Limit <= 0 && sc.pageBytes() > segment.PageCacheBudget()/onceCacheShare
	switch req.Order {
	case scan.Descending:
		sort.SliceStable(sc.units, func(i, j int) bool {
			_, a := sc.units[i].TimeRange()
			_, b := sc.units[j].TimeRange()
			return a > b
		})
	case scan.Ascending:
		sort.SliceStable(sc.units, func(i, j int) bool {
			a, _ := sc.units[i].TimeRange()
			b, _ := sc.units[j].TimeRange()
			return a < b
		})
	}
	return sc, nil
}

// pageBytes estimates the bytes of the pages the scan's segment blocks
// would read: those of its predicates' and value columns (records read
// their presence column only, until a few are materialised).
func (sc *shardScan) pageBytes() int64 {
	var paths []string
	for _, pr := range sc.preds {
		paths = append(paths, pr.Path)
	}
	for _, c := range sc.req.Columns {
		if c.Kind == scan.Value || c.Kind == scan.ArrayOf {
			paths = append(paths, c.Path)
		}
	}
	var total int64
	for _, u := range sc.units {
		su, ok := u.(*segUnit)
		if !ok {
			continue
		}
		r := su.p.seg.r
		for _, path := range paths {
			for _, c := range su.p.byPath[path] {
				if ci, ok := r.Chunk(su.b, c.idx); ok {
					total += ci.StoredBytes
				}
			}
		}
	}
	return total * onceExpansion
}

// withoutImpliedNotNull drops `record IS NOT NULL` where another filter on
// a field below the record can only be true when the field, and so the
// record, is there (CROSS JOIN UNNEST(m.response) ... WHERE
// response.status_code = 500 needs no separate check of response).
func withoutImpliedNotNull(filters []scan.Predicate) []scan.Predicate {
	acceptsNull := func(q scan.Predicate) bool {
		return (q.Op == scan.IsNull && !q.Not) || (q.Op == scan.IsNotNull && q.Not)
	}
	implied := func(p scan.Predicate) bool {
		if !(p.Op == scan.IsNotNull && !p.Not) && !(p.Op == scan.IsNull && p.Not) {
			return false
		}
		for _, q := range filters {
			if !acceptsNull(q) && strings.HasPrefix(q.Path, p.Path+".") {
				return true // every other operator is false or NULL on NULL
			}
		}
		return false
	}
	out := filters[:0:0]
	for _, p := range filters {
		if !implied(p) {
			out = append(out, p)
		}
	}
	return out
}

func predCost(p *pred) int {
	switch {
	case p.Op == scan.Regex && !p.anyExact, p.Op == scan.Like && !p.litExact:
		return 3
	case p.Type == vec.String:
		return 2
	}
	return 1
}

func (sc *shardScan) Units() []scan.Unit { return sc.units }
func (sc *shardScan) Close() error       { return nil }

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
			if !errors.Is(err, segment.ErrCorrupt) {
				return err
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

// reader abstracts reading physical columns of a segment block or a head.
type colReader interface {
	// read fills dst with column c over [a, z) (rows nil) or the listed
	// rows (compacted).
	read(c colRef, a, z int, rows []int32, dst *vec.Vector) error
}

// blockReader reads the columns of one block of a segment. once reads
// without adding pages to the page cache (a scan of much data, whose pages
// would push out those interactive queries read again); reuse reads into
// vectors that are the reader's own scratch (a predicate's column, never
// handed on), reusing the buffer their strings are copied into.
type blockReader struct {
	r     *segment.Reader
	b     int
	once  bool
	reuse bool
}

func (br *blockReader) read(c colRef, a, z int, rows []int32, dst *vec.Vector) error {
	return br.r.Read(br.b, c.idx, a, z, rows, dst, segment.ReadOptions{Once: br.once, Reuse: br.reuse})
}

// scratchReader returns cr reading into scratch vectors (see blockReader).
func scratchReader(cr colReader) colReader {
	if br, ok := cr.(*blockReader); ok && !br.reuse {
		c := *br
		c.reuse = true
		return &c
	}
	return cr
}

// handedOnReader returns cr reading into vectors that may be kept.
func handedOnReader(cr colReader) colReader {
	if br, ok := cr.(*blockReader); ok && br.reuse {
		c := *br
		c.reuse = false
		return &c
	}
	return cr
}

type headReader struct{ hv *headView }

func (hr headReader) read(c colRef, a, z int, rows []int32, dst *vec.Vector) error {
	hr.hv.readCol(c.idx, dst, a, z, rows)
	return nil
}

// readLogical reads a field as type t from its physical columns, widening
// values of other types (see Snapshot.Schema), over [a, z) or rows.
func readLogical(cr colReader, cols []colRef, t vec.Type, a, z int, rows []int32, dst *vec.Vector) error {
	n := z - a
	if rows != nil {
		n = len(rows)
	}
	if len(cols) == 1 && (segment.VecType(cols[0].typ) == t || t == vec.RowRef || t == vec.List) {
		return cr.read(cols[0], a, z, rows, dst)
	}
	// The values converted below keep pointing into what each column
	// read: those reads must not reuse a buffer.
	cr = handedOnReader(cr)
	out := &vec.Vector{Type: t, Len: n, Nulls: vec.NewBitset(n)}
	for i := 0; i < n; i++ {
		out.Nulls.Set(i)
	}
	switch t {
	case vec.Bool:
		out.Bools = make([]bool, n)
	case vec.Float64:
		out.Floats = make([]float64, n)
	case vec.String, vec.JSON:
		out.Strs = make([]string, n)
	default:
		out.Ints = make([]int64, n)
	}
	var tmp vec.Vector
	for _, c := range cols {
		if err := cr.read(c, a, z, rows, &tmp); err != nil {
			return err
		}
		for i := 0; i < n; i++ {
			if tmp.IsNull(i) || !out.Nulls.Get(i) {
				continue
			}
			if convertValue(&tmp, i, c.typ, out, t) {
				out.Nulls.Clear(i)
			}
		}
	}
	if !out.Nulls.Any() {
		out.Nulls = nil
	}
	*dst = *out
	return nil
}

// convertValue widens row i of src (physical type ct) into dst as t.
func convertValue(src *vec.Vector, i int, ct segment.ColType, dst *vec.Vector, t vec.Type) bool {
	switch t {
	case vec.String, vec.JSON:
		switch ct {
		case segment.TypeString:
			dst.Strs[i] = src.StringAt(i)
		case segment.TypeInt64, segment.TypeTimestamp:
			dst.Strs[i] = strconv.FormatInt(src.Ints[i], 10)
		case segment.TypeFloat64:
			dst.Strs[i] = strconv.FormatFloat(src.Floats[i], 'g', -1, 64)
		case segment.TypeBool:
			dst.Strs[i] = strconv.FormatBool(src.Bools[i])
		default:
			return false
		}
	case vec.Float64:
		switch ct {
		case segment.TypeFloat64:
			dst.Floats[i] = src.Floats[i]
		case segment.TypeInt64:
			dst.Floats[i] = float64(src.Ints[i])
		default:
			return false
		}
	case vec.Int64, vec.Timestamp:
		switch ct {
		case segment.TypeInt64, segment.TypeTimestamp:
			dst.Ints[i] = src.Ints[i]
		default:
			return false
		}
	case vec.Bool:
		if ct != segment.TypeBool {
			return false
		}
		dst.Bools[i] = src.Bools[i]
	default:
		return false
	}
	return true
}

// evalPreds applies predicates (skipping those marked done) to the rows
// of [lo, hi) in sel (nil = all), returning the rows that pass.
func (sc *shardScan) evalPreds(p *part, cr colReader, done []bool, lo, hi int, sel []int32) ([]int32, error) {
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

// segUnit is one block of a segment.
type segUnit struct {
	sc    *shardScan
	p     *part
	b     int
	bi    segment.BlockInfo
	cand  *roaring.Bitmap
	exact []bool
}

func (u *segUnit) TimeRange() (int64, int64) { return u.bi.MinTime, u.bi.MaxTime }
func (u *segUnit) Rows() int                 { return u.bi.Rows }
func (u *segUnit) Sorted() bool              { return true }

// selectRows returns the block rows passing the time range and every
// predicate, ascending. With limit > 0 and an order only the first limit
// rows in that order are kept, evaluating windows from that end so that a
// newest-first query touches only the newest pages.
func (u *segUnit) selectRows(ctx context.Context, limit int) ([]int32, *blockReader, error) {
	req := u.sc.req
	br := &blockReader{r: u.p.seg.r, b: u.b, once: u.sc.once}
	rows := u.bi.Rows
	lo, hi := 0, rows
	if req.TimeMin > u.bi.MinTime || req.TimeMax < u.bi.MaxTime {
		tsCol := typedCols(u.p, "timestamp", segment.TypeTimestamp)
		var ts vec.Vector
		if err := br.read(tsCol[0], 0, rows, nil, &ts); err != nil {
			return nil, nil, err
		}
		lo = sort.Search(rows, func(i int) bool { return ts.Ints[i] >= req.TimeMin })
		hi = sort.Search(rows, func(i int) bool { return ts.Ints[i] > req.TimeMax })
		if lo >= hi {
			return nil, br, nil
		}
	}
	pending := false
	for i := range u.sc.preds {
		if !u.exact[i] {
			pending = true
		}
	}
	var base []int32
	if u.cand != nil {
		var ok bool
		if base, ok = u.candidateRows(lo, hi, pending, limit); !ok {
			return nil, br, nil
		}
	}
	if !pending {
		sel := base
		if sel == nil {
			if limit > 0 && hi-lo > limit { // only the rows at the wanted end
				if req.Order == scan.Descending {
					lo = hi - limit
				} else {
					hi = lo + limit
				}
			}
			sel = make([]int32, hi-lo)
			for i := range sel {
				sel[i] = int32(lo + i)
			}
		}
		return trimToLimit(sel, limit, req.Order), br, nil
	}
	if limit <= 0 {
		sel, err := u.sc.evalPreds(u.p, br, u.exact, lo, hi, base)
		return sel, br, err
	}
	// Windows from the wanted end, doubling, until limit rows pass.
	var got []int32
	w := 4096
	for a, z := lo, hi; a < z && len(got) < limit; w *= 2 {
		if err := ctx.Err(); err != nil {
			return nil, nil, err
		}
		wa, wz := a, min(z, a+w)
		if req.Order == scan.Descending {
			wa, wz = max(a, z-w), z
		}
		var wbase []int32
		if base != nil {
			i := sort.Search(len(base), func(k int) bool { return base[k] >= int32(wa) })
			j := sort.Search(len(base), func(k int) bool { return base[k] >= int32(wz) })
			wbase = base[i:j:j]
			if len(wbase) == 0 {
				if req.Order == scan.Descending {
					z = wa
				} else {
					a = wz
				}
				continue
			}
		}
		sel, err := u.sc.evalPreds(u.p, br, u.exact, wa, wz, wbase)
		if err != nil {
			return nil, nil, err
		}
		if req.Order == scan.Descending {
			got = append(sel, got...)
			z = wa
		} else {
			got = append(got, sel...)
			a = wz
		}
	}
	return trimToLimit(got, limit, req.Order), br, nil
}

// trimToLimit keeps the limit rows a request wants of a unit's selection
// (in row order, which is time order): the newest for Descending, the
// oldest for Ascending, and for Unordered the first, which are as good as
// any.
// candidateRows returns the block rows in [lo, hi) that the index
// candidates hold, ascending; nil (and true) when they hold every row of
// the range, so that no selection is needed; false when they hold none.
// Without predicates left to evaluate, a limit needs only the candidates
// at the wanted end, picked by rank instead of iterating the others.
func (u *segUnit) candidateRows(lo, hi int, pending bool, limit int) ([]int32, bool) {
	first := uint32(u.bi.FirstRow)
	a, z := first+uint32(lo), first+uint32(hi) // [a, z)
	var below uint64
	if a > 0 {
		below = u.cand.Rank(a - 1)
	}
	n := u.cand.Rank(z-1) - below
	switch {
	case n == 0:
		return nil, false
	case n == uint64(z-a):
		return nil, true
	case !pending && limit > 0 && n > uint64(limit):
		from := below
		if u.sc.req.Order == scan.Descending {
			from = below + n - uint64(limit)
		}
		base := make([]int32, 0, limit)
		for r := from; r < from+uint64(limit); r++ {
			x, err := u.cand.Select(uint32(r))
			if err != nil {
				break // cannot happen: r < the bitmap's cardinality
			}
			base = append(base, int32(x-first))
		}
		return base, true
	}
	base := make([]int32, 0, n)
	it := u.cand.Iterator()
	it.AdvanceIfNeeded(a)
	for it.HasNext() {
		x := it.Next()
		if x >= z {
			break
		}
		base = append(base, int32(x-first))
	}
	return base, true
}

func trimToLimit(sel []int32, limit int, order scan.Order) []int32 {
	if limit <= 0 || len(sel) <= limit {
		return sel
	}
	if order == scan.Descending {
		return sel[len(sel)-limit:]
	}
	return sel[:limit]
}

func (u *segUnit) Read(ctx context.Context, emit func(*vec.Batch) error) error {
	sel, br, err := u.selectRows(ctx, u.sc.req.Limit)
	emitted := false
	if err == nil && len(sel) > 0 {
		err = u.sc.emitRows(ctx, u.p, br, u.bi.FirstRow, sel, func(b *vec.Batch) error {
			emitted = true
			return emit(b)
		})
	}
	return u.damaged(ctx, err, emitted)
}

// damaged handles an error of reading the unit's block: damage sets the
// block aside, and the answer goes on without it, with a warning, when the
// query has a collector for one; without, the query fails with an error
// that names the source and the file relative to its directory. Other
// errors pass through.
func (u *segUnit) damaged(ctx context.Context, err error, partial bool) error {
	if err == nil || !errors.Is(err, segment.ErrCorrupt) {
		return u.sc.clientError(err)
	}
	lu := u.p.seg.shard.markBlockDamaged(u.p.seg, u.b, err)
	if w := scan.WarningsFrom(ctx); w != nil {
		w.Add(lu.warning(u.sc.name, partial))
		return nil
	}
	return &DamageError{Source: u.sc.name, File: filepath.Join("segments", segName(lu.seg)), Block: lu.block, Cause: lu.cause, Fresh: true}
}

func (u *segUnit) Count(ctx context.Context) (int64, error) {
	sel, _, err := u.selectRows(ctx, 0)
	if err != nil {
		return 0, u.damaged(ctx, err, false)
	}
	return int64(len(sel)), nil
}

// lostScanUnit stands for data set aside as damaged that a scan would have
// read: it produces no rows and adds a warning saying what the answer
// misses (or, without a collector, fails the query).
type lostScanUnit struct {
	sc *shardScan
	u  lostUnit
}

func (l *lostScanUnit) TimeRange() (int64, int64) { return l.u.minTime, l.u.maxTime }
func (l *lostScanUnit) Rows() int                 { return int(max(l.u.rows, 0)) }
func (l *lostScanUnit) Sorted() bool              { return true }

func (l *lostScanUnit) Read(ctx context.Context, _ func(*vec.Batch) error) error {
	return l.report(ctx)
}

func (l *lostScanUnit) Count(ctx context.Context) (int64, error) { return 0, l.report(ctx) }

func (l *lostScanUnit) report(ctx context.Context) error {
	if w := scan.WarningsFrom(ctx); w != nil {
		w.Add(l.u.warning(l.sc.name, false))
		return nil
	}
	switch l.u.kind {
	case lossBlock:
		return &DamageError{Source: l.sc.name, File: filepath.Join("segments", segName(l.u.seg)), Block: l.u.block, Cause: l.u.cause}
	case lossWAL:
		return &DamageError{Source: l.sc.name, File: "its write-ahead log", Block: -1, Cause: l.u.cause}
	case lossRemote:
		return &PartialError{Source: l.sc.name, Cause: l.u.cause}
	}
	return &DamageError{Source: l.sc.name, File: filepath.Join("segments", segName(l.u.seg)), Block: -1, Cause: l.u.cause}
}

// clientError makes an error fit for the query's caller: damage and I/O
// errors name the source and files relative to its directory, never the
// server's paths. Others (cancellation, the executor's own) pass through.
func (sc *shardScan) clientError(err error) error {
	var de *DamageError
	var ce *segment.CorruptError
	var pe *iofs.PathError
	switch {
	case err == nil, errors.As(err, &de):
		return err
	case errors.As(err, &ce):
		return &DamageError{Source: sc.name, File: ce.Path, Block: -1, Cause: causeText(err)}
	case errors.As(err, &pe):
		return fmt.Errorf("source %s: reading stored data: %s: %w", sc.name, pe.Op, pe.Err)
	}
	return err
}

// emitRows builds batches of the requested columns for the selected rows
// (part-relative row numbers offset by base for RowRefs).
func (sc *shardScan) emitRows(ctx context.Context, p *part, cr colReader, base int, sel []int32, emit func(*vec.Batch) error) error {
	for len(sel) > 0 {
		if err := ctx.Err(); err != nil {
			return err
		}
		chunk := sel[:min(len(sel), maxBatchRows)]
		sel = sel[len(chunk):]
		b, err := sc.buildBatch(p, cr, base, chunk)
		if err != nil {
			return err
		}
		if err := emit(b); err != nil {
			return err
		}
	}
	return nil
}

func (sc *shardScan) buildBatch(p *part, cr colReader, base int, sel []int32) (*vec.Batch, error) {
	a, z := int(sel[0]), int(sel[len(sel)-1])+1
	ascending := true
	for i := 1; i < len(sel); i++ {
		if sel[i] <= sel[i-1] {
			ascending = false
			break
		}
	}
	b := &vec.Batch{}
	var rows []int32
	if ascending && len(sel)*2 >= z-a {
		b.Len = z - a
		if len(sel) != z-a {
			b.Sel = make([]int32, len(sel))
			for i, r := range sel {
				b.Sel[i] = r - int32(a)
			}
		}
	} else {
		rows = sel
		b.Len = len(sel)
	}
	rowAt := func(i int) int {
		if rows != nil {
			return int(rows[i])
		}
		return a + i
	}
	for _, col := range sc.req.Columns {
		v := &vec.Vector{}
		switch col.Kind {
		case scan.Value:
			cols := scalarCols(p, col.Path)
			if len(cols) == 0 {
				v = allNull(col.Type, b.Len)
			} else if err := readLogical(cr, cols, col.Type, a, z, rows, v); err != nil {
				return nil, err
			}
		case scan.Record:
			var pres vec.Vector
			cols := typedCols(p, col.Path, segment.TypeObject)
			v.Type, v.Len, v.Ints = vec.RowRef, b.Len, make([]int64, b.Len)
			if len(cols) == 0 {
				v = allNull(vec.RowRef, b.Len)
				break
			}
			if err := cr.read(cols[0], a, z, rows, &pres); err != nil {
				return nil, err
			}
			for i := 0; i < b.Len; i++ {
				if pres.IsNull(i) {
					if v.Nulls == nil {
						v.Nulls = vec.NewBitset(b.Len)
					}
					v.Nulls.Set(i)
					continue
				}
				v.Ints[i] = int64(p.id)<<32 | int64(base+rowAt(i))
			}
		case scan.ArrayOf:
			cols := typedCols(p, col.Path, segment.TypeArray)
			var blobs vec.Vector
			if len(cols) == 0 {
				blobs = *allNull(vec.String, b.Len)
			} else if err := cr.read(cols[0], a, z, rows, &blobs); err != nil {
				return nil, err
			}
			lv, err := buildList(&blobs, col)
			if err != nil {
				return nil, err
			}
			v = lv
		}
		b.Cols = append(b.Cols, v)
	}
	return b, nil
}

func allNull(t vec.Type, n int) *vec.Vector {
	v := &vec.Vector{Type: t, Len: n, Nulls: vec.NewBitset(n)}
	for i := 0; i < n; i++ {
		v.Nulls.Set(i)
	}
	switch t {
	case vec.Bool:
		v.Bools = make([]bool, n)
	case vec.Float64:
		v.Floats = make([]float64, n)
	case vec.String, vec.JSON:
		v.Strs = make([]string, n)
	case vec.List:
		v.Offsets = make([]int32, n+1)
		v.Elem = &vec.Vector{Type: vec.Unknown}
	default:
		v.Ints = make([]int64, n)
	}
	return v
}

// buildList decodes array values into a List vector shaped as col asks.
func buildList(blobs *vec.Vector, col scan.Column) (*vec.Vector, error) {
	n := blobs.Len
	out := &vec.Vector{Type: vec.List, Len: n, Offsets: make([]int32, n+1)}
	var elems []event.Value
	for i := 0; i < n; i++ {
		if blobs.IsNull(i) {
			if out.Nulls == nil {
				out.Nulls = vec.NewBitset(n)
			}
			out.Nulls.Set(i)
		} else {
			v, _, err := event.DecodeValue([]byte(blobs.StringAt(i)))
			if err != nil {
				return nil, &segment.CorruptError{Path: "array value", Offset: -1, Section: "column " + col.Path, Err: err}
			}
			elems = append(elems, v.Kids...)
		}
		out.Offsets[i+1] = int32(len(elems))
	}
	if len(col.Elem) == 0 {
		out.Elem = valuesVector(elems, nil, col.Type, false)
		return out, nil
	}
	st := &vec.Vector{Type: vec.Struct, Len: len(elems)}
	for _, ec := range col.Elem {
		var path []string
		if ec.Path != "" {
			path = splitPath(ec.Path)
		}
		st.Names = append(st.Names, ec.Path)
		st.Children = append(st.Children, valuesVector(elems, path, ec.Type, ec.Kind == scan.Record))
	}
	out.Elem = st
	return out, nil
}

func splitPath(p string) []string {
	var out []string
	start := 0
	for i := 0; i < len(p); i++ {
		if p[i] == '.' {
			out = append(out, p[start:i])
			start = i + 1
		}
	}
	return append(out, p[start:])
}

// valuesVector extracts path from each value as type t (records as
// BigQuery-shaped JSON text when record is set).
func valuesVector(vals []event.Value, path []string, t vec.Type, record bool) *vec.Vector {
	n := len(vals)
	if record {
		t = vec.JSON
	}
	out := allNull(t, n)
	for i := range vals {
		v := &vals[i]
		if len(path) > 0 {
			v = v.Path(path...)
			if v == nil {
				continue
			}
		}
		if record {
			if v.Kind == event.Object || v.Kind == event.Array {
				out.Strs[i] = string(appendBQJSON(nil, v, false))
				out.Nulls.Clear(i)
			}
			continue
		}
		if setScalar(out, i, v, t) {
			out.Nulls.Clear(i)
		}
	}
	if !out.Nulls.Any() {
		out.Nulls = nil
	}
	return out
}

func setScalar(out *vec.Vector, i int, v *event.Value, t vec.Type) bool {
	switch t {
	case vec.String, vec.JSON:
		switch v.Kind {
		case event.String:
			out.Strs[i] = v.Str
		case event.Int:
			out.Strs[i] = strconv.FormatInt(v.Int(), 10)
		case event.Float:
			out.Strs[i] = strconv.FormatFloat(v.Float(), 'g', -1, 64)
		case event.Bool:
			out.Strs[i] = strconv.FormatBool(v.Bool())
		case event.Object, event.Array:
			out.Strs[i] = string(appendBQJSON(nil, v, false))
		default:
			return false
		}
	case vec.Int64:
		if v.Kind != event.Int {
			return false
		}
		out.Ints[i] = v.Int()
	case vec.Float64:
		switch v.Kind {
		case event.Int:
			out.Floats[i] = float64(v.Int())
		case event.Float:
			out.Floats[i] = v.Float()
		default:
			return false
		}
	case vec.Bool:
		if v.Kind != event.Bool {
			return false
		}
		out.Bools[i] = v.Bool()
	default:
		return false
	}
	return true
}

// Materialize writes the JSON of the records refs point at (see scan.Scan).
func (sc *shardScan) Materialize(ctx context.Context, path string, asArray bool, refs []int64, dst []string) error {
	parts := sc.sn.partList()
	byPart := map[int][]int{} // part → indexes into refs
	for i, ref := range refs {
		pid := int(ref >> 32)
		if pid < 0 || pid >= len(parts) {
			return errors.New("engine: row reference from another scan")
		}
		byPart[pid] = append(byPart[pid], i)
	}
	// One task per head and per segment block: they write different rows
	// of dst, and run on several cores (each decompresses its own pages).
	var tasks []func() error
	for pid, idxs := range byPart {
		p := parts[pid]
		var cols []colRef
		for cp, cs := range p.byPath {
			if hasPrefixPath(cp, path) {
				cols = append(cols, cs...)
			}
		}
		sort.Slice(idxs, func(i, j int) bool { return refs[idxs[i]] < refs[idxs[j]] })
		emit := func(cr colReader, rows []int32, at []int) error {
			vecs := make([]vec.Vector, len(cols))
			for k, c := range cols {
				if err := cr.read(c, 0, 0, rows, &vecs[k]); err != nil {
					return err
				}
			}
			rb := newRecordBuilder(cols, vecs, path)
			for k := range rows {
				v, err := rb.build(k)
				if err != nil {
					return err
				}
				dst[at[k]] = string(appendBQJSON(nil, &v, asArray))
			}
			return nil
		}
		if p.hv != nil {
			rows := make([]int32, len(idxs))
			for k, i := range idxs {
				rows[k] = int32(refs[i] & 0xffffffff)
			}
			at := make([]int, len(idxs))
			copy(at, idxs)
			tasks = append(tasks, func() error { return emit(headReader{p.hv}, rows, at) })
			continue
		}
		r := p.seg.r
		for start := 0; start < len(idxs); {
			row := int(refs[idxs[start]] & 0xffffffff)
			b := sort.Search(r.NumBlocks(), func(k int) bool { bi := r.Block(k); return bi.FirstRow+bi.Rows > row })
			if b >= r.NumBlocks() {
				return errors.New("engine: row reference out of range")
			}
			bi := r.Block(b)
			end := start
			var rows []int32
			var at []int
			for end < len(idxs) {
				rr := int(refs[idxs[end]] & 0xffffffff)
				if rr >= bi.FirstRow+bi.Rows {
					break
				}
				rows = append(rows, int32(rr-bi.FirstRow))
				at = append(at, idxs[end])
				end++
			}
			tasks = append(tasks, func() error {
				err := emitDedup(&blockReader{r: r, b: b}, rows, at, emit, dst)
				if err != nil && errors.Is(err, segment.ErrCorrupt) {
					// The rows were emitted already: the records cannot be
					// left out without a wrong answer, so the query fails.
					lu := p.seg.shard.markBlockDamaged(p.seg, b, err)
					return &DamageError{Source: sc.name, File: filepath.Join("segments", segName(lu.seg)), Block: b, Cause: lu.cause, Fresh: true}
				}
				return sc.clientError(err)
			})
			start = end
		}
	}
	return runTasks(ctx, tasks)
}

// runTasks runs tasks on up to GOMAXPROCS goroutines and returns the
// first error (the other tasks not yet started are left out). A panic in a
// task fails the call, not the process.
func runTasks(ctx context.Context, tasks []func() error) error {
	workers := min(len(tasks), runtime.GOMAXPROCS(0))
	if workers <= 1 {
		for _, t := range tasks {
			if err := ctx.Err(); err != nil {
				return err
			}
			if err := t(); err != nil {
				return err
			}
		}
		return nil
	}
	var (
		next     atomic.Int64
		mu       sync.Mutex
		firstErr error
		wg       sync.WaitGroup
	)
	fail := func(err error) {
		mu.Lock()
		if firstErr == nil {
			firstErr = err
		}
		mu.Unlock()
	}
	failed := func() bool {
		mu.Lock()
		defer mu.Unlock()
		return firstErr != nil
	}
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() {
				if r := recover(); r != nil {
					fail(recovered.New(r))
				}
			}()
			for {
				i := int(next.Add(1) - 1)
				if i >= len(tasks) || failed() {
					return
				}
				if err := ctx.Err(); err != nil {
					fail(err)
					return
				}
				if err := tasks[i](); err != nil {
					fail(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	return firstErr
}

// emitDedup materialises unique rows once and copies the text to
// duplicates (the same record referenced several times).
func emitDedup(cr colReader, rows []int32, at []int, emit func(colReader, []int32, []int) error, dst []string) error {
	uniq := rows[:0:0]
	var uat []int
	var dupOf []int
	for k, r := range rows {
		if len(uniq) > 0 && uniq[len(uniq)-1] == r {
			dupOf = append(dupOf, k)
			continue
		}
		uniq = append(uniq, r)
		uat = append(uat, at[k])
		dupOf = append(dupOf, -1)
	}
	if err := emit(cr, uniq, uat); err != nil {
		return err
	}
	last := -1
	for k := range rows {
		if dupOf[k] == -1 {
			last = at[k]
		} else {
			dst[at[k]] = dst[last]
		}
	}
	return nil
}
