package event

import "time"

// Transcoding: a raw event's JSON object straight to the encoding of its
// normalised Event (AppendEvent's), in one pass over the text, with no
// value tree. It covers the events ingest sees nearly always; anything
// else (see TranscodeEvent) is left to the tree's way, Parse and
// Normalize, which are its oracle.

// transcodeMaxDepth is the deepest object or array the transcoder takes
// on (the event object is at 1); deeper events go the tree's way, which
// applies MaxDepth and its error.
const transcodeMaxDepth = 64

// transcodeMaxMembers is the most members or elements a container may have
// in the transcoder: its count then fits the one byte it reserves, and
// finding duplicate keys by comparing each with those before stays cheap.
const transcodeMaxMembers = 0x7f

// transcoder is the scratch of TranscodeEvent, kept in a Normalizer.
type transcoder struct {
	// fields is the encoding of the event's fields (members only, without
	// the object's tag and count), written before the header can be.
	fields []byte
	// keys are the keys of the objects being read, outermost first, to
	// find duplicates.
	keys []string
	// count is the fields written (CountFields counts them).
	count int
}

// msgCandidate is one top-level member that may be the message: a string
// (or null) and the span of fields it was written to, empty when cleaning
// dropped it.
type msgCandidate struct {
	present    bool
	str        string
	start, end int
}

// TranscodeEvent reads the JSON object at p's position (as ParseArrayWith
// hands it an array element), normalises it as Normalize would the value
// Parse gives for it, and appends the Event's encoding to dst, as
// AppendNormalized does. It returns the outcome and true when it took the
// event: then p is past the object, and an event dropped for its future
// timestamp was not appended. It returns false, with dst and p's position
// as they were, for what it leaves to the tree's way: malformed or
// unusual JSON (duplicate keys, nesting deeper than 64, a container of more
// than 127 members, a number out of range), keys to rename or written
// with escapes, an id or timestamp that is not a scalar, a message
// candidate that is not a string or null, more than maxFields fields, and
// anything that is not an object.
// It generates an id (opts.NewID or n's) only for an event it takes.
//
// Escaped strings live in p's arena until its next element or Reset.
func (p *Parser) TranscodeEvent(dst []byte, n *Normalizer, now time.Time, opts NormalizeOptions, maxFields int) ([]byte, Outcome, bool) {
	start := p.pos
	out, outcome, ok := n.tc.event(p, dst, n, now, opts, maxFields)
	if !ok {
		p.pos = start
		return dst, OutcomeKept, false
	}
	return out, outcome, true
}

// event is TranscodeEvent; false leaves p's position anywhere.
func (t *transcoder) event(p *Parser, dst []byte, n *Normalizer, now time.Time, opts NormalizeOptions, maxFields int) ([]byte, Outcome, bool) {
	data := p.data
	if p.pos >= len(data) || data[p.pos] != '{' {
		return dst, 0, false
	}
	p.pos++
	t.fields, t.keys, t.count = t.fields[:0], t.keys[:0], 0
	var id, ts Value
	hasID, hasTS := false, false
	var cands [3]msgCandidate // message, event_message, log_entry
	kept := 0
	var filter uint64
	p.skipSpace()
	if p.pos < len(data) && data[p.pos] == '}' {
		p.pos++
	} else {
		for {
			key, ok := t.key(p, 0, &filter)
			if !ok {
				return dst, 0, false
			}
			rank := -1
			switch key {
			case "id", "timestamp":
				v, ok := p.scalar()
				if !ok {
					return dst, 0, false
				}
				if key == "id" {
					id, hasID = v, true
				} else {
					ts, hasTS = v, true
				}
			case "message":
				rank = 0
			case "event_message":
				rank = 1
			case "log_entry":
				rank = 2
			default:
				mark, count := len(t.fields), t.count
				t.fields = appendBytes(t.fields, key)
				ok, keep := t.value(p, 2)
				if !ok {
					return dst, 0, false
				}
				if keep {
					kept++
					t.count++
				} else {
					t.fields, t.count = t.fields[:mark], count
				}
			}
			if rank >= 0 {
				v, ok := p.scalar()
				if !ok || (v.Kind != String && v.Kind != Null) {
					return dst, 0, false
				}
				c := &cands[rank]
				c.present, c.str, c.start = true, v.Str, len(t.fields)
				if v.Str != "" {
					t.fields = appendBytes(append(appendBytes(t.fields, key), tagString), v.Str)
					kept++
					t.count++
				}
				c.end = len(t.fields)
			}
			if more, ok := p.afterMember('}'); !ok {
				return dst, 0, false
			} else if !more {
				break
			}
		}
	}

	// The message is the first candidate cleaning keeps; the members it
	// stands for leave the fields (see rawHeader.skip).
	var hdr Event
	used := -1
	for rank := range cands {
		if c := &cands[rank]; c.present && c.str != "" {
			used, hdr.Message, hdr.HasMessage = rank, c.str, true
			break
		}
	}
	var drop [2]*msgCandidate // in field order
	switch used {
	case 0:
		drop = [2]*msgCandidate{&cands[0], &cands[1]}
		if cands[1].present && cands[1].start < cands[0].start {
			drop = [2]*msgCandidate{&cands[1], &cands[0]}
		}
	case 1:
		drop[0] = &cands[1]
	case 2:
		drop[0] = &cands[2]
	}
	for _, c := range drop {
		if c != nil && c.end > c.start {
			kept--
			t.count--
		}
	}
	if kept > transcodeMaxMembers || t.count > maxFields {
		return dst, 0, false
	}

	if hasID {
		hdr.ID = idText(id)
	}
	if hdr.ID == "" {
		hdr.ID = newID(n, opts)
	}
	nowMicros := now.UnixMicro()
	hdr.Timestamp = nowMicros
	if hasTS {
		if micros, ok := TimestampMicros(ts); ok {
			hdr.Timestamp = micros
		}
	}
	if hdr.Timestamp > nowMicros+FutureLimit.Microseconds() {
		return dst, OutcomeDroppedFuture, true
	}
	dst = appendEventHeader(dst, &hdr)
	dst = append(dst, tagObject, byte(kept))
	from := 0
	for _, c := range drop {
		if c != nil && c.end > c.start {
			dst = append(dst, t.fields[from:c.start]...)
			from = c.end
		}
	}
	return append(dst, t.fields[from:]...), OutcomeKept, true
}

// key reads a member's key, the ':' after it and the space before its
// value. It takes only keys that BigQueryColumnName leaves as they are,
// written without escapes; false for others, for a malformed member, and
// for a key its object already has (whose value the tree's way would
// move). objKeys is where the keys of the member's object start in
// t.keys; filter is the object's filter of the keys seen (see
// dedupMembers), with which most keys need no comparison.
func (t *transcoder) key(p *Parser, objKeys int, filter *uint64) (string, bool) {
	data := p.data
	if p.pos >= len(data) || data[p.pos] != '"' {
		return "", false
	}
	start := p.pos + 1
	i := start
	for i < len(data) && columnNameByte[data[i]] {
		i++
	}
	if i >= len(data) || data[i] != '"' || i-start > MaxColumnNameLen || len(t.keys)-objKeys >= transcodeMaxMembers {
		return "", false
	}
	key := aliasString(data[start:i])
	if len(key) > 0 && ((key[0] >= '0' && key[0] <= '9') || hasReservedPrefix(key)) {
		return "", false
	}
	p.pos = i + 1
	h := uint64(len(key))
	if len(key) > 0 {
		h = h<<24 | uint64(key[0])<<16 | uint64(key[len(key)/2])<<8 | uint64(key[len(key)-1])
	}
	bit := uint64(1) << ((h * 0x9e3779b97f4a7c15) >> 58)
	if *filter&bit != 0 {
		for _, k := range t.keys[objKeys:] {
			if k == key {
				return "", false
			}
		}
	}
	*filter |= bit
	t.keys = append(t.keys, key)
	p.skipSpace()
	if p.pos >= len(data) || data[p.pos] != ':' {
		return "", false
	}
	p.pos++
	p.skipSpace()
	return key, true
}

// afterMember reads what follows an object member or array element: ','
// and the space after it (more is false), or the container's closing
// byte (more is true). ok is false for anything else.
func (p *Parser) afterMember(closing byte) (more, ok bool) {
	p.skipSpace()
	if p.pos >= len(p.data) {
		return false, false
	}
	c := p.data[p.pos]
	p.pos++
	switch c {
	case closing:
		return false, true
	case ',':
		p.skipSpace()
		return true, true
	}
	return false, false
}

// scalar reads a string, number, true, false or null at p's position; false
// for anything else.
func (p *Parser) scalar() (Value, bool) {
	data := p.data
	if p.pos >= len(data) {
		return Value{}, false
	}
	switch c := data[p.pos]; {
	case c == '"':
		s, err := p.string()
		return Value{Kind: String, Str: s}, err == nil
	case c == '-' || (c >= '0' && c <= '9'):
		if p.number() != nil {
			return Value{}, false
		}
		v := p.stack[len(p.stack)-1]
		p.stack = p.stack[:len(p.stack)-1]
		return v, true
	case p.word("true"):
		return Value{Kind: Bool, Num: 1}, true
	case p.word("false"):
		return Value{Kind: Bool}, true
	case p.word("null"):
		return Value{Kind: Null}, true
	}
	return Value{}, false
}

// word reads the literal w at p's position, if it is there.
func (p *Parser) word(w string) bool {
	if len(p.data)-p.pos >= len(w) && string(p.data[p.pos:p.pos+len(w)]) == w {
		p.pos += len(w)
		return true
	}
	return false
}

// value appends the value at p's position to t.fields as cleaning would
// leave it, nothing when cleaning drops it (keep false). depth is the
// value's nesting, the event object's members being at 2. ok is false for
// what the transcoder does not take.
func (t *transcoder) value(p *Parser, depth int) (ok, keep bool) {
	data := p.data
	if p.pos >= len(data) {
		return false, false
	}
	switch data[p.pos] {
	case '{':
		return t.object(p, depth)
	case '[':
		return t.array(p, depth)
	case '"': // the most common value: written without a Value
		str, err := p.string()
		if err != nil {
			return false, false
		}
		if str == "" {
			return true, false
		}
		t.fields = appendBytes(append(t.fields, tagString), str)
		return true, true
	}
	v, ok := p.scalar()
	switch {
	case !ok:
		return false, false
	case v.Kind == Null, v.Kind == String && v.Str == "":
		return true, false
	}
	t.fields = appendValue(t.fields, &v)
	return true, true
}

// object appends the object at p's position, cleaned (see value).
func (t *transcoder) object(p *Parser, depth int) (ok, keep bool) {
	if depth > transcodeMaxDepth {
		return false, false
	}
	p.pos++ // '{'
	mark := len(t.fields)
	t.fields = append(t.fields, tagObject, 0) // the count, set below
	objKeys := len(t.keys)
	kept := 0
	var filter uint64
	p.skipSpace()
	if p.pos < len(p.data) && p.data[p.pos] == '}' {
		p.pos++
	} else {
		for {
			key, ok := t.key(p, objKeys, &filter)
			if !ok {
				return false, false
			}
			m, count := len(t.fields), t.count
			t.fields = appendBytes(t.fields, key)
			ok, keep := t.value(p, depth+1)
			if !ok {
				return false, false
			}
			if keep {
				kept++
				t.count++
			} else {
				t.fields, t.count = t.fields[:m], count
			}
			if more, ok := p.afterMember('}'); !ok {
				return false, false
			} else if !more {
				break
			}
		}
	}
	t.keys = t.keys[:objKeys]
	if kept == 0 {
		t.fields = t.fields[:mark]
		return true, false
	}
	t.fields[mark+1] = byte(kept)
	return true, true
}

// array appends the array at p's position, cleaned (see value). The
// fields of its elements are not counted: an array is one field.
func (t *transcoder) array(p *Parser, depth int) (ok, keep bool) {
	if depth > transcodeMaxDepth {
		return false, false
	}
	p.pos++ // '['
	mark := len(t.fields)
	t.fields = append(t.fields, tagArray, 0) // the count, set below
	count := t.count
	n, kept := 0, 0
	p.skipSpace()
	if p.pos < len(p.data) && p.data[p.pos] == ']' {
		p.pos++
	} else {
		for {
			if n++; n > transcodeMaxMembers {
				return false, false
			}
			ok, keep := t.value(p, depth+1)
			if !ok {
				return false, false
			}
			if keep {
				kept++
			}
			if more, ok := p.afterMember(']'); !ok {
				return false, false
			} else if !more {
				break
			}
		}
	}
	t.count = count
	if kept == 0 {
		t.fields = t.fields[:mark]
		return true, false
	}
	t.fields[mark+1] = byte(kept)
	return true, true
}
