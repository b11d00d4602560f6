package bench

import (
	"fmt"
	"io"
	"math"
	"text/tabwriter"
)

// Delta compares one metric of two reports.
type Delta struct {
	Metric   Metric  // as in the new report
	Old, New float64 // values
	Ratio    float64 // New/Old (NaN when Old is 0)
	// Change is "better", "worse" or "same" (within the threshold).
	Change string
}

// Compare matches the metrics of two reports of the same kind by name and
// returns new/old for each, in the new report's order. A change smaller
// than threshold (a fraction: 0.05 is 5%) is "same". Metrics found in only
// one report are left out.
func Compare(old, cur *Report, threshold float64) ([]Delta, error) {
	if old.Kind != cur.Kind {
		return nil, fmt.Errorf("cannot compare a %s report with a %s report", old.Kind, cur.Kind)
	}
	prev := map[string]float64{}
	for _, m := range old.Metrics() {
		prev[m.Name] = m.Value
	}
	var out []Delta
	for _, m := range cur.Metrics() {
		o, ok := prev[m.Name]
		if !ok {
			continue
		}
		d := Delta{Metric: m, Old: o, New: m.Value, Ratio: math.NaN(), Change: "same"}
		if o != 0 {
			d.Ratio = m.Value / o
		}
		switch {
		case o == m.Value:
		case o == 0 || math.Abs(d.Ratio-1) > threshold:
			if (m.Value > o) == m.HigherIsBetter {
				d.Change = "better"
			} else {
				d.Change = "worse"
			}
		}
		out = append(out, d)
	}
	return out, nil
}

// WriteDeltas writes a comparison as a table: metric, old, new, new/old.
func WriteDeltas(w io.Writer, ds []Delta) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "metric\told\tnew\tnew/old\t")
	for _, d := range ds {
		r := "n/a"
		if !math.IsNaN(d.Ratio) {
			r = fmt.Sprintf("%.3f", d.Ratio)
		}
		mark := ""
		if d.Change != "same" {
			mark = d.Change
		}
		fmt.Fprintf(tw, "%s (%s)\t%s\t%s\t%s\t%s\n", d.Metric.Name, d.Metric.Unit, num(d.Old), num(d.New), r, mark)
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
