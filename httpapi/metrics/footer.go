package metrics

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/sediment/sediment/segment"
)

// FooterCollector reads the memory open segments' footers take: what
// stays resident for pruning, and the block directory cache (page lists
// and unit offsets decoded from footers on demand, bounded).
type FooterCollector struct{}

// NewFooterCollector returns a collector of the process's segment footer
// memory.
func NewFooterCollector() *FooterCollector { return &FooterCollector{} }

var (
	descFooterResident = prometheus.NewDesc("sediment_segment_footer_resident_bytes",
		"Memory open segments keep of their footers for as long as they are open (block time ranges, row counts, columns present, value ranges: what pruning reads), estimated.", nil, nil)
	descFooterCache = prometheus.NewDesc("sediment_segment_footer_cache_bytes",
		"Memory the block directory cache holds (blocks' page lists and unit offsets, and footer units, decoded on demand), estimated.", nil, nil)
	descFooterBudget = prometheus.NewDesc("sediment_segment_footer_cache_budget_bytes",
		"The block directory cache's bound (an eighth of --memory-limit, 32 MiB without one).", nil, nil)
	descFooterLoads = prometheus.NewDesc("sediment_segment_footer_cache_loads_total",
		"Block directories decoded from a footer because the cache did not hold them.", nil, nil)
	descFooterEvictions = prometheus.NewDesc("sediment_segment_footer_cache_evictions_total",
		"Block directories and footer units the cache dropped to stay within its bound.", nil, nil)
)

// Describe implements prometheus.Collector.
func (c *FooterCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descFooterResident, descFooterCache, descFooterBudget, descFooterLoads, descFooterEvictions} {
		ch <- d
	}
}

// Collect implements prometheus.Collector.
func (c *FooterCollector) Collect(ch chan<- prometheus.Metric) {
	st := segment.FooterMemory()
	ch <- prometheus.MustNewConstMetric(descFooterResident, prometheus.GaugeValue, float64(st.ResidentBytes))
	ch <- prometheus.MustNewConstMetric(descFooterCache, prometheus.GaugeValue, float64(st.CacheBytes))
	ch <- prometheus.MustNewConstMetric(descFooterBudget, prometheus.GaugeValue, float64(st.CacheBudget))
	ch <- prometheus.MustNewConstMetric(descFooterLoads, prometheus.CounterValue, float64(st.Loads))
	ch <- prometheus.MustNewConstMetric(descFooterEvictions, prometheus.CounterValue, float64(st.Evictions))
}
