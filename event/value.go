// Package event defines the in-memory shape of a log event as Sediment sees
// it between the wire and the storage engine: a JSON-like value tree, the
// normalised Event that Logflare's ingest rules produce from it, and the
// compact binary codec used by the write-ahead log and by array columns.
//
// The package is pure: no I/O, no clocks except those passed in, no globals
// that change. The HTTP layer parses request bodies into Values, calls
// Normalize, and hands the Events to the engine.
package event

import (
	"math"
	"strconv"
)

// Kind is the type of a Value. The numbers are not persisted; the binary codec
// has its own explicit tags (see codec.go).
type Kind uint8

const (
	Null Kind = iota
	Bool
	Int
	Float
	String
	Array
	Object
)

func (k Kind) String() string {
	switch k {
	case Null:
		return "null"
	case Bool:
		return "bool"
	case Int:
		return "int"
	case Float:
		return "float"
	case String:
		return "string"
	case Array:
		return "array"
	case Object:
		return "object"
	}
	return "kind(" + strconv.Itoa(int(k)) + ")"
}

// Value is one node of a JSON-like tree.
//
//   - Null, Bool, Int, Float and String are scalars; Num holds the bool (0/1),
//     the int64 bits or the float64 bits, Str holds the string.
//   - Array holds its elements in Kids.
//   - Object holds its members in Kids, in the order they arrived; each
//     member's name is in its Key. Keys are unique after normalisation.
//
// Values are plain data: copying a Value copies the header, not the children.
// Strings may alias the buffer they were parsed from; whoever keeps a Value
// beyond the lifetime of that buffer must Clone it.
type Value struct {
	Key  string  // member name when this value sits in an object
	Str  string  // String payload
	Kids []Value // Array elements or Object members
	Num  uint64  // Bool, Int or Float payload
	Kind Kind
}

// Constructors.

func NullValue() Value            { return Value{Kind: Null} }
func BoolValue(b bool) Value      { v := Value{Kind: Bool}; v.Num = b2u(b); return v }
func IntValue(i int64) Value      { return Value{Kind: Int, Num: uint64(i)} }
func FloatValue(f float64) Value  { return Value{Kind: Float, Num: math.Float64bits(f)} }
func StringValue(s string) Value  { return Value{Kind: String, Str: s} }
func ArrayValue(e ...Value) Value { return Value{Kind: Array, Kids: e} }

// ObjectValue builds an object from alternating members; each member's Key
// must already be set (see Member).
func ObjectValue(m ...Value) Value { return Value{Kind: Object, Kids: m} }

// Member returns v with its Key set to key, for building objects.
func Member(key string, v Value) Value { v.Key = key; return v }

func b2u(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}

// Accessors. They do not check the kind; callers switch on Kind first.

func (v Value) Bool() bool       { return v.Num != 0 }
func (v Value) Int() int64       { return int64(v.Num) }
func (v Value) Float() float64   { return math.Float64frombits(v.Num) }
func (v Value) IsNull() bool     { return v.Kind == Null }
func (v Value) IsScalar() bool   { return v.Kind < Array }
func (v Value) IsObject() bool   { return v.Kind == Object }
func (v Value) IsArray() bool    { return v.Kind == Array }
func (v Value) Len() int         { return len(v.Kids) }
func (v Value) Elem(i int) Value { return v.Kids[i] }

// Get returns the member of an object named key, or nil. Linear: objects in
// log events are small, and a map per object would cost more than it saves.
func (v *Value) Get(key string) *Value {
	if v.Kind != Object {
		return nil
	}
	for i := range v.Kids {
		if v.Kids[i].Key == key {
			return &v.Kids[i]
		}
	}
	return nil
}

// Path follows object members by name; nil if any step is missing or not an
// object.
func (v *Value) Path(keys ...string) *Value {
	cur := v
	for _, k := range keys {
		cur = cur.Get(k)
		if cur == nil {
			return nil
		}
	}
	return cur
}

// Delete removes the member named key from an object and reports whether it
// was there. Member order of the rest is kept.
func (v *Value) Delete(key string) bool {
	if v.Kind != Object {
		return false
	}
	for i := range v.Kids {
		if v.Kids[i].Key == key {
			v.Kids = append(v.Kids[:i:i], v.Kids[i+1:]...)
			return true
		}
	}
	return false
}

// Set replaces the member named key, or appends it.
func (v *Value) Set(key string, val Value) {
	val.Key = key
	for i := range v.Kids {
		if v.Kids[i].Key == key {
			v.Kids[i] = val
			return
		}
	}
	v.Kids = append(v.Kids, val)
}

// Clone returns a deep copy whose strings no longer alias any input buffer.
func (v Value) Clone() Value {
	out := v
	out.Key = cloneString(v.Key)
	out.Str = cloneString(v.Str)
	if v.Kids != nil {
		out.Kids = make([]Value, len(v.Kids))
		for i := range v.Kids {
			out.Kids[i] = v.Kids[i].Clone()
		}
	}
	return out
}

func cloneString(s string) string {
	if s == "" {
		return ""
	}
	b := make([]byte, len(s))
	copy(b, s)
	return string(b)
}

// Equal reports deep equality, including member order and the Int/Float
// distinction. Keys of the two values themselves are not compared.
func Equal(a, b Value) bool {
	if a.Kind != b.Kind || len(a.Kids) != len(b.Kids) {
		return false
	}
	switch a.Kind {
	case Null:
		return true
	case Bool, Int:
		return a.Num == b.Num
	case Float:
		return a.Float() == b.Float() || (math.IsNaN(a.Float()) && math.IsNaN(b.Float()))
	case String:
		return a.Str == b.Str
	case Array:
		for i := range a.Kids {
			if !Equal(a.Kids[i], b.Kids[i]) {
				return false
			}
		}
		return true
	case Object:
		for i := range a.Kids {
			if a.Kids[i].Key != b.Kids[i].Key || !Equal(a.Kids[i], b.Kids[i]) {
				return false
			}
		}
		return true
	}
	return false
}

// Event is one normalised log event, as the engine stores it.
//
// ID, Timestamp and Message are the three base columns every source has
// (`id`, `timestamp`, `event_message`). Fields is an Object holding every
// other top-level member (`metadata`, `project`, ...), already cleaned of
// empty values and with keys renamed to BigQuery column rules.
type Event struct {
	ID         string
	Timestamp  int64 // unix microseconds, UTC
	Message    string
	HasMessage bool  // false when the event carried no message at all
	Fields     Value // Kind Object (possibly with no members)
}

// Clone returns a deep copy of e that aliases no input buffer.
func (e Event) Clone() Event {
	out := e
	out.ID = cloneString(e.ID)
	out.Message = cloneString(e.Message)
	out.Fields = e.Fields.Clone()
	return out
}
