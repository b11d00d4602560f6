package event

import (
	crand "crypto/rand"
	"encoding/binary"
	"math/rand/v2"
	"strconv"
	"time"

	"github.com/google/uuid"
)

// FutureLimit is how far past "now" an event's timestamp may lie; Normalize
// reports later events as OutcomeDroppedFuture (Logflare drops them silently).
const FutureLimit = time.Hour

// NormalizeOptions configures Normalize. The zero value is the production
// configuration.
type NormalizeOptions struct {
	// NewID returns the id of an event that carries none. Nil means a random
	// UUIDv4 string (github.com/google/uuid's, or a Normalizer's own: see
	// Normalizer). Tests inject a fixed sequence.
	NewID func() string
}

// Outcome says what the caller should do with a normalised event.
type Outcome uint8

const (
	// OutcomeKept: store the event.
	OutcomeKept Outcome = 0
	// OutcomeDroppedFuture: the timestamp is more than FutureLimit after now;
	// do not store the event, count it.
	OutcomeDroppedFuture Outcome = 1
)

func (o Outcome) String() string {
	switch o {
	case OutcomeKept:
		return "kept"
	case OutcomeDroppedFuture:
		return "dropped_future"
	}
	return "outcome(" + strconv.Itoa(int(o)) + ")"
}

// Normalize turns one raw event object into an Event by Logflare's ingest
// rules (docs/compat/logflare.md §4):
//
//   - Cleaning: members whose value is null, "", {} or [] are dropped at every
//     depth, as are such array elements; a container left empty by this is
//     dropped too.
//   - Keys at every depth are renamed by BigQueryColumnName. When two keys of
//     one object collide after renaming (e.g. "a-b" and "_a_b"), one member
//     survives, deterministically: the one whose key was already safe (so was
//     not renamed) wins; if all were renamed, the first in member order wins.
//     The survivor keeps its own position.
//   - Message: the cleaned "message" if present, else "event_message", else the
//     legacy "log_entry" (a candidate that cleaning drops, such as null or
//     "", counts as absent). A string is used as is; any other value becomes its
//     compact JSON. The member used is removed from Fields; when "message" is
//     used, "event_message" is removed too. A "log_entry" not used as the
//     message stays an ordinary field (Logflare gives it no meaning). No
//     message at all → HasMessage false.
//   - ID: "id" if it is a non-empty string, its decimal text if it is a
//     number, otherwise opts.NewID() (default a random UUIDv4).
//   - Timestamp: see TimestampMicros; "now" when missing or unusable.
//   - Fields: every other top-level member, in arrival order ("id" and
//     "timestamp" never appear there).
//
// A raw value that is not an object is treated as the sole message: a
// string as is, anything else as its JSON text.
//
// Normalize does not modify raw. The Event may alias raw's strings and
// unchanged sub-trees (and so the buffer raw was parsed from); the engine
// copies what it keeps (Event.Clone).
//
// The Outcome is OutcomeDroppedFuture when the timestamp lies more than
// FutureLimit after now; the Event is still returned so callers can log it.
func Normalize(raw Value, now time.Time, opts NormalizeOptions) (Event, Outcome) {
	return normalize(nil, raw, now, opts, "")
}

// Normalizer runs Normalize with reusable memory: the member slices it has
// to copy and the ids it generates come from arenas, so a warm Normalizer
// allocates nothing for a typical event (only renamed keys and non-string
// messages). The Events it returns stay valid until Reset. Not safe for
// concurrent use; the zero value is ready.
//
// Its random ids are UUIDv4 text drawn from a ChaCha8 stream seeded from
// crypto/rand when first needed: as unpredictable as uuid.NewString's,
// without a system call and an allocation per id.
type Normalizer struct {
	vals  valueArena
	bytes byteArena
	rng   *rand.ChaCha8
	tc    transcoder // Parser.TranscodeEvent's scratch
}

// Normalize is the package-level Normalize, allocating from n's arena.
func (n *Normalizer) Normalize(raw Value, now time.Time, opts NormalizeOptions) (Event, Outcome) {
	return normalize(n, raw, now, opts, "")
}

// Reset lets n reuse the memory of every Event it returned so far; those
// Events must not be used afterwards.
func (n *Normalizer) Reset() {
	n.vals.reset()
	n.bytes.reset()
	clear(n.tc.keys[:cap(n.tc.keys)]) // keys alias the last input
	if cap(n.tc.fields) > maxKeptScratch {
		n.tc.fields = nil // do not keep what one huge event needed
	}
}

// maxKeptScratch is the largest transcoding scratch a Normalizer keeps
// for the next event.
const maxKeptScratch = 1 << 20

// newUUID returns a random UUIDv4 in its canonical text form, in n's
// byte arena.
func (n *Normalizer) newUUID() string {
	if n.rng == nil {
		var seed [32]byte
		crand.Read(seed[:]) // never fails (crypto/rand panics if it cannot)
		n.rng = rand.NewChaCha8(seed)
	}
	var u [16]byte
	binary.LittleEndian.PutUint64(u[:8], n.rng.Uint64())
	binary.LittleEndian.PutUint64(u[8:], n.rng.Uint64())
	u[6] = u[6]&0x0f | 0x40 // version 4
	u[8] = u[8]&0x3f | 0x80 // RFC 4122 variant
	var text [36]byte
	const digits = "0123456789abcdef"
	j := 0
	for i, b := range u {
		if i == 4 || i == 6 || i == 8 || i == 10 {
			text[j] = '-'
			j++
		}
		text[j], text[j+1] = digits[b>>4], digits[b&0x0f]
		j += 2
	}
	return n.bytes.store(text[:])
}

// allocKids returns a slice of length i and capacity n, from the arena when
// there is one.
func allocKids(a *valueArena, i, n int) []Value {
	if a == nil {
		return make([]Value, i, n)
	}
	return a.alloc(n)[:i]
}

// normalize is Normalize with n's arenas when n is not nil. presetID, when
// not "", is the id of an event that carries none (instead of a new one):
// AppendNormalized's, when it hands an event back to this path.
func normalize(n *Normalizer, raw Value, now time.Time, opts NormalizeOptions, presetID string) (Event, Outcome) {
	var a *valueArena
	if n != nil {
		a = &n.vals
	}
	nowMicros := now.UnixMicro()
	e := Event{Fields: Value{Kind: Object}}
	if raw.Kind != Object {
		e.Timestamp = nowMicros
		e.ID = newID(n, opts)
		if raw.Kind == String {
			e.Message, e.HasMessage = raw.Str, true
		} else if cleaned, ok := cleanValue(a, raw); ok {
			e.Message, e.HasMessage = string(AppendJSON(nil, cleaned)), true
		}
		return e, OutcomeKept
	}

	h := readHeader(a, &raw, &e)
	if h.idIdx >= 0 {
		e.ID = idText(raw.Kids[h.idIdx])
	}
	if e.ID == "" {
		e.ID = presetID
	}
	if e.ID == "" {
		e.ID = newID(n, opts)
	}
	e.Timestamp = h.timestamp(&raw, nowMicros)

	kids := allocKids(a, 0, len(raw.Kids))
	var ren []bool // nil until the first renamed key
	for i := range raw.Kids {
		if h.skip(i) {
			continue
		}
		m, ok := cleanValue(a, raw.Kids[i])
		if !ok {
			continue
		}
		m.Key = BigQueryColumnName(raw.Kids[i].Key)
		renamed := m.Key != raw.Kids[i].Key
		if renamed && ren == nil {
			ren = make([]bool, len(kids), len(raw.Kids))
		}
		if ren != nil {
			ren = append(ren, renamed)
		}
		kids = append(kids, m)
	}
	if ren != nil {
		kids = resolveCollisions(kids, ren)
	}
	if len(kids) > 0 {
		e.Fields.Kids = kids
	}

	if e.Timestamp > nowMicros+FutureLimit.Microseconds() {
		return e, OutcomeDroppedFuture
	}
	return e, OutcomeKept
}

// rawHeader is where a raw object keeps the members Normalize gives a
// meaning to (-1 when absent; the first of duplicates), and which message
// candidate it used (0 message, 1 event_message, 2 log_entry; -1 none).
type rawHeader struct {
	idIdx, tsIdx int
	msgIdx       [3]int // message, event_message, log_entry
	used         int
}

// readHeader finds the members of raw (an object) that Normalize gives a
// meaning to, and sets e's message from the first candidate that survives
// cleaning.
func readHeader(a *valueArena, raw *Value, e *Event) rawHeader {
	h := rawHeader{idIdx: -1, tsIdx: -1, msgIdx: [3]int{-1, -1, -1}, used: -1}
	for i := range raw.Kids {
		switch raw.Kids[i].Key {
		case "id":
			h.idIdx = firstIndex(h.idIdx, i)
		case "timestamp":
			h.tsIdx = firstIndex(h.tsIdx, i)
		case "message":
			h.msgIdx[0] = firstIndex(h.msgIdx[0], i)
		case "event_message":
			h.msgIdx[1] = firstIndex(h.msgIdx[1], i)
		case "log_entry":
			h.msgIdx[2] = firstIndex(h.msgIdx[2], i)
		}
	}
	for rank, idx := range h.msgIdx {
		if idx < 0 {
			continue
		}
		if m, ok := cleanValue(a, raw.Kids[idx]); ok {
			h.used = rank
			if m.Kind == String {
				e.Message = m.Str
			} else {
				e.Message = string(AppendJSON(nil, m))
			}
			e.HasMessage = true
			break
		}
	}
	return h
}

// timestamp returns the event's timestamp: its "timestamp" member's when
// usable (TimestampMicros), else now.
func (h *rawHeader) timestamp(raw *Value, nowMicros int64) int64 {
	if h.tsIdx >= 0 {
		if ts, ok := TimestampMicros(raw.Kids[h.tsIdx]); ok {
			return ts
		}
	}
	return nowMicros
}

// skip reports the top-level members that do not become fields: id,
// timestamp and the message members used.
func (h *rawHeader) skip(i int) bool {
	switch i {
	case h.idIdx, h.tsIdx:
		return true
	case h.msgIdx[0]:
		return h.used == 0
	case h.msgIdx[1]:
		return h.used == 0 || h.used == 1
	case h.msgIdx[2]:
		return h.used == 2
	}
	return false
}

func firstIndex(cur, i int) int {
	if cur >= 0 {
		return cur
	}
	return i
}

// newID returns the id of an event that carries none: opts.NewID's, else
// a random UUIDv4 (from n when there is one).
func newID(n *Normalizer, opts NormalizeOptions) string {
	switch {
	case opts.NewID != nil:
		return opts.NewID()
	case n != nil:
		return n.newUUID()
	}
	return uuid.NewString()
}

// idText returns the id Logflare would keep for v, or "" when a new one must
// be generated.
func idText(v Value) string {
	switch v.Kind {
	case String:
		return v.Str
	case Int:
		return strconv.FormatInt(v.Int(), 10)
	case Float:
		return strconv.FormatFloat(v.Float(), 'f', -1, 64)
	}
	return ""
}

// isEmpty reports the values cleaning drops.
func isEmpty(v Value) bool {
	switch v.Kind {
	case Null:
		return true
	case String:
		return v.Str == ""
	case Array, Object:
		return len(v.Kids) == 0
	}
	return false
}

// cleanValue returns v cleaned and with renamed keys at every depth, and false
// when v is empty and must be dropped. v's Key is kept as is. Sub-trees that
// need no change are returned as they are (no copy).
func cleanValue(a *valueArena, v Value) (Value, bool) {
	switch v.Kind {
	case Array:
		kids, changed := cleanKids(a, v.Kids, false)
		if len(kids) == 0 {
			return v, false
		}
		if changed {
			v.Kids = kids
		}
		return v, true
	case Object:
		kids, changed := cleanKids(a, v.Kids, true)
		if len(kids) == 0 {
			return v, false
		}
		if changed {
			v.Kids = kids
		}
		return v, true
	}
	return v, !isEmpty(v)
}

// cleanKids cleans the elements or members of a container. The input slice is
// never written; a new one is allocated at the first change. It works on
// pointers and copies a Value only into a new slice: this is the hot loop of
// ingest.
func cleanKids(a *valueArena, in []Value, object bool) ([]Value, bool) {
	var out []Value // nil until the first change
	var ren []bool  // per member of out: key was renamed; nil until the first rename
	for i := range in {
		src := &in[i]
		keep, kidsChanged := true, false
		var kids []Value
		if src.Kind == Array || src.Kind == Object {
			kids, kidsChanged = cleanKids(a, src.Kids, src.Kind == Object)
			keep = len(kids) > 0
		} else {
			keep = !isEmpty(*src)
		}
		name, renamed := src.Key, false
		if object && keep && !IsSafeColumnName(src.Key) {
			name, renamed = BigQueryColumnName(src.Key), true
		}
		if out == nil {
			if keep && !renamed && !kidsChanged {
				continue
			}
			out = allocKids(a, i, len(in))
			copy(out, in[:i])
		}
		if !keep {
			continue
		}
		if renamed && ren == nil {
			ren = make([]bool, len(out), len(in))
		}
		if ren != nil {
			ren = append(ren, renamed)
		}
		out = append(out, *src)
		last := &out[len(out)-1]
		last.Key = name
		if kidsChanged {
			last.Kids = kids
		}
	}
	if out == nil {
		return in, false
	}
	if ren != nil {
		out = resolveCollisions(out, ren)
	}
	return out, true
}

// resolveCollisions removes members whose key equals another's after
// renaming; ren[i] tells whether kids[i] got its key by renaming. Among
// colliding members the one that was not renamed wins, else the first; the
// winner keeps its position. kids is compacted in place (callers pass a
// slice they own).
func resolveCollisions(kids []Value, ren []bool) []Value {
	if len(kids) <= 64 {
		// Only a renamed key can collide (parsed objects have unique keys).
		dup := false
		for i := range kids {
			if !ren[i] {
				continue
			}
			for j := range kids {
				if j != i && kids[j].Key == kids[i].Key {
					dup = true
					break
				}
			}
			if dup {
				break
			}
		}
		if !dup {
			return kids
		}
	}
	winner := make(map[string]int, len(kids))
	for i := range kids {
		j, seen := winner[kids[i].Key]
		if !seen || (ren[j] && !ren[i]) {
			winner[kids[i].Key] = i
		}
	}
	if len(winner) == len(kids) {
		return kids
	}
	out := kids[:0]
	for i := range kids {
		if winner[kids[i].Key] == i {
			out = append(out, kids[i])
		}
	}
	clear(kids[len(out):])
	return out
}
