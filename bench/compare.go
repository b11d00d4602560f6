package bench

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"text/tabwriter"
)

// CompareOptions say when a difference counts.
type CompareOptions struct {
	// Alpha is the significance level: a difference in timed metrics is
	// called only when the Mann-Whitney U test's p-value is below it
	// (default 0.05, as benchstat's).
	Alpha float64
	// Threshold is the smallest relative change called at all (default
	// 0: any significant change); it is what decides for exact metrics.
	Threshold float64
}

// Verdicts of a Delta.
const (
	Better = "better"
	Worse  = "worse"
	// Same: the difference is within the runs' noise (p ≥ alpha), or
	// within the threshold.
	Same = "~"
	// TooFew: too few runs on a side for any difference to be significant
	// at alpha (e.g. one run each); run each side more often.
	TooFew = "too few runs"
)

// Delta compares one metric of two sets of reports.
type Delta struct {
	Metric Metric // as in the newest report
	// Old and New are the medians of each side's samples (a query's runs,
	// or one value per report).
	Old, New float64
	// NOld and NNew count the samples.
	NOld, NNew int
	Ratio      float64 // New/Old (NaN when Old is 0)
	// P is the U test's p-value (NaN for exact metrics, which need none).
	P float64
	// Change is Better, Worse, Same or TooFew.
	Change string
}

// Compare matches the metrics of old and cur, each one or more reports of
// the same kind (repeated runs of the same code), by name, and says for
// each whether cur is better, worse or the same, as benchstat does: the
// samples of a metric are a query's timed runs pooled over the reports,
// or one value per report; a difference is called only when the Mann-
// Whitney U test says it is unlikely to be noise (p < Alpha) and it is
// larger than Threshold. Exact metrics (bytes on disk) have no noise: one
// report a side is enough, and Threshold alone decides. Metrics found on
// one side only are left out.
func Compare(old, cur []*Report, o CompareOptions) ([]Delta, error) {
	if len(old) == 0 || len(cur) == 0 {
		return nil, fmt.Errorf("compare: need at least one report a side")
	}
	if o.Alpha <= 0 {
		o.Alpha = 0.05
	}
	kind := old[0].Kind
	for _, r := range append(slices.Clone(old), cur...) {
		if r.Kind != kind {
			return nil, fmt.Errorf("cannot compare a %s report with a %s report", kind, r.Kind)
		}
	}
	prev, _ := pool(old)
	next, order := pool(cur)
	var out []Delta
	for _, name := range order {
		a, ok := prev[name]
		if !ok {
			continue
		}
		b := next[name]
		d := Delta{Metric: b.metric, Old: median(a.samples), New: median(b.samples), NOld: len(a.samples), NNew: len(b.samples),
			Ratio: math.NaN(), P: math.NaN(), Change: Same}
		if d.Old != 0 {
			d.Ratio = d.New / d.Old
		}
		big := d.Old != d.New && (d.Old == 0 || math.Abs(d.Ratio-1) > o.Threshold)
		switch {
		case d.Old == d.New && slices.Equal(a.samples, b.samples):
			// The same numbers: nothing to test.
		case b.metric.Exact:
			if !big {
				break
			}
			d.Change = verdict(d, b.metric)
		case minPValue(d.NOld, d.NNew) >= o.Alpha:
			d.Change = TooFew
		default:
			d.P = MannWhitneyU(a.samples, b.samples)
			if d.P < o.Alpha && big {
				d.Change = verdict(d, b.metric)
			}
		}
		out = append(out, d)
	}
	return out, nil
}

func verdict(d Delta, m Metric) string {
	if (d.New > d.Old) == m.HigherIsBetter {
		return Better
	}
	return Worse
}

// pooled is one metric's samples over a side's reports.
type pooled struct {
	metric  Metric
	samples []float64
}

// pool gathers each metric's samples over reports, and the metric names
// in the order of the last report.
func pool(reports []*Report) (map[string]*pooled, []string) {
	out := map[string]*pooled{}
	var order []string
	for _, r := range reports {
		for _, m := range r.Metrics() {
			p, ok := out[m.Name]
			if !ok {
				p = &pooled{}
				out[m.Name] = p
				order = append(order, m.Name)
			}
			p.metric = m
			if len(m.Samples) > 0 {
				p.samples = append(p.samples, m.Samples...)
			} else {
				p.samples = append(p.samples, m.Value)
			}
		}
	}
	return out, order
}

// median returns the middle of xs (the mean of the two middle values for
// an even count); 0 for none. xs is not changed.
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// WriteDeltas writes a comparison as a table: metric, old, new, new/old,
// the p-value and sample counts, and the verdict.
func WriteDeltas(w io.Writer, ds []Delta) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "metric\told\tnew\tnew/old\tp\tn\t")
	for _, d := range ds {
		r := "n/a"
		if !math.IsNaN(d.Ratio) {
			r = fmt.Sprintf("%.3f", d.Ratio)
		}
		p := "-"
		switch {
		case d.Metric.Exact:
			p = "exact"
		case !math.IsNaN(d.P):
			p = strconv.FormatFloat(d.P, 'f', 3, 64)
		}
		fmt.Fprintf(tw, "%s (%s)\t%s\t%s\t%s\t%s\t%d+%d\t%s\n", d.Metric.Name, d.Metric.Unit, num(d.Old), num(d.New), r, p, d.NOld, d.NNew, d.Change)
	}
	return tw.Flush()
}

// num formats a metric value with about four significant digits.
func num(x float64) string {
	switch a := math.Abs(x); {
	case a >= 1000:
		return thousands(x)
	case a >= 100:
		return fmt.Sprintf("%.1f", x)
	case a >= 1:
		return fmt.Sprintf("%.2f", x)
	}
	return fmt.Sprintf("%.3g", x)
}
