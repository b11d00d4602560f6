package fn

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/sediment/sediment/internal/predicate"
	"github.com/sediment/sediment/internal/vec"
)

// Mathematical functions. INT64 arguments are coerced to FLOAT64 where
// BigQuery's signature is FLOAT64 (SQRT, ROUND, ...); results that leave the
// finite range for finite inputs, and arguments outside a function's domain,
// are errors (NULL under SAFE.).

func init() {
	register("abs", bindAbs)
	register("sign", bindSign)
	register("round", bindRoundLike(roundHalfAway))
	register("trunc", bindRoundLike(math.Trunc))
	register("floor", bindFloat1(func(x float64) (float64, error) { return math.Floor(x), nil }))
	register("ceil", bindFloat1(func(x float64) (float64, error) { return math.Ceil(x), nil }), "ceiling")
	register("sqrt", bindFloat1(func(x float64) (float64, error) {
		if x < 0 {
			return 0, fmt.Errorf("Argument to SQRT cannot be negative: %s", formatFloat(x))
		}
		return math.Sqrt(x), nil
	}))
	register("ln", bindFloat1(func(x float64) (float64, error) {
		if x <= 0 {
			return 0, fmt.Errorf("Argument to LN must be positive: %s", formatFloat(x))
		}
		return math.Log(x), nil
	}))
	register("log10", bindFloat1(func(x float64) (float64, error) {
		if x <= 0 {
			return 0, fmt.Errorf("Argument to LOG10 must be positive: %s", formatFloat(x))
		}
		return math.Log10(x), nil
	}))
	register("exp", bindFloat1(func(x float64) (float64, error) {
		r := math.Exp(x)
		if math.IsInf(r, 1) && !math.IsInf(x, 1) {
			return 0, fmt.Errorf("Floating point overflow in function: EXP(%s)", formatFloat(x))
		}
		return r, nil
	}))
	register("log", bindLog)
	register("pow", bindPow, "power")
	register("mod", bindMod)
	register("div", bindDiv)
	register("safe_divide", bindDivide(true))
	register("ieee_divide", bindDivide(false))
	register("greatest", bindExtreme(true))
	register("least", bindExtreme(false))
	register("is_nan", bindFloatPredicate(math.IsNaN))
	register("is_inf", bindFloatPredicate(func(x float64) bool { return math.IsInf(x, 0) }))
	register("rand", bindRand)
	for name, f := range map[string]func(float64) float64{
		"sin": math.Sin, "cos": math.Cos, "tan": math.Tan, "atan": math.Atan,
		"sinh": math.Sinh, "cosh": math.Cosh, "tanh": math.Tanh, "cbrt": math.Cbrt,
	} {
		register(name, bindFloat1(func(x float64) (float64, error) { return f(x), nil }))
	}
	register("asin", bindFloat1(domainFn("ASIN", math.Asin, -1, 1)))
	register("acos", bindFloat1(domainFn("ACOS", math.Acos, -1, 1)))
	register("atan2", bindFloat2(func(y, x float64) (float64, error) { return math.Atan2(y, x), nil }))
}

// domainFn wraps f with an error outside [lo, hi].
func domainFn(name string, f func(float64) float64, lo, hi float64) func(float64) (float64, error) {
	return func(x float64) (float64, error) {
		if x < lo || x > hi {
			return 0, fmt.Errorf("%s: argument out of range [%g, %g]: %s", name, lo, hi, formatFloat(x))
		}
		return f(x), nil
	}
}

// bindFloat1 binds a FLOAT64 -> FLOAT64 function (INT64 is coerced).
func bindFloat1(f func(float64) (float64, error)) func(string, []Arg, BindInfo) (*Bound, error) {
	return func(name string, args []Arg, info BindInfo) (*Bound, error) {
		convs, err := match(name, args, 1, vec.Float64)
		if err != nil {
			return nil, err
		}
		k := newKernel(vec.Float64, rowEval(vec.Float64, info.Safe, func(vs []*vec.Vector, i int, out *vec.Vector) error {
			r, err := f(vs[0].FloatAt(i))
			out.Floats[i] = r
			return err
		}))
		k.convs, k.dictArg = convs, -1
		return k.bound(), nil
	}
}

// bindFloat2 binds a (FLOAT64, FLOAT64) -> FLOAT64 function.
func bindFloat2(f func(x, y float64) (float64, error)) func(string, []Arg, BindInfo) (*Bound, error) {
	return func(name string, args []Arg, info BindInfo) (*Bound, error) {
		convs, err := match(name, args, 2, vec.Float64, vec.Float64)
		if err != nil {
			return nil, err
		}
		k := newKernel(vec.Float64, rowEval(vec.Float64, info.Safe, func(vs []*vec.Vector, i int, out *vec.Vector) error {
			r, err := f(vs[0].FloatAt(i), vs[1].FloatAt(i))
			out.Floats[i] = r
			return err
		}))
		k.convs, k.dictArg = convs, -1
		return k.bound(), nil
	}
}

func bindFloatPredicate(f func(float64) bool) func(string, []Arg, BindInfo) (*Bound, error) {
	return func(name string, args []Arg, _ BindInfo) (*Bound, error) {
		convs, err := match(name, args, 1, vec.Float64)
		if err != nil {
			return nil, err
		}
		k := newKernel(vec.Bool, rowEval(vec.Bool, false, func(vs []*vec.Vector, i int, out *vec.Vector) error {
			out.Bools[i] = f(vs[0].FloatAt(i))
			return nil
		}))
		k.convs, k.dictArg = convs, -1
		return k.bound(), nil
	}
}

// numericArg reports the type of a numeric argument: INT64 (also for an
// untyped NULL) or FLOAT64.
func numericArg(name string, args []Arg) (vec.Type, error) {
	for _, a := range args {
		if a.Part != "" {
			return 0, sigError(name, args)
		}
	}
	t := vec.Int64
	for _, a := range args {
		switch a.Type {
		case vec.Int64, vec.Unknown:
		case vec.Float64:
			t = vec.Float64
		default:
			return 0, sigError(name, args)
		}
	}
	return t, nil
}

func bindAbs(name string, args []Arg, info BindInfo) (*Bound, error) {
	if err := checkArity(name, args, 1, 1); err != nil {
		return nil, err
	}
	t, err := numericArg(name, args)
	if err != nil {
		return nil, err
	}
	if t == vec.Int64 {
		k := newKernel(vec.Int64, rowEval(vec.Int64, info.Safe, func(vs []*vec.Vector, i int, out *vec.Vector) error {
			x := vs[0].IntAt(i)
			if x == minInt64 {
				return fmt.Errorf("int64 overflow: ABS(%d)", x)
			}
			if x < 0 {
				x = -x
			}
			out.Ints[i] = x
			return nil
		}))
		k.dictArg = -1
		return k.bound(), nil
	}
	return bindFloat1(func(x float64) (float64, error) { return math.Abs(x), nil })(name, args, info)
}

func bindSign(name string, args []Arg, info BindInfo) (*Bound, error) {
	if err := checkArity(name, args, 1, 1); err != nil {
		return nil, err
	}
	t, err := numericArg(name, args)
	if err != nil {
		return nil, err
	}
	if t == vec.Int64 {
		k := newKernel(vec.Int64, rowEval(vec.Int64, false, func(vs []*vec.Vector, i int, out *vec.Vector) error {
			switch x := vs[0].IntAt(i); {
			case x > 0:
				out.Ints[i] = 1
			case x < 0:
				out.Ints[i] = -1
			}
			return nil
		}))
		k.dictArg = -1
		return k.bound(), nil
	}
	return bindFloat1(func(x float64) (float64, error) {
		switch {
		case x > 0:
			return 1, nil
		case x < 0:
			return -1, nil
		}
		return x, nil // 0, -0 and NaN
	})(name, args, info)
}

// roundHalfAway rounds half away from zero.
func roundHalfAway(x float64) float64 { return math.Round(x) }

// bindRoundLike binds ROUND/TRUNC(x[, digits]).
func bindRoundLike(f func(float64) float64) func(string, []Arg, BindInfo) (*Bound, error) {
	return func(name string, args []Arg, info BindInfo) (*Bound, error) {
		convs, err := match(name, args, 1, vec.Float64, vec.Int64)
		if err != nil {
			return nil, err
		}
		k := newKernel(vec.Float64, rowEval(vec.Float64, info.Safe, func(vs []*vec.Vector, i int, out *vec.Vector) error {
			x := vs[0].FloatAt(i)
			digits := int64(0)
			if len(vs) > 1 {
				digits = vs[1].IntAt(i)
			}
			r := roundDigits(x, digits, f)
			if math.IsInf(r, 0) && !math.IsInf(x, 0) {
				return fmt.Errorf("Floating point overflow in function: %s(%s, %d)", name, formatFloat(x), digits)
			}
			out.Floats[i] = r
			return nil
		}))
		k.convs, k.dictArg = convs, -1
		return k.bound(), nil
	}
}

// roundDigits applies f at the given number of decimal digits (negative:
// to the left of the decimal point).
func roundDigits(x float64, digits int64, f func(float64) float64) float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return x
	}
	switch {
	case digits == 0:
		return f(x)
	case digits > 0:
		if digits > 330 {
			return x
		}
		p := math.Pow(10, float64(digits))
		y := x * p
		if math.IsInf(y, 0) {
			return x // more digits than a float64 holds: nothing to round
		}
		return f(y) / p
	default:
		if digits < -330 {
			return f(0) * x // ±0
		}
		p := math.Pow(10, float64(-digits))
		return f(x/p) * p
	}
}

func bindLog(name string, args []Arg, info BindInfo) (*Bound, error) {
	convs, err := match(name, args, 1, vec.Float64, vec.Float64)
	if err != nil {
		return nil, err
	}
	k := newKernel(vec.Float64, rowEval(vec.Float64, info.Safe, func(vs []*vec.Vector, i int, out *vec.Vector) error {
		x := vs[0].FloatAt(i)
		if x <= 0 {
			return fmt.Errorf("Argument to LOG must be positive: %s", formatFloat(x))
		}
		if len(vs) == 1 {
			out.Floats[i] = math.Log(x)
			return nil
		}
		base := vs[1].FloatAt(i)
		if base <= 0 || base == 1 {
			return fmt.Errorf("LOG: the base must be positive and not 1: %s", formatFloat(base))
		}
		out.Floats[i] = math.Log(x) / math.Log(base)
		return nil
	}))
	k.convs, k.dictArg = convs, -1
	return k.bound(), nil
}

func bindPow(name string, args []Arg, info BindInfo) (*Bound, error) {
	return bindFloat2(func(x, y float64) (float64, error) {
		if x == 0 && y < 0 {
			return 0, fmt.Errorf("division by zero: POW(%s, %s)", formatFloat(x), formatFloat(y))
		}
		r := math.Pow(x, y)
		if math.IsNaN(r) && !math.IsNaN(x) && !math.IsNaN(y) {
			return 0, fmt.Errorf("Floating point error in function: POW(%s, %s)", formatFloat(x), formatFloat(y))
		}
		if math.IsInf(r, 0) && !math.IsInf(x, 0) && !math.IsInf(y, 0) {
			return 0, fmt.Errorf("Floating point overflow in function: POW(%s, %s)", formatFloat(x), formatFloat(y))
		}
		return r, nil
	})(name, args, info)
}

func bindMod(name string, args []Arg, info BindInfo) (*Bound, error) {
	if err := checkArity(name, args, 2, 2); err != nil {
		return nil, err
	}
	t, err := numericArg(name, args)
	if err != nil {
		return nil, err
	}
	if t == vec.Float64 {
		return bindFloat2(func(x, y float64) (float64, error) {
			if y == 0 {
				return 0, fmt.Errorf("division by zero: MOD(%s, %s)", formatFloat(x), formatFloat(y))
			}
			return math.Mod(x, y), nil
		})(name, args, info)
	}
	k := newKernel(vec.Int64, rowEval(vec.Int64, info.Safe, func(vs []*vec.Vector, i int, out *vec.Vector) error {
		x, y := vs[0].IntAt(i), vs[1].IntAt(i)
		switch y {
		case 0:
			return fmt.Errorf("division by zero: MOD(%d, %d)", x, y)
		case -1:
			out.Ints[i] = 0
		default:
			out.Ints[i] = x % y
		}
		return nil
	}))
	k.dictArg = -1
	return k.bound(), nil
}

func bindDiv(name string, args []Arg, info BindInfo) (*Bound, error) {
	if _, err := match(name, args, 2, vec.Int64, vec.Int64); err != nil {
		return nil, err
	}
	k := newKernel(vec.Int64, rowEval(vec.Int64, info.Safe, func(vs []*vec.Vector, i int, out *vec.Vector) error {
		x, y := vs[0].IntAt(i), vs[1].IntAt(i)
		if y == 0 {
			return fmt.Errorf("division by zero: DIV(%d, %d)", x, y)
		}
		if x == minInt64 && y == -1 {
			return fmt.Errorf("int64 overflow: DIV(%d, %d)", x, y)
		}
		out.Ints[i] = x / y
		return nil
	}))
	k.dictArg = -1
	return k.bound(), nil
}

// bindDivide binds SAFE_DIVIDE (NULL on a zero divisor) and IEEE_DIVIDE
// (IEEE 754 results: ±inf, NaN).
func bindDivide(safeDivide bool) func(string, []Arg, BindInfo) (*Bound, error) {
	return func(name string, args []Arg, info BindInfo) (*Bound, error) {
		convs, err := match(name, args, 2, vec.Float64, vec.Float64)
		if err != nil {
			return nil, err
		}
		k := newKernel(vec.Float64, rowEval(vec.Float64, info.Safe, func(vs []*vec.Vector, i int, out *vec.Vector) error {
			x, y := vs[0].FloatAt(i), vs[1].FloatAt(i)
			if safeDivide {
				if y == 0 {
					return errNull
				}
				r := x / y
				if math.IsInf(r, 0) && !math.IsInf(x, 0) {
					return errNull
				}
				out.Floats[i] = r
				return nil
			}
			out.Floats[i] = x / y
			return nil
		}))
		k.convs, k.dictArg = convs, -1
		return k.bound(), nil
	}
}

// bindExtreme binds GREATEST/LEAST: NULL if any argument is NULL, NaN if
// any FLOAT64 argument is NaN.
func bindExtreme(greatest bool) func(string, []Arg, BindInfo) (*Bound, error) {
	return func(name string, args []Arg, _ BindInfo) (*Bound, error) {
		if len(args) == 0 {
			return nil, arityError(name)
		}
		t, convs, err := unifyMany(name, args)
		if err != nil {
			return nil, err
		}
		k := newKernel(t, rowEval(t, false, func(vs []*vec.Vector, i int, out *vec.Vector) error {
			best := 0
			for j := 1; j < len(vs); j++ {
				c := compareValues(t, vs[j], i, vs[best], i)
				if (greatest && c > 0) || (!greatest && c < 0) {
					best = j
				}
			}
			if t == vec.Float64 {
				for _, v := range vs {
					if math.IsNaN(v.FloatAt(i)) {
						out.Floats[i] = math.NaN()
						return nil
					}
				}
			}
			copyValue(out, i, vs[best], i)
			return nil
		}))
		k.convs, k.dictArg = convs, dictArgOf(args)
		return k.bound(), nil
	}
}

// unifyMany finds the common comparable type of several arguments.
func unifyMany(name string, args []Arg) (vec.Type, []conv, error) {
	t := vec.Unknown
	for _, a := range args {
		if a.Part != "" {
			return 0, nil, sigError(name, args)
		}
		switch {
		case a.Type == vec.Unknown || a.Type == t:
		case t == vec.Unknown:
			t = a.Type
		case (t == vec.Int64 && a.Type == vec.Float64) || (t == vec.Float64 && a.Type == vec.Int64):
			t = vec.Float64
		case t == vec.Date && a.Type == vec.Datetime:
			t = vec.Datetime
		case isTimeType(t) && a.Type == vec.String, t == vec.Datetime && a.Type == vec.Date:
		case t == vec.String && isTimeType(a.Type):
			t = a.Type
		default:
			return 0, nil, sigError(name, args)
		}
	}
	if !comparableType(t) {
		return 0, nil, sigError(name, args)
	}
	if t == vec.Unknown {
		t = vec.Int64
	}
	convs := make([]conv, len(args))
	for i, a := range args {
		c, err := coerceArg(name, args, a, t)
		if err != nil {
			return 0, nil, err
		}
		convs[i] = c
	}
	return t, convs, nil
}

// compareValues orders two non-NULL values of type t (-1, 0, 1); NaN sorts
// first, as in ORDER BY.
func compareValues(t vec.Type, a *vec.Vector, i int, b *vec.Vector, j int) int {
	switch {
	case t == vec.Bool:
		return predicate.Compare(boolInt(a.BoolAt(i)), boolInt(b.BoolAt(j)))
	case t == vec.Float64:
		x, y := a.FloatAt(i), b.FloatAt(j)
		switch {
		case math.IsNaN(x) && math.IsNaN(y):
			return 0
		case math.IsNaN(x):
			return -1
		case math.IsNaN(y):
			return 1
		}
		return predicate.Compare(x, y)
	case t == vec.String || t == vec.JSON:
		return predicate.Compare(a.StringAt(i), b.StringAt(j))
	case t.UsesInts():
		return predicate.Compare(a.IntAt(i), b.IntAt(j))
	}
	return 0
}

func bindRand(name string, args []Arg, _ BindInfo) (*Bound, error) {
	if len(args) != 0 {
		return nil, arityError(name)
	}
	k := &kernel{typ: vec.Float64, volatile: true, dictArg: -1, eval: func(_ *EvalCtx, _ []*vec.Vector, sel []int32, n int) (*vec.Vector, error) {
		out := newVec(vec.Float64, n)
		forRows(sel, n, func(i int) { out.Floats[i] = rand.Float64() })
		return out, nil
	}}
	return k.bound(), nil
}
