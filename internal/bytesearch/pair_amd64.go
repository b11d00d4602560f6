package bytesearch

import "golang.org/x/sys/cpu"

// hasAVX2 is read once: the CPU does not change under a running process.
var hasAVX2 = cpu.X86.HasAVX2

// indexPair returns the first j with h[j] == b1 and h[j+d] == b2 (j+d <
// len(h)), or -1: 32 positions at a time with AVX2, the positions left
// over (fewer than 32) one by one; the generic search without AVX2. d > 0.
func indexPair(h []byte, d int, b1, b2 byte, firstRare bool) int {
	if !hasAVX2 {
		return indexPairGeneric(h, d, b1, b2, firstRare)
	}
	return indexPairVector(h, d, b1, b2, firstRare)
}

// indexPairVector is indexPair with AVX2 (the CPU must have it).
func indexPairVector(h []byte, d int, b1, b2 byte, firstRare bool) int {
	n := len(h) - d // the positions j to look at
	if n <= 0 {
		return -1
	}
	if n >= 32 {
		if j := indexPairAVX2(h, d, b1, b2); j >= 0 {
			return j
		}
	}
	// indexPairAVX2 looked at the whole blocks of 32 positions.
	for j := n &^ 31; j < n; j++ {
		if h[j] == b1 && h[j+d] == b2 {
			return j
		}
	}
	return -1
}

// indexPairAVX2 returns the first j with h[j] == b1 and h[j+d] == b2 among
// the positions j of the whole blocks of 32 in [0, len(h)-d), or -1.
// Implemented in pair_amd64.s; the CPU must have AVX2.
//
//go:noescape
func indexPairAVX2(h []byte, d int, b1, b2 byte) int
