package fn

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sediment/sediment/internal/vec"
)

// One Bound is evaluated by several workers at once (run with -race).
func TestConcurrentEval(t *testing.T) {
	zoneName := Datum{Type: vec.String, Str: "America/Los_Angeles"}
	cases := []struct {
		name string
		args []Arg
		vs   func(n int) []*vec.Vector
	}{
		{"regexp_contains", []Arg{{Type: vec.String}, {Type: vec.String}}, func(n int) []*vec.Vector {
			s, p := make([]any, n), make([]any, n)
			for i := range s {
				s[i], p[i] = fmt.Sprintf("row %d", i), fmt.Sprintf("%d$", i%7)
			}
			return []*vec.Vector{buildVector(vec.String, s, false), buildVector(vec.String, p, true)}
		}},
		{"timestamp_trunc", []Arg{{Type: vec.Timestamp}, {Part: "DAY"}, {Type: vec.String, Const: &zoneName}}, func(n int) []*vec.Vector {
			x := newVec(vec.Timestamp, n)
			for i := range x.Ints {
				x.Ints[i] = 1700000000000000 + int64(i)*3_600_000_000*7
			}
			return []*vec.Vector{x, nil, datumVector(zoneName, n)}
		}},
		{"format", []Arg{{Type: vec.String}, {Type: vec.Int64}}, func(n int) []*vec.Vector {
			f, x := make([]any, n), make([]any, n)
			for i := range f {
				f[i], x[i] = fmt.Sprintf("<%%0%dd>", i%5+1), i
			}
			return []*vec.Vector{buildVector(vec.String, f, false), buildVector(vec.Int64, x, false)}
		}},
	}
	for _, tc := range cases {
		f, _ := Lookup(tc.name)
		b, err := f.Bind(tc.args, BindInfo{})
		if err != nil {
			t.Fatal(err)
		}
		const n = 500
		want, err := b.Eval(testEvalCtx(), tc.vs(n), nil, n)
		if err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		errs := make(chan error, 4)
		for w := 0; w < 4; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				got, err := b.Eval(testEvalCtx(), tc.vs(n), nil, n)
				if err != nil {
					errs <- err
					return
				}
				for i := 0; i < n; i++ {
					if !sameTestValue(readValue(got, i), readValue(want, i)) {
						errs <- fmt.Errorf("%s row %d: %v vs %v", tc.name, i, readValue(got, i), readValue(want, i))
						return
					}
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Error(err)
		}
	}
}

// A dictionary much larger than the batch is not evaluated per entry; the
// results are the same.
func TestLargeDictionaryFallback(t *testing.T) {
	f, _ := Lookup("upper")
	b, err := f.Bind([]Arg{{Type: vec.String}}, BindInfo{})
	if err != nil {
		t.Fatal(err)
	}
	dict := make([]string, 1000)
	for i := range dict {
		dict[i] = fmt.Sprintf("v%d", i)
	}
	col := &vec.Vector{Type: vec.String, Len: 3, Codes: []uint32{5, 999, 5}, Dict: dict}
	r, err := b.Eval(testEvalCtx(), []*vec.Vector{col}, nil, 3)
	if err != nil {
		t.Fatal(err)
	}
	for i, w := range []string{"V5", "V999", "V5"} {
		if got := readValue(r, i); got != w {
			t.Errorf("row %d = %v, want %s", i, got, w)
		}
	}
}

// Dictionary entries used only by unselected or NULL rows are not
// evaluated (they could fail).
func TestUnusedDictionaryEntriesNotEvaluated(t *testing.T) {
	b, err := BindCast(Arg{Type: vec.String}, vec.Int64, false, BindInfo{})
	if err != nil {
		t.Fatal(err)
	}
	col := &vec.Vector{Type: vec.String, Len: 4, Codes: []uint32{0, 1, 2, 1}, Dict: []string{"bad", "7", "worse"}}
	col.Nulls = vec.NewBitset(4)
	col.Nulls.Set(2)
	r, err := b.Eval(testEvalCtx(), []*vec.Vector{col}, []int32{1, 2, 3}, 4)
	if err != nil {
		t.Fatalf("an unselected or NULL row's entry was evaluated: %v", err)
	}
	if readValue(r, 1) != int64(7) || readValue(r, 2) != nil || readValue(r, 3) != int64(7) {
		t.Errorf("got %v %v %v", readValue(r, 1), readValue(r, 2), readValue(r, 3))
	}
}

func TestMaterializeUnavailable(t *testing.T) {
	f, _ := Lookup("to_json_string")
	b, err := f.Bind([]Arg{{Type: vec.RowRef}}, BindInfo{})
	if err != nil {
		t.Fatal(err)
	}
	refs := buildVector(vec.RowRef, []any{refV(1)}, false)
	_, err = b.Eval(&EvalCtx{}, []*vec.Vector{refs}, nil, 1)
	if err == nil || !strings.Contains(err.Error(), "records cannot be converted") {
		t.Errorf("err = %v", err)
	}
}

// Every registered function rejects a date part where a value is expected
// and never panics on argument lists of odd shapes.
func TestBindNeverPanics(t *testing.T) {
	shapes := [][]Arg{
		nil,
		{{Type: vec.Unknown}},
		{{Part: "DAY"}},
		{{Type: vec.String}, {Type: vec.Int64}, {Type: vec.Float64}},
		{{Type: vec.List, Elem: vec.Int64}, {Type: vec.Interval}},
		{{Type: vec.RowRef}, {Type: vec.JSON}, {Part: "WEEK", PartArg: "X"}, {Type: vec.Bool}},
	}
	for _, name := range Names() {
		f, _ := Lookup(name)
		for _, args := range shapes {
			func() {
				defer func() {
					if r := recover(); r != nil {
						t.Errorf("%s(%v) panicked: %v", name, args, r)
					}
				}()
				_, _ = f.Bind(args, BindInfo{})
			}()
		}
	}
}

// Every function that binds evaluates without panicking on edge values
// (NULLs, empty strings, extreme numbers) of every argument type.
func TestEvalNeverPanics(t *testing.T) {
	hour := Datum{Type: vec.Interval, Int: 1, Str: "HOUR"}
	type option struct {
		arg  Arg
		vals []any
	}
	options := []option{
		{Arg{Type: vec.String}, []any{"2024-01-01", "", nil, "%d %s $.a ("}},
		{Arg{Type: vec.Int64}, []any{int64(0), int64(-1), nil, int64(1) << 62}},
		{Arg{Type: vec.Float64}, []any{0.0, -1.5, nil, 1e308}},
		{Arg{Type: vec.Bool}, []any{true, false, nil, true}},
		{Arg{Type: vec.Timestamp}, []any{tsV(0), tsV(minTimestamp), nil, tsV(maxTimestamp)}},
		{Arg{Type: vec.Date}, []any{dateV(0), dateV(minDate), nil, dateV(maxDate)}},
		{Arg{Type: vec.JSON}, []any{jsonV(`{"a":[1]}`), jsonV(`null`), nil, jsonV(`"x"`)}},
		{Arg{Type: vec.List, Elem: vec.Int64}, []any{arr(vec.Int64, 1, nil), arr(vec.Int64), nil, arr(vec.Int64, 3)}},
		{Arg{Type: vec.Unknown}, nil},
		{Arg{Part: "DAY"}, nil},
		{Arg{Type: vec.Interval, Const: &hour}, nil},
	}
	vectorOf := func(o option) *vec.Vector {
		switch {
		case o.arg.Part != "":
			return nil
		case o.arg.Type == vec.Unknown:
			return constNull(vec.Unknown, vec.Unknown, 4)
		case o.arg.Type == vec.Interval:
			return datumVector(hour, 4)
		}
		return buildVector(o.arg.Type, o.vals, true)
	}
	var combos [][]int
	for arity := 0; arity <= 3; arity++ {
		var gen func(prefix []int)
		gen = func(prefix []int) {
			if len(prefix) == arity {
				combos = append(combos, append([]int(nil), prefix...))
				return
			}
			for i := range options {
				gen(append(prefix, i))
			}
		}
		gen(nil)
	}
	evaluated := 0
	for _, name := range Names() {
		f, _ := Lookup(name)
		start := time.Now()
		for _, combo := range combos {
			args := make([]Arg, len(combo))
			vs := make([]*vec.Vector, len(combo))
			for i, o := range combo {
				args[i] = options[o].arg
				vs[i] = vectorOf(options[o])
			}
			for _, safe := range []bool{false, true} {
				b, err := f.Bind(args, BindInfo{Safe: safe})
				if err != nil {
					continue
				}
				evaluated++
				func() {
					defer func() {
						if r := recover(); r != nil {
							t.Errorf("%s(%v) safe=%v panicked: %v", name, args, safe, r)
						}
					}()
					_, _ = b.Eval(testEvalCtx(), vs, []int32{0, 1, 2, 3}, 4)
					_, _ = b.Eval(testEvalCtx(), vs, nil, 4)
				}()
			}
		}
		if d := time.Since(start); d > 2*time.Second {
			t.Logf("%s took %v", name, d)
		}
	}
	if evaluated < 1000 {
		t.Errorf("only %d bound evaluations", evaluated)
	}
}
