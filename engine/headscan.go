package engine

import (
	"context"
	"slices"
	"sort"

	"github.com/sediment/sediment/internal/vec"
	"github.com/sediment/sediment/segment"
	"github.com/sediment/sediment/sql/scan"
)

// Scanning a head: one unit per chunk (headchunk.go), pruned like segment
// blocks by time range, column presence, value ranges and dictionary
// codes, so that a query reads only the chunks that may hold its rows and
// a newest-first query stops after the newest chunks (the executor skips
// units older than its top-K threshold).

// addHeadUnits adds the units of the chunks of head part p that the
// request may want.
func (sc *shardScan) addHeadUnits(p *part) {
	var dictOK [][]bool // per predicate: which dictionary codes it accepts
	for _, ch := range p.hv.chunks() {
		if ch.maxTime < sc.req.TimeMin || ch.minTime > sc.req.TimeMax {
			continue
		}
		if !sc.req.NoIndex {
			if dictOK == nil {
				dictOK = sc.headDictMatches(p)
			}
			if !sc.chunkMayMatch(p, ch, dictOK) {
				continue
			}
		}
		u := &headUnit{sc: sc, p: p, ch: ch}
		if !sc.req.NoIndex {
			u.done = sc.chunkDecides(p, ch, dictOK)
		}
		sc.units = append(sc.units, u)
	}
}

// chunkDecides returns which predicates every row of a head chunk passes,
// known from its summary alone (nil when none): IS NOT NULL of a column
// with a value in every row, and a test of a dictionary-coded column with
// a value in every row that every code the chunk uses passes (a project
// filter on a source of one project). A chunk's rows need no reading for
// them.
func (sc *shardScan) chunkDecides(p *part, ch *headChunk, dictOK [][]bool) []bool {
	var done []bool
	rows := uint32(ch.to - ch.from)
	for i, pr := range sc.preds {
		cols := predCols(p, pr)
		if len(cols) != 1 || ch.col(cols[0].idx).count != rows {
			continue
		}
		cc := ch.col(cols[0].idx)
		decided := false
		switch {
		case pr.Op == scan.IsNotNull:
			decided = !pr.Not
		case dictOK != nil && dictOK[i] != nil && cc.codes != nil:
			decided = true
			for code, ok := range dictOK[i] {
				if !ok && cc.hasCode(uint32(code)) {
					decided = false
					break
				}
			}
		}
		if decided {
			if done == nil {
				done = make([]bool, len(sc.preds))
			}
			done[i] = true
		}
	}
	return done
}

// headDictMatches evaluates, once per query, each string predicate on the
// dictionary of the head column it reads (nil where it has none).
func (sc *shardScan) headDictMatches(p *part) [][]bool {
	out := make([][]bool, len(sc.preds))
	for i, pr := range sc.preds {
		cols := predCols(p, pr)
		if len(cols) != 1 || cols[0].typ != segment.TypeString || pr.Type != vec.String {
			continue
		}
		switch pr.Op {
		case scan.Eq, scan.In, scan.Regex, scan.Contains, scan.StartsWith, scan.EndsWith, scan.Like:
		default:
			continue
		}
		c := &p.hv.cols[cols[0].idx]
		if !c.isDict() {
			continue
		}
		ok := make([]bool, len(c.dict))
		for code, s := range c.dict {
			ok[code] = pr.matchString(s)
		}
		out[i] = ok
	}
	return out
}

// chunkMayMatch prunes a head chunk as blockMayMatch prunes a block.
func (sc *shardScan) chunkMayMatch(p *part, ch *headChunk, dictOK [][]bool) bool {
	for i, pr := range sc.preds {
		if pr.Op == scan.IsNull {
			continue
		}
		cols := predCols(p, pr)
		present := false
		for _, c := range cols {
			if ch.col(c.idx).count > 0 {
				present = true
			}
		}
		if !present {
			return false // NULL everywhere: no row can satisfy it
		}
		if len(cols) != 1 || pr.Op == scan.IsNotNull {
			continue
		}
		c, cc := cols[0], ch.col(cols[0].idx)
		switch {
		case (c.typ == segment.TypeInt64 && pr.Type == vec.Int64 || c.typ == segment.TypeTimestamp && pr.Type == vec.Timestamp) && cc.hasRange:
			if !rangeMayMatch(pr, cc.min, cc.max) {
				return false
			}
		case dictOK[i] != nil && cc.codes != nil:
			any := false
			for code, ok := range dictOK[i] {
				if ok && cc.hasCode(uint32(code)) {
					any = true
					break
				}
			}
			if !any {
				return false
			}
		}
	}
	return true
}

// headUnit is one chunk of an in-memory head. Its rows are in arrival
// order, which is time order but for late events (the chunk knows whether
// it has any); it emits them in row order.
type headUnit struct {
	sc *shardScan
	p  *part
	ch *headChunk
	// done marks the predicates every row of the chunk passes
	// (chunkDecides; nil: none).
	done []bool
}

// cacheUnit names the chunk's rows for the predicate cache: they never
// change once visible, and a tail chunk that grows is another unit.
func (u *headUnit) cacheUnit() predUnit {
	if u.sc.req.NoIndex {
		return predUnit{} // an unassisted scan, as tests compare with
	}
	return predUnit{owner: cacheOwner(&u.p.hv.h.cacheID), part: u.ch.from, lo: u.ch.from, hi: u.ch.to}
}

func (u *headUnit) TimeRange() (int64, int64) { return u.ch.minTime, u.ch.maxTime }
func (u *headUnit) Rows() int                 { return u.ch.to - u.ch.from }
func (u *headUnit) Sorted() bool              { return true }

// selectRows returns the chunk's rows (head row numbers, ascending) that
// pass the time range and every predicate. With limit > 0 and an order
// only the limit first in that order are kept; in a chunk in time order
// they are found by evaluating windows from the wanted end.
func (u *headUnit) selectRows(ctx context.Context, limit int) ([]int32, error) {
	req, ch, hv := u.sc.req, u.ch, u.p.hv
	cr := headReader{hv}
	tsIdx := typedCols(u.p, "timestamp", segment.TypeTimestamp)[0].idx
	lo, hi := ch.from, ch.to
	needTime := req.TimeMin > ch.minTime || req.TimeMax < ch.maxTime
	if needTime && ch.timeSorted {
		var ts vec.Vector
		hv.readRange(tsIdx, &ts, lo, hi)
		a := sort.Search(hi-lo, func(i int) bool { return ts.Ints[i] >= req.TimeMin })
		z := sort.Search(hi-lo, func(i int) bool { return ts.Ints[i] > req.TimeMax })
		if a >= z {
			return nil, nil
		}
		lo, hi, needTime = lo+a, lo+z, false
	}
	if limit > 0 && !needTime && (req.Order == scan.Unordered || ch.timeSorted) {
		return u.windows(ctx, lo, hi, limit)
	}
	if limit > 0 && req.Order != scan.Unordered {
		return u.firstByTime(ctx, lo, hi, limit)
	}
	sel, err := u.sc.evalPreds(u.p, cr, u.cacheUnit(), u.done, lo, hi, nil)
	if err != nil || len(sel) == 0 || !needTime && (limit <= 0 || len(sel) <= limit) {
		return sel, err
	}
	var ts vec.Vector
	hv.readCol(tsIdx, &ts, lo, hi, sel)
	kept := sel[:0]
	for i, r := range sel {
		if t := ts.Ints[i]; t >= req.TimeMin && t <= req.TimeMax {
			kept = append(kept, r)
		}
	}
	if limit > 0 && len(kept) > limit {
		kept = kept[:limit] // Unordered: any limit rows
	}
	return kept, nil
}

// firstByTime returns the limit newest (Descending) or oldest
// (Ascending) rows of [lo, hi) in the time range that pass the
// predicates, for rows not in time order. Arrival order is nearly time
// order (late events are a few seconds old), so it evaluates windows from
// the wanted end and stops once no row left outside them can be newer
// (older) than the limit-th it has.
func (u *headUnit) firstByTime(ctx context.Context, lo, hi, limit int) ([]int32, error) {
	req, hv := u.sc.req, u.p.hv
	desc := req.Order == scan.Descending
	var tsv vec.Vector
	hv.readRange(typedCols(u.p, "timestamp", segment.TypeTimestamp)[0].idx, &tsv, lo, hi)
	ts := tsv.Ints // ts[r-lo] is row r's
	inRange := func(t int64) bool { return t >= req.TimeMin && t <= req.TimeMax }
	// better reports whether time x comes before y in the wanted order.
	better := func(x, y int64) bool {
		if desc {
			return x > y
		}
		return x < y
	}
	type rowTS struct {
		row int32
		ts  int64
	}
	var got []rowTS
	byTime := func(a, b rowTS) int {
		switch {
		case better(a.ts, b.ts):
			return -1
		case better(b.ts, a.ts):
			return 1
		}
		return 0
	}
	for a, z, w := lo, hi, max(2*limit, 64); a < z; w *= 2 {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		wa, wz := a, min(z, a+w)
		if desc {
			wa, wz = max(a, z-w), z
		}
		sel, err := u.sc.evalPreds(u.p, headReader{hv}, u.cacheUnit(), u.done, wa, wz, nil)
		if err != nil {
			return nil, err
		}
		for _, r := range sel {
			if t := ts[int(r)-lo]; inRange(t) {
				got = append(got, rowTS{r, t})
			}
		}
		if desc {
			z = wa
		} else {
			a = wz
		}
		if len(got) < limit || a >= z {
			continue
		}
		slices.SortStableFunc(got, byTime)
		got = got[:limit]
		// Rows left to evaluate can only matter if one of them is strictly
		// better than the limit-th kept (a tie may go either way).
		bound, rest := got[limit-1].ts, false
		for _, t := range ts[a-lo : z-lo] {
			if inRange(t) && better(t, bound) {
				rest = true
				break
			}
		}
		if !rest {
			break
		}
	}
	slices.SortStableFunc(got, byTime)
	got = got[:min(len(got), limit)]
	out := make([]int32, len(got))
	for i, g := range got {
		out[i] = g.row
	}
	slices.Sort(out)
	return out, nil
}

// windows evaluates the predicates over windows of [lo, hi) from the
// wanted end (the newest for Descending; rows are in time order), doubling
// them, until limit rows pass, and keeps those limit.
func (u *headUnit) windows(ctx context.Context, lo, hi, limit int) ([]int32, error) {
	desc := u.sc.req.Order == scan.Descending
	var got []int32
	for a, z, w := lo, hi, max(2*limit, 64); a < z && len(got) < limit; w *= 2 {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		wa, wz := a, min(z, a+w)
		if desc {
			wa, wz = max(a, z-w), z
		}
		sel, err := u.sc.evalPreds(u.p, headReader{u.p.hv}, u.cacheUnit(), u.done, wa, wz, nil)
		if err != nil {
			return nil, err
		}
		if desc {
			got = append(sel, got...)
			z = wa
		} else {
			got = append(got, sel...)
			a = wz
		}
	}
	return trimToLimit(got, limit, u.sc.req.Order), nil
}

func (u *headUnit) Read(ctx context.Context, emit func(*vec.Batch) error) error {
	sel, err := u.selectRows(ctx, u.sc.req.Limit)
	if err != nil || len(sel) == 0 {
		return err
	}
	return u.sc.emitRows(ctx, u.p, headReader{u.p.hv}, 0, sel, emit)
}

func (u *headUnit) Count(ctx context.Context) (int64, error) {
	if u.allDone() && u.sc.req.TimeMin <= u.ch.minTime && u.sc.req.TimeMax >= u.ch.maxTime {
		return int64(u.Rows()), nil
	}
	sel, err := u.selectRows(ctx, 0)
	return int64(len(sel)), err
}

// allDone reports whether every row of the chunk passes every predicate
// (none, or all decided by chunkDecides).
func (u *headUnit) allDone() bool {
	for i := range u.sc.preds {
		if u.done == nil || !u.done[i] {
			return false
		}
	}
	return true
}

// packedRuns calls fn for each run of consecutive values of string column
// ci over rows [from, to) that lie end to end in one slot of the head's
// packed bytes (see packedBytes): data is that slot, value i of the run is
// data[offs[i]:offs[i+1]] (offs rebased to the slot, one more than the
// run's values) and first is the run's first row, counted from from. It
// reports false, calling nothing, unless every row of the range has a
// value and the column is not dictionary-coded. data aliases the head:
// read only. The runs' offsets are built in local's array (reused: offs
// is valid only during fn), which it returns, grown, for the next call.
func (v *headView) packedRuns(ci, from, to int, local []uint32, fn func(data []byte, offs []uint32, first int)) ([]uint32, bool) {
	c := &v.cols[ci]
	n := to - from
	if c.typ != segment.TypeString || c.isDict() || n <= 0 || int(c.countBits(from, to)) != n {
		return local, false
	}
	k := v.rankAt(ci, from)
	if k+n >= len(c.offs) {
		return local, false
	}
	return packedRunsOf(c.slots, c.lastSlot, c.offs[k:k+n+1], local, fn), true
}

// packedRunsOf splits the values whose virtual offsets are voffs (value j
// between voffs[j] and voffs[j+1]) into runs lying end to end in one slot
// of slots (last: the slot past them) and calls fn for each (see
// packedRuns), building their offsets in local's array, which it returns.
func packedRunsOf(slots [][]byte, last []byte, voffs []uint32, local []uint32, fn func(data []byte, offs []uint32, first int)) []uint32 {
	n := len(voffs) - 1
	slot := func(i int) []byte {
		if i < len(slots) {
			return slots[i]
		}
		return last
	}
	// A run's offsets are at most all of them: one array serves every run.
	local = slices.Grow(local[:0], n+1)
	runSlot, runFirst := -1, 0
	// The run's slot spans virtual offsets [runBase, runBase+slotSize): a
	// value lying within it (most values) is the run's next one, at its
	// virtual offsets less runBase (values follow one another there).
	runBase, runEnd := uint64(1), uint64(0) // no run: nothing lies within
	flush := func(end int) {
		if runSlot >= 0 && end > runFirst {
			fn(slot(runSlot), local, runFirst)
		}
		local = local[:0]
	}
	for j := 0; j < n; j++ {
		start, end := voffs[j], voffs[j+1]
		if uint64(start) >= runBase && uint64(end) <= runEnd {
			local = append(local, uint32(uint64(end)-runBase))
			continue
		}
		if start == end {
			// An empty value: it lies anywhere, so it extends the run.
			if runSlot < 0 {
				runSlot, runFirst = int(start>>headSlotShift), j
				local = append(local, start&uint32(slotSize()-1))
			}
			local = append(local, local[len(local)-1])
			continue
		}
		s := uint64(start)
		if start>>headSlotShift != (end-1)>>headSlotShift {
			// It did not fit after its predecessor: it starts a slot.
			s = (s + uint64(slotSize()) - 1) &^ uint64(slotSize()-1)
		}
		i := int(s >> headSlotShift)
		ls := uint32(s & uint64(slotSize()-1))
		if i != runSlot || local[len(local)-1] != ls {
			flush(j)
			runSlot, runFirst = i, j
			local = append(local, ls)
			runBase = uint64(i) << headSlotShift
			runEnd = runBase + uint64(slotSize())
		}
		local = append(local, ls+uint32(uint64(end)-s))
	}
	flush(n)
	return local
}
