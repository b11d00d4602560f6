package segment

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestIntCodes: intCodes numbers values in order of first appearance as
// a map does, finds every value it numbered, and starts over after reset
// whatever an earlier chunk grew it to: small and huge values, runs of
// neighbours, few and many distinct.
func TestIntCodes(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	var tab intCodes
	for trial := range 60 {
		rows := 1 + rng.IntN(20000)
		distinct := 1 + rng.IntN(rows)
		base := []int64{0, -5000, math.MinInt64, math.MaxInt64 - int64(distinct), 1 << 40}[trial%5]
		tab.reset(rows)
		want := map[int64]uint32{}
		for range rows {
			x := base + int64(rng.IntN(distinct))
			if trial%3 == 0 {
				x = base + int64(rng.IntN(distinct))*1000 // multiples: low bits alike
			}
			c, isNew := tab.code(x)
			wc, seen := want[x]
			if !seen {
				wc = uint32(len(want))
				want[x] = wc
			}
			if c != wc || isNew == seen {
				t.Fatalf("trial %d: code(%d) = %d, %v; want %d, %v", trial, x, c, isNew, wc, !seen)
			}
		}
		if len(tab.vals) != len(want) {
			t.Fatalf("trial %d: %d values, want %d", trial, len(tab.vals), len(want))
		}
		for x, wc := range want {
			if c := tab.find(x); c != wc || tab.vals[c] != x {
				t.Fatalf("trial %d: find(%d) = %d, want %d", trial, x, c, wc)
			}
		}
	}
}
