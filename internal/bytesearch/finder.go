// Package bytesearch finds a literal in text with a "packed pair" search:
// two bytes of the needle, chosen rare in the text searched, are compared
// at their offsets 32 positions at a time (AVX2 on amd64 CPUs that have
// it; bytes.IndexByte on the rarer of the two elsewhere), and only where
// both agree is the whole needle compared. A search for one byte of the
// needle stops at each occurrence of that byte (several a line for a
// byte as common as 'v' or '/' in access logs); a pair of bytes at a fixed
// distance is seldom found away from the needle itself.
package bytesearch

import "bytes"

// Finder searches for one needle. Its pair of bytes is fixed when it is
// made (NewFinder chooses them on a sample of the text to search). The
// zero Finder finds the empty needle. A Finder is immutable and safe for
// concurrent use.
type Finder struct {
	needle string
	// lo < hi are the offsets in needle of the pair (when the needle has
	// two bytes or more); loRare says needle[lo] is the rarer of the two
	// in the sample (the byte the generic search sweeps for).
	lo, hi int
	loRare bool
}

// NewFinder returns a Finder for needle whose pair is the needle's rarest
// byte in sample and the byte that least often accompanies it there at
// its offset (see choosePair). Any sample gives correct results; a sample
// like the text to search gives fast ones.
func NewFinder(needle string, sample []byte) Finder {
	f := Finder{needle: needle}
	if len(needle) >= 2 {
		rare, other := choosePair(needle, sample)
		f.lo, f.hi, f.loRare = min(rare, other), max(rare, other), rare < other
	}
	return f
}

// NewFinderPair returns a Finder for needle whose pair is the bytes at
// offsets rare and other (rare the rarer: the byte the generic search
// sweeps for). It panics if the offsets are not two distinct offsets of
// the needle; a needle shorter than two bytes takes no pair (any offsets).
func NewFinderPair(needle string, rare, other int) Finder {
	f := Finder{needle: needle}
	if len(needle) >= 2 {
		if rare == other || rare < 0 || other < 0 || rare >= len(needle) || other >= len(needle) {
			panic("bytesearch: pair offsets out of the needle")
		}
		f.lo, f.hi, f.loRare = min(rare, other), max(rare, other), rare < other
	}
	return f
}

// Needle returns the text the Finder searches for.
func (f *Finder) Needle() string { return f.needle }

// Pair returns the offsets in the needle of the Finder's pair, the rarer
// first (0, 0 for a needle shorter than two bytes).
func (f *Finder) Pair() (rare, other int) {
	if f.loRare {
		return f.lo, f.hi
	}
	return f.hi, f.lo
}

// Index returns the position of the first occurrence of the needle in h,
// or -1: what bytes.Index(h, needle) returns.
func (f *Finder) Index(h []byte) int {
	return f.index(h, indexPair)
}

// index is Index with the pair search given (tests compare the
// vectorised and the generic one).
func (f *Finder) index(h []byte, pair func(h []byte, d int, b1, b2 byte, firstRare bool) int) int {
	n := len(f.needle)
	switch {
	case n == 0:
		return 0
	case n == 1:
		return bytes.IndexByte(h, f.needle[0])
	case len(h) < n:
		return -1
	}
	// Position j of sub holds the pair's first byte of a needle starting
	// at j in h: sub spans every start from 0 to len(h)-n, plus the pair's
	// distance for its second byte.
	d := f.hi - f.lo
	sub := h[f.lo : len(h)-n+f.hi+1]
	b1, b2 := f.needle[f.lo], f.needle[f.hi]
	for s := 0; ; {
		j := pair(sub[s:], d, b1, b2, f.loRare)
		if j < 0 {
			return -1
		}
		p := s + j
		if string(h[p:p+n]) == f.needle {
			return p
		}
		s = p + 1
	}
}

// indexPairGeneric returns the first j with h[j] == b1 and h[j+d] == b2
// (j+d < len(h)), or -1, sweeping with bytes.IndexByte for the rarer of
// the two bytes (b1 when firstRare) and checking the other where it
// stops. d > 0.
func indexPairGeneric(h []byte, d int, b1, b2 byte, firstRare bool) int {
	if len(h) <= d {
		return -1
	}
	if firstRare {
		for j := 0; j < len(h)-d; {
			k := bytes.IndexByte(h[j:len(h)-d], b1)
			if k < 0 {
				return -1
			}
			j += k
			if h[j+d] == b2 {
				return j
			}
			j++
		}
		return -1
	}
	for j := d; j < len(h); {
		k := bytes.IndexByte(h[j:], b2)
		if k < 0 {
			return -1
		}
		j += k
		if h[j-d] == b1 {
			return j - d
		}
		j++
	}
	return -1
}
