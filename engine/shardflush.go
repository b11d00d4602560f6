package engine

import (
	"context"
	"path/filepath"
	"slices"
	"time"
)

// flusher writes frozen heads to segments, and freezes heads that got
// old. A failed flush is retried when its backoff ends.
func (s *Shard) flusher() {
	defer s.wg.Done()
	runLoop(s.opts, "flusher "+s.id, s.stopping, s.flushLoop)
}

func (s *Shard) flushLoop() {
	t := time.NewTimer(time.Second)
	defer t.Stop()
	for {
		select {
		case <-s.flushKick:
		case <-t.C:
			s.mu.RLock()
			h := s.head
			s.mu.RUnlock()
			now := s.opts.Now()
			h.mu.RLock()
			old := h.rows > 0 && now.Sub(h.created) >= s.opts.HeadMaxAge
			idle := h.bytes >= s.opts.HeadIdleMinBytes && now.Sub(h.updated) >= s.opts.HeadIdleFlush
			h.mu.RUnlock()
			if old || idle {
				s.requestRotate()
			}
		case <-s.stopping:
			return
		}
		if s.taskDue(taskFlush) {
			s.supervised(taskFlush, s.flushFrozen)
		}
		// Wake at the next second, or sooner for a retry.
		next := time.Second
		if d, failing := s.taskRetryIn(taskFlush); failing {
			next = min(next, max(d, time.Millisecond))
		}
		if !t.Stop() {
			select {
			case <-t.C:
			default:
			}
		}
		t.Reset(next)
	}
}

// requestRotate asks the committer to freeze the head; it waits for it.
func (s *Shard) requestRotate() error {
	req := &appendReq{rotate: true, done: make(chan error, 1)}
	if err := s.enqueue(context.Background(), req); err != nil {
		return err
	}
	return <-req.done
}

// rotateIfNotEmpty freezes the head when it holds events, so that every
// event acknowledged so far is in a frozen head with its log file synced
// and closed.
func (s *Shard) rotateIfNotEmpty() error {
	s.mu.RLock()
	h := s.head
	s.mu.RUnlock()
	h.mu.RLock()
	rows := h.rows
	h.mu.RUnlock()
	if rows == 0 {
		return nil
	}
	return s.requestRotate()
}

// Flush freezes the head (if it holds events) and writes every frozen head
// to a segment, returning when they are durable.
func (s *Shard) Flush() error {
	if s.opts.ReadOnly {
		return ErrReadOnly
	}
	if s.walDamage != nil {
		return s.walDamage
	}
	if s.replayFailed != nil {
		return s.replayFailed
	}
	return s.supervised(taskFlush, func() error {
		if err := s.rotateIfNotEmpty(); err != nil {
			return err
		}
		return s.flushFrozen()
	})
}

// flushFrozen writes the frozen heads, oldest first.
func (s *Shard) flushFrozen() error {
	s.flushMu.Lock()
	defer s.flushMu.Unlock()
	for {
		s.mu.RLock()
		if len(s.frozen) == 0 {
			s.mu.RUnlock()
			return nil
		}
		h := s.frozen[0]
		s.mu.RUnlock()
		if err := s.flushHead(h); err != nil {
			return err
		}
	}
}

// flushHead writes one frozen head as a segment, publishes it, and removes
// the head and its WAL files.
func (s *Shard) flushHead(h *head) error {
	v := h.view()
	s.mu.Lock()
	id := s.nextSeg
	s.nextSeg++
	s.mu.Unlock()
	meta := segMeta{walLast: h.walLast, created: s.opts.Now().UnixMicro()}
	var ref *segRef
	if v.rows > 0 {
		var err error
		ref, err = s.writeFlushSegment(id, v, meta)
		if err != nil {
			// The head stays frozen and in the log; the flush is retried.
			return s.eng.noteNoSpace("writing a segment", err)
		}
	}
	s.mu.Lock()
	if ref != nil {
		s.segs = append(s.segs, ref)
		s.sortSegs()
	}
	s.frozen = slices.DeleteFunc(s.frozen, func(x *head) bool { return x == h })
	s.noteRemoteLocked(ref, nil)
	s.mu.Unlock()
	s.headParts.forget(h) // what query nodes were sent of it (headparts.go)
	// No snapshot can find h now, and the segment is written.
	s.eng.slots.recycle(h)
	s.deliverRemote()
	s.warmSegment(ref) // the predicate cache, in the background (predwarm.go)
	h.mu.RLock()
	s.eng.mem.total.Add(-int64(h.bytes))
	h.mu.RUnlock()
	s.eng.freed.release() // appends waiting for room (admission.go)
	s.stats.flushes.Add(1)
	for seq := h.walFirst; seq <= h.walLast; seq++ {
		p := filepath.Join(s.walDir, walName(seq))
		if s.opts.FS.Exists(p) {
			if err := s.opts.FS.Remove(p); err != nil {
				return err
			}
		}
	}
	return s.opts.FS.SyncDir(s.walDir)
}

// writeFlushSegment writes a frozen head's rows as segment id, holding
// one of the engine's flush slots (released however the write ends).
func (s *Shard) writeFlushSegment(id uint64, v *headView, meta segMeta) (*segRef, error) {
	s.eng.flushSlots <- struct{}{}
	defer func() { <-s.eng.flushSlots }()
	return s.writeSegment(id, newHeadSource(v, s.SortKey(), s.opts.BlockRows), meta, s.opts.ZstdLevel)
}
