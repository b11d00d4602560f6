package bytesearch

import (
	"math/rand/v2"
	"testing"
)

// TestIndexPairVectorAgreesWithGeneric: the AVX2 pair search and the
// generic one give the same position over random bytes of small
// alphabets, for distances from 1 to beyond a block, from every start
// (block and tail boundaries at every offset).
func TestIndexPairVectorAgreesWithGeneric(t *testing.T) {
	if !hasAVX2 {
		t.Skip("this CPU has no AVX2: Index uses the generic search")
	}
	r := rand.New(rand.NewPCG(3, 4))
	for round := 0; round < 400; round++ {
		h := make([]byte, r.IntN(400))
		k := 2 + r.IntN(6)
		for i := range h {
			h[i] = byte('a' + r.IntN(k))
		}
		d := 1 + r.IntN(70)
		b1, b2 := byte('a'+r.IntN(k)), byte('a'+r.IntN(k))
		for s := 0; s <= len(h); s++ {
			want := indexPairGeneric(h[s:], d, b1, b2, true)
			if got := indexPairVector(h[s:], d, b1, b2, true); got != want {
				t.Fatalf("len %d from %d, d %d, %q %q: vector %d, generic %d", len(h), s, d, b1, b2, got, want)
			}
			if alt := indexPairGeneric(h[s:], d, b1, b2, false); alt != want {
				t.Fatalf("generic sweeping for the second byte: %d, for the first %d", alt, want)
			}
		}
	}
}
