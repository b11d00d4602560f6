// Package fn is the library of vectorised scalar functions of Sediment's SQL
// dialect (BigQuery semantics): operators, casts, string, regex, math,
// time and JSON functions. The planner looks functions up by name, binds
// them once per query against their argument types (and constant
// arguments, e.g. a regex pattern that can be compiled once), and the
// executor calls the bound function once per batch.
//
// # Vectors
//
// Functions consume and produce internal/vec vectors:
//
//   - An argument vector may be constant (Vector.Const: one value standing
//     for every row) and a STRING argument may be dictionary encoded
//     (Codes+Dict); read values through StringAt/IntAt/FloatAt/BoolAt/IsNull,
//     which handle both. Functions that gain from it may specialise
//     (evaluate once per dictionary entry, or once for a constant).
//   - Eval computes only the rows listed in sel (nil means every row in
//     [0, n)); the result has Len n, and rows not in sel may hold anything
//     (zero values are fine). Rows outside sel must never cause an error:
//     they may hold garbage such as a zero divisor.
//   - Inputs are read-only. The result may alias input memory (e.g. return
//     an argument unchanged) but must not modify it.
//   - NULL: a row is NULL when its Nulls bit is set; the payload of NULL
//     rows is ignored. Unless a function says otherwise (COALESCE, IFNULL,
//     IF, CONCAT's NULL rule, ...), any NULL argument makes the row NULL.
//   - Types: TIMESTAMP is int64 µs since the epoch, UTC; DATETIME int64 µs
//     since 1970-01-01T00:00:00 civil (no zone); DATE int64 days since
//     1970-01-01. JSON holds JSON text. ARRAY results are vec.List vectors
//     (Offsets + Elem). RowRef vectors are whole records whose JSON text is
//     obtained with EvalCtx.Materialize.
//
// # Errors
//
// Errors are for the person who wrote the query: say which function and
// what was wrong ("REGEXP_CONTAINS: invalid regular expression \"(\": ...",
// "division by zero: 1 / 0", "TIMESTAMP_TRUNC does not support the WEEK(FOO)
// date part"). When Arg.Safe is set at bind time (SAFE_CAST, SAFE.fn(...)),
// per-row failures yield NULL instead of an error.
package fn

import (
	"context"
	"time"

	"github.com/sediment/sediment/internal/vec"
)

// Datum is one typed constant value.
type Datum struct {
	Type vec.Type
	Null bool
	Int  int64   // INT64, TIMESTAMP, DATETIME, DATE; INTERVAL count
	Flt  float64 // FLOAT64
	Str  string  // STRING, JSON; INTERVAL unit (upper case, e.g. "HOUR")
	Bool bool    // BOOL
}

// Arg describes one argument at bind time.
type Arg struct {
	Type vec.Type
	// Elem is the element type of an ARRAY argument (Unknown if the elements
	// are records).
	Elem vec.Type
	// Const is the argument's value when it is a constant after folding
	// (literals, parameters, constant expressions), else nil.
	Const *Datum
	// Part is set for date part arguments (TIMESTAMP_TRUNC(ts, MINUTE),
	// EXTRACT(HOUR FROM ts), DATE_TRUNC(d, WEEK(MONDAY))): the upper-case
	// part name, and PartArg the weekday of WEEK(<weekday>). Type is then
	// vec.Unknown and the executor passes a nil vector for it.
	Part    string
	PartArg string
}

// BindInfo is the context of a bind.
type BindInfo struct {
	// Safe asks for NULL instead of per-row errors (SAFE.fn, SAFE_CAST).
	Safe bool
	// Now is the query's clock reading: CURRENT_TIMESTAMP() and friends
	// return it for the whole query (BigQuery semantics).
	Now time.Time
}

// Bound is a function bound to argument types: its result type and how to
// compute it.
type Bound struct {
	Type vec.Type
	// Elem is the element type when Type is vec.List.
	Elem vec.Type
	Eval EvalFunc
}

// EvalFunc computes a bound function over a batch: n is the batch length,
// sel the rows to compute (nil = all). args[i] is nil for date part
// arguments.
type EvalFunc func(ec *EvalCtx, args []*vec.Vector, sel []int32, n int) (*vec.Vector, error)

// EvalCtx is what an evaluation may need besides its arguments.
type EvalCtx struct {
	Ctx context.Context
	// Materialize returns the JSON text (BigQuery result shape: nested
	// objects as one-element arrays) of records given as RowRef values.
	Materialize func(refs []int64, dst []string) error
}

// Func is a named function: Bind checks the arguments and returns a Bound
// function, or an error naming the function and the problem ("No matching
// signature for function REGEXP_CONTAINS for argument types: INT64,
// STRING", "Number of arguments does not match for function LOWER").
type Func struct {
	Name string
	Bind func(args []Arg, info BindInfo) (*Bound, error)
}

var registry = map[string]*Func{}

// Register adds a function under its lower-case name. Called from init
// functions of this package.
func Register(f *Func) {
	registry[lower(f.Name)] = f
}

// Lookup finds a function by name, case-insensitively. Names of operators
// are their symbols ("+", "=", "||", "LIKE", ...).
func Lookup(name string) (*Func, bool) {
	f, ok := registry[lower(name)]
	return f, ok
}

// Names returns every registered name (for error messages and docs).
func Names() []string {
	out := make([]string, 0, len(registry))
	for n := range registry {
		out = append(out, n)
	}
	return out
}

func lower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'A' && c <= 'Z' {
			b[i] = c + 32
		}
	}
	return string(b)
}
