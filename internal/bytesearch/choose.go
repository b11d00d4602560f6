package bytesearch

import "bytes"

// Sample windows of choosePair: up to sixteen of 256 bytes spread over the
// sample (four of 1 KiB picked a byte 40% commoner than the rarest on one
// in ten 1 MiB stretches of access logs).
const sampleWindow, sampleWindows = 256, 16

// forSampleWindows calls fn with each sample window of data: all of it
// when it is no longer than the windows together.
func forSampleWindows(data []byte, fn func(w []byte)) {
	if len(data) <= sampleWindow*sampleWindows {
		fn(data)
		return
	}
	step := len(data) / sampleWindows
	for w := 0; w < sampleWindows; w++ {
		fn(data[w*step : w*step+sampleWindow])
	}
}

// maxCountedNeedle is the longest needle whose bytes choosePair counts one
// by one (bytes.Count, vectorised: a few passes over 4 KiB beat a
// histogram, whose increments of the same counters wait on one another);
// a longer one takes a histogram of the sample.
const maxCountedNeedle = 24

// choosePair returns the offsets in needle (two bytes or more) of the
// pair a search compares: rare is the byte of the needle least frequent
// in sample (ties to the later byte), other the byte found least often at
// its offset from an occurrence of the rare one, which is what a pair
// search stops at. Bytes are not independent in text: in access logs 'v'
// is the rarest byte of "auth/v1/", but '/' and '1' follow it in every
// "/v1/" of the other APIs; the 'h' before it sets "auth" apart. Ties go
// to the byte rarer on its own, then to the farther one.
func choosePair(needle string, sample []byte) (rare, other int) {
	var counted [256]int32 // count+1; 0: not counted yet
	if len(needle) > maxCountedNeedle {
		// Many distinct bytes: one histogram of the windows instead of a
		// pass per byte.
		forSampleWindows(sample, func(w []byte) {
			for _, b := range w {
				counted[b]++
			}
		})
		for i := range counted {
			counted[i]++
		}
	}
	count := func(c byte) int32 {
		if counted[c] == 0 {
			n := 0
			forSampleWindows(sample, func(w []byte) { n += bytes.Count(w, []byte{c}) })
			counted[c] = int32(n) + 1
		}
		return counted[c]
	}
	best := int32(0)
	for i := 0; i < len(needle); i++ {
		if n := count(needle[i]); i == 0 || n <= best {
			rare, best = i, n
		}
	}
	// with[j]: occurrences of the rare byte in the windows with needle[j]
	// at offset j-rare from it.
	var withBuf [64]int32
	with := withBuf[:0]
	if len(needle) <= len(withBuf) {
		with = withBuf[:len(needle)]
	} else {
		with = make([]int32, len(needle))
	}
	c := needle[rare]
	forSampleWindows(sample, func(w []byte) {
		for p := 0; ; p++ {
			k := bytes.IndexByte(w[p:], c)
			if k < 0 {
				return
			}
			p += k
			start := p - rare // where the needle would begin
			for j := range with {
				if q := start + j; q >= 0 && q < len(w) && w[q] == needle[j] {
					with[j]++
				}
			}
		}
	})
	other = -1
	for j := 0; j < len(needle); j++ { // bytes, not runes
		if j == rare {
			continue
		}
		if other < 0 || with[j] < with[other] ||
			with[j] == with[other] && (count(needle[j]) < count(needle[other]) ||
				count(needle[j]) == count(needle[other]) && absDiff(j, rare) > absDiff(other, rare)) {
			other = j
		}
	}
	return rare, other
}

func absDiff(a, b int) int {
	if a > b {
		return a - b
	}
	return b - a
}
