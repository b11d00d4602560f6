package engine

import (
	"context"
	"errors"
	"fmt"

	"github.com/sediment/sediment/objstore"
	"github.com/sediment/sediment/segment"
	"github.com/sediment/sediment/sql/scan"
)

// Read failures are not damage. A segment whose bytes could not be read
// (segment.ErrRead: a disk error, an object store that did not answer) is
// never set aside or recorded as damaged: the same read may work a moment
// later. What a query sees depends on where the bytes live:
//
//   - in the object store (a query node's segments, read through the
//     cache): the answer goes on without the unit, with a warning saying
//     the store could not be read, or fails with a PartialError when the
//     query has no place for warnings: the store being down is expected
//     and passes;
//   - on local disk: the query fails with an error naming the source, as
//     any other local I/O error does.

// readLoss reports whether err, met reading block b of sg (-1: the whole
// segment), is a failure to get sg's bytes from the object store rather
// than damage or a local error, and the unit of the answer it costs. Every
// failure reading an evicted segment is the store's (remoteseg.go); for
// other segments (a query node's, read through the cache) the error says
// so. A cancelled query has lost nothing.
func readLoss(ctx context.Context, sg *segRef, b int, err error) (lostUnit, bool) {
	if err == nil || ctx.Err() != nil {
		return lostUnit{}, false
	}
	if sg.remote != nil {
		return sg.remoteLoss(b, err), true
	}
	return storeReadLoss(sg, b, err)
}

// readFailed reports lu, a read of a unit the store could not serve: a
// warning when the query collects them, else a PartialError. partial says
// some of the unit's rows were read before the failure.
func (sc *shardScan) readFailed(ctx context.Context, lu lostUnit, partial bool) error {
	if w := scan.WarningsFrom(ctx); w != nil {
		w.Add(lu.warning(sc.name, partial))
		return nil
	}
	return &PartialError{Source: sc.name, Cause: lu.cause}
}

// storeReadLoss reports whether err is a failure to read sg's bytes from
// the object store and, if so, the unit of the answer it costs: block b of
// sg, or the whole segment when b < 0.
func storeReadLoss(sg *segRef, b int, err error) (lostUnit, bool) {
	var oe *objstore.OpError
	if !errors.Is(err, segment.ErrRead) || errors.Is(err, segment.ErrCorrupt) || !errors.As(err, &oe) {
		return lostUnit{}, false
	}
	u := lostUnit{seg: sg.id, kind: lossRemote, block: max(b, 0), rows: -1, cause: storeReadCause(sg.path, oe)}
	if b >= 0 {
		bi := sg.r.Block(b)
		u.rows, u.minTime, u.maxTime = int64(bi.Rows), bi.MinTime, bi.MaxTime
	} else {
		u.rows = int64(sg.r.Rows())
		u.minTime, u.maxTime = sg.r.TimeRange()
	}
	u.timeKnown = true
	return u, true
}

// storeReadCause is the sentence a client reads: it names the segment and
// says whether the store is unreachable, never a server path. It is the
// same for every block of the segment, so that an answer lists it once.
func storeReadCause(name string, oe *objstore.OpError) string {
	if errors.Is(oe, objstore.ErrUnavailable) {
		return fmt.Sprintf("segment %s could not be read: the object store is unreachable (%v); its events are not in this answer", name, oe.Err)
	}
	return fmt.Sprintf("segment %s could not be read from the object store (%v); its events are not in this answer", name, oe)
}

// externalReadGap is the warning for an external segment that could not be
// opened for a snapshot.
func externalReadGap(name string, err error) string {
	var oe *objstore.OpError
	if errors.Is(err, segment.ErrRead) && errors.As(err, &oe) {
		return storeReadCause(name, oe)
	}
	return fmt.Sprintf("segment %s could not be read (%v)", name, err)
}
