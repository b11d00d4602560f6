package engine

import (
	"sync"
	"sync/atomic"
	"time"
)

// Recycling the byte slots of flushed heads.
//
// A head's packed columns (headbytes.go) hold most of what ingest
// allocates that is not garbage at once: every event's long strings, in
// 64 KiB slots that are dropped with the head once it is flushed. Under a
// memory limit each of those bytes brings the next collection closer, so a
// flushed head's slots go to the engine's slotPool, and the next heads'
// columns take their slots from it before allocating.
//
// A slot may be reused only when nothing can still read it. Head bytes
// reach readers through views (head.view): a Snapshot's, which a query
// reads for as long as it runs and whose strings may reach its answer,
// and the flush's own, which the segment writer reads until the segment
// is written and opened again from disk. So a head that any snapshot has
// viewed (head.viewed, set under the shard's lock that also guards the
// list of heads a snapshot can find) is never recycled; one that only the
// flush viewed is recycled once the flush is done and the head is out of
// the shard's lists, when no snapshot can find it any more.
// TestRecycledSlotsNeverReachAReader proves both.

// slotPool is an engine's free slots, full-size (slotSize) and empty. It
// keeps at most max of them (one head's worth), and none once the server
// has gone idle (Engine.ReleaseIdleMemory).
type slotPool struct {
	mu   sync.Mutex
	free [][]byte
	max  int // slots
	// reused and recycled count slots taken from the pool and given to
	// it, for tests and statistics.
	reused, recycled atomic.Int64
}

// setMaxBytes bounds the pool.
func (p *slotPool) setMaxBytes(n int) { p.max = n / slotSize() }

// get returns an empty slot of capacity slotSize, or nil when the pool has
// none.
func (p *slotPool) get() []byte {
	if p == nil {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for n := len(p.free); n > 0; n = len(p.free) {
		s := p.free[n-1]
		p.free[n-1] = nil
		p.free = p.free[:n-1]
		if cap(s) == slotSize() { // tests change the slot size
			p.reused.Add(1)
			return s[:0]
		}
	}
	return nil
}

// recycle gives the pool the full-size slots of a flushed head that no
// snapshot viewed (see above); others are left to the collector.
func (p *slotPool) recycle(h *head) {
	if p == nil || p.max == 0 || h.viewed.Load() {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range h.cols {
		for i, s := range c.packed.slots {
			if cap(s) == slotSize() && len(p.free) < p.max {
				p.free = append(p.free, s)
				p.recycled.Add(1)
			}
			c.packed.slots[i] = nil // the head is done with it either way
		}
	}
}

// release lets the pool's slots go.
func (p *slotPool) release() {
	p.mu.Lock()
	clear(p.free)
	p.free = p.free[:0]
	p.mu.Unlock()
}

// ReleaseIdleMemory lets go of what the engine keeps to serve the next
// events faster (flushed heads' byte slots). A server whose ingest has
// gone quiet calls it.
func (e *Engine) ReleaseIdleMemory() { e.slots.release() }

// startHead returns a new head for the shard, taking its packed columns'
// slots from the engine's pool.
func (s *Shard) startHead(now time.Time, walSeq uint64) *head {
	h := newHead(now, walSeq, s.opts.MaxColumns)
	if s.eng != nil {
		h.slotPool = &s.eng.slots
	}
	return h
}
