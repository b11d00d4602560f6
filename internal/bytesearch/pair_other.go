//go:build !amd64

package bytesearch

// hasAVX2 is false off amd64: the generic search serves.
const hasAVX2 = false

// indexPair returns the first j with h[j] == b1 and h[j+d] == b2 (j+d <
// len(h)), or -1. d > 0.
func indexPair(h []byte, d int, b1, b2 byte, firstRare bool) int {
	return indexPairGeneric(h, d, b1, b2, firstRare)
}
