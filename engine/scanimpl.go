package engine

import (
	"context"
	"errors"
	"fmt"
	iofs "io/fs"
	"sort"
	"strings"
	"time"

	"github.com/sediment/sediment/internal/vec"
	"github.com/sediment/sediment/objstore"
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
	// pass counts what a scan that may stop early reads, so that it stops
	// filling the page cache once it has read much.
	pass *passReads
	// memo keeps the pages the scan and its record reads decompress for a
	// few rows, for the query's later reads of those rows (nil when the
	// scan selects no record: see newScanMemo).
	memo *segment.UnitMemo
	// memoBytes is what memo took of scanMemoFree, given back by Close.
	memoBytes int64
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
	sn.shard.recentPreds.note(sc.preds, sn.shard.opts.Now()) // predwarm.go
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
	if !sc.once {
		sc.pass = newPassReads()
	}
	sc.memo, sc.memoBytes = newScanMemo(req)
	sc.noteExpiry(ctx)
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

// Close releases the pages the scan's memo holds.
func (sc *shardScan) Close() error {
	if sc.memo != nil {
		sc.memo.Release()
		sc.memo = nil
		scanMemoFree.Add(sc.memoBytes)
	}
	return nil
}

// clientError makes an error fit for the query's caller: damage and I/O
// errors name the source and files relative to its directory, never the
// server's paths. Others (cancellation, the executor's own) pass through.
func (sc *shardScan) clientError(err error) error {
	var de *DamageError
	var ce *segment.CorruptError
	var re *segment.ReadError
	var oe *objstore.OpError
	var pe *iofs.PathError
	switch {
	case err == nil, errors.As(err, &de):
		return err
	case errors.As(err, &re) && errors.As(err, &oe):
		// The rows read before it were emitted: the answer cannot go on
		// without the rest (readfail.go).
		return &PartialError{Source: sc.name, Cause: storeReadCause(re.Path, oe)}
	case errors.As(err, &ce):
		return &DamageError{Source: sc.name, File: ce.Path, Block: -1, Cause: causeText(err)}
	case errors.As(err, &pe):
		return fmt.Errorf("source %s: reading stored data: %s: %w", sc.name, pe.Op, pe.Err)
	}
	return err
}
