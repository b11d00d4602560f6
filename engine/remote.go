package engine

import (
	"context"
	"sync"

	"github.com/sediment/sediment/internal/vfs"
)

// Remote keeps copies of a shard's sealed segments elsewhere (object
// storage: see docs/scale.md; an adapter above the engine implements it).
// With Options.Remote nil the engine behaves exactly as without it.
//
// The engine tells it every change to the set of segments a shard serves,
// in the order the changes are published, and never waits for it.
type Remote interface {
	// SegmentsReplaced says that shard published added (nil: none) in
	// place of the segments removed (none: nothing removed), in one step
	// for queries: a flush adds a segment, a compaction or a retention
	// rewrite adds one replacing its inputs, retention drops segments.
	// The local file of added stays until added.Done is called (a segment
	// removed meanwhile is deleted then), so the remote may copy it at
	// leisure; Done must be called exactly once, copied or not.
	//
	// Calls for one shard come one at a time, in publishing order, with
	// none of the shard's locks held, from the goroutine that published
	// the change; they must return at once (queue the work) and must not
	// call into the engine.
	SegmentsReplaced(shard string, added *RemoteSegment, removed []uint64)
	// OpenSegment opens the remote copy of segment id of shard for
	// reading, as segment.Open reads a local file. It must fail unless
	// the remote lists that copy as the shard's segment: the engine
	// calls it to read an evicted segment (Shard.EvictSegment), and
	// deletes the local file only once it opened the copy. It may be
	// called from any goroutine, with none of the engine's locks held.
	OpenSegment(ctx context.Context, shard string, id uint64) (vfs.File, error)
}

// RemoteSegment is a segment the engine just published.
type RemoteSegment struct {
	// ID is the segment's id in its shard (its file is %016x.seg).
	ID uint64
	// Path is the local file, in Options.FS; Size its length.
	Path string
	Size int64
	// MinTime and MaxTime are the event times it covers (µs), Rows its
	// events.
	MinTime, MaxTime int64
	Rows             int
	// Done releases the local file (see Remote.SegmentsReplaced).
	Done func()
	// Remote: the segment's local file was evicted (Path is empty): the
	// remote's copy is the only one. Only Shard.RemoteSegments returns
	// such segments.
	Remote bool
}

// remoteQueue holds a shard's changes for Options.Remote between the
// moment they are published (under Shard.mu, so that the queue's order is
// the publishing order and the added segment is held before anything can
// remove it) and their delivery (outside it).
type remoteQueue struct {
	pending []remoteNote // guarded by Shard.mu
	deliver sync.Mutex   // one delivery at a time, in order
}

type remoteNote struct {
	added   *RemoteSegment
	removed []uint64
}

// noteRemoteLocked queues a published change for Options.Remote, if any.
// The caller holds s.mu for writing and calls deliverRemote after
// unlocking it.
func (s *Shard) noteRemoteLocked(added *segRef, removed []*segRef) {
	if s.opts.Remote == nil || (added == nil && len(removed) == 0) {
		return
	}
	n := remoteNote{removed: make([]uint64, len(removed))}
	for i, r := range removed {
		n.removed[i] = r.id
	}
	if added != nil {
		added.acquire() // the remote's, until Done
		minT, maxT := added.r.TimeRange()
		var once sync.Once
		n.added = &RemoteSegment{ID: added.id, Path: added.path, Size: added.r.Size(), MinTime: minT, MaxTime: maxT,
			Rows: added.r.Rows(), Done: func() { once.Do(added.release) }}
	}
	s.remote.pending = append(s.remote.pending, n)
}

// deliverRemote hands the queued changes to Options.Remote in order.
func (s *Shard) deliverRemote() {
	rem := s.opts.Remote
	if rem == nil {
		return
	}
	s.remote.deliver.Lock()
	defer s.remote.deliver.Unlock()
	s.mu.Lock()
	notes := s.remote.pending
	s.remote.pending = nil
	s.mu.Unlock()
	for _, n := range notes {
		rem.SegmentsReplaced(s.id, n.added, n.removed)
	}
}
