package jsonstr

import (
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
)

func TestAppendFloat(t *testing.T) {
	for _, tc := range []struct {
		f           float64
		result, typ string
	}{
		{1, "1", "1.0"}, {-2.5, "-2.5", "-2.5"}, {0, "0", "0.0"}, {1e21, "1e+21", "1e+21"}, {1e20, "1e+20", "100000000000000000000.0"},
		{1e-7, "1e-07", "1e-7"}, {0.000001, "1e-06", "0.000001"}, {0.30000000000000004, "0.30000000000000004", "0.30000000000000004"},
		{math.NaN(), `"NaN"`, "null"}, {math.Inf(1), `"Infinity"`, "null"}, {math.Inf(-1), `"-Infinity"`, "null"},
	} {
		if got := string(AppendFloat(nil, tc.f)); got != tc.result {
			t.Errorf("AppendFloat(%v) = %s, want %s", tc.f, got, tc.result)
		}
		if got := string(AppendTypedFloat(nil, tc.f)); got != tc.typ {
			t.Errorf("AppendTypedFloat(%v) = %s, want %s", tc.f, got, tc.typ)
		}
	}
}

// Every finite float reads back as itself from both forms, and the typed
// form always reads as a float (a '.' or an exponent).
func TestAppendFloatRoundTrips(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 20000; i++ {
		f := math.Float64frombits(r.Uint64())
		if math.IsNaN(f) || math.IsInf(f, 0) {
			continue
		}
		for _, s := range []string{string(AppendFloat(nil, f)), string(AppendTypedFloat(nil, f))} {
			back, err := strconv.ParseFloat(s, 64)
			if err != nil || back != f {
				t.Fatalf("%v written %s reads back as %v (%v)", f, s, back, err)
			}
		}
		if s := string(AppendTypedFloat(nil, f)); !strings.ContainsAny(s, ".e") {
			t.Fatalf("%v written %s reads as an integer", f, s)
		}
	}
}
