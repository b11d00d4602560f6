package fn

import (
	"context"
	"fmt"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/sediment/sediment/internal/vec"
)

// Test values. Plain Go values map to types: int and int64 -> INT64,
// float64 -> FLOAT64, string -> STRING, bool -> BOOL, nil -> NULL. Wrappers
// give the other types.
type (
	tsV   int64  // TIMESTAMP (µs)
	dtV   int64  // DATETIME (civil µs)
	dateV int64  // DATE (days)
	jsonV string // JSON text
	refV  int64  // RowRef, materialised by testRecords
	// nullOf is a typed NULL.
	nullOf vec.Type
	// part is a date part argument.
	part struct{ name, arg string }
	// ival is an INTERVAL constant.
	ival struct {
		n    int64
		unit string
	}
	// arrV is an ARRAY value.
	arrV struct {
		elem vec.Type
		vals []any
	}
	// keep marks an argument that must stay a constant in every shape.
	keep struct{ v any }
	// errWant expects an error containing the text.
	errWant string
)

func arr(elem vec.Type, vals ...any) arrV { return arrV{elem, vals} }

// testRecords are the records a RowRef stands for in tests.
var testRecords = map[int64]string{
	1: `{"id":"a","metadata":[{"status":200,"path":"/x"}]}`,
	2: `{"id":"b","n":null}`,
}

var testNow = time.Date(2024, 5, 6, 7, 8, 9, 123456000, time.UTC)

func testEvalCtx() *EvalCtx {
	return &EvalCtx{Ctx: context.Background(), Materialize: func(refs []int64, dst []string) error {
		for i, r := range refs {
			t, ok := testRecords[r]
			if !ok {
				return fmt.Errorf("no record %d", r)
			}
			dst[i] = t
		}
		return nil
	}}
}

func typeOfValue(v any) vec.Type {
	switch x := v.(type) {
	case int, int64:
		return vec.Int64
	case float64:
		return vec.Float64
	case string:
		return vec.String
	case bool:
		return vec.Bool
	case tsV:
		return vec.Timestamp
	case dtV:
		return vec.Datetime
	case dateV:
		return vec.Date
	case jsonV:
		return vec.JSON
	case refV:
		return vec.RowRef
	case nullOf:
		return vec.Type(x)
	case arrV:
		return vec.List
	case ival:
		return vec.Interval
	}
	return vec.Unknown
}

// datumOf converts a scalar test value to a Datum.
func datumOf(v any) Datum {
	d := Datum{Type: typeOfValue(v)}
	switch x := v.(type) {
	case nil, nullOf:
		d.Null = true
	case int:
		d.Int = int64(x)
	case int64:
		d.Int = x
	case float64:
		d.Flt = x
	case string:
		d.Str = x
	case bool:
		d.Bool = x
	case tsV:
		d.Int = int64(x)
	case dtV:
		d.Int = int64(x)
	case dateV:
		d.Int = int64(x)
	case jsonV:
		d.Str = string(x)
	case refV:
		d.Int = int64(x)
	case ival:
		d.Int, d.Str = x.n, x.unit
	}
	return d
}

// buildVector builds a plain (or dictionary-encoded) vector of type t.
func buildVector(t vec.Type, vals []any, dict bool) *vec.Vector {
	n := len(vals)
	if t == vec.List {
		var elem vec.Type
		var elems []any
		v := &vec.Vector{Type: vec.List, Len: n, Offsets: make([]int32, 1, n+1)}
		for i, x := range vals {
			if a, ok := x.(arrV); ok {
				elem = a.elem
				elems = append(elems, a.vals...)
			} else {
				setNull(v, i)
			}
			v.Offsets = append(v.Offsets, int32(len(elems)))
		}
		v.Elem = buildVector(elem, elems, false)
		return v
	}
	v := newVec(t, n)
	for i, x := range vals {
		d := datumOf(x)
		if d.Null {
			setNull(v, i)
			continue
		}
		switch {
		case t == vec.Bool:
			v.Bools[i] = d.Bool
		case t == vec.Float64:
			v.Floats[i] = d.Flt
		case t == vec.String || t == vec.JSON:
			v.Strs[i] = d.Str
		case t.UsesInts():
			v.Ints[i] = d.Int
		}
	}
	if dict && t == vec.String {
		index := map[string]uint32{"<unused entry>": 0}
		v.Dict = []string{"<unused entry>"}
		v.Codes = make([]uint32, n)
		for i, s := range v.Strs {
			c, ok := index[s]
			if !ok {
				c = uint32(len(v.Dict))
				index[s] = c
				v.Dict = append(v.Dict, s)
			}
			v.Codes[i] = c
		}
		v.Strs = nil
	}
	return v
}

// readValue converts row i of v back to a test value.
func readValue(v *vec.Vector, i int) any {
	if v.Type == vec.Unknown || v.IsNull(i) {
		return nil
	}
	switch v.Type {
	case vec.Bool:
		return v.BoolAt(i)
	case vec.Int64:
		return v.IntAt(i)
	case vec.Float64:
		return v.FloatAt(i)
	case vec.String:
		return v.StringAt(i)
	case vec.JSON:
		return jsonV(v.StringAt(i))
	case vec.Timestamp:
		return tsV(v.IntAt(i))
	case vec.Datetime:
		return dtV(v.IntAt(i))
	case vec.Date:
		return dateV(v.IntAt(i))
	case vec.List:
		lo, hi := listRange(v, i)
		out := []any{}
		for j := lo; j < hi; j++ {
			out = append(out, readValue(v.Elem, j))
		}
		return out
	}
	return fmt.Sprintf("<%s>", v.Type)
}

// shape is how arguments are presented to a function.
type shape int

const (
	shapeConst  shape = iota // every argument a constant (bind-time folding)
	shapeColumn              // columns of 3 rows, rows 0 and 2 selected
	shapeDict                // as shapeColumn, strings dictionary encoded
	shapeBytes               // as shapeColumn, strings as Bytes+Offs (as segments decode them)
)

func (s shape) String() string { return [...]string{"const", "column", "dict", "bytes"}[s] }

// toBytes turns a String or JSON vector of plain strings into the
// Bytes+Offs form.
func toBytes(v *vec.Vector) *vec.Vector {
	if (v.Type != vec.String && v.Type != vec.JSON) || v.Dict != nil || v.Const {
		return v
	}
	v.Offs = make([]uint32, 1, v.Len+1)
	for _, s := range v.Strs[:v.Len] {
		v.Bytes = append(v.Bytes, s...)
		v.Offs = append(v.Offs, uint32(len(v.Bytes)))
	}
	v.Strs = nil
	return v
}

// evalShape binds name with args in the given shape and returns the value
// of the first selected row.
func evalShape(name string, safe bool, sh shape, args ...any) (any, error) {
	f, ok := Lookup(name)
	if !ok {
		return nil, fmt.Errorf("function %q is not registered", name)
	}
	n := 1
	if sh != shapeConst {
		n = 3
	}
	infos := make([]Arg, len(args))
	vecs := make([]*vec.Vector, len(args))
	for i, a := range args {
		isKeep := false
		if k, ok := a.(keep); ok {
			a, isKeep = k.v, true
		}
		switch x := a.(type) {
		case part:
			infos[i] = Arg{Part: x.name, PartArg: x.arg}
			continue
		case arrV:
			infos[i] = Arg{Type: vec.List, Elem: x.elem}
			vecs[i] = buildVector(vec.List, []any{x, x, x}[:n], false)
			if sh == shapeConst || isKeep {
				vecs[i] = buildVector(vec.List, []any{x}, false)
				vecs[i].Const, vecs[i].Len = true, n
			}
			continue
		}
		t := typeOfValue(a)
		d := datumOf(a)
		if sh == shapeConst || isKeep || t == vec.Interval || t == vec.Unknown {
			infos[i] = Arg{Type: t, Const: &d}
			vecs[i] = datumVector(d, n)
			continue
		}
		infos[i] = Arg{Type: t}
		vecs[i] = buildVector(t, []any{a, a, a}, sh == shapeDict)
		if sh == shapeBytes {
			vecs[i] = toBytes(vecs[i])
		}
	}
	b, err := f.Bind(infos, BindInfo{Safe: safe, Now: testNow})
	if err != nil {
		return nil, err
	}
	var sel []int32
	if sh != shapeConst {
		sel = []int32{0, 2}
	}
	r, err := b.Eval(testEvalCtx(), vecs, sel, n)
	if err != nil {
		return nil, err
	}
	if r.Type != b.Type {
		return nil, fmt.Errorf("result type %s, bound type %s", r.Type, b.Type)
	}
	if r.Len != n {
		return nil, fmt.Errorf("result has %d rows, want %d", r.Len, n)
	}
	first := readValue(r, 0)
	if sh != shapeConst {
		if last := readValue(r, 2); !sameTestValue(first, last) {
			return nil, fmt.Errorf("rows 0 and 2 differ: %#v vs %#v", first, last)
		}
	}
	return first, nil
}

// sameTestValue compares test values (NaN equals NaN).
func sameTestValue(a, b any) bool {
	if fa, ok := a.(float64); ok {
		if fb, ok := b.(float64); ok {
			return fa == fb || (math.IsNaN(fa) && math.IsNaN(fb)) ||
				math.Abs(fa-fb) <= 1e-9*math.Max(math.Abs(fa), math.Abs(fb))
		}
	}
	if x, ok := a.(int); ok {
		a = int64(x)
	}
	if x, ok := b.(int); ok {
		b = int64(x)
	}
	return reflect.DeepEqual(a, b)
}

// normWant converts convenient expected values (int) to result values.
func normWant(w any) any {
	switch x := w.(type) {
	case int:
		return int64(x)
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = normWant(e)
		}
		return out
	}
	return w
}

// fnCase is one table row: name(args...) = want.
type fnCase struct {
	name string
	args []any
	want any
	safe bool
}

func c(name string, want any, args ...any) fnCase {
	return fnCase{name: name, args: args, want: want}
}

// safeC is a case evaluated with SAFE semantics.
func safeC(name string, want any, args ...any) fnCase {
	return fnCase{name: name, args: args, want: want, safe: true}
}

// runCases evaluates every case in every shape.
func runCases(t *testing.T, cases []fnCase) {
	t.Helper()
	for _, tc := range cases {
		for _, sh := range []shape{shapeConst, shapeColumn, shapeDict, shapeBytes} {
			got, err := evalShape(tc.name, tc.safe, sh, tc.args...)
			label := fmt.Sprintf("%s(%s) [%s]", tc.name, argsString(tc.args), sh)
			if tc.safe {
				label = "SAFE." + label
			}
			if ew, ok := tc.want.(errWant); ok {
				if err == nil {
					t.Errorf("%s = %#v, want error containing %q", label, got, string(ew))
				} else if !strings.Contains(err.Error(), string(ew)) {
					t.Errorf("%s: error %q, want it to contain %q", label, err, string(ew))
				}
				continue
			}
			if err != nil {
				t.Errorf("%s: unexpected error: %v", label, err)
				continue
			}
			if !sameTestValue(got, normWant(tc.want)) {
				t.Errorf("%s = %#v, want %#v", label, got, normWant(tc.want))
			}
		}
	}
}

func argsString(args []any) string {
	parts := make([]string, len(args))
	for i, a := range args {
		parts[i] = fmt.Sprintf("%#v", a)
	}
	return strings.Join(parts, ", ")
}

// ts parses a timestamp for test data.
func ts(s string) tsV {
	x, err := ParseTimestamp(s)
	if err != nil {
		panic(err)
	}
	return tsV(x)
}

func dt(s string) dtV {
	x, err := ParseDatetime(s)
	if err != nil {
		panic(err)
	}
	return dtV(x)
}

func date(s string) dateV {
	x, err := ParseDate(s)
	if err != nil {
		panic(err)
	}
	return dateV(x)
}
