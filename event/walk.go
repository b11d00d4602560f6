package event

import "encoding/binary"

// FieldVisitor receives the fields of an event, depth first, as WalkEvent
// reads them from the event's encoding (or as a caller walks a Value tree
// the same way): a consumer that copies the values elsewhere, as the
// engine's head does into columns, needs no Value tree in between.
//
// Keys and strings alias the encoding; i is a member's position among the
// members of its object.
type FieldVisitor interface {
	// Begin is called first, with the event's base columns.
	Begin(id string, timestamp int64, message string, hasMessage bool)
	// Scalar is called for a member holding a null, bool, int, float or
	// string: its kind and payload as a Value holds them (num for a bool,
	// an int or a float; str for a string). They come apart rather than
	// in a Value, which is too large to pass in registers.
	Scalar(i int, key string, kind Kind, num uint64, str string)
	// Object is called for a member holding an object; its members
	// follow, then EndObject.
	Object(i int, key string)
	// EndObject ends the object of the matching Object call.
	EndObject()
	// Array is called for a member holding an array; enc is the array's
	// encoding as AppendValue writes it (DecodeValue reads it).
	Array(i int, key string, enc []byte)
}

// WalkEvent reads the event at the front of src, as AppendEvent writes it,
// calling v for its base columns and then for every field of its Fields
// (when they are an object, as a normalised event's are), and returns the
// rest of src. It validates as it goes: malformed input yields an error
// wrapping ErrCorrupt, after the calls for what came before the damage.
// It allocates nothing.
func WalkEvent(src []byte, v FieldVisitor) ([]byte, error) {
	var m measurer
	if len(src) == 0 {
		return src, corruptf("empty event")
	}
	if src[0] != eventVersion1 {
		return src, corruptf("unsupported event version %d (latest %d)", src[0], eventVersionLatest)
	}
	id, off, err := m.bytes(src, 1, "event id")
	if err != nil {
		return src, err
	}
	ts, k := binary.Varint(src[off:])
	if k <= 0 {
		return src, corruptf("bad timestamp varint at offset %d", off)
	}
	off += k
	if off >= len(src) {
		return src, corruptf("truncated event: no flags byte")
	}
	flags := src[off]
	if flags&^knownFlags != 0 {
		return src, corruptf("unknown event flags %#x at offset %d", flags, off)
	}
	off++
	var msg []byte
	if flags&flagHasMessage != 0 {
		if msg, off, err = m.bytes(src, off, "event message"); err != nil {
			return src, err
		}
	}
	v.Begin(aliasString(id), ts, aliasString(msg), flags&flagHasMessage != 0)
	if off >= len(src) {
		return src, corruptf("truncated: value expected at offset %d", off)
	}
	if src[off] != tagObject {
		// Fields that are not an object hold no field.
		if off, err = m.value(src, off, 0); err != nil {
			return src, err
		}
		return src[off:], nil
	}
	w := walker{src: src, v: v}
	if off, err = w.members(off+1, 0); err != nil {
		return src, err
	}
	return src[off:], nil
}

// walker is WalkEvent's state.
type walker struct {
	m   measurer // by value: a pointer would move it to the heap
	src []byte
	v   FieldVisitor
}

// members reads an object's member count at off and its members, calling
// the visitor; depth is the object's (the Fields are at 0), as measurer
// counts it.
func (w *walker) members(off, depth int) (int, error) {
	n, off, err := w.m.count(w.src, off, 2) // key length and value tag
	if err != nil {
		return off, err
	}
	for i := range n {
		var key []byte
		if key, off, err = w.m.bytes(w.src, off, "key"); err != nil {
			return off, err
		}
		if off >= len(w.src) {
			return off, corruptf("truncated: value expected at offset %d", off)
		}
		k := aliasString(key)
		start := off
		switch tag := w.src[off]; tag {
		case tagObject:
			if depth+1 >= MaxDepth {
				return off, corruptf("nesting deeper than %d at offset %d", MaxDepth, off+1)
			}
			w.v.Object(i, k)
			if off, err = w.members(off+1, depth+1); err != nil {
				return off, err
			}
			w.v.EndObject()
		case tagArray:
			if off, err = w.m.value(w.src, off, depth+1); err != nil {
				return off, err
			}
			w.v.Array(i, k, w.src[start:off])
		default:
			var kind Kind
			var num uint64
			var str string
			if kind, num, str, off, err = w.scalar(off); err != nil {
				return off, err
			}
			w.v.Scalar(i, k, kind, num, str)
		}
	}
	return off, nil
}

// scalar reads the scalar value at off: its kind and payload.
func (w *walker) scalar(off int) (Kind, uint64, string, int, error) {
	src := w.src
	tag := src[off]
	off++
	switch tag {
	case tagNull:
		return Null, 0, "", off, nil
	case tagFalse:
		return Bool, 0, "", off, nil
	case tagTrue:
		return Bool, 1, "", off, nil
	case tagInt:
		i, k := binary.Varint(src[off:])
		if k <= 0 {
			return Null, 0, "", off, corruptf("bad int varint at offset %d", off)
		}
		return Int, uint64(i), "", off + k, nil
	case tagFloat:
		if len(src)-off < 8 {
			return Null, 0, "", off, corruptf("truncated float at offset %d", off)
		}
		return Float, binary.LittleEndian.Uint64(src[off:]), "", off + 8, nil
	case tagString:
		s, off, err := w.m.bytes(src, off, "string")
		if err != nil {
			return Null, 0, "", off, err
		}
		return String, 0, aliasString(s), off, nil
	}
	return Null, 0, "", off, corruptf("unknown value tag %#x at offset %d", tag, off-1)
}

// WalkFields calls v for e's base columns and fields as WalkEvent calls it
// for e's encoding (arrays are encoded for Array, into scratch, which is
// returned for reuse).
func WalkFields(e *Event, v FieldVisitor, scratch []byte) []byte {
	v.Begin(e.ID, e.Timestamp, e.Message, e.HasMessage)
	if e.Fields.Kind == Object {
		scratch = walkMembers(e.Fields.Kids, v, scratch)
	}
	return scratch
}

func walkMembers(kids []Value, v FieldVisitor, scratch []byte) []byte {
	for i := range kids {
		m := &kids[i]
		switch m.Kind {
		case Object:
			v.Object(i, m.Key)
			scratch = walkMembers(m.Kids, v, scratch)
			v.EndObject()
		case Array:
			scratch = AppendValue(scratch[:0], *m)
			v.Array(i, m.Key, scratch)
		default:
			v.Scalar(i, m.Key, m.Kind, m.Num, m.Str)
		}
	}
	return scratch
}

// DecodeValue decodes one value from the front of src as DecodeValue does,
// reusing d's memory: strings alias src, and the Value is valid until d's
// next Decode or DecodeValue, while src is unchanged.
func (d *EventDecoder) DecodeValue(src []byte) (Value, []byte, error) {
	var m measurer
	n, err := m.value(src, 0, 0)
	if err != nil {
		return Value{}, src, err
	}
	if cap(d.kids) < m.kids {
		d.kids = make([]Value, m.kids, max(m.kids, 2*cap(d.kids)))
	}
	b := builder{src: src[:n], kids: d.kids[:m.kids]}
	return b.value(), src[n:], nil
}
