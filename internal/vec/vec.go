// Package vec defines the typed column vectors that flow between the storage
// engine's scans and the SQL executor: one Go slice per type, a null bitset,
// an optional dictionary for strings, and a Batch that groups vectors with a
// selection of live rows.
//
// It sits below both segment (which decodes pages into vectors) and sql
// (whose operators consume them), so that a decoded column reaches an
// operator without being copied. It knows nothing of disk layout or SQL.
//
// Ownership: a Vector handed to a consumer is read-only for it. Slices may
// alias decompressed page buffers or the in-memory head; a consumer that
// keeps values past the call that produced them must copy strings.
package vec

import (
	"fmt"
	"math/bits"
	"unsafe"
)

// Type is the logical type of a vector's values.
type Type uint8

const (
	// Unknown is the type of an untyped NULL (e.g. the literal NULL, or a
	// field that no part of a source has ever held).
	Unknown Type = iota
	Bool
	Int64
	Float64
	String
	// Timestamp is microseconds since the Unix epoch, UTC.
	Timestamp
	// Datetime is a civil date and time, as microseconds since
	// 1970-01-01T00:00:00 with no time zone.
	Datetime
	// Date is days since 1970-01-01.
	Date
	// JSON holds JSON text: materialised records and arrays (in BigQuery's
	// shape, nested objects as one-element arrays) and JSON values.
	JSON
	// RowRef holds opaque references to source rows, used to carry a whole
	// record (e.g. `metadata`) through a plan without reading its columns;
	// the final stage asks the table to materialise the few that survive.
	RowRef
	// List holds one array per row: Offsets into the Elem vector.
	List
	// Struct holds named child vectors of equal length (list elements that
	// are records).
	Struct
	// Interval is a duration in microseconds (constant folding only).
	Interval
)

var typeNames = [...]string{
	Unknown: "NULL", Bool: "BOOL", Int64: "INT64", Float64: "FLOAT64", String: "STRING",
	Timestamp: "TIMESTAMP", Datetime: "DATETIME", Date: "DATE", JSON: "JSON",
	RowRef: "RECORD", List: "ARRAY", Struct: "STRUCT", Interval: "INTERVAL",
}

func (t Type) String() string {
	if int(t) < len(typeNames) {
		return typeNames[t]
	}
	return fmt.Sprintf("Type(%d)", uint8(t))
}

// IsNumeric reports whether t is INT64 or FLOAT64.
func (t Type) IsNumeric() bool { return t == Int64 || t == Float64 }

// UsesInts reports whether values of t are stored in Vector.Ints.
func (t Type) UsesInts() bool {
	switch t {
	case Int64, Timestamp, Datetime, Date, RowRef, Interval:
		return true
	}
	return false
}

// Vector is one column of a batch.
//
// Exactly one payload slice is used, chosen by Type:
//
//	Bool                                  Bools
//	Int64 Timestamp Datetime Date         Ints
//	  RowRef Interval
//	Float64                               Floats
//	String JSON                           Strs, Bytes+Offs, or Codes+Dict
//	                                        (String only)
//	List                                  Offsets + Elem
//	Struct                                Names + Children
//
// When Const is true the vector holds a single value (index 0) that stands
// for every row; Len is still the logical row count.
type Vector struct {
	Type Type
	Len  int
	// Nulls marks NULL rows (bit set = NULL); nil means no NULLs. Payload
	// slots of NULL rows hold zero values.
	Nulls Bitset

	Bools  []bool
	Ints   []int64
	Floats []float64
	Strs   []string

	// Bytes and Offs hold strings without pointers, as the segment
	// decoders produce them: row i is Bytes[Offs[i]:Offs[i+1]] (len(Offs)
	// is Len+1, or 2 for a constant; NULL rows are empty). The garbage
	// collector never scans either slice. Bytes is never written once the
	// vector is handed out (StringAt returns strings that alias it), and
	// Reset does not keep it for reuse.
	Bytes []byte
	Offs  []uint32

	// Dictionary-encoded strings: value of row i is Dict[Codes[i]]. Operators
	// that understand dictionaries evaluate once per entry; others call
	// Decode or StringAt.
	Codes []uint32
	Dict  []string

	// List: row i's elements are Elem rows [Offsets[i], Offsets[i+1]).
	Offsets []int32
	Elem    *Vector

	// Struct: child vectors named Names[i].
	Names    []string
	Children []*Vector

	Const bool
}

// IsNull reports whether row i is NULL.
func (v *Vector) IsNull(i int) bool {
	if v.Const {
		i = 0
	}
	return v.Nulls != nil && v.Nulls.Get(i)
}

// HasNulls reports whether any row may be NULL.
func (v *Vector) HasNulls() bool { return v.Nulls != nil && v.Nulls.Any() }

// IsDict reports whether the vector holds dictionary codes.
func (v *Vector) IsDict() bool { return v.Dict != nil }

// IsBytes reports whether the vector holds its strings as Bytes+Offs.
// (Reset keeps Offs' capacity: the form is told by its length, never 0 in
// that form.)
func (v *Vector) IsBytes() bool { return len(v.Offs) > 0 }

// idx maps a row to its payload slot (constant vectors have one slot).
func (v *Vector) idx(i int) int {
	if v.Const {
		return 0
	}
	return i
}

// StringAt returns row i of a String or JSON vector ("" when NULL). A
// string of a Bytes+Offs vector aliases Bytes: it stays valid as long as
// the caller keeps it (Bytes is immutable), without a copy.
func (v *Vector) StringAt(i int) string {
	i = v.idx(i)
	switch {
	case v.Dict != nil:
		return v.Dict[v.Codes[i]]
	case len(v.Offs) > 0:
		a, z := v.Offs[i], v.Offs[i+1]
		if a == z {
			return ""
		}
		return unsafe.String(&v.Bytes[a], int(z-a))
	}
	return v.Strs[i]
}

// BytesAt returns row i of a String or JSON vector as bytes, without
// copying: the caller must not modify them.
func (v *Vector) BytesAt(i int) []byte {
	i = v.idx(i)
	if len(v.Offs) > 0 {
		return v.Bytes[v.Offs[i]:v.Offs[i+1]:v.Offs[i+1]]
	}
	s := v.StringAt(i)
	return unsafe.Slice(unsafe.StringData(s), len(s))
}

// IntAt returns row i of a vector stored in Ints.
func (v *Vector) IntAt(i int) int64 { return v.Ints[v.idx(i)] }

// FloatAt returns row i of a Float64 vector.
func (v *Vector) FloatAt(i int) float64 { return v.Floats[v.idx(i)] }

// BoolAt returns row i of a Bool vector.
func (v *Vector) BoolAt(i int) bool { return v.Bools[v.idx(i)] }

// Decode turns a dictionary-encoded or Bytes+Offs vector into plain
// strings (Strs) in place, for consumers that need a []string. The strings
// of a Bytes+Offs vector keep aliasing its bytes.
func (v *Vector) Decode() {
	switch {
	case v.Dict != nil:
		strs := make([]string, len(v.Codes))
		for i, c := range v.Codes {
			strs[i] = v.Dict[c]
		}
		v.Strs, v.Codes, v.Dict = strs, nil, nil
	case len(v.Offs) > 0:
		strs := make([]string, len(v.Offs)-1)
		for i := range strs {
			strs[i] = v.StringAt(i)
		}
		v.Strs, v.Bytes, v.Offs = strs, nil, v.Offs[:0]
	}
}

// StringsLen returns the number of string slots a String or JSON vector
// holds (1 for a constant), whatever its representation.
func (v *Vector) StringsLen() int {
	switch {
	case v.Dict != nil:
		return len(v.Codes)
	case len(v.Offs) > 0:
		return len(v.Offs) - 1
	}
	return len(v.Strs)
}

// Reset clears v for reuse, keeping slice capacity.
func (v *Vector) Reset(t Type) {
	*v = Vector{
		Type:    t,
		Bools:   v.Bools[:0],
		Ints:    v.Ints[:0],
		Floats:  v.Floats[:0],
		Strs:    v.Strs[:0],
		Codes:   v.Codes[:0],
		Offs:    v.Offs[:0],
		Offsets: v.Offsets[:0],
		Nulls:   v.Nulls[:0],
	}
	if len(v.Nulls) == 0 {
		v.Nulls = nil
	}
}

// NewConst returns a constant vector of n rows.
func NewConst(t Type, n int) *Vector { return &Vector{Type: t, Len: n, Const: true} }

// ConstNull returns a constant NULL vector of type t and n rows.
func ConstNull(t Type, n int) *Vector {
	v := &Vector{Type: t, Len: n, Const: true, Nulls: NewBitset(1)}
	v.Nulls.Set(0)
	switch {
	case t == Bool:
		v.Bools = []bool{false}
	case t == Float64:
		v.Floats = []float64{0}
	case t == String || t == JSON:
		v.Strs = []string{""}
	case t.UsesInts():
		v.Ints = []int64{0}
	}
	return v
}

// ConstInt, ConstFloat, ConstString and ConstBool build constant vectors.
func ConstInt(t Type, x int64, n int) *Vector {
	return &Vector{Type: t, Len: n, Const: true, Ints: []int64{x}}
}
func ConstFloat(x float64, n int) *Vector {
	return &Vector{Type: Float64, Len: n, Const: true, Floats: []float64{x}}
}
func ConstString(s string, n int) *Vector {
	return &Vector{Type: String, Len: n, Const: true, Strs: []string{s}}
}
func ConstBool(b bool, n int) *Vector {
	return &Vector{Type: Bool, Len: n, Const: true, Bools: []bool{b}}
}

// Bitset is a fixed-size set of row indexes, 64 per word.
type Bitset []uint64

// NewBitset returns an empty bitset able to hold n bits.
func NewBitset(n int) Bitset { return make(Bitset, (n+63)>>6) }

// Get reports whether bit i is set. Out-of-range bits read as unset.
func (b Bitset) Get(i int) bool {
	w := i >> 6
	return w < len(b) && b[w]&(1<<(uint(i)&63)) != 0
}

// Set sets bit i; b must be large enough.
func (b Bitset) Set(i int) { b[i>>6] |= 1 << (uint(i) & 63) }

// Clear clears bit i.
func (b Bitset) Clear(i int) {
	if w := i >> 6; w < len(b) {
		b[w] &^= 1 << (uint(i) & 63)
	}
}

// Any reports whether any bit is set.
func (b Bitset) Any() bool {
	for _, w := range b {
		if w != 0 {
			return true
		}
	}
	return false
}

// Count returns the number of set bits.
func (b Bitset) Count() int {
	n := 0
	for _, w := range b {
		n += bits.OnesCount64(w)
	}
	return n
}

// Batch is a group of equal-length vectors plus the rows still selected.
//
// Sel lists the live row indexes in increasing order; nil means every row
// in [0, Len) is live. Operators that filter produce a new Sel instead of
// moving data.
type Batch struct {
	Len  int
	Sel  []int32
	Cols []*Vector
}

// Rows returns the number of live rows.
func (b *Batch) Rows() int {
	if b.Sel != nil {
		return len(b.Sel)
	}
	return b.Len
}

// ForEach calls fn for every live row index.
func (b *Batch) ForEach(fn func(i int)) {
	if b.Sel != nil {
		for _, i := range b.Sel {
			fn(int(i))
		}
		return
	}
	for i := 0; i < b.Len; i++ {
		fn(i)
	}
}
