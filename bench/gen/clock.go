package gen

import "time"

// clock produces the log times of a generator's events. It has its own
// random stream, so the sequence of times depends only on the seed, source
// and options, not on what the events contain.
type clock struct {
	r    rng
	base int64 // the in-order clock, ns since the epoch
	gap  int64 // mean gap between events, ns (at least 1)
	next int64 // time of the next event
	ooo  int   // out-of-order share, per mille
}

func newClock(seed uint64, start time.Time, rate float64, inOrder bool) clock {
	// Clamp the mean gap to [1 ns, 1e15 ns] so that absurd rates neither
	// overflow nor stop the clock.
	gap := int64(1e15)
	if g := 1e9 / rate; g < 1e15 {
		gap = max(int64(g), 1)
	}
	c := clock{r: newRNG(seed), base: start.UnixNano(), gap: gap, ooo: outOfOrderPermille}
	if inOrder {
		c.ooo = 0
	}
	c.next = c.base
	return c
}

// advance moves to the next event: the in-order clock steps by a uniform
// gap in [0, 2*gap], and a small share of events is stamped 0.5–5 s earlier.
func (c *clock) advance() {
	c.base += int64(c.r.intn(int(2*c.gap) + 1))
	c.next = c.base
	if c.ooo > 0 && c.r.permille(c.ooo) {
		c.next -= int64(500*time.Millisecond) + int64(c.r.intn(int(4500*time.Millisecond)))
	}
}
