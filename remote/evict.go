package remote

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync/atomic"
	"time"

	"github.com/sediment/sediment/engine"
	"github.com/sediment/sediment/objstore"
)

// Eviction keeps an ingest node's local segment files within a bound: past
// it, the segments the store lists give up their local file
// (engine.Shard.EvictSegment) and are read through the cache from then on.
//
// Which stay local: the newest by event time. Queries mostly ask for
// recent events, a compaction's output of old events is not kept for
// being new, and the order does not depend on what queries happened to
// read (the cache, LRU, keeps what they read). Segments the store does not
// list yet are never evicted, whatever the bound: their local file is the
// only copy of acknowledged events. While the store is away they pile up
// past the bound, as they would without a store; --min-free-disk still
// guards the disk.
//
// A server splits --cache-size between this bound and the cache
// (cmd/sediment), so that local segments and cached chunks together stay
// within it.

// evictState is what StartEviction runs with and counts.
type evictState struct {
	done                            chan struct{} // closed when the loop ends (nil: never started)
	wake                            chan struct{}
	limit, localBytes               atomic.Int64
	evicted, evictedBytes, failures atomic.Int64
}

// DefaultEvictInterval is how often StartEviction checks the bound when
// nothing wakes it (each publication does).
const DefaultEvictInterval = 5 * time.Second

// StartEviction keeps the local segment files of eng's shards within
// limit bytes (see above), checking every interval (default
// DefaultEvictInterval) and after each publication. Close stops it.
func (r *Segments) StartEviction(eng *engine.Engine, limit int64, interval time.Duration) {
	if interval <= 0 {
		interval = DefaultEvictInterval
	}
	r.evict.limit.Store(limit)
	r.evict.done = make(chan struct{})
	go func() {
		defer close(r.evict.done)
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			if _, _, err := r.EvictOnce(r.ctx, eng); err != nil && r.ctx.Err() == nil {
				r.opts.Logger.Warn("remote: evicting local segments failed; retried at the next pass", "err", err)
			}
			select {
			case <-r.ctx.Done():
				return
			case <-t.C:
			case <-r.evict.wake:
			}
		}
	}()
}

// wakeEviction asks the eviction loop, if any, for a pass.
func (r *Segments) wakeEviction() {
	select {
	case r.evict.wake <- struct{}{}:
	default:
	}
}

// evictCandidate is a local segment the store lists.
type evictCandidate struct {
	sh  *engine.Shard
	seg engine.LocalSegment
}

// EvictOnce brings the local segment files of eng's shards within the
// bound StartEviction set, evicting the listed segments of the oldest
// events first, and returns what it evicted and freed. Segments the
// manifest does not list (or lists with another size) stay.
func (r *Segments) EvictOnce(ctx context.Context, eng *engine.Engine) (int, int64, error) {
	limit := r.evict.limit.Load()
	type shardSegs struct {
		sh   *engine.Shard
		segs []engine.LocalSegment
	}
	var all []shardSegs
	total := int64(0)
	for _, sh := range eng.Shards() {
		segs, bytes := sh.LocalSegments()
		total += bytes
		all = append(all, shardSegs{sh, segs})
	}
	r.evict.localBytes.Store(total)
	if limit <= 0 || total <= limit {
		return 0, 0, nil
	}
	var cands []evictCandidate
	var errs []error
	for _, s := range all {
		if len(s.segs) == 0 {
			continue
		}
		m, err := r.manifests.Read(ctx, s.sh.ID())
		if errors.Is(err, objstore.ErrNotExist) {
			continue // nothing listed yet
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("source %s: %w", s.sh.ID(), err))
			continue
		}
		for _, seg := range s.segs {
			if e := m.Find(objstore.SegmentName(r.opts.Node, seg.ID)); e != nil && e.Size == seg.Size {
				cands = append(cands, evictCandidate{s.sh, seg})
			}
		}
	}
	slices.SortFunc(cands, func(a, b evictCandidate) int {
		if c := cmp.Compare(a.seg.MaxTime, b.seg.MaxTime); c != 0 {
			return c
		}
		return cmp.Compare(a.seg.ID, b.seg.ID)
	})
	n, freed := 0, int64(0)
	for _, c := range cands {
		if total <= limit || ctx.Err() != nil {
			break
		}
		f, err := c.sh.EvictSegment(ctx, c.seg.ID)
		if errors.Is(err, engine.ErrNotEvictable) {
			continue // replaced or dropped meanwhile
		}
		if err != nil {
			r.evict.failures.Add(1)
			errs = append(errs, fmt.Errorf("source %s: %w", c.sh.ID(), err))
			if errors.Is(err, objstore.ErrUnavailable) {
				break // the store is away: the next pass tries again
			}
			continue
		}
		n++
		freed += f
		total -= f
		r.evict.evicted.Add(1)
		r.evict.evictedBytes.Add(f)
	}
	r.evict.localBytes.Store(total)
	if n > 0 {
		r.opts.Logger.Info("remote: local segment files evicted (read through the cache from now on)", "segments", n, "bytes", freed, "local_bytes", total, "limit", limit)
	}
	return n, freed, errors.Join(errs...)
}
