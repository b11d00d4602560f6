package engine

import (
	"slices"
	"sync"

	"github.com/sediment/sediment/event"
	"github.com/sediment/sediment/internal/vec"
	"github.com/sediment/sediment/segment"
)

// Snapshot is a consistent, read-only picture of a shard: the segments and
// heads at one moment. Segments it holds are not deleted until it is
// released. A flush publishes its segment and drops its frozen head in one
// step, so every event is in exactly one part of a snapshot.
//
// Events older than the shard's retention cutoff when the snapshot was
// taken are not part of it, even while they are still stored (a segment
// or head that also holds newer events): scans start at the cutoff.
type Snapshot struct {
	shard  *Shard
	segs   []*segRef
	heads  []*headView
	cutoff int64 // oldest event time seen (noCutoff: all)
	// lost is the data set aside for good at the moment of the snapshot.
	lost []lostUnit
	// walLost is the part of a damaged write-ahead log replay could not read.
	walLost []lostUnit
	once    sync.Once
	snapshotState
}

// Snapshot takes a snapshot; call Release when done. With
// Options.External it includes the external parts (external.go).
func (s *Shard) Snapshot() *Snapshot {
	sn := s.ownSnapshot()
	if s.opts.External != nil {
		sn.addExternal(s)
	}
	return sn
}

// ownSnapshot is a snapshot of the shard's own segments and heads only
// (checks and statistics, which must not reach out to other nodes).
func (s *Shard) ownSnapshot() *Snapshot {
	s.mu.RLock()
	defer s.mu.RUnlock()
	sn := &Snapshot{shard: s, segs: make([]*segRef, len(s.segs)), cutoff: s.retentionCutoff(), lost: s.lost, walLost: s.walLost}
	copy(sn.segs, s.segs)
	if len(s.remotePending) > 0 {
		sn.walLost = append(slices.Clip(sn.walLost), s.pendingUnitsLocked()...)
	}
	for _, sg := range sn.segs {
		sg.acquire()
	}
	for _, h := range append(s.frozen[:len(s.frozen):len(s.frozen)], s.head) {
		h.viewed.Store(true) // never recycled (headslots.go)
		hv := h.view()
		hv.chunkSize = s.opts.HeadChunkRows
		sn.heads = append(sn.heads, hv)
	}
	return sn
}

// Release lets the snapshot's segments go.
func (sn *Snapshot) Release() {
	sn.once.Do(func() {
		for _, sg := range sn.segs {
			sg.release()
		}
	})
}

// Rows returns the number of events stored in the snapshot's parts,
// counting expired events not yet removed (a cheap upper bound; a scan
// counts exactly).
func (sn *Snapshot) Rows() int {
	n := 0
	for _, sg := range sn.segs {
		n += sg.r.Rows()
	}
	for _, h := range sn.heads {
		n += h.rows
	}
	return n
}

// colRef is one physical column of a part.
type colRef struct {
	path string
	typ  segment.ColType
	idx  int // index in the part's column list
}

// partColumns lists the columns of segment sg or head view hv.
func segColumns(sg *segRef) []colRef {
	cols := sg.r.Columns()
	out := make([]colRef, len(cols))
	for i, c := range cols {
		out[i] = colRef{path: c.Path, typ: c.Type, idx: i}
	}
	return out
}

func headColumns(hv *headView) []colRef {
	out := make([]colRef, len(hv.cols))
	for i := range hv.cols {
		out[i] = colRef{path: hv.cols[i].path, typ: hv.cols[i].typ, idx: i}
	}
	return out
}

// ForEachEvent calls fn with every event of the snapshot: segments by
// their first event's time, each block after block (in time order, or by
// sort key then time), then the heads in arrival order. The event is valid
// only during the call.
func (sn *Snapshot) ForEachEvent(fn func(e *event.Event) error) error {
	if sn.cutoff != noCutoff {
		all := fn
		fn = func(e *event.Event) error {
			if e.Timestamp < sn.cutoff {
				return nil
			}
			return all(e)
		}
	}
	for _, sg := range sn.segs {
		if _, maxT := sg.r.TimeRange(); maxT < sn.cutoff {
			continue
		}
		cols := segColumns(sg)
		vecs := make([]vec.Vector, len(cols))
		for b := 0; b < sg.r.NumBlocks(); b++ {
			bi := sg.r.Block(b)
			if bi.MaxTime < sn.cutoff {
				continue
			}
			for i, c := range cols {
				if err := sg.r.ReadColumn(b, c.idx, 0, bi.Rows, &vecs[i]); err != nil {
					return err
				}
			}
			if err := emitEvents(cols, vecs, bi.Rows, fn); err != nil {
				return err
			}
		}
	}
	for _, hv := range sn.heads {
		cols := headColumns(hv)
		vecs := make([]vec.Vector, len(cols))
		for i := range cols {
			hv.readCol(i, &vecs[i], 0, hv.rows, nil)
		}
		if err := emitEvents(cols, vecs, hv.rows, fn); err != nil {
			return err
		}
	}
	return nil
}

func emitEvents(cols []colRef, vecs []vec.Vector, rows int, fn func(e *event.Event) error) error {
	b := newRecordBuilder(cols, vecs, "")
	for r := 0; r < rows; r++ {
		var e event.Event
		for i, c := range cols {
			v := &vecs[i]
			if v.IsNull(r) {
				continue
			}
			switch {
			case c.path == "timestamp" && c.typ == segment.TypeTimestamp:
				e.Timestamp = v.Ints[r]
			case c.path == "id" && c.typ == segment.TypeString:
				e.ID = v.StringAt(r)
			case c.path == "event_message" && c.typ == segment.TypeString:
				e.Message, e.HasMessage = v.StringAt(r), true
			}
		}
		fields, err := b.build(r)
		if err != nil {
			return err
		}
		e.Fields = fields
		if err := fn(&e); err != nil {
			return err
		}
	}
	return nil
}
