package engine

import (
	"context"
	"fmt"
	"runtime/debug"
	"time"

	"github.com/sediment/sediment/event"
)

type appendReq struct {
	rec    []byte
	batch  *Batch // nil for a rotation
	rotate bool   // freeze the head (no events)
	done   chan error
}

// events returns the number of events the request carries.
func (r *appendReq) events() int {
	if r.batch == nil {
		return 0
	}
	return r.batch.Len()
}

// Append makes events durable (per the ack mode) and visible to queries.
// The events may alias the caller's buffers; they are copied. An event
// with more than Options.MaxEventFields fields is stored with its first
// ones (event.CapFields) and counted (FieldDrops); events are not changed.
// AppendBatch does the same for events encoded as they were decoded.
func (s *Shard) Append(ctx context.Context, events []event.Event) error {
	if len(events) == 0 {
		return nil
	}
	b, _ := batches.Get().(*Batch)
	if b == nil {
		b = new(Batch)
	}
	b.Reset()
	b.maxFields = s.opts.MaxEventFields // pooled batches serve every engine
	for i := range events {
		b.Add(&events[i])
	}
	err := s.AppendBatch(ctx, b)
	batches.Put(b)
	return err
}

// AppendBatch makes the events of b durable (per the ack mode) and
// visible to queries, as Append does. b must have been made by this
// shard's engine (Engine.NewBatch) and must not change until AppendBatch
// returns; the caller may Reset and reuse it then.
func (s *Shard) AppendBatch(ctx context.Context, b *Batch) error {
	if b.Len() == 0 {
		return nil
	}
	if b.maxFields != s.opts.MaxEventFields {
		return errForeignBatch
	}
	s.mu.RLock()
	failed := s.failed
	s.mu.RUnlock()
	if failed != nil {
		return failed
	}
	if err := s.eng.diskFullErr(); err != nil {
		return fmt.Errorf("shard %s: %w", s.id, err)
	}
	// The record is encoded before waiting for admission: the wait is for
	// the disk, and the CPU is better spent meanwhile.
	b.rec = b.appendRecords(b.rec[:0])
	if err := s.admit(ctx); err != nil {
		return err
	}
	req := &appendReq{rec: b.rec, batch: b, done: make(chan error, 1)}
	if err := s.enqueue(ctx, req); err != nil {
		return err
	}
	// Once queued, the batch will be committed; wait for it even if ctx
	// ends so the caller learns the outcome (and the batch is not reused
	// while the committer reads it).
	err := <-req.done
	if err == nil && b.cut > 0 {
		s.countEventFieldCap(b.cut, b.lost, b.firstCut)
	}
	return err
}

// commitScratch is the committer's memory, kept between groups: the
// records of a head's part of a group (slices of the requests' buffers,
// and of ranges, for the rare request split between two heads: a range's
// record is built in ranges).
type commitScratch struct {
	recs   [][]byte
	ranges []byte
}

func (s *Shard) enqueue(ctx context.Context, req *appendReq) error {
	s.enqMu.RLock()
	defer s.enqMu.RUnlock()
	if s.enqClosed {
		return ErrClosed
	}
	select {
	case s.reqs <- req:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// committer serialises the write path: one write and (in sync mode) one
// fsync per group of queued batches, then head insertion in log order.
func (s *Shard) committer() {
	defer s.wg.Done()
	var sc commitScratch
	var group []*appendReq
	for {
		group = group[:0]
		select {
		case r := <-s.reqs:
			group = append(group, r)
		case <-s.stopping:
			// Drain what was queued before the stop: nothing more can come.
			for len(s.reqs) > 0 {
				group = append(group, <-s.reqs)
			}
			if len(group) > 0 {
				s.commitGuarded(group, &sc)
			}
			return
		}
		size := len(group[0].rec)
	drain:
		for size < 8<<20 {
			select {
			case r := <-s.reqs:
				group = append(group, r)
				size += len(r.rec)
			default:
				break drain
			}
		}
		s.commitGuarded(group, &sc)
	}
}

// commitGuarded runs commit, recovering a panic: the group is answered
// with an error and the shard refuses events from then on, since its log
// and head may no longer agree. The process and the other sources go on.
func (s *Shard) commitGuarded(group []*appendReq, sc *commitScratch) {
	defer func() {
		r := recover()
		if r == nil {
			return
		}
		perr := &PanicError{Task: taskNames[taskCommit], Value: r, Stack: debug.Stack()}
		s.recordTask(taskCommit, perr)
		err := fmt.Errorf("shard %s: internal error committing events: %w", s.id, perr)
		s.failWith(err, "committing events panicked (see the log for the stack); the source refuses events until the server restarts")
		for _, req := range group {
			select {
			case req.done <- err:
			default: // already answered
			}
		}
	}()
	s.commit(group, sc)
}

func (s *Shard) commit(group []*appendReq, sc *commitScratch) {
	rotate := false
	for _, r := range group {
		rotate = rotate || r.rotate
	}
	now := s.opts.Now()
	s.mu.RLock()
	h := s.head
	s.mu.RUnlock()
	// Stage the events in the head first: that finds the events that need
	// a new head (see headcap.go), whose records must go to a new log file.
	plan, err := s.stage(h, group)
	if err != nil {
		// A batch that does not decode (a bug: Batch.Add encodes them):
		// nothing of the group is logged or kept.
		s.opts.Logger.Error("ingest: staging events failed; the requests are refused", "shard", s.id, "err", err)
		h.mu.Lock()
		h.truncate(plan.marks[0])
		h.mu.Unlock()
		for _, r := range group {
			r.done <- err
		}
		return
	}
	var dropped int64
	var published []eventRange
	done := 0 // heads whose records are logged and rows visible
	for k, hk := range plan.heads {
		if k > 0 {
			// Freezes the full head (its log file synced first) and makes
			// hk the shard's head, with a new log file.
			if err = s.rotate(now, false, hk); err != nil {
				break
			}
		}
		var recs [][]byte
		recs, sc.ranges = plan.logRecords(sc.recs[:0], sc.ranges[:0], k)
		sc.recs = recs
		if len(recs) > 0 {
			// Refused while the disk is full; a failure other than a full
			// disk fails the shard (writeLog). Either way nothing of this
			// head's records may be acknowledged.
			err = s.writeLog(recs)
		}
		clear(recs) // the requests' buffers are theirs again once answered
		if err != nil {
			break
		}
		dropped += s.publishStaged(hk, plan.marks[k], now)
		published = append(published, plan.pieces[k]...)
		done = k + 1
	}
	if done < len(plan.heads) {
		// Take back the rows staged in the head that failed; heads after
		// it were never the shard's.
		hk := plan.heads[done]
		hk.mu.Lock()
		hk.truncate(plan.marks[done])
		hk.mu.Unlock()
	}
	s.countDroppedFields(dropped)
	n := 0
	for _, er := range published {
		n += er.to - er.from
	}
	s.stats.appended.Add(int64(n))
	if n > 0 {
		s.publish(published)
	}
	var rerr error
	if done == len(plan.heads) {
		h = plan.heads[done-1]
		h.mu.RLock()
		full := h.rows >= s.opts.HeadMaxRows || h.bytes >= s.opts.HeadMaxBytes
		mem := &s.eng.mem
		if active := mem.active.Load(); active > s.opts.HeadMemoryBudget && h.bytes >= s.opts.HeadIdleMinBytes &&
			int64(h.bytes)*mem.activeHeads.Load() >= active {
			// Over the engine's budget: freeze this head if it is at least
			// as big as the average, so the largest go first.
			full = true
		}
		old := h.rows > 0 && now.Sub(h.created) >= s.opts.HeadMaxAge
		rows := h.rows
		h.mu.RUnlock()
		if (full || old || rotate) && rows > 0 {
			rerr = s.rotate(now, full, nil)
		}
	}
	for i, r := range group {
		switch {
		case plan.last[i] >= done:
			// Not (wholly) logged. Events of it in earlier heads are
			// durable and visible: a retry may store them twice, which is
			// better than acknowledging what is not durable.
			r.done <- err
		case r.rotate && err != nil:
			r.done <- err
		case r.rotate:
			r.done <- rerr
		default:
			r.done <- nil
		}
	}
}

// publishStaged makes the rows staged in h visible and accounts for the
// memory they hold; m is h's state before the group. It returns the
// fields left out because they could not be stored.
func (s *Shard) publishStaged(h *head, m headMark, now time.Time) int64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := h.staged - m.staged
	h.publish()
	if n > 0 {
		h.updated = now
	}
	mem := &s.eng.mem
	if grown := int64(h.bytes - m.bytes); grown > 0 {
		if m.bytes == 0 {
			mem.activeHeads.Add(1)
		}
		mem.active.Add(grown)
		mem.total.Add(grown)
	}
	return h.droppedFields - m.droppedFields
}

// rotate freezes the head and starts a new WAL file for the next one,
// which is next when given (events staged for it by the committer) and
// else a new head. Called by the committer only. A head that filled up
// passes its column sizes on, so that the next one allocates once; one
// frozen for age or idleness does not, or a trickle would allocate for a
// flood.
func (s *Shard) rotate(now time.Time, full bool, next *head) error {
	s.mu.RLock()
	failed := s.failed
	s.mu.RUnlock()
	if failed != nil {
		// The log may end in a partial write: keep it the newest file, so
		// that only replay's torn-tail rule ever applies to it.
		return failed
	}
	if s.log.broken.Load() {
		// The head goes on in the file the next write creates.
		if err := s.eng.diskFullErr(); err != nil {
			return err
		}
		if err := s.resumeLog(); err != nil {
			return err
		}
	}
	seq := s.walSeq + 1
	// The frozen head's log becomes durable (buffered mode) before the next
	// file exists: only the newest log file may ever hold a torn tail.
	if err := s.wal.f.Sync(); err != nil {
		s.fail(fmt.Errorf("shard %s: write-ahead log sync: %w", s.id, err))
		return err
	}
	w, err := s.createLog(seq)
	if err != nil {
		return s.eng.noteNoSpace("creating a write-ahead log file", err)
	}
	err = s.swapLog(w, seq)
	s.mu.Lock()
	h := s.head
	h.mu.Lock()
	h.frozen = true
	h.walLast = seq - 1
	if h.bytes > 0 {
		s.eng.mem.active.Add(-int64(h.bytes))
		s.eng.mem.activeHeads.Add(-1)
	}
	h.mu.Unlock()
	s.frozen = append(s.frozen, h)
	if next == nil {
		next = s.startHead(now, seq)
		if full {
			next.sizes = h.sizeHints()
		}
	}
	next.created, next.walFirst, next.walLast = now, seq, seq
	s.head = next
	s.mu.Unlock()
	select {
	case s.flushKick <- struct{}{}:
	default:
	}
	return err
}

// fail stops the shard accepting events after a log write or sync failed:
// the log is in an unknown state, and nothing more may be acknowledged.
func (s *Shard) fail(err error) {
	s.failWith(err, "the write-ahead log could not be written or synced; the source refuses events until the server restarts")
}

// failWith is fail with the condition's detail for operators.
func (s *Shard) failWith(err error, detail string) {
	s.opts.Logger.Error("write-ahead log failed; shard stops accepting events", "shard", s.id, "err", err)
	s.mu.Lock()
	if s.failed == nil {
		s.failed = err
	}
	s.mu.Unlock()
	s.raiseCondition(Condition{Kind: ConditionWALFailed, RefusesIngest: true, Detail: detail})
}
