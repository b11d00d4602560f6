package gen

import "math/bits"

// rng is a SplitMix64 generator. It is tiny and fast, and — unlike the
// helpers of math/rand — its output is fixed by this file alone,
// so a seed yields the same bytes on every Go version and architecture.
// Everything the package draws is integer arithmetic on this stream; no
// floating-point transcendental function is used, because those may round
// differently across architectures.
type rng struct{ s uint64 }

func newRNG(seed uint64) rng { return rng{s: seed} }

// next returns the next 64 random bits.
func (r *rng) next() uint64 {
	r.s += 0x9e3779b97f4a7c15
	return finalize(r.s)
}

// finalize is SplitMix64's output function, also used to derive seeds.
func finalize(z uint64) uint64 {
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// derive mixes a seed with a stream label into an independent seed, so that
// sub-streams (one per source, per project, for the clock) do not overlap.
func derive(seed, label uint64) uint64 {
	return finalize(finalize(seed^0x5851f42d4c957f2d) + label*0x9e3779b97f4a7c15)
}

// intn returns a value in [0, n); n <= 0 yields 0. It uses the high half of a
// 64x64 multiplication (Lemire), whose bias is below 2^-40 for our n.
func (r *rng) intn(n int) int {
	if n <= 1 {
		return 0
	}
	hi, _ := bits.Mul64(r.next(), uint64(n))
	return int(hi)
}

// between returns a value in [lo, hi).
func (r *rng) between(lo, hi int) int { return lo + r.intn(hi-lo) }

// permille reports true with probability p/1000.
func (r *rng) permille(p int) bool { return r.intn(1000) < p }

// weighted is one entry of a choice table: a value and its relative weight.
type weighted[T any] struct {
	W uint32
	V T
}

// choice draws values with fixed relative weights. Tables are small, so a
// linear scan over the cumulative weights beats a binary search; listing the
// heaviest entries first makes the common draw cheapest.
type choice[T any] struct {
	items []T
	cum   []uint32
}

func newChoice[T any](entries ...weighted[T]) choice[T] {
	c := choice[T]{items: make([]T, len(entries)), cum: make([]uint32, len(entries))}
	var total uint32
	for i, e := range entries {
		total += e.W
		c.items[i] = e.V
		c.cum[i] = total
	}
	return c
}

// index draws the index of an entry.
func (c *choice[T]) index(r *rng) int {
	x := uint32(r.intn(int(c.cum[len(c.cum)-1])))
	for i, v := range c.cum {
		if x < v {
			return i
		}
	}
	return len(c.cum) - 1
}

// pick draws an entry.
func (c *choice[T]) pick(r *rng) T { return c.items[c.index(r)] }

// at returns the entry that the random bits x select, with the table's
// weights (x is reduced modulo the total weight).
func (c *choice[T]) at(x uint64) T {
	v := uint32(x % uint64(c.cum[len(c.cum)-1]))
	for i, w := range c.cum {
		if v < w {
			return c.items[i]
		}
	}
	return c.items[len(c.items)-1]
}

// span is a half-open integer range [lo, hi).
type span struct{ lo, hi int }

// spans is a piecewise-uniform distribution: pick a range by weight, then a
// uniform value inside it. It stands in for skewed continuous distributions
// (latencies, sizes) without floating point.
type spans struct{ c choice[span] }

func newSpans(entries ...weighted[span]) spans { return spans{newChoice(entries...)} }

func (s *spans) draw(r *rng) int {
	sp := s.c.pick(r)
	return r.between(sp.lo, sp.hi)
}

// zipf draws ranks 0..n-1 with weight proportional to 1/(rank+1) (a Zipf law
// with exponent 1), using integer weights so the table is exact everywhere.
// A guide table indexed by the top bits of the random draw points at the
// first candidate rank, so a draw costs about one comparison instead of a
// binary search.
type zipf struct {
	cum   []uint64 // cumulative weights
	guide []int32  // guide[j]: the rank of the smallest draw in bucket j
	shift uint     // 64 - log2(len(guide))
}

func newZipf(n int) zipf {
	if n < 1 {
		n = 1
	}
	z := zipf{cum: make([]uint64, n)}
	var total uint64
	for k := range n {
		total += (1 << 40) / uint64(k+1)
		z.cum[k] = total
	}
	buckets := 1
	for buckets < 4*n {
		buckets <<= 1
	}
	z.shift = uint(64 - bits.TrailingZeros(uint(buckets)))
	if buckets == 1 {
		z.shift = 64
	}
	z.guide = make([]int32, buckets)
	rank := 0
	for j := range z.guide {
		// The smallest weight position any draw in bucket j maps to.
		lo, _ := bits.Mul64(uint64(j)<<(z.shift%64), total)
		if z.shift == 64 {
			lo = 0
		}
		for z.cum[rank] <= lo {
			rank++
		}
		z.guide[j] = int32(rank)
	}
	return z
}

// pick draws a rank.
func (z *zipf) pick(r *rng) int {
	u := r.next()
	x, _ := bits.Mul64(u, z.cum[len(z.cum)-1])
	var k int
	if z.shift < 64 {
		k = int(z.guide[u>>z.shift])
	}
	for z.cum[k] <= x {
		k++
	}
	return k
}
