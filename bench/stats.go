package bench

import (
	"math"
	"slices"
	"time"
)

// Percentile returns the p-th percentile (0 ≤ p ≤ 100) of samples by the
// nearest-rank method: the smallest sample that at least p% of the samples
// do not exceed. With few samples a high percentile is the maximum (the
// p99 of 10 runs is the slowest run). It sorts samples in place; 0 for
// none.
func Percentile(samples []time.Duration, p float64) time.Duration {
	if len(samples) == 0 {
		return 0
	}
	slices.Sort(samples)
	rank := int(math.Ceil(p / 100 * float64(len(samples))))
	rank = min(max(rank, 1), len(samples))
	return samples[rank-1]
}

// Median returns the middle sample (the mean of the two middle ones for an
// even count). It sorts samples in place; 0 for none.
func Median(samples []time.Duration) time.Duration {
	n := len(samples)
	if n == 0 {
		return 0
	}
	slices.Sort(samples)
	if n%2 == 1 {
		return samples[n/2]
	}
	return (samples[n/2-1] + samples[n/2]) / 2
}

// GeoMean returns the geometric mean of positive values (others are
// skipped); 0 for none. It scores a setting over queries whose times
// differ by orders of magnitude, so that each counts by its ratio.
func GeoMean(xs []float64) float64 {
	sum, n := 0.0, 0
	for _, x := range xs {
		if x > 0 {
			sum += math.Log(x)
			n++
		}
	}
	if n == 0 {
		return 0
	}
	return math.Exp(sum / float64(n))
}

// ms expresses d in milliseconds.
func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
