package varint

import (
	"encoding/binary"
	"math"
	"testing"
)

// TestLenMatchesAppendUvarint: Len is what encoding/binary writes, and
// Zigzag round-trips, at every size boundary.
func TestLenMatchesAppendUvarint(t *testing.T) {
	for shift := 0; shift < 64; shift++ {
		for _, x := range []uint64{1<<shift - 1, 1 << shift, 1<<shift + 1, math.MaxUint64} {
			if got, want := Len(x), len(binary.AppendUvarint(nil, x)); got != want {
				t.Fatalf("Len(%d) = %d, binary writes %d", x, got, want)
			}
			if s := int64(x); Unzigzag(Zigzag(s)) != s {
				t.Fatalf("zigzag of %d does not round-trip", s)
			}
		}
	}
	if Zigzag(-1) != 1 || Zigzag(1) != 2 || Zigzag(math.MinInt64) != math.MaxUint64 {
		t.Fatal("zigzag order")
	}
}
