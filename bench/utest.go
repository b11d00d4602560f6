package bench

import (
	"math"
	"slices"
)

// MannWhitneyU tests whether two samples come from the same distribution
// (the Mann-Whitney U test, also called the Wilcoxon rank-sum test, which
// benchstat uses): it returns the two-sided p-value, the probability of a
// difference in ranks at least this large if they did. It makes no
// assumption about the shape of the distribution, which suits timings
// (skewed, with outliers). Without ties and with at most 50 values on a
// side the p-value is exact; otherwise it uses the normal approximation
// with a correction for ties. It returns 1 when either sample is empty.
func MannWhitneyU(a, b []float64) float64 {
	n1, n2 := len(a), len(b)
	if n1 == 0 || n2 == 0 {
		return 1
	}
	type obs struct {
		v     float64
		first bool
	}
	all := make([]obs, 0, n1+n2)
	for _, v := range a {
		all = append(all, obs{v, true})
	}
	for _, v := range b {
		all = append(all, obs{v, false})
	}
	slices.SortFunc(all, func(x, y obs) int {
		switch {
		case x.v < y.v:
			return -1
		case x.v > y.v:
			return 1
		}
		return 0
	})
	// Ranks from 1, ties sharing the mean of their ranks.
	var rankSumA, tieTerm float64
	ties := false
	for i := 0; i < len(all); {
		j := i
		for j < len(all) && all[j].v == all[i].v {
			j++
		}
		rank := float64(i+1+j) / 2
		for k := i; k < j; k++ {
			if all[k].first {
				rankSumA += rank
			}
		}
		if t := float64(j - i); t > 1 {
			ties = true
			tieTerm += t*t*t - t
		}
		i = j
	}
	u := rankSumA - float64(n1*(n1+1))/2
	if !ties && n1 <= 50 && n2 <= 50 {
		return exactUTest(n1, n2, u)
	}
	n := float64(n1 + n2)
	mu := float64(n1*n2) / 2
	sigma := math.Sqrt(float64(n1*n2) / 12 * ((n + 1) - tieTerm/(n*(n-1))))
	if sigma == 0 {
		return 1 // every value the same
	}
	z := (math.Abs(u-mu) - 0.5) / sigma // with a continuity correction
	return min(1, math.Erfc(max(z, 0)/math.Sqrt2))
}

// exactUTest returns the two-sided p-value of U for samples of n1 and n2
// values without ties, from the distribution of U counted over every way
// of interleaving the samples.
func exactUTest(n1, n2 int, u float64) float64 {
	// ways[i][j][k]: orderings of i values of the first sample and j of
	// the second with U = k; built one sample size at a time, keeping two
	// rows of j.
	maxU := n1 * n2
	prev := make([][]float64, n2+1)
	for j := range prev {
		prev[j] = make([]float64, maxU+1)
		prev[j][0] = 1 // no values of the first sample: U is 0
	}
	for i := 1; i <= n1; i++ {
		cur := make([][]float64, n2+1)
		for j := 0; j <= n2; j++ {
			cur[j] = make([]float64, maxU+1)
			for k := 0; k <= i*j; k++ {
				// The largest value belongs to the first sample (it beats
				// all j of the second) or to the second.
				var w float64
				if k >= j {
					w += prev[j][k-j]
				}
				if j > 0 {
					w += cur[j-1][k]
				}
				cur[j][k] = w
			}
		}
		prev = cur
	}
	dist := prev[n2]
	var total, lo, hi float64
	for k, w := range dist {
		total += w
		if float64(k) <= u {
			lo += w
		}
		if float64(k) >= u {
			hi += w
		}
	}
	return min(1, 2*min(lo, hi)/total)
}

// minPValue is the smallest two-sided p-value the U test can give for
// samples of n1 and n2 values: no difference can be called with fewer.
func minPValue(n1, n2 int) float64 {
	if n1 == 0 || n2 == 0 {
		return 1
	}
	// 2 / C(n1+n2, n1), in floating point.
	c := 1.0
	for i := 1; i <= n1; i++ {
		c = c * float64(n2+i) / float64(i)
	}
	return min(1, 2/c)
}
