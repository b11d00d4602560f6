package ingest

import (
	"strings"
	"time"

	logspb "go.opentelemetry.io/proto/otlp/logs/v1"

	"github.com/sediment/sediment/event"
)

// This file holds what the decoders of other ecosystems' protocols (OTLP,
// Loki push, Elasticsearch bulk, syslog) share: media types and exact
// timestamps.

// mediaType returns the lower-cased media type of a Content-Type header,
// without parameters.
func mediaType(contentType string) string {
	media := contentType
	if i := strings.IndexByte(media, ';'); i >= 0 {
		media = media[:i]
	}
	return strings.ToLower(strings.TrimSpace(media))
}

// nanosTimestamp returns the "timestamp" member value for a time in unix
// nanoseconds, exact whatever the date: event.TimestampMicros reads an
// integer by its digit count, which is right for microseconds from
// 2001-09-09 on (16 digits) and for later ones, but not for earlier times,
// which get an ISO-8601 string instead. ok is false for 0 (no time).
func (d *Decoder) nanosTimestamp(ns uint64) (event.Value, bool) {
	if ns == 0 {
		return event.Value{}, false
	}
	us := ns / 1000
	if us >= 1e15 {
		return event.IntValue(int64(us)), true // 16+ digits: microseconds
	}
	return event.StringValue(d.proto.text(func(b []byte) []byte {
		return time.UnixMicro(int64(us)).UTC().AppendFormat(b, "2006-01-02T15:04:05.000000Z")
	})), true
}

// protocolState is the reusable state of the protocol decoders.
type protocolState struct {
	// texts holds strings made while decoding (timestamps, hex ids, JSON
	// text of structured bodies); the values of a result alias it. It is
	// cut, never overwritten, within one decode.
	texts []byte
	vals  valueChunks
	// snappy holds a Loki body after snappy decoding (reused).
	snappy []byte
	// members and dotted are OTLP's scratch for one attribute list
	// (otlpConverter.attributes and nestDotted); record is the log record
	// the protobuf path decodes each record into (otlpwire.go). All three
	// are reused across records and decodes.
	members []event.Value
	dotted  []dottedEntry
	record  *logspb.LogRecord
}

// reset readies the state for a new decode, whose results replace the
// previous ones (callers reset only at the start of a Decode method).
func (p *protocolState) reset() {
	p.texts = nil // the previous result may still alias the old buffer's bytes
	p.vals.reset()
}

// textChunk is the size of the chunks of the text buffer. A chunk is
// never grown: growing would copy the texts it handed out already.
const textChunk = 64 << 10

// text appends with fn to the text buffer and returns what it appended as
// a string aliasing the buffer. fn must only append.
func (p *protocolState) text(fn func([]byte) []byte) string {
	if cap(p.texts)-len(p.texts) < 64 {
		p.texts = make([]byte, 0, textChunk)
	}
	start := len(p.texts)
	out := fn(p.texts)
	if cap(out) != cap(p.texts) && start > 0 {
		// fn outgrew the chunk, and its append copied the chunk's texts
		// along: keep this text on its own, the chunk for the next ones.
		return string(out[start:])
	}
	p.texts = out
	return aliasString(out[start:])
}

// valueChunks hands out member and element slices from large chunks, so
// that building many small objects costs few allocations. A slice it
// returns is never handed out again within one decode.
type valueChunks struct {
	chunk []event.Value
}

// valueChunkLen is the length of a chunk; slices longer than a quarter of
// it get their own array, so that at most a quarter of a chunk is left
// unused when the next slice does not fit.
const valueChunkLen = 1024

// alloc returns a slice of length 0 and capacity n.
func (c *valueChunks) alloc(n int) []event.Value {
	if n > valueChunkLen/4 {
		return make([]event.Value, 0, n)
	}
	if cap(c.chunk)-len(c.chunk) < n {
		c.chunk = make([]event.Value, 0, valueChunkLen)
	}
	s := c.chunk[len(c.chunk) : len(c.chunk) : len(c.chunk)+n]
	c.chunk = c.chunk[:len(c.chunk)+n]
	return s
}

// copyOf returns a copy of vs in the chunks.
func (c *valueChunks) copyOf(vs []event.Value) []event.Value {
	return append(c.alloc(len(vs)), vs...)
}

func (c *valueChunks) reset() { c.chunk = nil }
