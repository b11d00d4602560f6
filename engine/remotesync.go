package engine

import (
	"cmp"
	"io"
	"slices"
	"sync"

	"github.com/sediment/sediment/event"
	"github.com/sediment/sediment/internal/vec"
)

// RemoteSegments returns the segments the shard serves now, each as a
// RemoteSegment held (its local file kept) until its Done is called, in
// id order. A node that keeps its segments in object storage compares
// them with its manifest entries at startup, publishing what a crash or
// an outage left unpublished and delisting what the shard no longer has
// (see remote.Segments.Reconcile). Calls to Options.Remote that follow
// describe changes after this picture.
func (s *Shard) RemoteSegments() []*RemoteSegment {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]*RemoteSegment, 0, len(s.segs)+len(s.remotePending))
	for _, sg := range s.segs {
		minT, maxT := sg.r.TimeRange()
		if sg.remote != nil {
			out = append(out, &RemoteSegment{ID: sg.id, Size: sg.r.Size(), MinTime: minT, MaxTime: maxT,
				Rows: sg.r.Rows(), Done: func() {}, Remote: true})
			continue
		}
		sg.acquire()
		var once sync.Once
		out = append(out, &RemoteSegment{ID: sg.id, Path: sg.path, Size: sg.r.Size(), MinTime: minT, MaxTime: maxT,
			Rows: sg.r.Rows(), Done: func() { once.Do(sg.release) }})
	}
	for _, p := range s.remotePending {
		out = append(out, &RemoteSegment{ID: p.id, Size: p.stub.size, MinTime: p.stub.minTime, MaxTime: p.stub.maxTime,
			Rows: int(p.stub.rows), Done: func() {}, Remote: true})
	}
	slices.SortFunc(out, func(a, b *RemoteSegment) int { return cmp.Compare(a.ID, b.ID) })
	return out
}

// SnapshotSegment is one of the shard's own segments in a snapshot; its
// file stays until the snapshot is released.
type SnapshotSegment struct {
	ID   uint64
	Path string // in Options.FS; "" for an evicted segment
	Size int64
	// Evicted is the file of an evicted segment (read through
	// Options.Remote), nil for a local one.
	Evicted io.ReaderAt
}

// OwnSegments lists the snapshot's segments that are the shard's own
// (not External ones), in id order. An ingest node sends a query node
// those its manifest does not list yet (remote.WriteUnsealed).
func (sn *Snapshot) OwnSegments() []SnapshotSegment {
	var out []SnapshotSegment
	for _, sg := range sn.segs {
		switch {
		case sg.remote != nil:
			out = append(out, SnapshotSegment{ID: sg.id, Size: sg.r.Size(), Evicted: sg.remote.file})
		case sg.extRelease == nil:
			out = append(out, SnapshotSegment{ID: sg.id, Path: sg.path, Size: sg.r.Size()})
		}
	}
	slices.SortFunc(out, func(a, b SnapshotSegment) int { return cmp.Compare(a.ID, b.ID) })
	return out
}

// ForEachHeadEvent calls fn for every event of the snapshot's heads (the
// events not yet in a segment), as ForEachEvent does for all of them.
func (sn *Snapshot) ForEachHeadEvent(fn func(e *event.Event) error) error {
	for _, hv := range sn.heads {
		cols := headColumns(hv)
		vecs := make([]vec.Vector, len(cols))
		for i := range cols {
			hv.readCol(i, &vecs[i], 0, hv.rows, nil)
		}
		err := emitEvents(cols, vecs, hv.rows, func(e *event.Event) error {
			if sn.cutoff != noCutoff && e.Timestamp < sn.cutoff {
				return nil
			}
			return fn(e)
		})
		if err != nil {
			return err
		}
	}
	return nil
}
