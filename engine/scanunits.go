package engine

import (
	"context"
	"errors"
	"path/filepath"
	"sort"

	"github.com/RoaringBitmap/roaring/v2"

	"github.com/sediment/sediment/internal/vec"
	"github.com/sediment/sediment/segment"
	"github.com/sediment/sediment/sql/scan"
)

// segUnit is one block of a segment.
type segUnit struct {
	sc    *shardScan
	p     *part
	b     int
	bi    segment.BlockInfo
	cand  *roaring.Bitmap
	exact []bool
}

// cacheUnit names the block's rows for the predicate cache.
func (u *segUnit) cacheUnit() predUnit {
	if u.sc.req.NoIndex {
		return predUnit{} // an unassisted scan, as tests compare with
	}
	return predUnit{owner: cacheOwner(&u.p.seg.cacheID), part: u.b, lo: 0, hi: u.bi.Rows}
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
	br := &blockReader{r: u.p.seg.r, b: u.b, once: u.sc.once, pass: u.sc.pass, memo: u.sc.memo}
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
		sel, err := u.sc.evalPreds(u.p, br, u.cacheUnit(), u.exact, lo, hi, base)
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
		sel, err := u.sc.evalPreds(u.p, br, u.cacheUnit(), u.exact, wa, wz, wbase)
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
// that names the source and the file relative to its directory. A failed
// read from the object store sets nothing aside: the answer goes on
// without the block, with a warning, or fails with a PartialError. Other
// errors pass through.
func (u *segUnit) damaged(ctx context.Context, err error, partial bool) error {
	if lu, ok := readLoss(ctx, u.p.seg, u.b, err); ok {
		// Not damage: nothing is set aside (readfail.go).
		return u.sc.readFailed(ctx, lu, partial)
	}
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
	case lossWAL, lossReplay:
		return &DamageError{Source: l.sc.name, File: "its write-ahead log", Block: -1, Cause: l.u.cause}
	case lossRemote:
		return &PartialError{Source: l.sc.name, Cause: l.u.cause}
	}
	return &DamageError{Source: l.sc.name, File: filepath.Join("segments", segName(l.u.seg)), Block: -1, Cause: l.u.cause}
}
