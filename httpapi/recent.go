package httpapi

import (
	"sort"
	"sync"

	"github.com/sediment/sediment/engine"
	"github.com/sediment/sediment/event"
)

// The recent store keeps, per source, the last events ingested, as JSON,
// for GET /api/sources/:token/recent (as Logflare, which keeps them in
// memory: they do not survive a restart).
const (
	recentLimit = 100
	// recentMaxEventBytes skips larger events, so that a source's ring
	// stays small (at most recentLimit of these).
	recentMaxEventBytes = 32 << 10
)

type recentStore struct {
	rings sync.Map // source id (int64) → *recentRing
}

type recentRing struct {
	mu    sync.Mutex
	slots [recentLimit]recentSlot
	next  int // slot the next event goes to
	seq   uint64
}

type recentSlot struct {
	json []byte // nil when empty
	ts   int64
	seq  uint64
}

// recentBatch is a worker's scratch: events are encoded into it outside the
// ring's lock, then its buffers are swapped with the ring's slots.
type recentBatch struct {
	bufs [][]byte
	ts   []int64
	dec  event.EventDecoder
}

// recordBatch keeps the last recentLimit events of b (as JSON) for source
// id.
func (rs *recentStore) recordBatch(id int64, b *engine.Batch, wb *recentBatch) {
	n := b.Len()
	if n == 0 {
		return
	}
	k := 0
	for i := max(0, n-recentLimit); i < n; i++ {
		e, _, err := wb.dec.Decode(b.Event(i))
		if err != nil {
			continue // not possible: the batch encoded it
		}
		if k == len(wb.bufs) {
			wb.bufs = append(wb.bufs, nil)
			wb.ts = append(wb.ts, 0)
		}
		js := event.AppendEventJSON(wb.bufs[k][:0], e)
		if len(js) > recentMaxEventBytes {
			wb.bufs[k] = nil // let a large buffer go
			continue
		}
		wb.bufs[k], wb.ts[k] = js, e.Timestamp
		k++
	}
	v, ok := rs.rings.Load(id)
	if !ok {
		v, _ = rs.rings.LoadOrStore(id, &recentRing{})
	}
	r := v.(*recentRing)
	r.mu.Lock()
	for j := range k {
		s := &r.slots[r.next]
		s.json, wb.bufs[j] = wb.bufs[j], s.json
		s.ts, s.seq = wb.ts[j], r.seq
		r.seq++
		r.next = (r.next + 1) % recentLimit
	}
	r.mu.Unlock()
}

// appendJSON appends source id's recent events as a JSON array, newest
// (by timestamp, then by arrival) first, leaving out those older than
// cutoff (unix µs): events past the source's retention are not shown,
// whether they arrived that old or aged since.
func (rs *recentStore) appendJSON(dst []byte, id int64, cutoff int64) []byte {
	dst = append(dst, '[')
	v, ok := rs.rings.Load(id)
	if !ok {
		return append(dst, ']')
	}
	r := v.(*recentRing)
	r.mu.Lock()
	defer r.mu.Unlock()
	order := make([]*recentSlot, 0, recentLimit)
	for i := range r.slots {
		if r.slots[i].json != nil && r.slots[i].ts >= cutoff {
			order = append(order, &r.slots[i])
		}
	}
	sort.Slice(order, func(i, j int) bool {
		if order[i].ts != order[j].ts {
			return order[i].ts > order[j].ts
		}
		return order[i].seq > order[j].seq
	})
	for i, s := range order {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, s.json...)
	}
	return append(dst, ']')
}

// forget drops a deleted source's events.
func (rs *recentStore) forget(id int64) { rs.rings.Delete(id) }
