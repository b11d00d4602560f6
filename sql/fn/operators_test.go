package fn

import (
	"math"
	"testing"

	"github.com/sediment/sediment/internal/vec"
)

func TestComparisons(t *testing.T) {
	nan := math.NaN()
	runCases(t, []fnCase{
		c("=", true, 1, 1),
		c("=", false, 1, 2),
		c("=", true, 2, 2.0),
		c("<", true, 1, 2.5),
		c(">", true, 2.5, 1),
		c("<=", true, 3, 3),
		c(">=", false, 2, 3),
		c("!=", true, 1, 2),
		c("<>", false, 1, 1),
		c("=", nil, 1, nil),
		c("=", nil, nullOf(vec.Int64), 1),
		c("<", true, "a", "b"),
		c(">=", true, "b", "b"),
		c("=", true, "ünïcode", "ünïcode"),
		c("=", false, "", "a"),
		c("<", true, false, true),
		c("=", true, true, true),
		c("=", false, nan, nan),
		c("!=", true, nan, nan),
		c("<", false, nan, 1.0),
		// TIMESTAMP compared with a string literal, as Studio writes it.
		c(">", true, ts("2025-07-10 11:00:00.001"), "2025-07-10T11:00:00.000Z"),
		c("<=", true, "2025-07-10T11:00:00Z", ts("2025-07-10 11:00:00")),
		c("=", true, ts("2024-01-01 02:00:00"), "2024-01-01 03:00:00+01:00"),
		c("<", errWant(`Could not cast literal "garbage" to type TIMESTAMP`), ts("2024-01-01"), keep{"garbage"}),
		c("=", true, date("2024-01-02"), "2024-01-02"),
		c("=", true, dt("2024-01-02 03:04:05"), "2024-01-02T03:04:05"),
		c("<", true, date("2024-01-02"), dt("2024-01-02 00:00:01")),
		c("=", true, date("2024-01-02"), dt("2024-01-02 00:00:00")),
		c("=", errWant("No matching signature for operator = for argument types: STRING, INT64"), "a", 1),
		c("<", errWant("No matching signature"), ts("2024-01-01"), date("2024-01-01")),
		c("=", errWant("No matching signature"), jsonV("1"), jsonV("1")),
	})
}

func TestDistinctFrom(t *testing.T) {
	runCases(t, []fnCase{
		c("IS DISTINCT FROM", false, nil, nil),
		c("IS DISTINCT FROM", true, 1, nil),
		c("IS DISTINCT FROM", true, nullOf(vec.String), "a"),
		c("IS DISTINCT FROM", false, 1, 1),
		c("IS DISTINCT FROM", true, 1, 2),
		c("IS DISTINCT FROM", false, math.NaN(), math.NaN()),
		c("IS NOT DISTINCT FROM", true, nil, nil),
		c("IS NOT DISTINCT FROM", true, "a", "a"),
		c("IS NOT DISTINCT FROM", false, "a", nullOf(vec.String)),
		c("IS NOT DISTINCT FROM", true, ts("2024-01-01"), "2024-01-01 00:00:00+00"),
	})
}

func TestArithmetic(t *testing.T) {
	runCases(t, []fnCase{
		c("+", 3, 1, 2),
		c("+", 3.5, 1, 2.5),
		c("-", -1, 1, 2),
		c("*", 6, 2, 3),
		c("*", 7.5, 2.5, 3),
		c("/", 2.5, 5, 2),
		c("/", 2.0, 4, 2),
		c("/", errWant("division by zero: 1 / 0"), 1, 0),
		c("/", errWant("division by zero"), 1.5, 0.0),
		safeC("/", nil, 1, 0),
		c("+", nil, 1, nil),
		c("+", nil, nil, nil),
		c("+", errWant("int64 overflow: 9223372036854775807 + 1"), int64(math.MaxInt64), 1),
		c("-", errWant("int64 overflow: -9223372036854775808 - 1"), int64(math.MinInt64), 1),
		c("*", errWant("int64 overflow"), int64(1)<<62, 4),
		c("*", int64(math.MinInt64), int64(1)<<62, -2),
		c("*", errWant("double overflow"), 1e308, 10.0),
		c("+", math.Inf(1), math.Inf(1), 1.0),
		c("neg", -5, 5),
		c("neg", -2.5, 2.5),
		c("neg", errWant("int64 overflow"), int64(math.MinInt64)),
		c("neg", nil, nullOf(vec.Int64)),
		c("+", errWant("No matching signature for operator +"), "a", 1),
		// Date and time arithmetic.
		c("+", ts("2024-01-01 01:00:00"), ts("2024-01-01 00:00:00"), ival{1, "HOUR"}),
		c("+", ts("2024-01-01 01:00:00"), ival{1, "HOUR"}, ts("2024-01-01 00:00:00")),
		c("-", ts("2023-12-31 23:30:00"), ts("2024-01-01 00:00:00"), ival{30, "MINUTE"}),
		c("+", ts("2024-01-08"), ts("2024-01-01"), ival{1, "WEEK"}),
		c("+", errWant("does not support the MONTH date part"), ts("2024-01-01"), ival{1, "MONTH"}),
		c("+", dt("2024-02-29 10:00:00"), dt("2024-01-31 10:00:00"), ival{1, "MONTH"}),
		c("+", dt("2024-02-29 00:00:00"), date("2024-01-31"), ival{1, "MONTH"}),
		c("+", date("2024-03-01"), date("2024-02-29"), 1),
		c("+", date("2024-03-01"), 1, date("2024-02-29")),
		c("-", date("2024-02-28"), date("2024-02-29"), 1),
		c("+", errWant("timestamp overflow"), ts("9999-12-31 23:00:00"), ival{2, "HOUR"}),
	})
}

func TestBitwise(t *testing.T) {
	runCases(t, []fnCase{
		c("&", 2, 6, 3),
		c("|", 7, 6, 3),
		c("^", 5, 6, 3),
		c("<<", 8, 1, 3),
		c(">>", 1, 8, 3),
		c(">>", int64(math.MaxInt64), int64(-1), 1),
		c("<<", 0, 1, 64),
		c("<<", errWant("negative"), 1, -1),
		c("~", -1, 0),
	})
}

func TestLike(t *testing.T) {
	runCases(t, []fnCase{
		c("like", true, "abc", "a%"),
		c("like", true, "abc", "%c"),
		c("like", true, "abc", "%b%"),
		c("like", true, "abc", "a_c"),
		c("like", true, "abc", "abc"),
		c("like", false, "abc", "ab"),
		c("like", false, "ABC", "abc"),
		c("like", true, "a%c", `a\%c`),
		c("like", false, "abc", `a\%c`),
		c("like", true, "a_c", `a\_c`),
		c("like", true, `a\c`, `a\\c`),
		c("like", true, "αβγ", "α_γ"),
		c("like", false, "αβγ", "α__γ"),
		c("like", true, "", "%"),
		c("like", true, "", ""),
		c("like", true, "abcbc", "a%bc"),
		c("like", true, "xaaab", "%a%ab"),
		c("like", false, "xaaac", "%a%ab"),
		c("like", true, "/api/v1/users/42", "/api/%/users/%"),
		c("like", errWant("ends with a backslash"), "x", `\`),
		c("like", nil, nil, "a%"),
		c("like", nil, "a", nil),
	})
}

// A row outside the selection may hold a value that would fail; it must not.
func TestSelectionSkipsFailingRows(t *testing.T) {
	f, _ := Lookup("/")
	b, err := f.Bind([]Arg{{Type: vec.Int64}, {Type: vec.Int64}}, BindInfo{})
	if err != nil {
		t.Fatal(err)
	}
	x := buildVector(vec.Int64, []any{10, 1, 9}, false)
	y := buildVector(vec.Int64, []any{2, 0, 3}, false)
	r, err := b.Eval(testEvalCtx(), []*vec.Vector{x, y}, []int32{0, 2}, 3)
	if err != nil {
		t.Fatalf("error from an unselected row: %v", err)
	}
	if r.Floats[0] != 5 || r.Floats[2] != 3 {
		t.Errorf("got %v", r.Floats)
	}
	// The same row selected is an error.
	if _, err := b.Eval(testEvalCtx(), []*vec.Vector{x, y}, nil, 3); err == nil {
		t.Error("division by zero in a selected row: no error")
	}
	// A NULL row holding a zero divisor is NULL, not an error.
	y2 := buildVector(vec.Int64, []any{2, nil, 3}, false)
	r, err = b.Eval(testEvalCtx(), []*vec.Vector{x, y2}, nil, 3)
	if err != nil || !r.IsNull(1) {
		t.Errorf("NULL divisor: err=%v null=%v", err, r.IsNull(1))
	}
}

func TestComparisonOnDictionary(t *testing.T) {
	f, _ := Lookup("=")
	lit := Datum{Type: vec.String, Str: "GET"}
	b, err := f.Bind([]Arg{{Type: vec.String}, {Type: vec.String, Const: &lit}}, BindInfo{})
	if err != nil {
		t.Fatal(err)
	}
	col := buildVector(vec.String, []any{"GET", "POST", nil, "GET", "PUT"}, true)
	r, err := b.Eval(testEvalCtx(), []*vec.Vector{col, datumVector(lit, 5)}, nil, 5)
	if err != nil {
		t.Fatal(err)
	}
	want := []any{true, false, nil, true, false}
	for i, w := range want {
		if got := readValue(r, i); got != w {
			t.Errorf("row %d: got %v, want %v", i, got, w)
		}
	}
	// Constant on the left.
	b, err = f.Bind([]Arg{{Type: vec.String, Const: &lit}, {Type: vec.String}}, BindInfo{})
	if err != nil {
		t.Fatal(err)
	}
	r, err = b.Eval(testEvalCtx(), []*vec.Vector{datumVector(lit, 5), col}, []int32{1, 3}, 5)
	if err != nil {
		t.Fatal(err)
	}
	if readValue(r, 1) != false || readValue(r, 3) != true {
		t.Errorf("got %v %v", readValue(r, 1), readValue(r, 3))
	}
}

func TestCompareSparseSelection(t *testing.T) {
	f, _ := Lookup("<")
	b, err := f.Bind([]Arg{{Type: vec.Int64}, {Type: vec.Int64}}, BindInfo{})
	if err != nil {
		t.Fatal(err)
	}
	n := 100
	x, y := newVec(vec.Int64, n), newVec(vec.Int64, n)
	for i := 0; i < n; i++ {
		x.Ints[i], y.Ints[i] = int64(i), 50
	}
	r, err := b.Eval(testEvalCtx(), []*vec.Vector{x, y}, []int32{3, 60}, n)
	if err != nil {
		t.Fatal(err)
	}
	if !r.Bools[3] || r.Bools[60] {
		t.Errorf("got %v %v", r.Bools[3], r.Bools[60])
	}
}
