package engine

import (
	"context"
	"math"
	"time"

	"github.com/sediment/sediment/internal/vec"
	"github.com/sediment/sediment/segment"
	"github.com/sediment/sediment/sql/scan"
)

// Rows older than a shard's retention cutoff may stay stored for a while
// (until retention deletes or rewrites their segment, or their head is
// flushed), but nothing shows them: scans start at the cutoff, the
// snapshot's part list leaves out parts wholly past it, the schema lists
// only the columns of blocks (segments) and rows (heads) still within
// retention, and Info counts and bounds only those rows (ExpiredRows says
// how many more are stored). Subscribers (tails) never receive events
// past it, and a query's scan.Validity learns when its answer would show
// one (noteExpiry), for caches. A block that straddles the cutoff counts whole for the schema:
// a column present only in its expired rows is still listed until
// retention rewrites its segment.

// RetentionCutoff returns the oldest event time (unix µs) the shard shows
// now: events before it are past retention. math.MinInt64 when the shard
// keeps everything.
func (s *Shard) RetentionCutoff() int64 { return s.retentionCutoff() }

// liveColumns returns, for each column of p (by index), whether a row at
// or after cutoff may hold a value in it; nil when every column may (p
// holds no expired row).
func (p *part) liveColumns(cutoff int64) []bool {
	if minT, _ := p.timeRange(); minT >= cutoff {
		return nil
	}
	if p.seg != nil {
		r := p.seg.r
		live := make([]bool, len(r.Columns()))
		for b := 0; b < r.NumBlocks(); b++ {
			if r.Block(b).MaxTime < cutoff {
				continue
			}
			for c := range live {
				if ci, ok := r.Chunk(b, c); ok && ci.Present > 0 {
					live[c] = true
				}
			}
		}
		return live
	}
	hv := p.hv
	ts := hv.timestamps()
	liveRows := make([]uint64, (hv.rows+63)/64)
	for i, t := range ts {
		if t >= cutoff {
			liveRows[i>>6] |= 1 << (uint(i) & 63)
		}
	}
	live := make([]bool, len(hv.cols))
	for c := range hv.cols {
		for w, lw := range liveRows {
			if lw&hv.cols[c].word(w) != 0 {
				live[c] = true
				break
			}
		}
	}
	return live
}

// timestamps returns the view's event times, row by row, without a copy:
// every row has a timestamp (headAdder.Begin), so the column's values are
// one per row, and those below the view's row count never change.
func (hv *headView) timestamps() []int64 {
	for i := range hv.cols {
		if c := &hv.cols[i]; c.path == "timestamp" && c.typ == segment.TypeTimestamp && len(c.ints) >= hv.rows {
			return c.ints[:hv.rows]
		}
	}
	return nil
}

// liveRows is what liveRows counted.
type liveRows struct {
	segRows, headRows, expired int
	minTime, maxTime           int64
	ok                         bool
}

func (lr *liveRows) note(lo, hi int64) {
	if !lr.ok || lo < lr.minTime {
		lr.minTime = lo
	}
	if !lr.ok || hi > lr.maxTime {
		lr.maxTime = hi
	}
	lr.ok = true
}

// noteTimes counts the times at or after cutoff and bounds them, returning
// how many there were.
func (lr *liveRows) noteTimes(ts []int64, cutoff int64) int {
	n := 0
	lo, hi := int64(math.MaxInt64), int64(math.MinInt64)
	for _, t := range ts {
		if t >= cutoff {
			n++
			lo, hi = min(lo, t), max(hi, t)
		}
	}
	if n > 0 {
		lr.note(lo, hi)
	}
	return n
}

// liveRows counts the snapshot's rows within retention, in segments and in
// heads, and those past it still stored, and bounds the times of the
// former (ok false: none). Blocks and heads that straddle the cutoff have
// their timestamps read.
func (sn *Snapshot) liveRows() liveRows {
	var lr liveRows
	cutoff := sn.cutoff
	for _, sg := range sn.segs {
		r := sg.r
		minT, maxT := r.TimeRange()
		switch {
		case maxT < cutoff:
			lr.expired += r.Rows()
			continue
		case minT >= cutoff:
			lr.segRows += r.Rows()
			lr.note(minT, maxT)
			continue
		}
		tsCol := r.Column("timestamp", segment.TypeTimestamp)
		var v vec.Vector
		for b := 0; b < r.NumBlocks(); b++ {
			bi := r.Block(b)
			switch {
			case bi.MaxTime < cutoff:
				lr.expired += bi.Rows
			case bi.MinTime >= cutoff:
				lr.segRows += bi.Rows
				lr.note(bi.MinTime, bi.MaxTime)
			default:
				if err := r.ReadColumn(b, tsCol, 0, bi.Rows, &v); err != nil {
					// Damaged: queries say so; here it counts as within
					// retention, its times bounded by the cutoff.
					lr.segRows += bi.Rows
					lr.note(max(bi.MinTime, cutoff), bi.MaxTime)
					continue
				}
				n := lr.noteTimes(v.Ints[:bi.Rows], cutoff)
				lr.segRows += n
				lr.expired += bi.Rows - n
			}
		}
	}
	for _, hv := range sn.heads {
		switch {
		case hv.rows == 0:
		case hv.maxTime < cutoff:
			lr.expired += hv.rows
		case hv.minTime >= cutoff:
			lr.headRows += hv.rows
			lr.note(hv.minTime, hv.maxTime)
		default:
			n := lr.noteTimes(hv.timestamps(), cutoff)
			lr.headRows += n
			lr.expired += hv.rows - n
		}
	}
	return lr
}

// noteExpiry tells the query's scan.Validity (if any) when the oldest event
// the scan may return passes the retention cutoff: an answer cached past
// that moment would show it. The oldest is bounded below by the scan's
// start and its units' first times.
func (sc *shardScan) noteExpiry(ctx context.Context) {
	v := scan.ValidityFrom(ctx)
	days := sc.sn.shard.retentionDays.Load()
	if v == nil || days <= 0 || len(sc.units) == 0 {
		return
	}
	oldest := int64(math.MaxInt64)
	for _, u := range sc.units {
		minT, _ := u.TimeRange()
		oldest = min(oldest, minT)
	}
	oldest = max(oldest, sc.req.TimeMin, sc.sn.cutoff)
	v.Expires(oldest + days*int64(24*time.Hour/time.Microsecond))
}
