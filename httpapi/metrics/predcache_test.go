package metrics

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

// TestPredicateCacheCollector: a scrape lists the predicate cache's hits,
// size and warming counts.
func TestPredicateCacheCollector(t *testing.T) {
	reg := prometheus.NewRegistry()
	if err := reg.Register(NewPredicateCacheCollector()); err != nil {
		t.Fatal(err)
	}
	fams, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, f := range fams {
		got[f.GetName()] = true
	}
	for _, name := range []string{"sediment_predicate_cache_hits_total", "sediment_predicate_cache_bytes",
		"sediment_predicate_cache_warmed_blocks_total", "sediment_predicate_cache_warm_skipped_total",
		"sediment_predicate_cache_warm_panics_total"} {
		if !got[name] {
			t.Errorf("%s missing from a scrape", name)
		}
	}
}
