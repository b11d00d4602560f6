package engine

import (
	"runtime"
	"sync"
	"time"

	"github.com/sediment/sediment/sql/scan"
)

// Warming the predicate cache for new segments. The predicate cache
// (predcache.go) keeps answers per segment block and head chunk, so every
// flush (the newest rows in a new segment) and every compaction (older
// rows rewritten) leaves rows whose answers it has never seen: the next
// repeat of a Studio chart's regexp count would scan them in full. So a
// shard remembers the text predicates its queries used recently
// (recentPreds, noted when a scan opens), and when it publishes a segment
// the engine's warmer evaluates those predicates on the segment's blocks
// in the background, storing the answers as a query would.
//
// The cost is bounded: one worker per engine, a bounded queue (a segment
// that does not fit is skipped and counted), only predicates used within
// warmWindow (at most warmMaxPreds per shard; one not used again drops
// out) and whose answers the cache holds for some unit (those a
// dictionary or the index decides are not evaluated row by row by
// queries either), none while the cache is off, and a segment removed meanwhile
// (compacted, deleted) is left. Flush and compaction only queue the
// segment; the worker reads without filling the page cache and yields
// between blocks. Rows are evaluated again rather than carried over from
// the head chunks' answers: a flush reorders rows by the sort key and
// cuts blocks differently from head chunks, and a compaction's inputs
// may not have answers either.

const (
	// warmWindow: a predicate not used by a query for this long is no
	// longer warmed.
	warmWindow = 5 * time.Minute
	// warmMaxPreds bounds the predicates a shard remembers; the least
	// recently used leaves first.
	warmMaxPreds = 8
	// warmQueueLen bounds the segments waiting to be warmed.
	warmQueueLen = 64
)

// recentPreds is the text predicates a shard's queries used recently.
type recentPreds struct {
	mu sync.Mutex
	m  map[string]*recentPred // by cache key
}

type recentPred struct {
	p    scan.Predicate
	last time.Time
}

// note records that a scan opened at now uses preds.
func (r *recentPreds) note(preds []*pred, now time.Time) {
	for _, p := range preds {
		if p.cacheKey == "" {
			continue
		}
		r.mu.Lock()
		if e, ok := r.m[p.cacheKey]; ok {
			e.last = now
		} else {
			if r.m == nil {
				r.m = map[string]*recentPred{}
			}
			if len(r.m) >= warmMaxPreds {
				r.dropOldestLocked()
			}
			r.m[p.cacheKey] = &recentPred{p: p.Predicate, last: now}
		}
		r.mu.Unlock()
	}
}

func (r *recentPreds) dropOldestLocked() {
	var oldest string
	var at time.Time
	for k, e := range r.m {
		if oldest == "" || e.last.Before(at) {
			oldest, at = k, e.last
		}
	}
	delete(r.m, oldest)
}

// current returns the predicates used within warmWindow of now, forgetting
// the others.
func (r *recentPreds) current(now time.Time) []scan.Predicate {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []scan.Predicate
	for k, e := range r.m {
		if now.Sub(e.last) > warmWindow {
			delete(r.m, k)
			continue
		}
		out = append(out, e.p)
	}
	return out
}

// warmJob is a segment a shard published.
type warmJob struct {
	s   *Shard
	ref *segRef // not referenced: taken with tryAcquire when its turn comes
}

// predWarmer is an engine's worker warming the predicate cache for new
// segments.
type predWarmer struct {
	jobs chan warmJob
	stop <-chan struct{}
	// pending counts the jobs queued and not finished (tests wait on it).
	pending sync.WaitGroup
}

func newPredWarmer(stop <-chan struct{}) *predWarmer {
	return &predWarmer{jobs: make(chan warmJob, warmQueueLen), stop: stop}
}

// warmSegment queues a segment the shard has just published (nil: none)
// for warming, when its queries used text predicates recently. It never
// blocks: with the queue full the segment is skipped.
func (s *Shard) warmSegment(ref *segRef) {
	w := s.eng.warm
	if ref == nil || w == nil || w.stopped() || !predCacheOn() || len(s.recentPreds.current(s.opts.Now())) == 0 {
		return
	}
	w.pending.Add(1)
	select {
	case w.jobs <- warmJob{s: s, ref: ref}:
	default:
		w.pending.Done()
		predCache.warmSkipped.Add(1)
	}
}

// run is the worker's loop, until the engine stops.
func (w *predWarmer) run() {
	for {
		select {
		case <-w.stop:
			w.drain()
			return
		case j := <-w.jobs:
			w.warm(j)
			w.pending.Done()
		}
	}
}

// drain forgets the queued jobs (they hold no references).
func (w *predWarmer) drain() {
	for {
		select {
		case <-w.jobs:
			w.pending.Done()
		default:
			return
		}
	}
}

// stopped reports whether the engine is closing.
func (w *predWarmer) stopped() bool {
	select {
	case <-w.stop:
		return true
	default:
		return false
	}
}

// warm evaluates the shard's recent predicates on every block of the
// job's segment that the cache has no answer for.
func (w *predWarmer) warm(j warmJob) {
	defer func() {
		if r := recover(); r != nil {
			predCache.warmPanics.Add(1)
			j.s.opts.Logger.Error("warming the predicate cache panicked", "shard", j.s.id, "segment", j.ref.id, "panic", r)
		}
	}()
	ref := j.ref
	if !ref.tryAcquire() {
		predCache.warmSkipped.Add(1) // removed, its last reference gone
		return
	}
	defer ref.release()
	if ref.remote != nil {
		// Evicted meanwhile: its blocks would be fetched from object
		// storage; a query that wants them pays for that itself.
		predCache.warmSkipped.Add(1)
		return
	}
	var preds []*pred
	for _, p := range j.s.recentPreds.current(j.s.opts.Now()) {
		// Only predicates whose answers queries store: one a dictionary or
		// the index decides is never evaluated row by row.
		if cp, err := compilePred(p); err == nil && cp.cacheKey != "" && predCached(cp.cacheKey) {
			preds = append(preds, cp)
		}
	}
	if len(preds) == 0 {
		return
	}
	ref.colsOnce.Do(func() { ref.byPath = indexColumns(segColumns(ref)) })
	pt := &part{seg: ref, byPath: ref.byPath}
	// NoIndex: the block's every row is evaluated (no page pruning), so
	// that the answer is the block's; queries narrow it as they read it.
	req := &scan.Request{NoIndex: true}
	owner := cacheOwner(&ref.cacheID)
	for b := range ref.r.NumBlocks() {
		for _, p := range preds {
			if w.stopped() || ref.removed.Load() || !predCacheOn() {
				predCache.warmSkipped.Add(1)
				return
			}
			if _, bad := ref.damaged(b); bad {
				continue // set aside: queries do not read it
			}
			rows := ref.r.Block(b).Rows
			unit := predUnit{owner: owner, part: b, lo: 0, hi: rows}
			if hasCachedRows(unit, p) {
				continue
			}
			sc := &shardScan{req: req, preds: []*pred{p}, once: true}
			br := &blockReader{r: ref.r, b: b, once: true}
			if _, err := sc.evalPreds(pt, br, unit, nil, 0, rows, nil); err != nil {
				predCache.warmSkipped.Add(1) // a damaged or unreadable block: queries say so
				continue
			}
			predCache.warmedBlocks.Add(1)
			runtime.Gosched() // queries first
		}
	}
}

// tryAcquire takes a reference to the segment unless its last one has
// gone (the file closed).
func (s *segRef) tryAcquire() bool {
	for {
		n := s.refs.Load()
		if n <= 0 {
			return false
		}
		if s.refs.CompareAndSwap(n, n+1) {
			return true
		}
	}
}
