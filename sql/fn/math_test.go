package fn

import (
	"math"
	"testing"

	"github.com/sediment/sediment/internal/vec"
)

func TestMathFunctions(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(1)
	runCases(t, []fnCase{
		c("abs", 5, -5),
		c("abs", 2.5, -2.5),
		c("abs", errWant("int64 overflow"), int64(math.MinInt64)),
		c("abs", nil, nullOf(vec.Int64)),
		c("abs", errWant("No matching signature"), "x"),
		c("sign", -1, -3),
		c("sign", 0, 0),
		c("sign", 1.0, 2.5),
		c("sign", nan, nan),
		c("round", 3.0, 2.5),
		c("round", -3.0, -2.5),
		c("round", 2.0, 2.4),
		c("round", 5.0, 5),
		c("round", 123.46, 123.456, 2),
		c("round", 120.0, 123.456, -1),
		c("round", 0.0, 123.456, -5),
		c("round", 1.5, 1.5, 400),
		c("round", errWant("overflow"), 1.7e308, -308),
		c("trunc", 2.0, 2.7),
		c("trunc", -2.0, -2.7),
		c("trunc", 123.4, 123.456, 1),
		c("floor", -2.0, -1.5),
		c("floor", 3.0, 3),
		c("ceil", 2.0, 1.2),
		c("ceiling", -1.0, -1.2),
		c("mod", 1, 25, 12),
		c("mod", -1, -25, 12),
		c("mod", 0, int64(math.MinInt64), -1),
		c("mod", errWant("division by zero: MOD(1, 0)"), 1, 0),
		c("mod", 1.5, 7.5, 2.0),
		c("div", 5, 20, 4),
		c("div", -1, 12, -7),
		c("div", errWant("division by zero"), 1, 0),
		c("div", errWant("overflow"), int64(math.MinInt64), -1),
		safeC("div", nil, 1, 0),
		c("safe_divide", 5.0, 10, 2),
		c("safe_divide", nil, 1, 0),
		c("safe_divide", nil, 0, 0),
		c("ieee_divide", inf, 1, 0),
		c("ieee_divide", math.Inf(-1), -1, 0),
		c("ieee_divide", nan, 0, 0),
		c("sqrt", 5.0, 25),
		c("sqrt", errWant("cannot be negative"), -1),
		safeC("sqrt", nil, -1),
		c("pow", 1024.0, 2, 10),
		c("power", 0.5, 2, -1),
		c("pow", errWant("Floating point error"), -8, 1.0/3),
		c("pow", errWant("division by zero"), 0, -1),
		c("pow", errWant("overflow"), 10, 400),
		c("pow", 1.0, nan, 0.0),
		c("ln", 0.0, 1),
		c("ln", errWant("positive"), 0),
		c("log", 2.0, 100, 10),
		c("log", 3.0, 8, 2),
		c("log", math.Log(10), 10),
		c("log", errWant("base"), 10, 1),
		c("log", errWant("positive"), -1, 10),
		c("log10", 3.0, 1000),
		c("exp", 1.0, 0),
		c("exp", errWant("overflow"), 1000),
		c("exp", 0.0, math.Inf(-1)),
		c("greatest", 5, 1, 5, 3),
		c("least", 1, 1, 5, 3),
		c("greatest", 2.5, 1, 2.5),
		c("greatest", nil, 1, nil),
		c("greatest", "b", "a", "b"),
		c("greatest", nan, 1.0, nan),
		c("least", nan, 1.0, nan),
		c("least", date("2024-01-01"), date("2024-01-02"), date("2024-01-01")),
		c("greatest", ts("2024-01-02"), ts("2024-01-01"), "2024-01-02"),
		c("greatest", errWant("No matching signature"), 1, "a"),
		c("is_nan", true, nan),
		c("is_nan", false, 1),
		c("is_inf", true, math.Inf(-1)),
		c("is_inf", false, 1.0),
		c("sin", 0.0, 0),
		c("atan2", math.Pi/2, 1, 0),
		c("acos", errWant("out of range"), 2),
		c("safe_add", nil, int64(math.MaxInt64), 1),
		c("safe_add", 3, 1, 2),
		c("safe_subtract", 1.5, 2, 0.5),
		c("safe_multiply", nil, int64(1)<<62, 4),
		c("safe_negate", nil, int64(math.MinInt64)),
		c("safe_add", errWant("No matching signature"), ts("2024-01-01"), ival{1, "DAY"}),
	})
}

func TestRand(t *testing.T) {
	f, _ := Lookup("rand")
	b, err := f.Bind(nil, BindInfo{})
	if err != nil {
		t.Fatal(err)
	}
	r, err := b.Eval(testEvalCtx(), nil, nil, 100)
	if err != nil {
		t.Fatal(err)
	}
	if r.Const {
		t.Fatal("RAND() was folded to a constant")
	}
	distinct := map[float64]bool{}
	for _, x := range r.Floats {
		if x < 0 || x >= 1 {
			t.Fatalf("RAND() = %v", x)
		}
		distinct[x] = true
	}
	if len(distinct) < 90 {
		t.Errorf("only %d distinct values in 100 rows", len(distinct))
	}
}
