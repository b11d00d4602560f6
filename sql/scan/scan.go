// Package scan is the contract between the SQL executor and the storage
// engine: the executor describes what it needs from one source (columns,
// time range, predicates, order), the engine answers with independent units
// of work that produce vec batches from a consistent snapshot.
//
// The engine implements Table, Scan and Unit; the executor only consumes
// them. Nothing here knows about disk layout or SQL syntax.
package scan

import (
	"context"
	"math"
	"regexp"

	"github.com/sediment/sediment/internal/vec"
)

// Field describes one field path a table can be queried by.
//
// Paths are dotted from the row root: "timestamp", "event_message",
// "metadata.request.headers.cf_connecting_ip". Every source has the three
// base columns timestamp (TIMESTAMP), id (STRING) and event_message (STRING).
//
// A path can be several things at once when events disagreed about it (a
// string in some events, an object in others): Type says the scalar type it
// is read as (Unknown if it never held a scalar), Record that it held
// objects, Array that it held arrays.
type Field struct {
	Path   string
	Type   vec.Type
	Record bool
	Array  bool
	// ElemType is the scalar element type of an array path (Unknown if the
	// elements are records or the path holds no arrays).
	ElemType vec.Type
	// ElemFields are the fields of record elements of an array path, with
	// paths relative to the element ("host", "geo.city").
	ElemFields []Field
}

// Schema is the set of queryable fields of a table.
type Schema struct {
	Fields map[string]*Field
}

// Lookup returns the field at path, or nil when no event ever carried it.
// Querying a never-seen field is not an error: it reads as NULL.
func (s *Schema) Lookup(path string) *Field {
	if s == nil {
		return nil
	}
	return s.Fields[path]
}

// ColumnKind says what a requested column produces.
type ColumnKind uint8

const (
	// Value reads a scalar field as Column.Type (the engine converts
	// physical values of other types: numbers to strings, ints to floats).
	Value ColumnKind = iota
	// Record produces a RowRef vector for a whole object (NULL where the
	// object is absent); see Scan.Materialize.
	Record
	// ArrayOf produces a List vector for an array field. Its Elem is a
	// scalar vector of type Column.Type when Column.Elem is empty, else a
	// Struct vector with one child per Column.Elem entry (paths relative to
	// the element; a child with Kind Record and empty Path is the whole
	// element as JSON text).
	ArrayOf
)

// Column is one column a scan must produce, in request order.
type Column struct {
	Path string
	Type vec.Type
	Kind ColumnKind
	Elem []Column
}

// Op is a pushed-down predicate operator.
type Op uint8

const (
	Eq Op = iota + 1
	Ne
	Lt
	Le
	Gt
	Ge
	In        // Args lists the accepted values
	IsNull    // no Args
	IsNotNull // no Args
	// Contains is a case-sensitive substring test (Args[0] the needle).
	Contains
	StartsWith
	EndsWith
	// Regex is an RE2 match anywhere in the value (Regex set; Args[0] the
	// pattern text).
	Regex
	// Like is SQL LIKE with % and _ (Args[0] the pattern).
	Like
)

// Const is a typed constant in a predicate.
type Const struct {
	Type vec.Type
	Null bool
	Int  int64 // Int64, Timestamp, Datetime, Date
	Flt  float64
	Str  string
	Bool bool
}

// Predicate is one conjunct the scan must apply exactly: a row is produced
// only if the predicate is TRUE for it (NULL counts as not TRUE, so Ne and
// Not predicates never select NULL rows, except Op IsNull).
//
// Path names a field; for IsNull/IsNotNull it may name a record (object
// presence). Type is the type the field is compared as.
type Predicate struct {
	Path  string
	Type  vec.Type
	Op    Op
	Args  []Const
	Not   bool           // negates Op (In, Contains, StartsWith, EndsWith, Regex, Like)
	Regex *regexp.Regexp // compiled once per query, for Op Regex
}

// Order is the timestamp order a scan's units come in.
type Order uint8

const (
	Unordered Order = iota
	Ascending
	Descending
)

// Unbounded time limits.
const (
	MinTime = math.MinInt64
	MaxTime = math.MaxInt64
)

// Request describes one scan of one source.
type Request struct {
	Columns []Column
	// TimeMin and TimeMax bound the timestamp column, inclusive, in
	// microseconds. Use MinTime/MaxTime for no bound.
	TimeMin, TimeMax int64
	// Filters are ANDed and applied exactly.
	Filters []Predicate
	// Order asks for units sorted by time (by MaxTime descending for
	// Descending, MinTime ascending for Ascending). Units of sealed data hold
	// rows sorted by time; the in-memory head's unit may not.
	Order Order
	// Limit, when > 0, tells each unit that only Limit of its rows are
	// needed: with an Order its first Limit in that order, Unordered any
	// Limit (a LIMIT without ORDER BY). A unit may stop early.
	Limit int
	// NoIndex asks the scan to test every row of the blocks in its time
	// range itself: no index bitmaps, no block pruning by value ranges or
	// dictionaries. The rows are the same; tests compare the two ways.
	NoIndex bool
}

// Table is one source as a query sees it.
type Table interface {
	Name() string
	Schema() *Schema
	// Open starts a scan over the snapshot the table was taken from.
	Open(ctx context.Context, req *Request) (Scan, error)
}

// Scan is an opened scan: a list of independent units plus record
// materialisation. Units may be read concurrently, each from one goroutine.
type Scan interface {
	Units() []Unit
	// Materialize writes, for each RowRef in refs (as produced by a Record
	// column of this scan at path), the record's JSON text into dst[i].
	// asArray selects BigQuery's REPEATED RECORD shape ([{...}]) for the
	// outermost level; nested objects are always one-element arrays.
	Materialize(ctx context.Context, path string, asArray bool, refs []int64, dst []string) error
	Close() error
}

// Unit is a piece of a scan: a block of a segment, or (part of) the head.
type Unit interface {
	// TimeRange is the smallest and largest timestamp the unit may produce.
	TimeRange() (min, max int64)
	// Rows is an upper bound on the rows the unit produces.
	Rows() int
	// Sorted reports whether Read emits rows in the request's Order.
	Sorted() bool
	// Read emits the unit's rows that pass the request's time range and
	// filters, as batches whose Cols follow Request.Columns. The batch and
	// its vectors are valid only during the callback.
	Read(ctx context.Context, emit func(*vec.Batch) error) error
	// Count returns the number of rows Read would emit, as cheaply as the
	// unit can (index cardinalities when the filters allow it).
	Count(ctx context.Context) (int64, error)
}
