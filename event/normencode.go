package event

import (
	"encoding/binary"
	"time"
)

// AppendNormalized appends to dst the encoding (AppendEvent's) of the Event
// that Normalize makes of raw, in one pass over raw: the fields are cleaned
// and their keys checked as they are encoded, without the cleaned value
// tree Normalize builds and AppendEvent walks again. The ingest path's hot
// loop.
//
// maxFields is the cap on the event's fields (CountFields; the engine's
// MaxEventFields). When encoded is true the event is in out, it has at most
// maxFields fields, and outcome is OutcomeKept. Otherwise nothing was
// appended (out is dst) and e is the Event Normalize gives for raw, with
// outcome: the caller goes the tree's way with it (cutting its fields, say).
// That happens for an event dropped for its future timestamp, one with more
// than maxFields fields, one that is not an object, and one with a
// top-level key that must be renamed (renamed keys may collide, which the
// tree resolves). Keys renamed below the top level are handled here, by
// cleaning that object as Normalize does. Either way an event needs one id:
// one generated here is the one e carries.
//
// e, when returned, may alias raw and n's arenas, as Normalize's events do.
func (n *Normalizer) AppendNormalized(dst []byte, raw Value, now time.Time, opts NormalizeOptions, maxFields int) (out []byte, e Event, outcome Outcome, encoded bool) {
	if raw.Kind != Object {
		e, outcome = normalize(n, raw, now, opts, "")
		return dst, e, outcome, false
	}
	var hdr Event
	h := readHeader(&n.vals, &raw, &hdr)
	nowMicros := now.UnixMicro()
	ts := h.timestamp(&raw, nowMicros)
	if ts > nowMicros+FutureLimit.Microseconds() {
		e, outcome = normalize(n, raw, now, opts, "")
		return dst, e, outcome, false
	}
	for i := range raw.Kids {
		if !h.skip(i) && !IsSafeColumnName(raw.Kids[i].Key) {
			e, outcome = normalize(n, raw, now, opts, "")
			return dst, e, outcome, false
		}
	}
	if h.idIdx >= 0 {
		hdr.ID = idText(raw.Kids[h.idIdx])
	}
	if hdr.ID == "" {
		hdr.ID = newID(n, opts)
	}
	hdr.Timestamp = ts

	start := len(dst)
	dst = appendEventHeader(dst, &hdr)
	enc := cleanEncoder{a: &n.vals}
	dst = append(dst, tagObject)
	countAt := len(dst)
	if len(raw.Kids) >= 0x80 {
		// The count may need more than the one byte reserved below.
		e, outcome = normalize(n, raw, now, opts, hdr.ID)
		return dst[:start], e, outcome, false
	}
	dst = append(dst, 0)
	kept := 0
	for i := range raw.Kids {
		if h.skip(i) {
			continue
		}
		var ok bool
		if dst, ok = enc.member(dst, &raw.Kids[i]); ok {
			kept++
		}
	}
	if enc.fields > maxFields {
		e, outcome = normalize(n, raw, now, opts, hdr.ID)
		return dst[:start], e, outcome, false
	}
	dst[countAt] = byte(kept)
	return dst, Event{}, OutcomeKept, true
}

// appendEventHeader appends AppendEvent's encoding of e up to its Fields.
func appendEventHeader(dst []byte, e *Event) []byte {
	dst = append(dst, eventVersionLatest)
	dst = appendBytes(dst, e.ID)
	dst = binary.AppendVarint(dst, e.Timestamp)
	if e.HasMessage {
		dst = append(dst, flagHasMessage)
		return appendBytes(dst, e.Message)
	}
	return append(dst, 0)
}

// cleanEncoder encodes raw values as cleanValue would leave them, then
// appendValue write them, and counts the fields (CountFields) it wrote.
type cleanEncoder struct {
	a      *valueArena
	fields int
}

// member appends an object member (its key, then its cleaned value) and
// reports whether it is kept; a member that cleaning drops leaves dst as it
// was. The key must be one BigQueryColumnName leaves as it is.
func (c *cleanEncoder) member(dst []byte, m *Value) ([]byte, bool) {
	// Scalars first, written in place: most members are, and the calls
	// below cost more than writing them.
	switch m.Kind {
	case Null:
		return dst, false
	case String:
		if m.Str == "" {
			return dst, false
		}
		c.fields++
		return appendBytes(append(appendBytes(dst, m.Key), tagString), m.Str), true
	case Bool, Int, Float:
		c.fields++
		return appendValue(appendBytes(dst, m.Key), m), true
	}
	mark, fields := len(dst), c.fields
	dst, ok := c.value(appendBytes(dst, m.Key), m)
	if !ok {
		c.fields = fields
		return dst[:mark], false
	}
	c.fields++
	return dst, true
}

// value appends v cleaned, or leaves dst as it was and returns false when
// cleaning drops v.
func (c *cleanEncoder) value(dst []byte, v *Value) ([]byte, bool) {
	switch v.Kind {
	case Null:
		return dst, false
	case String:
		if v.Str == "" {
			return dst, false
		}
		return appendBytes(append(dst, tagString), v.Str), true
	case Array, Object:
		return c.container(dst, v)
	}
	return appendValue(dst, v), true
}

// container appends an array or an object cleaned: its elements or members
// cleaned, without those dropped, and nothing when none is left.
func (c *cleanEncoder) container(dst []byte, v *Value) ([]byte, bool) {
	if len(v.Kids) == 0 {
		return dst, false
	}
	object := v.Kind == Object
	if len(v.Kids) >= 0x80 || (object && !safeKeys(v.Kids)) {
		// A count that may take more than one byte, or keys to rename
		// (whose collisions the tree resolves): clean the tree.
		cleaned, ok := cleanValue(c.a, *v)
		if !ok {
			return dst, false
		}
		if object {
			c.fields += CountFields(cleaned)
		}
		return appendValue(dst, &cleaned), true
	}
	mark := len(dst)
	tag := byte(tagArray)
	if object {
		tag = tagObject
	}
	dst = append(dst, tag, 0) // the count, set below
	kept := 0
	for i := range v.Kids {
		var ok bool
		if object {
			dst, ok = c.member(dst, &v.Kids[i])
		} else {
			// Fields inside arrays are not counted: an array is one field.
			fields := c.fields
			dst, ok = c.value(dst, &v.Kids[i])
			c.fields = fields
		}
		if ok {
			kept++
		}
	}
	if kept == 0 {
		return dst[:mark], false
	}
	dst[mark+1] = byte(kept)
	return dst, true
}

// safeKeys reports whether every member's key is one BigQueryColumnName
// leaves as it is.
func safeKeys(ms []Value) bool {
	for i := range ms {
		if !IsSafeColumnName(ms[i].Key) {
			return false
		}
	}
	return true
}
