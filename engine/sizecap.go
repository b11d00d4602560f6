package engine

import (
	"cmp"
	"errors"
	"slices"
)

// Size caps bound the disk that sealed segments take, deleting the oldest
// segments first:
//
//   - A source's cap (Shard.SetMaxDiskBytes): while the shard's segments
//     take more bytes than it, its oldest segment is deleted.
//   - The global cap (Options.MaxDiskBytes): while all shards' segments
//     together take more, the oldest segment of any shard is deleted. So
//     the store keeps the newest events across all sources: a source whose
//     events are older than the others' loses them first, whatever its
//     volume, as if one retention fitted to the disk applied to all.
//
// Oldest is by event time: the segment whose newest event (its maximum
// timestamp) is the oldest goes first; ties go by oldest first event, then
// source id and segment id, so that a pass is deterministic. A cap never
// deletes a shard's newest segment (by the same order), so that every
// source keeps its latest events queryable: a cap smaller than one segment
// leaves one segment. Only sealed segments count and go: the write-ahead
// log and the head (events not yet written out) are bounded by the head
// limits, and never deleted; neither are files set aside in quarantine/.
//
// The caps run in the retention pass (Engine.ApplyRetention, every
// RetentionInterval), after retention, the sources' caps before the global
// one, supervised as the task size_cap. A shard whose compaction is
// running is left for the next pass: a compaction reads its inputs until
// it publishes its output, and deleting an input meanwhile would bring its
// events back in the output. Every segment deleted is logged at warn
// level and counted (deletions.go).

// globalCapRounds bounds how often one pass plans the global cap again
// when segments it chose were replaced by a compaction meanwhile.
const globalCapRounds = 3

// SetMaxDiskBytes caps the bytes of the shard's segments (0: no cap); the
// next retention pass deletes its oldest segments past it.
func (s *Shard) SetMaxDiskBytes(n int64) { s.maxDiskBytes.Store(max(n, 0)) }

// MaxDiskBytes returns the shard's size cap (0: none).
func (s *Shard) MaxDiskBytes() int64 { return s.maxDiskBytes.Load() }

// capSegment is a segment a cap may delete, with what the order needs.
type capSegment struct {
	shard      *Shard
	ref        *segRef
	bytes      int64
	minT, maxT int64
}

// olderFirst orders segments for the caps: oldest newest event first,
// then oldest first event, then shard id and segment id.
func olderFirst(a, b capSegment) int {
	if c := cmp.Compare(a.maxT, b.maxT); c != 0 {
		return c
	}
	if c := cmp.Compare(a.minT, b.minT); c != 0 {
		return c
	}
	if c := cmp.Compare(a.shard.id, b.shard.id); c != 0 {
		return c
	}
	return cmp.Compare(a.ref.id, b.ref.id)
}

// capCandidates returns the shard's segments a cap may delete, oldest
// first (every segment but the newest), and the bytes of all its
// segments.
func (s *Shard) capCandidates() ([]capSegment, int64) {
	s.mu.RLock()
	all := make([]capSegment, 0, len(s.segs))
	var total int64
	for _, sg := range s.segs {
		minT, maxT := sg.r.TimeRange()
		all = append(all, capSegment{shard: s, ref: sg, bytes: sg.r.Size(), minT: minT, maxT: maxT})
		total += sg.r.Size()
	}
	s.mu.RUnlock()
	if len(all) == 0 {
		return nil, 0
	}
	slices.SortFunc(all, olderFirst)
	return all[:len(all)-1], total
}

// ApplySizeCap deletes the shard's oldest segments while its segments
// take more bytes than its cap (SetMaxDiskBytes), never the newest, and
// returns how many it deleted. A shard whose compaction is running is
// left as it is (0, nil): the next pass comes back to it. A failure (or a
// panic, recovered) is retried by the background loop with backoff.
func (s *Shard) ApplySizeCap() (int, error) {
	if s.opts.ReadOnly {
		return 0, ErrReadOnly
	}
	// Skipped, not run: a busy shard's outcome (a failure of a former
	// pass, say) stays as it was.
	if !s.compactMu.TryLock() {
		return 0, nil // a compaction is reading segments: the next pass
	}
	defer s.compactMu.Unlock()
	var n int
	err := s.supervised(taskSizeCap, func() (err error) {
		n, err = s.applySizeCap()
		return err
	})
	return n, err
}

// applySizeCap applies the shard's cap; the caller holds compactMu.
func (s *Shard) applySizeCap() (int, error) {
	limit := s.maxDiskBytes.Load()
	if limit <= 0 {
		return 0, nil
	}
	cands, total := s.capCandidates()
	stored := total
	var victims []*segRef
	for _, c := range cands {
		if total <= limit {
			break
		}
		victims = append(victims, c.ref)
		total -= c.bytes
	}
	return s.deleteSegments(victims, DeleteSourceSizeCap, "source_cap_bytes", limit, "source_stored_bytes", stored)
}

// ApplyRetention runs the retention pass over every shard: each shard's
// retention (Shard.ApplyRetention), then each shard's size cap
// (Shard.ApplySizeCap), then the global cap (Options.MaxDiskBytes). A
// shard whose task is failing is skipped until its retry is due, as the
// background loop does. It returns how many segments were deleted or
// rewritten, and the failures (which supervision has logged, counted and
// will retry).
func (e *Engine) ApplyRetention() (int, error) {
	if e.opts.ReadOnly {
		return 0, ErrReadOnly
	}
	var n int
	var errs []error
	run := func(t backgroundTask, s *Shard, apply func() (int, error)) {
		if !s.taskDue(t) {
			return
		}
		m, err := apply()
		n += m
		if err != nil && !errors.Is(err, ErrClosed) {
			errs = append(errs, err)
		}
	}
	shards := e.Shards()
	for _, s := range shards {
		run(taskRetention, s, s.ApplyRetention)
	}
	for _, s := range shards {
		run(taskSizeCap, s, s.ApplySizeCap)
	}
	m, err := e.applyGlobalCap()
	n += m
	errs = append(errs, err)
	return n, errors.Join(errs...)
}

// applyGlobalCap deletes the oldest segments across shards while all
// segments take more than Options.MaxDiskBytes.
func (e *Engine) applyGlobalCap() (int, error) {
	limit := e.opts.MaxDiskBytes
	if limit <= 0 {
		return 0, nil
	}
	var n int
	var errs []error
	for range globalCapRounds {
		plan, stored := e.planGlobalCap(limit)
		replaced := false
		for _, s := range e.Shards() {
			victims := plan[s]
			if len(victims) == 0 || !s.taskDue(taskSizeCap) {
				continue
			}
			if !s.compactMu.TryLock() {
				continue // a compaction is reading segments: the next pass
			}
			var m int
			err := s.supervised(taskSizeCap, func() (err error) {
				m, err = s.deleteSegments(victims, DeleteGlobalSizeCap, "global_cap_bytes", limit, "global_stored_bytes", stored)
				return err
			})
			s.compactMu.Unlock()
			n += m
			if err != nil && !errors.Is(err, ErrClosed) {
				errs = append(errs, err)
			}
			// A chosen segment no longer there was replaced by a
			// compaction since the plan: plan again with its output.
			if err == nil && m < len(victims) {
				replaced = true
			}
		}
		if !replaced {
			break
		}
	}
	return n, errors.Join(errs...)
}

// planGlobalCap chooses the segments to delete, per shard, for all
// shards' segments to fit in limit, and returns them with the bytes
// stored now.
func (e *Engine) planGlobalCap(limit int64) (map[*Shard][]*segRef, int64) {
	var all []capSegment
	var total int64
	for _, s := range e.Shards() {
		cands, bytes := s.capCandidates()
		all = append(all, cands...)
		total += bytes
	}
	stored := total
	if total <= limit {
		return nil, stored
	}
	slices.SortFunc(all, olderFirst)
	plan := map[*Shard][]*segRef{}
	for _, c := range all {
		if total <= limit {
			break
		}
		plan[c.shard] = append(plan[c.shard], c.ref)
		total -= c.bytes
	}
	return plan, stored
}
