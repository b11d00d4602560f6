package ingest

import (
	"strings"
	"time"

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
}

// reset readies the state for a new decode, whose results replace the
// previous ones (callers reset only at the start of a Decode method).
func (p *protocolState) reset() {
	p.texts = nil // the previous result may still alias the old buffer's bytes
	p.vals.reset()
}

// text appends with fn to the text buffer and returns what it appended as
// a string aliasing the buffer.
func (p *protocolState) text(fn func([]byte) []byte) string {
	if cap(p.texts)-len(p.texts) < 64 {
		p.texts = make([]byte, 0, max(4096, 2*cap(p.texts)))
	}
	start := len(p.texts)
	p.texts = fn(p.texts)
	return aliasString(p.texts[start:])
}

// valueChunks hands out member and element slices from large chunks, so
// that building many small objects costs few allocations. A slice it
// returns is never handed out again within one decode.
type valueChunks struct {
	chunk []event.Value
}

// alloc returns a slice of length 0 and capacity n.
func (c *valueChunks) alloc(n int) []event.Value {
	if n > 256 {
		return make([]event.Value, 0, n)
	}
	if cap(c.chunk)-len(c.chunk) < n {
		c.chunk = make([]event.Value, 0, 1024)
	}
	s := c.chunk[len(c.chunk) : len(c.chunk) : len(c.chunk)+n]
	c.chunk = c.chunk[:len(c.chunk)+n]
	return s
}

func (c *valueChunks) reset() { c.chunk = nil }
