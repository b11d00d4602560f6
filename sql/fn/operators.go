package fn

import (
	"fmt"
	"math"
	"strings"
	"unsafe"

	"github.com/sediment/sediment/internal/predicate"
	"github.com/sediment/sediment/internal/vec"
)

// Operators: comparisons, IS [NOT] DISTINCT FROM, arithmetic (with INT64
// overflow errors and date/time ± INTERVAL), unary minus ("neg"), bitwise
// operators and LIKE. They are registered under their symbols; "||" is
// CONCAT (strings.go).

func init() {
	for _, c := range []struct {
		name string
		op   cmpOp
	}{{"=", opEq}, {"!=", opNe}, {"<>", opNe}, {"<", opLt}, {"<=", opLe}, {">", opGt}, {">=", opGe}} {
		register(c.name, bindCompare(c.op))
	}
	register("IS DISTINCT FROM", bindDistinct(true))
	register("IS NOT DISTINCT FROM", bindDistinct(false))
	for _, op := range []string{"+", "-", "*", "/"} {
		register(op, bindArith(op[0]))
	}
	register("neg", bindNeg)
	// SAFE_ADD and friends: the operators with NULL instead of errors.
	for name, op := range map[string]byte{"safe_add": '+', "safe_subtract": '-', "safe_multiply": '*'} {
		bind := bindArith(op)
		register(name, func(name string, args []Arg, info BindInfo) (*Bound, error) {
			if _, err := numericArg(name, args); err != nil {
				return nil, err
			}
			info.Safe = true
			return bind(name, args, info)
		})
	}
	register("safe_negate", func(name string, args []Arg, info BindInfo) (*Bound, error) {
		info.Safe = true
		return bindNeg(name, args, info)
	})
	register("~", bindBitNot)
	for _, op := range []string{"&", "|", "^", "<<", ">>"} {
		register(op, bindBitwise(op))
	}
	register("like", bindLike)
}

// ---- comparisons ----

// cmpOp is a comparison operator; what each means on each type (NaN
// included) is internal/predicate's, which pushed-down filters share.
type cmpOp = predicate.Op

const (
	opEq = predicate.Eq
	opNe = predicate.Ne
	opLt = predicate.Lt
	opLe = predicate.Le
	opGt = predicate.Gt
	opGe = predicate.Ge
)

type ordered interface{ ~int64 | ~float64 | ~string }

// comparable reports whether values of t can be compared with = and <.
func comparableType(t vec.Type) bool {
	switch t {
	case vec.Bool, vec.Int64, vec.Float64, vec.String, vec.Timestamp, vec.Datetime, vec.Date, vec.Unknown:
		return true
	}
	return false
}

func isTimeType(t vec.Type) bool {
	return t == vec.Timestamp || t == vec.Datetime || t == vec.Date
}

// unifyCompare finds the common type of two compared arguments and the
// coercions to reach it: INT64 with FLOAT64 compares as FLOAT64; a STRING
// compared with a date/time type is parsed as that type (once, at bind
// time, when it is a literal); DATE with DATETIME compares as DATETIME.
func unifyCompare(name string, args []Arg) (vec.Type, []conv, error) {
	if len(args) != 2 {
		return 0, nil, arityError(name)
	}
	a, b := args[0], args[1]
	if a.Part != "" || b.Part != "" {
		return 0, nil, sigError(name, args)
	}
	convs := make([]conv, 2)
	var t vec.Type
	switch ta, tb := a.Type, b.Type; {
	case ta == tb:
		t = ta
	case ta == vec.Unknown:
		t = tb
	case tb == vec.Unknown:
		t = ta
	case ta == vec.Int64 && tb == vec.Float64:
		t, convs[0] = vec.Float64, convIntToFloat
	case ta == vec.Float64 && tb == vec.Int64:
		t, convs[1] = vec.Float64, convIntToFloat
	case isTimeType(ta) && tb == vec.String:
		c, err := stringToTimeConv(b, ta)
		if err != nil {
			return 0, nil, err
		}
		t, convs[1] = ta, c
	case isTimeType(tb) && ta == vec.String:
		c, err := stringToTimeConv(a, tb)
		if err != nil {
			return 0, nil, err
		}
		t, convs[0] = tb, c
	case ta == vec.Date && tb == vec.Datetime:
		t, convs[0] = vec.Datetime, convDateToDatetime
	case ta == vec.Datetime && tb == vec.Date:
		t, convs[1] = vec.Datetime, convDateToDatetime
	default:
		return 0, nil, sigError(name, args)
	}
	if !comparableType(t) {
		return 0, nil, sigError(name, args)
	}
	return t, convs, nil
}

func bindCompare(op cmpOp) func(string, []Arg, BindInfo) (*Bound, error) {
	return func(name string, args []Arg, _ BindInfo) (*Bound, error) {
		t, convs, err := unifyCompare(name, args)
		if err != nil {
			return nil, err
		}
		k := newKernel(vec.Bool, compareEval(op, t))
		k.convs = convs
		if args[0].Const != nil && args[1].Const == nil {
			k.dictArg = 1
		}
		return k.bound(), nil
	}
}

// compareEval compares two vectors of type t (after coercion).
func compareEval(op cmpOp, t vec.Type) EvalFunc {
	return func(_ *EvalCtx, args []*vec.Vector, sel []int32, n int) (*vec.Vector, error) {
		a, b := args[0], args[1]
		out := &vec.Vector{Type: vec.Bool, Len: n, Bools: make([]bool, n)}
		switch {
		case t == vec.Float64:
			cmpOrdered(op, a.Floats, a.Const, b.Floats, b.Const, sel, n, out.Bools)
		case t == vec.String:
			switch {
			case a.Dict == nil && b.Dict == nil && !a.IsBytes() && !b.IsBytes():
				cmpOrdered(op, a.Strs, a.Const, b.Strs, b.Const, sel, n, out.Bools)
			case a.IsBytes() && !a.Const && b.Const:
				cmpBytesConst(op, a, b.StringAt(0), sel, n, out.Bools)
			case b.IsBytes() && !b.Const && a.Const:
				cmpBytesConst(op.Flip(), b, a.StringAt(0), sel, n, out.Bools)
			default:
				forRows(sel, n, func(i int) { out.Bools[i] = predicate.Holds(op, a.StringAt(i), b.StringAt(i)) })
			}
		case t == vec.Bool:
			forRows(sel, n, func(i int) {
				out.Bools[i] = predicate.Holds(op, boolInt(a.BoolAt(i)), boolInt(b.BoolAt(i)))
			})
		case t.UsesInts():
			cmpOrdered(op, a.Ints, a.Const, b.Ints, b.Const, sel, n, out.Bools)
		}
		out.Nulls = unionNulls(n, a, b)
		return out, nil
	}
}

func boolInt(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// cmpBytesConst compares the strings of a Bytes+Offs vector with a
// constant, reading the bytes in place.
func cmpBytesConst(op cmpOp, a *vec.Vector, c string, sel []int32, n int, out []bool) {
	data, offs := a.Bytes, a.Offs
	at := func(i int) string {
		x, y := offs[i], offs[i+1]
		if x == y {
			return ""
		}
		return unsafe.String(&data[x], int(y-x))
	}
	if sel != nil {
		for _, i := range sel {
			out[i] = predicate.Holds(op, at(int(i)), c)
		}
		return
	}
	for i := 0; i < n; i++ {
		out[i] = predicate.Holds(op, at(i), c)
	}
}

// cmpOrdered compares slices (or a constant, aConst/bConst) into out. With
// a sparse selection only selected rows are computed; otherwise every row
// is (comparisons cannot fail, so rows outside sel may hold anything).
func cmpOrdered[T ordered](op cmpOp, av []T, aConst bool, bv []T, bConst bool, sel []int32, n int, out []bool) {
	if aConst && !bConst {
		av, bv, aConst, bConst, op = bv, av, bConst, aConst, op.Flip()
	}
	if aConst { // both constant: one row
		out[0] = predicate.Holds(op, av[0], bv[0])
		return
	}
	if sel != nil && len(sel)*4 < n {
		if bConst {
			c := bv[0]
			for _, i := range sel {
				out[i] = predicate.Holds(op, av[i], c)
			}
			return
		}
		for _, i := range sel {
			out[i] = predicate.Holds(op, av[i], bv[i])
		}
		return
	}
	av, out = av[:n], out[:n]
	if bConst {
		c := bv[0]
		switch op {
		case opEq:
			for i, x := range av {
				out[i] = x == c
			}
		case opNe:
			for i, x := range av {
				out[i] = x != c
			}
		case opLt:
			for i, x := range av {
				out[i] = x < c
			}
		case opLe:
			for i, x := range av {
				out[i] = x <= c
			}
		case opGt:
			for i, x := range av {
				out[i] = x > c
			}
		case opGe:
			for i, x := range av {
				out[i] = x >= c
			}
		}
		return
	}
	bv = bv[:n]
	switch op {
	case opEq:
		for i, x := range av {
			out[i] = x == bv[i]
		}
	case opNe:
		for i, x := range av {
			out[i] = x != bv[i]
		}
	case opLt:
		for i, x := range av {
			out[i] = x < bv[i]
		}
	case opLe:
		for i, x := range av {
			out[i] = x <= bv[i]
		}
	case opGt:
		for i, x := range av {
			out[i] = x > bv[i]
		}
	case opGe:
		for i, x := range av {
			out[i] = x >= bv[i]
		}
	}
}

// bindDistinct binds IS [NOT] DISTINCT FROM: NULL-aware equality that never
// returns NULL (two NULLs are not distinct; NaN is not distinct from NaN).
func bindDistinct(distinct bool) func(string, []Arg, BindInfo) (*Bound, error) {
	return func(name string, args []Arg, _ BindInfo) (*Bound, error) {
		t, convs, err := unifyCompare(name, args)
		if err != nil {
			return nil, err
		}
		k := &kernel{typ: vec.Bool, convs: convs, dictArg: -1, eval: func(_ *EvalCtx, args []*vec.Vector, sel []int32, n int) (*vec.Vector, error) {
			a, b := args[0], args[1]
			out := newVec(vec.Bool, n)
			forRows(sel, n, func(i int) {
				an, bn := a.IsNull(i), b.IsNull(i)
				same := an && bn
				if !an && !bn {
					same = sameValue(t, a, i, b, i)
				}
				out.Bools[i] = same != distinct
			})
			return out, nil
		}}
		return k.bound(), nil
	}
}

// sameValue reports whether two non-NULL values are equal, treating NaN as
// equal to NaN (grouping semantics).
func sameValue(t vec.Type, a *vec.Vector, i int, b *vec.Vector, j int) bool {
	switch {
	case t == vec.Bool:
		return a.BoolAt(i) == b.BoolAt(j)
	case t == vec.Float64:
		x, y := a.FloatAt(i), b.FloatAt(j)
		return x == y || (math.IsNaN(x) && math.IsNaN(y))
	case t == vec.String || t == vec.JSON:
		return a.StringAt(i) == b.StringAt(j)
	case t.UsesInts():
		return a.IntAt(i) == b.IntAt(j)
	}
	return true
}

// ---- arithmetic ----

// stride is 0 for constant vectors and 1 otherwise: row i of a payload is
// at index i*stride.
func stride(v *vec.Vector) int {
	if v.Const {
		return 0
	}
	return 1
}

func bindArith(op byte) func(string, []Arg, BindInfo) (*Bound, error) {
	return func(name string, args []Arg, info BindInfo) (*Bound, error) {
		if len(args) != 2 {
			return nil, arityError(name)
		}
		a, b := args[0], args[1]
		if a.Part != "" || b.Part != "" {
			return nil, sigError(name, args)
		}
		ta, tb := a.Type, b.Type
		if ta == vec.Unknown && tb == vec.Unknown {
			ta = vec.Int64
		}
		numeric := func(t vec.Type) bool { return t == vec.Int64 || t == vec.Float64 || t == vec.Unknown }
		switch {
		case op == '/' && numeric(ta) && numeric(tb):
			k := newKernel(vec.Float64, floatArith(op, info.Safe))
			k.convs = []conv{convIntToFloat, convIntToFloat}
			k.dictArg = -1
			return k.bound(), nil
		case (ta == vec.Int64 || ta == vec.Unknown) && (tb == vec.Int64 || tb == vec.Unknown):
			k := newKernel(vec.Int64, intArith(op, info.Safe))
			k.dictArg = -1
			return k.bound(), nil
		case numeric(ta) && numeric(tb):
			k := newKernel(vec.Float64, floatArith(op, info.Safe))
			k.convs = []conv{convIntToFloat, convIntToFloat}
			k.dictArg = -1
			return k.bound(), nil
		}
		if op == '+' || op == '-' {
			if b, err := bindDateArith(name, op, args, info); b != nil || err != nil {
				return b, err
			}
		}
		return nil, sigError(name, args)
	}
}

// intArith evaluates + - * on INT64 with overflow errors.
func intArith(op byte, safe bool) EvalFunc {
	return func(_ *EvalCtx, args []*vec.Vector, sel []int32, n int) (*vec.Vector, error) {
		a, b := args[0], args[1]
		out := &vec.Vector{Type: vec.Int64, Len: n, Ints: make([]int64, n), Nulls: unionNulls(n, a, b)}
		av, bv, as, bs := a.Ints, b.Ints, stride(a), stride(b)
		nulls := out.Nulls
		var err error
		forRows(sel, n, func(i int) {
			if err != nil {
				return
			}
			x, y := av[i*as], bv[i*bs]
			var r int64
			overflow := false
			switch op {
			case '+':
				r = x + y
				overflow = (x^r)&(y^r) < 0
			case '-':
				r = x - y
				overflow = (x^y)&(x^r) < 0
			case '*':
				r = x * y
				overflow = mulOverflows(x, y)
			}
			if overflow && !(nulls != nil && nulls.Get(i)) {
				if safe {
					setNull(out, i)
					nulls = out.Nulls
					return
				}
				err = fmt.Errorf("int64 overflow: %d %c %d", x, op, y)
				return
			}
			out.Ints[i] = r
		})
		if err != nil {
			return nil, err
		}
		return out, nil
	}
}

// floatArith evaluates + - * / on FLOAT64: division by zero and overflow of
// finite operands are errors.
func floatArith(op byte, safe bool) EvalFunc {
	return func(_ *EvalCtx, args []*vec.Vector, sel []int32, n int) (*vec.Vector, error) {
		a, b := args[0], args[1]
		out := &vec.Vector{Type: vec.Float64, Len: n, Floats: make([]float64, n), Nulls: unionNulls(n, a, b)}
		av, bv, as, bs := a.Floats, b.Floats, stride(a), stride(b)
		nulls := out.Nulls
		var err error
		forRows(sel, n, func(i int) {
			if err != nil {
				return
			}
			x, y := av[i*as], bv[i*bs]
			var r float64
			switch op {
			case '+':
				r = x + y
			case '-':
				r = x - y
			case '*':
				r = x * y
			case '/':
				if y == 0 {
					if nulls != nil && nulls.Get(i) {
						return
					}
					if safe {
						setNull(out, i)
						nulls = out.Nulls
						return
					}
					err = fmt.Errorf("division by zero: %s / %s", formatFloat(x), formatFloat(y))
					return
				}
				r = x / y
			}
			if math.IsInf(r, 0) && !math.IsInf(x, 0) && !math.IsInf(y, 0) && !(nulls != nil && nulls.Get(i)) {
				if safe {
					setNull(out, i)
					nulls = out.Nulls
					return
				}
				err = fmt.Errorf("double overflow: %s %c %s", formatFloat(x), op, formatFloat(y))
				return
			}
			out.Floats[i] = r
		})
		if err != nil {
			return nil, err
		}
		return out, nil
	}
}

// bindDateArith binds TIMESTAMP/DATETIME/DATE ± INTERVAL and DATE ± INT64.
// It returns (nil, nil) when the types are not date arithmetic.
func bindDateArith(name string, op byte, args []Arg, info BindInfo) (*Bound, error) {
	a, b := args[0], args[1]
	if op == '+' && a.Type == vec.Interval && b.Type != vec.Interval {
		a, b = b, a
		args = []Arg{a, b}
		k, err := bindDateArith(name, op, args, info)
		if k == nil || err != nil {
			return k, err
		}
		inner := k.Eval
		k.Eval = func(ec *EvalCtx, vs []*vec.Vector, sel []int32, n int) (*vec.Vector, error) {
			return inner(ec, []*vec.Vector{vs[1], vs[0]}, sel, n)
		}
		return k, nil
	}
	if op == '+' && a.Type == vec.Int64 && b.Type == vec.Date {
		k, err := bindDateArith(name, op, []Arg{b, a}, info)
		if k == nil || err != nil {
			return k, err
		}
		inner := k.Eval
		k.Eval = func(ec *EvalCtx, vs []*vec.Vector, sel []int32, n int) (*vec.Vector, error) {
			return inner(ec, []*vec.Vector{vs[1], vs[0]}, sel, n)
		}
		return k, nil
	}
	sign := int64(1)
	if op == '-' {
		sign = -1
	}
	if a.Type == vec.Date && b.Type == vec.Int64 {
		k := newKernel(vec.Date, func(_ *EvalCtx, vs []*vec.Vector, sel []int32, n int) (*vec.Vector, error) {
			d, x := vs[0], vs[1]
			out := newVec(vec.Date, n)
			err := rowLoop(out, vs, sel, n, info.Safe, func(i int) error {
				r, err := dateAddUnit(d.IntAt(i), sign*x.IntAt(i), "DAY")
				out.Ints[i] = r
				return err
			})
			return out, err
		})
		k.dictArg = -1
		return k.bound(), nil
	}
	if b.Type != vec.Interval || !isTimeType(a.Type) {
		return nil, nil
	}
	count, unit, err := intervalArg(name, args, 1)
	if err != nil {
		return nil, err
	}
	if mulOverflows(count, sign) {
		return nil, fmt.Errorf("%s: interval is out of range", name)
	}
	count *= sign
	switch a.Type {
	case vec.Timestamp:
		if err := checkUnit(name, unit, "MICROSECOND", "MILLISECOND", "SECOND", "MINUTE", "HOUR", "DAY", "WEEK"); err != nil {
			return nil, err
		}
		return addKernel(vec.Timestamp, info.Safe, func(x int64) (int64, error) { return timestampAddUnit(x, count, unit) }), nil
	case vec.Datetime:
		return addKernel(vec.Datetime, info.Safe, func(x int64) (int64, error) { return datetimeAddUnit(x, count, unit) }), nil
	default: // DATE + INTERVAL is a DATETIME in BigQuery
		k := addKernel(vec.Datetime, info.Safe, func(x int64) (int64, error) { return datetimeAddUnit(x, count, unit) })
		inner := k.Eval
		k.Eval = func(ec *EvalCtx, vs []*vec.Vector, sel []int32, n int) (*vec.Vector, error) {
			dt, err := convDateToDatetime(ec, vs[0], sel, n)
			if err != nil {
				return nil, err
			}
			return inner(ec, []*vec.Vector{dt, vs[1]}, sel, n)
		}
		return k, nil
	}
}

// addKernel applies f to the first argument (a date/time vector); the
// second argument (an INTERVAL) was consumed at bind time.
func addKernel(t vec.Type, safe bool, f func(int64) (int64, error)) *Bound {
	k := newKernel(t, func(_ *EvalCtx, vs []*vec.Vector, sel []int32, n int) (*vec.Vector, error) {
		x := vs[0]
		out := newVec(t, n)
		err := rowLoop(out, vs[:1], sel, n, safe, func(i int) error {
			r, err := f(x.IntAt(i))
			out.Ints[i] = r
			return err
		})
		return out, err
	})
	k.dictArg = -1
	// The interval argument is constant: only the first decides NULLs.
	k.strict = true
	return k.bound()
}

// intervalArg reads a constant INTERVAL argument.
func intervalArg(name string, args []Arg, i int) (int64, string, error) {
	if i >= len(args) || args[i].Type != vec.Interval {
		return 0, "", sigError(name, args)
	}
	if args[i].Const == nil || args[i].Const.Null {
		return 0, "", fmt.Errorf("%s: the INTERVAL must be a constant", name)
	}
	return args[i].Const.Int, strings.ToUpper(args[i].Const.Str), nil
}

// checkUnit checks an interval unit or date part against the allowed ones.
func checkUnit(name, unit string, allowed ...string) error {
	for _, a := range allowed {
		if a == unit {
			return nil
		}
	}
	return fmt.Errorf("%s does not support the %s date part", name, unit)
}

// ---- unary minus and bitwise ----

func bindNeg(name string, args []Arg, info BindInfo) (*Bound, error) {
	if len(args) != 1 {
		return nil, arityError(name)
	}
	switch args[0].Type {
	case vec.Int64, vec.Unknown:
		k := newKernel(vec.Int64, func(_ *EvalCtx, vs []*vec.Vector, sel []int32, n int) (*vec.Vector, error) {
			x := vs[0]
			out := newVec(vec.Int64, n)
			err := rowLoop(out, vs, sel, n, info.Safe, func(i int) error {
				v := x.IntAt(i)
				if v == minInt64 {
					return fmt.Errorf("int64 overflow: -(%d)", v)
				}
				out.Ints[i] = -v
				return nil
			})
			return out, err
		})
		k.dictArg = -1
		return k.bound(), nil
	case vec.Float64:
		k := newKernel(vec.Float64, func(_ *EvalCtx, vs []*vec.Vector, sel []int32, n int) (*vec.Vector, error) {
			x := vs[0]
			out := &vec.Vector{Type: vec.Float64, Len: n, Floats: make([]float64, n), Nulls: x.Nulls}
			forRows(sel, n, func(i int) { out.Floats[i] = -x.FloatAt(i) })
			return out, nil
		})
		k.dictArg = -1
		return k.bound(), nil
	}
	return nil, sigError(name, args)
}

func bindBitNot(name string, args []Arg, _ BindInfo) (*Bound, error) {
	if _, err := match(name, args, 1, vec.Int64); err != nil {
		return nil, err
	}
	k := newKernel(vec.Int64, func(_ *EvalCtx, vs []*vec.Vector, sel []int32, n int) (*vec.Vector, error) {
		x := vs[0]
		out := &vec.Vector{Type: vec.Int64, Len: n, Ints: make([]int64, n), Nulls: x.Nulls}
		forRows(sel, n, func(i int) { out.Ints[i] = ^x.IntAt(i) })
		return out, nil
	})
	k.dictArg = -1
	return k.bound(), nil
}

func bindBitwise(op string) func(string, []Arg, BindInfo) (*Bound, error) {
	return func(name string, args []Arg, info BindInfo) (*Bound, error) {
		if _, err := match(name, args, 2, vec.Int64, vec.Int64); err != nil {
			return nil, err
		}
		k := newKernel(vec.Int64, func(_ *EvalCtx, vs []*vec.Vector, sel []int32, n int) (*vec.Vector, error) {
			a, b := vs[0], vs[1]
			out := newVec(vec.Int64, n)
			err := rowLoop(out, vs, sel, n, info.Safe, func(i int) error {
				x, y := a.IntAt(i), b.IntAt(i)
				switch op {
				case "&":
					out.Ints[i] = x & y
				case "|":
					out.Ints[i] = x | y
				case "^":
					out.Ints[i] = x ^ y
				case "<<", ">>":
					if y < 0 {
						return fmt.Errorf("Bitwise shift by negative amount: %d", y)
					}
					if y >= 64 {
						out.Ints[i] = 0
					} else if op == "<<" {
						out.Ints[i] = int64(uint64(x) << uint(y))
					} else {
						out.Ints[i] = int64(uint64(x) >> uint(y))
					}
				}
				return nil
			})
			return out, err
		})
		k.dictArg = -1
		return k.bound(), nil
	}
}

// ---- LIKE ----

func bindLike(name string, args []Arg, info BindInfo) (*Bound, error) {
	convs, err := match(name, args, 2, vec.String, vec.String)
	if err != nil {
		return nil, err
	}
	var fixed *predicate.Like
	if p, isNull, ok := constString(args[1]); ok && !isNull {
		if fixed, err = predicate.CompileLike(p); err != nil {
			return nil, err
		}
	}
	k := newKernel(vec.Bool, func(_ *EvalCtx, vs []*vec.Vector, sel []int32, n int) (*vec.Vector, error) {
		s, pv := vs[0], vs[1]
		out := newVec(vec.Bool, n)
		if fixed != nil {
			out.Nulls = unionNulls(n, s)
			forRows(sel, n, func(i int) { out.Bools[i] = fixed.Match(s.StringAt(i)) })
			return out, nil
		}
		cache := map[string]*predicate.Like{}
		err := rowLoop(out, vs, sel, n, info.Safe, func(i int) error {
			p := pv.StringAt(i)
			lp, ok := cache[p]
			if !ok {
				var err error
				if lp, err = predicate.CompileLike(p); err != nil {
					return err
				}
				cache[p] = lp
			}
			out.Bools[i] = lp.Match(s.StringAt(i))
			return nil
		})
		return out, err
	})
	k.convs = convs
	return k.bound(), nil
}
