package engine

import (
	"cmp"
	"slices"
	"sync"
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
	out := make([]*RemoteSegment, 0, len(s.segs))
	for _, sg := range s.segs {
		sg.acquire()
		minT, maxT := sg.r.TimeRange()
		var once sync.Once
		out = append(out, &RemoteSegment{ID: sg.id, Path: sg.path, Size: sg.r.Size(), MinTime: minT, MaxTime: maxT,
			Rows: sg.r.Rows(), Done: func() { once.Do(sg.release) }})
	}
	slices.SortFunc(out, func(a, b *RemoteSegment) int { return cmp.Compare(a.ID, b.ID) })
	return out
}
