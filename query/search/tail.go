package search

import (
	"time"

	"github.com/sediment/sediment/engine"
	"github.com/sediment/sediment/event"
	"github.com/sediment/sediment/lql"
)

// ParseTailFilter compiles the LQL of a live tail. Only filters take part:
// s:, c: and f: clauses are accepted and ignored, so a client can tail with
// the query it searches with. So are t: clauses: a tail shows events from
// now on, and a range fixed when the tail starts (t:last@15m ends at that
// moment) would soon match nothing.
//
// The LQL is parsed without the source's schema (best-effort typing): the
// events to come may carry fields no stored event has yet. The matcher
// compares numbers and strings leniently (m.status:500 matches 500 and
// "500"), so a typed parse would add only errors.
func ParseTailFilter(text string, now time.Time) (*lql.Matcher, error) {
	q, err := lql.Parse(text, lql.Options{Now: now})
	if err != nil {
		return nil, &RequestError{err}
	}
	filters := q.Filters[:0:0]
	for _, f := range q.Filters {
		if f.Path != "timestamp" {
			filters = append(filters, f)
		}
	}
	m, err := lql.Compile(&lql.Query{Filters: filters})
	if err != nil {
		return nil, &RequestError{err}
	}
	return m, nil
}

// Tail follows the events appended to a shard after it starts that match a
// filter. Its buffer holds up to buf committed batches; when the reader
// falls behind, the engine drops batches for this tail (ingestion never
// waits) and Dropped counts their events.
//
// A Tail is read from one goroutine; Close may be called from any.
type Tail struct {
	sub      *engine.Subscription
	match    *lql.Matcher
	reported int64
}

// NewTail subscribes to sh's new events.
func NewTail(sh *engine.Shard, m *lql.Matcher, buf int) *Tail {
	return &Tail{sub: sh.Subscribe(buf), match: m}
}

// Batches delivers each committed batch of appended events, in commit
// order. It is closed by Close and when the shard closes (engine shutdown,
// source deleted).
func (t *Tail) Batches() <-chan []event.Event { return t.sub.C }

// Each calls fn for the events of batch that match the filter, in order,
// and stops at fn's first error.
func (t *Tail) Each(batch []event.Event, fn func(*event.Event) error) error {
	for i := range batch {
		if t.match == nil || t.match.Match(&batch[i]) {
			if err := fn(&batch[i]); err != nil {
				return err
			}
		}
	}
	return nil
}

// Dropped returns how many events the engine dropped for this tail (its
// buffer was full) since the last call; they are lost to it, matching or
// not.
func (t *Tail) Dropped() int64 {
	total := t.sub.Dropped()
	n := total - t.reported
	t.reported = total
	return n
}

// Close ends the subscription.
func (t *Tail) Close() { t.sub.Close() }
