package fn

import (
	"fmt"
	"strconv"
	"testing"

	"github.com/sediment/sediment/internal/vec"
)

// Run: go test ./sql/fn -run '^$' -bench . -benchmem -count 6 | tee new.txt
// and compare with benchstat.

const benchRows = 64 << 10

// bindBench binds name over args (Const set for constants) or fails.
func bindBench(b *testing.B, name string, args ...Arg) *Bound {
	b.Helper()
	f, ok := Lookup(name)
	if !ok {
		b.Fatalf("no function %s", name)
	}
	bound, err := f.Bind(args, BindInfo{})
	if err != nil {
		b.Fatal(err)
	}
	return bound
}

func runBench(b *testing.B, bound *Bound, bytes int64, vs ...*vec.Vector) {
	b.Helper()
	ec := testEvalCtx()
	b.ReportAllocs()
	b.SetBytes(bytes)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := bound.Eval(ec, vs, nil, benchRows); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/benchRows, "ns/row")
}

func BenchmarkCompareInt64(b *testing.B) {
	x := newVec(vec.Int64, benchRows)
	for i := range x.Ints {
		x.Ints[i] = int64(i * 7919 % 100000)
	}
	lit := Datum{Type: vec.Int64, Int: 50000}
	b.Run("vector<const", func(b *testing.B) {
		bound := bindBench(b, "<", Arg{Type: vec.Int64}, Arg{Type: vec.Int64, Const: &lit})
		runBench(b, bound, benchRows*8, x, datumVector(lit, benchRows))
	})
	b.Run("vector<vector", func(b *testing.B) {
		y := newVec(vec.Int64, benchRows)
		for i := range y.Ints {
			y.Ints[i] = int64(i)
		}
		bound := bindBench(b, "<", Arg{Type: vec.Int64}, Arg{Type: vec.Int64})
		runBench(b, bound, benchRows*16, x, y)
	})
}

// logColumn builds a 64k-row string column of paths drawn from distinct
// values, plain or dictionary encoded.
func logColumn(distinct int, dict bool) (*vec.Vector, int64) {
	vals := make([]any, benchRows)
	var bytes int64
	for i := range vals {
		s := fmt.Sprintf("/rest/v1/table_%d?select=*&limit=%d status=%d", i%distinct, i%distinct*3, 200+i%distinct%5)
		if i%distinct%13 == 0 {
			s += " error: timeout"
		}
		vals[i] = s
		bytes += int64(len(s))
	}
	return buildVector(vec.String, vals, dict), bytes
}

func BenchmarkStringEqual(b *testing.B) {
	for _, dict := range []bool{false, true} {
		col, bytes := logColumn(200, dict)
		lit := Datum{Type: vec.String, Str: "/rest/v1/table_7?select=*&limit=21 status=202"}
		b.Run(fmt.Sprintf("dict=%v", dict), func(b *testing.B) {
			bound := bindBench(b, "=", Arg{Type: vec.String}, Arg{Type: vec.String, Const: &lit})
			runBench(b, bound, bytes, col, datumVector(lit, benchRows))
		})
	}
}

func BenchmarkRegexpContains(b *testing.B) {
	for _, pattern := range []string{"error", `status=20[34]|timeout`} {
		for _, dict := range []bool{false, true} {
			col, bytes := logColumn(200, dict)
			lit := Datum{Type: vec.String, Str: pattern}
			b.Run(fmt.Sprintf("pattern=%s/dict=%v", pattern, dict), func(b *testing.B) {
				bound := bindBench(b, "regexp_contains", Arg{Type: vec.String}, Arg{Type: vec.String, Const: &lit})
				runBench(b, bound, bytes, col, datumVector(lit, benchRows))
			})
		}
	}
}

func BenchmarkTimestampTruncMinute(b *testing.B) {
	x := newVec(vec.Timestamp, benchRows)
	for i := range x.Ints {
		x.Ints[i] = 1752145200000000 + int64(i)*1_234_567
	}
	for _, zoneName := range []string{"", "America/Los_Angeles"} {
		b.Run("zone="+zoneName, func(b *testing.B) {
			args := []Arg{{Type: vec.Timestamp}, {Part: "MINUTE"}}
			vs := []*vec.Vector{x, nil}
			if zoneName != "" {
				z := Datum{Type: vec.String, Str: zoneName}
				args = append(args, Arg{Type: vec.String, Const: &z})
				vs = append(vs, datumVector(z, benchRows))
			}
			bound := bindBench(b, "timestamp_trunc", args...)
			runBench(b, bound, benchRows*8, vs...)
		})
	}
}

func BenchmarkCastStringToInt64(b *testing.B) {
	col := newVec(vec.String, benchRows)
	var bytes int64
	for i := range col.Strs {
		col.Strs[i] = strconv.Itoa(i * 7919)
		bytes += int64(len(col.Strs[i]))
	}
	bound, err := BindCast(Arg{Type: vec.String}, vec.Int64, false, BindInfo{})
	if err != nil {
		b.Fatal(err)
	}
	runBench(b, bound, bytes, col)
}

func BenchmarkJSONValue(b *testing.B) {
	col := newVec(vec.String, benchRows)
	var bytes int64
	for i := range col.Strs {
		col.Strs[i] = fmt.Sprintf(`{"request":{"method":"GET","path":"/x/%d","headers":{"host":"a.b"}},"response":{"status_code":%d}}`, i, 200+i%5)
		bytes += int64(len(col.Strs[i]))
	}
	path := Datum{Type: vec.String, Str: "$.response.status_code"}
	bound := bindBench(b, "json_value", Arg{Type: vec.String}, Arg{Type: vec.String, Const: &path})
	runBench(b, bound, bytes, col, datumVector(path, benchRows))
}
