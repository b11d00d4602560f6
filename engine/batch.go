package engine

import (
	"encoding/binary"
	"errors"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/sediment/sediment/event"
)

// Batch is a group of events encoded for Shard.AppendBatch, built one
// event at a time: a caller that decodes a large request encodes each
// event as soon as it is normalised and reuses that event's memory for the
// next, instead of holding a value tree per event until the append. The
// bytes are the write-ahead log records' payloads as they will be logged
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
	// buf holds the events in chunks of about batchChunkBytes, each a log
	// record's payload: batchCountRoom bytes of room for the chunk's
	// event count, then its events. starts[i] and ends[i] bound event i in
	// buf; chunks[k] is the index of the first event of chunk k.
	buf    []byte
	starts []int
	ends   []int
	chunks []int
	// Events cut to maxFields, the fields they lost, and the id of the
	// first of them (copied: the event's buffers are the caller's).
	cut, lost int64
	firstCut  string
	// rec is the log records AppendBatch encodes, kept for reuse.
	rec []byte
}

const (
	// batchCountRoom is the room before a chunk's events for the uvarint
	// count that starts a record's payload.
	batchCountRoom = binary.MaxVarintLen64
	// batchChunkBytes is about how many bytes of events go in one log
	// record. A large request becomes several records, written together
	// (all are acknowledged or none), so that compressing a record never
	// needs room for the whole request at once.
	batchChunkBytes = 1 << 20
)

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
	b.buf = b.buf[:0]
	b.starts, b.ends, b.chunks = b.starts[:0], b.ends[:0], b.chunks[:0]
	b.cut, b.lost, b.firstCut = 0, 0, ""
}

// Grow makes room for about n more bytes of encoded events (an event's
// encoding is a little smaller than its JSON), so that a large batch is
// allocated once rather than grown step by step.
func (b *Batch) Grow(n int) {
	n += (n/batchChunkBytes + 1) * batchCountRoom
	if n > 0 && cap(b.buf)-len(b.buf) < n {
		b.buf = slices.Grow(b.buf, n)
	}
}

// RetainedBytes returns the memory the batch keeps for reuse.
func (b *Batch) RetainedBytes() int {
	return cap(b.buf) + cap(b.rec) + 8*(cap(b.starts)+cap(b.ends)+cap(b.chunks))
}

// Len returns the number of events added since the last Reset.
func (b *Batch) Len() int { return len(b.ends) }

// Bytes returns the size of the encoded events.
func (b *Batch) Bytes() int { return len(b.buf) - len(b.chunks)*batchCountRoom }

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
	b.startEvent()
	b.buf = event.AppendEvent(b.buf, *e)
	b.ends = append(b.ends, len(b.buf))
}

// startEvent opens a new chunk when the last one is full and records
// where the next event starts; the caller appends it and its end.
func (b *Batch) startEvent() {
	if n := len(b.chunks); n == 0 || len(b.buf)-b.starts[b.chunks[n-1]] >= batchChunkBytes {
		b.chunks = append(b.chunks, len(b.ends))
		b.buf = append(b.buf, make([]byte, batchCountRoom)...)
	}
	b.starts = append(b.starts, len(b.buf))
}

// AddRaw normalises raw with n as n.Normalize(raw, now, opts) would, and
// adds the event as Add would, unless the outcome is
// event.OutcomeDroppedFuture (then nothing is added). Most events are
// encoded straight from raw (event.Normalizer.AppendNormalized), without
// the normalised value tree; the others go through it and Add.
func (b *Batch) AddRaw(n *event.Normalizer, raw event.Value, now time.Time, opts event.NormalizeOptions) event.Outcome {
	chunks, bufLen := len(b.chunks), len(b.buf)
	b.startEvent()
	buf, e, outcome, encoded := n.AppendNormalized(b.buf, raw, now, opts, b.maxFields)
	if encoded {
		b.buf = buf
		b.ends = append(b.ends, len(b.buf))
		return outcome
	}
	// Take back the start (and the chunk it may have opened).
	b.starts = b.starts[:len(b.starts)-1]
	b.chunks, b.buf = b.chunks[:chunks], b.buf[:bufLen]
	if outcome == event.OutcomeKept {
		b.Add(&e)
	}
	return outcome
}

// AddJSON normalises and adds the raw event at p's position straight from
// its JSON, as AddRaw would add the Value Parse gives for it, when
// p.TranscodeEvent takes it (ok): then p is past it, and an event whose
// outcome is event.OutcomeDroppedFuture is not added. When ok is false
// nothing is added and p is where it was, for the caller to parse the
// event into a Value.
func (b *Batch) AddJSON(p *event.Parser, n *event.Normalizer, now time.Time, opts event.NormalizeOptions) (outcome event.Outcome, ok bool) {
	chunks, bufLen := len(b.chunks), len(b.buf)
	b.startEvent()
	buf, outcome, ok := p.TranscodeEvent(b.buf, n, now, opts, b.maxFields)
	if !ok || outcome != event.OutcomeKept {
		// Take back the start (and the chunk it may have opened).
		b.starts = b.starts[:len(b.starts)-1]
		b.chunks, b.buf = b.chunks[:chunks], b.buf[:bufLen]
		return outcome, ok
	}
	b.buf = buf
	b.ends = append(b.ends, len(b.buf))
	return outcome, true
}

// Event returns the encoding of event i (event.DecodeEvent reads it).
func (b *Batch) Event(i int) []byte { return b.buf[b.starts[i]:b.ends[i]] }

// appendRecords appends the log records of the whole batch to dst, one per
// chunk.
func (b *Batch) appendRecords(dst []byte) []byte {
	for k, first := range b.chunks {
		last := len(b.ends) // past the chunk's last event
		if k+1 < len(b.chunks) {
			last = b.chunks[k+1]
		}
		// The count goes in the room before the chunk's first event.
		var n [binary.MaxVarintLen64]byte
		w := binary.PutUvarint(n[:], uint64(last-first))
		start := b.starts[first] - w
		copy(b.buf[start:], n[:w])
		dst = appendWALRecord(dst, b.buf[start:b.ends[last-1]])
	}
	return dst
}

// appendRangeRecord appends one log record of events [from, to) to dst,
// using raw as scratch for its payload; both are returned for reuse.
func (b *Batch) appendRangeRecord(dst, raw []byte, from, to int) ([]byte, []byte) {
	raw = binary.AppendUvarint(raw[:0], uint64(to-from))
	for i := from; i < to; i++ {
		raw = append(raw, b.Event(i)...)
	}
	return appendWALRecord(dst, raw), raw
}

// batches recycles the batches of Shard.Append.
var batches sync.Pool
