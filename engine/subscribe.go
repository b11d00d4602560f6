package engine

import (
	"sync"
	"sync/atomic"

	"github.com/sediment/sediment/event"
)

// Subscription receives the events appended to a shard after it was made,
// for live tail. Delivery never slows ingestion: each subscriber has a
// bounded buffer, and events that do not fit are dropped and counted.
type Subscription struct {
	C       <-chan []event.Event // batches, in commit order; closed by Close or shard close
	c       chan []event.Event
	shard   *Shard
	dropped atomic.Int64
	once    sync.Once
}

// Dropped returns how many events did not fit the buffer.
func (s *Subscription) Dropped() int64 { return s.dropped.Load() }

// Close stops delivery and closes C.
func (s *Subscription) Close() {
	s.once.Do(func() {
		s.shard.subsMu.Lock()
		delete(s.shard.subs, s)
		s.shard.subsMu.Unlock()
		close(s.c)
	})
}

// Subscribe returns a subscription buffering up to buf batches.
func (s *Shard) Subscribe(buf int) *Subscription {
	if buf < 1 {
		buf = 1
	}
	sub := &Subscription{c: make(chan []event.Event, buf), shard: s}
	sub.C = sub.c
	s.subsMu.Lock()
	if s.subs == nil {
		s.subs = map[*Subscription]struct{}{}
	}
	s.subs[sub] = struct{}{}
	s.subsMu.Unlock()
	return sub
}

// publish hands a committed group's events to the subscribers (decoded
// copies: the callers' batches are reused after Append returns).
func (s *Shard) publish(ranges []eventRange) {
	s.subsMu.Lock()
	defer s.subsMu.Unlock()
	if len(s.subs) == 0 {
		return
	}
	// Events past retention are stored until retention removes them, but
	// never shown (retentionview.go).
	cutoff := s.retentionCutoff()
	var batch []event.Event
	for _, er := range ranges {
		for i := er.from; i < er.to; i++ {
			e, _, err := event.DecodeEvent(er.req.batch.Event(i))
			if err != nil {
				continue // not possible: staging decoded it
			}
			if e.Timestamp < cutoff {
				continue
			}
			batch = append(batch, e)
		}
	}
	if len(batch) == 0 {
		return
	}
	for sub := range s.subs {
		select {
		case sub.c <- batch:
		default:
			sub.dropped.Add(int64(len(batch)))
		}
	}
}

// closeSubs ends every subscription (shard closing).
func (s *Shard) closeSubs() {
	s.subsMu.Lock()
	subs := make([]*Subscription, 0, len(s.subs))
	for sub := range s.subs {
		subs = append(subs, sub)
	}
	s.subsMu.Unlock()
	for _, sub := range subs {
		sub.Close()
	}
}
