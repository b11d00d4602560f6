package metrics

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/sediment/sediment/segment"
)

// TestFooterCollector: a scrape lists the footer memory gauges and
// counters, the budget as the segment package has it.
func TestFooterCollector(t *testing.T) {
	prev := segment.SetFooterCacheBytes(3 << 20)
	defer segment.SetFooterCacheBytes(prev)
	reg := prometheus.NewRegistry()
	if err := reg.Register(NewFooterCollector()); err != nil {
		t.Fatal(err)
	}
	fams, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, f := range fams {
		for _, m := range f.GetMetric() {
			got[f.GetName()] = m.GetGauge().GetValue() + m.GetCounter().GetValue()
		}
	}
	for _, name := range []string{"sediment_segment_footer_resident_bytes", "sediment_segment_footer_cache_bytes",
		"sediment_segment_footer_cache_budget_bytes", "sediment_segment_footer_cache_loads_total",
		"sediment_segment_footer_cache_evictions_total"} {
		if _, ok := got[name]; !ok {
			t.Errorf("%s missing from a scrape", name)
		}
	}
	if b := got["sediment_segment_footer_cache_budget_bytes"]; b != 3<<20 {
		t.Errorf("budget %v, want %d", b, 3<<20)
	}
}
