package engine

import (
	"encoding/binary"
	"errors"
	"slices"
	"strings"
	"sync"

	"github.com/sediment/sediment/event"
)

// Batch is a group of events encoded for Shard.AppendBatch, built one
// event at a time: a caller that decodes a large request encodes each
// event as soon as it is normalised and reuses that event's memory for the
// next, instead of holding a value tree per event until the append. The
// bytes are the write-ahead log record's payload as they will be logged
// (the event codec, back to back), so appending them costs no second
// encoding, and they hold no pointers for the collector to follow.
//
// Add copies: the event may alias buffers the caller reuses at once. Each
// event is cut to Options.MaxEventFields as it is added (event.CapFields);
// AppendBatch counts what was cut once the batch is stored.
//
// A Batch is reused with Reset, keeping its memory. It is not safe for
// concurrent use, and must not change while AppendBatch runs.
type Batch struct {
	maxFields int
	// buf holds batchCountRoom bytes of room for the record's event count,
	// then the events; ends[i] is where event i ends in buf.
	buf  []byte
	ends []int
	// Events cut to maxFields, the fields they lost, and the id of the
	// first of them (copied: the event's buffers are the caller's).
	cut, lost int64
	firstCut  string
	// rec is the log record AppendBatch encodes, kept for reuse.
	rec []byte
}

// batchCountRoom is the room before the events for the uvarint count that
// starts a record's payload.
const batchCountRoom = binary.MaxVarintLen64

// errForeignBatch is returned by AppendBatch for a batch made by another
// engine, whose field cap may differ.
var errForeignBatch = errors.New("engine: batch made for an engine with another MaxEventFields")

// NewBatch returns an empty Batch for the shards of e.
func (e *Engine) NewBatch() *Batch {
	b := &Batch{maxFields: e.opts.MaxEventFields}
	b.Reset()
	return b
}

// Reset empties the batch, keeping its memory.
func (b *Batch) Reset() {
	if cap(b.buf) < batchCountRoom {
		b.buf = make([]byte, batchCountRoom, 4096)
	}
	b.buf = b.buf[:batchCountRoom]
	b.ends = b.ends[:0]
	b.cut, b.lost, b.firstCut = 0, 0, ""
}

// Grow makes room for about n more bytes of encoded events (an event's
// encoding is a little smaller than its JSON), so that a large batch is
// allocated once rather than grown step by step.
func (b *Batch) Grow(n int) {
	if n > 0 && cap(b.buf)-len(b.buf) < n {
		b.buf = slices.Grow(b.buf, n)
	}
}

// Len returns the number of events added since the last Reset.
func (b *Batch) Len() int { return len(b.ends) }

// Bytes returns the size of the encoded events.
func (b *Batch) Bytes() int { return len(b.buf) - batchCountRoom }

// Add encodes e at the end of the batch, cut to the engine's
// MaxEventFields. e is not changed.
func (b *Batch) Add(e *event.Event) {
	fields, dropped := event.CapFields(e.Fields, b.maxFields)
	if dropped > 0 {
		if b.cut == 0 {
			b.firstCut = strings.Clone(e.ID)
		}
		b.cut++
		b.lost += int64(dropped)
		capped := *e
		capped.Fields = fields
		e = &capped
	}
	b.buf = event.AppendEvent(b.buf, *e)
	b.ends = append(b.ends, len(b.buf))
}

// Event returns the encoding of event i (event.DecodeEvent reads it).
func (b *Batch) Event(i int) []byte {
	start := batchCountRoom
	if i > 0 {
		start = b.ends[i-1]
	}
	return b.buf[start:b.ends[i]]
}

// span returns the encodings of events [from, to), back to back.
func (b *Batch) span(from, to int) []byte {
	start := batchCountRoom
	if from > 0 {
		start = b.ends[from-1]
	}
	return b.buf[start:b.ends[to-1]]
}

// payload returns the record payload of the whole batch: the event count,
// written into the room before the events, then the events.
func (b *Batch) payload() []byte {
	var n [binary.MaxVarintLen64]byte
	k := binary.PutUvarint(n[:], uint64(len(b.ends)))
	start := batchCountRoom - k
	copy(b.buf[start:], n[:k])
	return b.buf[start:]
}

// batches recycles the batches of Shard.Append.
var batches sync.Pool
