package engine

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// Admission of appends. Heads are frozen when full and written out by the
// flusher; events come in faster than that only for a while, since every
// frozen head holds memory until it is written. Two bounds say when a
// shard takes no more for now: its heads waiting to be written (and being
// written) reach Options.MaxFrozenHeads, or the heads of every shard hold
// twice Options.HeadMemoryBudget. Past either, an append waits for a head
// to be written out, up to Options.AdmissionWait, and only then is refused
// with a *BackpressureError (HTTP 429): a sender is slowed to the pace of
// the disk, and refused only when the disk does not keep up at all. With
// the background flusher off (Options.DisableBackground) nothing would free
// the memory while it waits, so it refuses at once.

// BackpressureError is returned by Append when the shard takes no more
// events for now. It matches ErrBackpressure (errors.Is).
type BackpressureError struct {
	// Reason names the bound that was reached: BackpressureFrozenHeads or
	// BackpressureHeadMemory.
	Reason string
	// Waited is how long the append waited for a head to be written out.
	Waited time.Duration
	// Detail says more, for operators (the bound and what was held).
	Detail string
}

// The reasons of a BackpressureError.
const (
	// BackpressureFrozenHeads: the shard's heads waiting to be written
	// reached Options.MaxFrozenHeads.
	BackpressureFrozenHeads = "frozen_heads"
	// BackpressureHeadMemory: the heads of every shard hold twice
	// Options.HeadMemoryBudget.
	BackpressureHeadMemory = "head_memory"
)

func (e *BackpressureError) Error() string {
	return fmt.Sprintf("%v: %s (%s), waited %s", ErrBackpressure, e.Reason, e.Detail, e.Waited.Round(time.Millisecond))
}

// Is makes errors.Is(err, ErrBackpressure) true.
func (e *BackpressureError) Is(target error) bool { return target == ErrBackpressure }

// headsFreed is a broadcast of "heads were written out": waiters take the
// current channel, which is closed (and replaced) at the next release.
type headsFreed struct {
	mu sync.Mutex
	ch chan struct{}
}

// wait returns a channel closed at the next release.
func (f *headsFreed) wait() <-chan struct{} {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.ch == nil {
		f.ch = make(chan struct{})
	}
	return f.ch
}

// release wakes every waiter.
func (f *headsFreed) release() {
	f.mu.Lock()
	if f.ch != nil {
		close(f.ch)
		f.ch = nil
	}
	f.mu.Unlock()
}

// overBound returns the bound an append would pass now, or "" when it may
// go ahead, with the detail for an error.
func (s *Shard) overBound() (reason, detail string) {
	s.mu.RLock()
	backlog := len(s.frozen)
	s.mu.RUnlock()
	if backlog >= s.opts.MaxFrozenHeads {
		return BackpressureFrozenHeads, fmt.Sprintf("%d heads of this source wait to be written, at most %d", backlog, s.opts.MaxFrozenHeads)
	}
	if total := s.eng.mem.total.Load(); total > 2*s.opts.HeadMemoryBudget {
		return BackpressureHeadMemory, fmt.Sprintf("heads hold %d bytes, at most twice the head memory budget of %d", total, s.opts.HeadMemoryBudget)
	}
	return "", ""
}

// AdmissionStats count, since the shard opened, the appends that found it
// full (see admission.go).
type AdmissionStats struct {
	// Delayed is the number of appends that waited for heads to be written
	// out, and DelayedFor the time they waited in all; Waiting is how many
	// wait now.
	Delayed    int64
	DelayedFor time.Duration
	Waiting    int64
	// Refused is the number of appends refused (*BackpressureError).
	Refused int64
}

// admissionCounters are a shard's AdmissionStats.
type admissionCounters struct {
	delayed, delayedNanos, waiting, refused atomic.Int64
}

// Admission returns the shard's admission counts. It is cheap (atomic
// loads), for status pages and metrics.
func (s *Shard) Admission() AdmissionStats {
	c := &s.admission
	return AdmissionStats{Delayed: c.delayed.Load(), DelayedFor: time.Duration(c.delayedNanos.Load()),
		Waiting: c.waiting.Load(), Refused: c.refused.Load()}
}

// admit returns once the shard may take an append, waiting up to
// Options.AdmissionWait for heads to be written out; past it, or at once
// without a background flusher, a *BackpressureError. It also ends when
// ctx does or the shard closes.
func (s *Shard) admit(ctx context.Context) error {
	reason, detail := s.overBound()
	if reason == "" {
		return nil
	}
	c := &s.admission
	if s.opts.DisableBackground {
		c.refused.Add(1)
		return &BackpressureError{Reason: reason, Detail: detail}
	}
	start := time.Now()
	c.delayed.Add(1)
	c.waiting.Add(1)
	defer func() {
		c.waiting.Add(-1)
		c.delayedNanos.Add(int64(time.Since(start)))
	}()
	t := time.NewTimer(s.opts.AdmissionWait)
	defer t.Stop()
	for {
		freed := s.eng.freed.wait()
		if reason, detail = s.overBound(); reason == "" {
			return nil
		}
		select {
		case <-freed:
		case <-t.C:
			c.refused.Add(1)
			return &BackpressureError{Reason: reason, Detail: detail, Waited: time.Since(start)}
		case <-ctx.Done():
			return ctx.Err()
		case <-s.stopping:
			return ErrClosed
		}
	}
}
