package event

import (
	"encoding/binary"
	"errors"
	"fmt"
	"unsafe"
)

// Binary codec for Values and Events, used by the write-ahead log and by
// array columns in segments.
//
// Integers are encoding/binary varints: "uvarint" is unsigned LEB128,
// "varint" is the zigzag form of a signed integer.
//
//	value  := tag(1B) payload
//	  tagNull   0x00  (no payload)
//	  tagFalse  0x01  (no payload)
//	  tagTrue   0x02  (no payload)
//	  tagInt    0x03  varint
//	  tagFloat  0x04  8 bytes, IEEE-754 binary64, little-endian
//	  tagString 0x05  uvarint len | len bytes
//	  tagArray  0x06  uvarint count | value*count
//	  tagObject 0x07  uvarint count | (uvarint keylen | key bytes | value)*count
//
//	event  := version(1B) | uvarint idlen | id | varint timestamp(µs)
//	          | flags(1B) | [uvarint msglen | msg]  (present iff flags&flagHasMessage)
//	          | value (the Fields)
//
// These constants are part of the on-disk format and must never change; a
// new kind gets a new tag, a new event layout a new version.
const (
	tagNull   = 0x00
	tagFalse  = 0x01
	tagTrue   = 0x02
	tagInt    = 0x03
	tagFloat  = 0x04
	tagString = 0x05
	tagArray  = 0x06
	tagObject = 0x07

	eventVersion1      = 0x01
	eventVersionLatest = eventVersion1

	flagHasMessage = 0x01
	knownFlags     = flagHasMessage
)

// Named maxima checked while decoding, on top of "no length beyond the
// remaining input". They are far above anything ingest produces (bodies are
// capped at 12 MB) and exist so a corrupt length fails with a clear message.
const (
	// maxStringLen bounds one string or key.
	maxStringLen = 1 << 30
	// maxContainerLen bounds the element or member count of one container.
	maxContainerLen = 1 << 28
)

// ErrCorrupt is wrapped by every error DecodeValue and DecodeEvent return.
var ErrCorrupt = errors.New("event: corrupt encoding")

func corruptf(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrCorrupt}, args...)...)
}

// AppendValue appends the binary encoding of v to dst. Values of an unknown
// Kind are encoded as null.
func AppendValue(dst []byte, v Value) []byte { return appendValue(dst, &v) }

// appendValue is AppendValue on a pointer: ingest encodes every event's
// tree, and copying each member (72 bytes) on the way down cost a tenth
// of the encoding.
func appendValue(dst []byte, v *Value) []byte {
	switch v.Kind {
	case Bool:
		if v.Num != 0 {
			return append(dst, tagTrue)
		}
		return append(dst, tagFalse)
	case Int:
		return binary.AppendVarint(append(dst, tagInt), int64(v.Num))
	case Float:
		return binary.LittleEndian.AppendUint64(append(dst, tagFloat), v.Num)
	case String:
		return appendBytes(append(dst, tagString), v.Str)
	case Array:
		dst = appendUvarint(append(dst, tagArray), len(v.Kids))
		for i := range v.Kids {
			dst = appendValue(dst, &v.Kids[i])
		}
		return dst
	case Object:
		dst = appendUvarint(append(dst, tagObject), len(v.Kids))
		for i := range v.Kids {
			m := &v.Kids[i]
			dst = appendValue(appendBytes(dst, m.Key), m)
		}
		return dst
	}
	return append(dst, tagNull)
}

// appendUvarint is binary.AppendUvarint with the one-byte case (nearly
// every length and count) first.
func appendUvarint(dst []byte, n int) []byte {
	if uint(n) < 0x80 {
		return append(dst, byte(n))
	}
	return binary.AppendUvarint(dst, uint64(n))
}

func appendBytes(dst []byte, s string) []byte {
	return append(appendUvarint(dst, len(s)), s...)
}

// AppendEvent appends the binary encoding of e to dst.
func AppendEvent(dst []byte, e Event) []byte {
	return appendValue(appendEventHeader(dst, &e), &e.Fields)
}

// DecodeValue decodes one value from the front of src and returns it with the
// rest of src. The decoded strings do not alias src: the consumed bytes are
// copied once and every string points into that copy, and all member slices
// come from one allocation, so a decode costs two allocations whatever the
// shape. Malformed input yields an error wrapping ErrCorrupt.
func DecodeValue(src []byte) (Value, []byte, error) {
	var m measurer
	n, err := m.value(src, 0, 0)
	if err != nil {
		return Value{}, src, err
	}
	owned := copyBytes(src[:n])
	b := builder{src: owned, kids: make([]Value, m.kids)}
	v := b.value()
	return v, src[n:], nil
}

// DecodeEvent decodes one event from the front of src and returns it with the
// rest of src. Like DecodeValue, the result aliases a private copy, never src.
func DecodeEvent(src []byte) (Event, []byte, error) {
	m, off, flags, err := measureEvent(src)
	if err != nil {
		return Event{}, src, err
	}
	e := buildEvent(copyBytes(src[:off]), make([]Value, m.kids), flags)
	return e, src[off:], nil
}

// EventDecoder decodes events as DecodeEvent does, reusing its memory: the
// member slices of an Event come from a buffer it keeps, and its strings
// alias src instead of a copy of it. An Event it returns is valid until its
// next Decode, and only while src is unchanged.
//
// An EventDecoder is not safe for concurrent use. The zero value is ready.
type EventDecoder struct {
	kids []Value
}

// Decode decodes one event from the front of src and returns it with the
// rest of src; see EventDecoder for how long the Event is valid. Malformed
// input yields an error wrapping ErrCorrupt.
func (d *EventDecoder) Decode(src []byte) (Event, []byte, error) {
	m, off, flags, err := measureEvent(src)
	if err != nil {
		return Event{}, src, err
	}
	if cap(d.kids) < m.kids {
		d.kids = make([]Value, m.kids, max(m.kids, 2*cap(d.kids)))
	}
	e := buildEvent(src[:off], d.kids[:m.kids], flags)
	return e, src[off:], nil
}

// buildEvent decodes an event that measureEvent has validated; its strings
// alias src and its member slices are carved from kids.
func buildEvent(src []byte, kids []Value, flags byte) Event {
	b := builder{src: src, kids: kids, off: 1}
	var e Event
	e.ID = b.bytes()
	ts, k := binary.Varint(src[b.off:])
	e.Timestamp = ts
	b.off += k + 1 // varint and flags byte
	if flags&flagHasMessage != 0 {
		e.HasMessage = true
		e.Message = b.bytes()
	}
	e.Fields = b.value()
	return e
}

// measureEvent validates the event at the front of src and returns the
// member slots it needs, its length and its flags byte.
func measureEvent(src []byte) (m measurer, off int, flags byte, err error) {
	if len(src) == 0 {
		return m, 0, 0, corruptf("empty event")
	}
	if v := src[0]; v != eventVersion1 {
		return m, 0, 0, corruptf("unsupported event version %d (latest %d)", v, eventVersionLatest)
	}
	_, off, err = m.bytes(src, 1, "event id")
	if err != nil {
		return m, 0, 0, err
	}
	_, k := binary.Varint(src[off:])
	if k <= 0 {
		return m, 0, 0, corruptf("bad timestamp varint at offset %d", off)
	}
	off += k
	if off >= len(src) {
		return m, 0, 0, corruptf("truncated event: no flags byte")
	}
	flags = src[off]
	if flags&^knownFlags != 0 {
		return m, 0, 0, corruptf("unknown event flags %#x at offset %d", flags, off)
	}
	off++
	if flags&flagHasMessage != 0 {
		if _, off, err = m.bytes(src, off, "event message"); err != nil {
			return m, 0, 0, err
		}
	}
	if off, err = m.value(src, off, 0); err != nil {
		return m, 0, 0, err
	}
	return m, off, flags, nil
}

func copyBytes(b []byte) []byte {
	if len(b) == 0 {
		return nil
	}
	return append(make([]byte, 0, len(b)), b...)
}

// measurer validates an encoding and counts the member slots it needs,
// without allocating.
type measurer struct {
	kids int
}

// bytes validates a length-prefixed byte string at off and returns it with the
// offset after it.
func (m *measurer) bytes(src []byte, off int, what string) ([]byte, int, error) {
	// Most keys and values are shorter than 128 bytes: a one-byte length.
	if off < len(src) && src[off] < 0x80 {
		n := int(src[off])
		off++
		if n > len(src)-off {
			return nil, off, corruptf("%s length %d exceeds remaining %d bytes at offset %d", what, n, len(src)-off, off)
		}
		return src[off : off+n], off + n, nil
	}
	n, k := binary.Uvarint(src[off:])
	if k <= 0 {
		return nil, off, corruptf("bad %s length varint at offset %d", what, off)
	}
	if n > maxStringLen {
		return nil, off, corruptf("%s length %d exceeds maximum %d at offset %d", what, n, maxStringLen, off)
	}
	off += k
	if n > uint64(len(src)-off) {
		return nil, off, corruptf("%s length %d exceeds remaining %d bytes at offset %d", what, n, len(src)-off, off)
	}
	return src[off : off+int(n)], off + int(n), nil
}

// count reads a container count and checks it against the bytes left; every
// element takes at least minBytes.
func (m *measurer) count(src []byte, off, minBytes int) (int, int, error) {
	n, k := binary.Uvarint(src[off:])
	if k <= 0 {
		return 0, off, corruptf("bad count varint at offset %d", off)
	}
	if n > maxContainerLen {
		return 0, off, corruptf("count %d exceeds maximum %d at offset %d", n, maxContainerLen, off)
	}
	off += k
	if n > uint64(len(src)-off)/uint64(minBytes) {
		return 0, off, corruptf("count %d exceeds what the remaining %d bytes can hold at offset %d", n, len(src)-off, off)
	}
	return int(n), off, nil
}

// value validates one value at off and returns the offset after it.
func (m *measurer) value(src []byte, off, depth int) (int, error) {
	if off >= len(src) {
		return off, corruptf("truncated: value expected at offset %d", off)
	}
	tag := src[off]
	off++
	switch tag {
	case tagNull, tagFalse, tagTrue:
		return off, nil
	case tagInt:
		if _, k := binary.Varint(src[off:]); k <= 0 {
			return off, corruptf("bad int varint at offset %d", off)
		} else {
			return off + k, nil
		}
	case tagFloat:
		if len(src)-off < 8 {
			return off, corruptf("truncated float at offset %d", off)
		}
		return off + 8, nil
	case tagString:
		_, off, err := m.bytes(src, off, "string")
		return off, err
	case tagArray, tagObject:
		if depth >= MaxDepth {
			return off, corruptf("nesting deeper than %d at offset %d", MaxDepth, off)
		}
		minBytes := 1
		if tag == tagObject {
			minBytes = 2 // key length and value tag
		}
		n, off, err := m.count(src, off, minBytes)
		if err != nil {
			return off, err
		}
		m.kids += n
		for range n {
			if tag == tagObject {
				if _, off, err = m.bytes(src, off, "key"); err != nil {
					return off, err
				}
			}
			if off, err = m.value(src, off, depth+1); err != nil {
				return off, err
			}
		}
		return off, nil
	}
	return off, corruptf("unknown value tag %#x at offset %d", tag, off-1)
}

// builder decodes an encoding that measurer has already validated. Strings
// alias src (a private copy) and member slices are carved from kids.
type builder struct {
	src  []byte
	off  int
	kids []Value
}

func (b *builder) bytes() string {
	n, k := binary.Uvarint(b.src[b.off:])
	b.off += k
	s := b.src[b.off : b.off+int(n)]
	b.off += int(n)
	if n == 0 {
		return ""
	}
	return unsafe.String(&s[0], len(s))
}

func (b *builder) take(n int) []Value {
	if n == 0 {
		return nil
	}
	out := b.kids[:n:n]
	b.kids = b.kids[n:]
	return out
}

// value decodes one value; an unknown tag (impossible after validation)
// yields null.
func (b *builder) value() Value {
	tag := b.src[b.off]
	b.off++
	switch tag {
	case tagNull:
		return Value{Kind: Null}
	case tagFalse:
		return Value{Kind: Bool}
	case tagTrue:
		return Value{Kind: Bool, Num: 1}
	case tagInt:
		i, k := binary.Varint(b.src[b.off:])
		b.off += k
		return Value{Kind: Int, Num: uint64(i)}
	case tagFloat:
		u := binary.LittleEndian.Uint64(b.src[b.off:])
		b.off += 8
		return Value{Kind: Float, Num: u}
	case tagString:
		return Value{Kind: String, Str: b.bytes()}
	case tagArray, tagObject:
		n, k := binary.Uvarint(b.src[b.off:])
		b.off += k
		kind := Array
		if tag == tagObject {
			kind = Object
		}
		kids := b.take(int(n))
		for i := range kids {
			var key string
			if tag == tagObject {
				key = b.bytes()
			}
			kids[i] = b.value()
			kids[i].Key = key
		}
		return Value{Kind: kind, Kids: kids}
	}
	return Value{}
}
