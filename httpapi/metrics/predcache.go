package metrics

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/sediment/sediment/engine"
)

// PredicateCacheCollector reads the engine's predicate cache (the answers
// of text predicates per segment block and head chunk, and their warming
// for new segments).
type PredicateCacheCollector struct{}

// NewPredicateCacheCollector returns a collector of the process's
// predicate cache.
func NewPredicateCacheCollector() *PredicateCacheCollector { return &PredicateCacheCollector{} }

var (
	descPredHits = prometheus.NewDesc("sediment_predicate_cache_hits_total",
		"Answers of regex, LIKE and substring tests for a segment block or head chunk taken from the predicate cache.", nil, nil)
	descPredBytes = prometheus.NewDesc("sediment_predicate_cache_bytes",
		"Size of the answers the predicate cache holds (bounded by --predicate-cache).", nil, nil)
	descPredWarmed = prometheus.NewDesc("sediment_predicate_cache_warmed_blocks_total",
		"Block answers computed in the background for new segments (flushes, compactions) for tests queried recently.", nil, nil)
	descPredWarmSkipped = prometheus.NewDesc("sediment_predicate_cache_warm_skipped_total",
		"New segments or blocks left unwarmed: queue full, segment removed, block unreadable, cache off or engine closing.", nil, nil)
	descPredWarmPanics = prometheus.NewDesc("sediment_predicate_cache_warm_panics_total",
		"Warming jobs that panicked (logged, and the worker went on).", nil, nil)
)

// Describe implements prometheus.Collector.
func (c *PredicateCacheCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descPredHits, descPredBytes, descPredWarmed, descPredWarmSkipped, descPredWarmPanics} {
		ch <- d
	}
}

// Collect implements prometheus.Collector.
func (c *PredicateCacheCollector) Collect(ch chan<- prometheus.Metric) {
	st := engine.PredicateCacheStats()
	ch <- prometheus.MustNewConstMetric(descPredHits, prometheus.CounterValue, float64(st.Hits))
	ch <- prometheus.MustNewConstMetric(descPredBytes, prometheus.GaugeValue, float64(st.Bytes))
	ch <- prometheus.MustNewConstMetric(descPredWarmed, prometheus.CounterValue, float64(st.WarmedBlocks))
	ch <- prometheus.MustNewConstMetric(descPredWarmSkipped, prometheus.CounterValue, float64(st.WarmSkipped))
	ch <- prometheus.MustNewConstMetric(descPredWarmPanics, prometheus.CounterValue, float64(st.WarmPanics))
}
