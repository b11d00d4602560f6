package metrics

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/sediment/sediment/query/endpoints"
	"github.com/sediment/sediment/sql"
)

// MemoryPoolCollector reads the memory pool all queries share.
type MemoryPoolCollector struct{ pool *sql.MemoryPool }

// NewMemoryPoolCollector returns a collector of pool.
func NewMemoryPoolCollector(pool *sql.MemoryPool) *MemoryPoolCollector {
	return &MemoryPoolCollector{pool: pool}
}

var (
	descPoolUsed = prometheus.NewDesc("sediment_query_memory_bytes",
		"Memory queries hold now from the pool they share (--query-memory-total).", nil, nil)
	descPoolPeak = prometheus.NewDesc("sediment_query_memory_peak_bytes",
		"Most memory queries held from the shared pool at once since the server started.", nil, nil)
	descPoolLimit = prometheus.NewDesc("sediment_query_memory_limit_bytes",
		"Size of the memory pool queries share (--query-memory-total); absent when unlimited.", nil, nil)
)

// Describe implements prometheus.Collector.
func (c *MemoryPoolCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- descPoolUsed
	ch <- descPoolPeak
	ch <- descPoolLimit
}

// Collect implements prometheus.Collector.
func (c *MemoryPoolCollector) Collect(ch chan<- prometheus.Metric) {
	ch <- prometheus.MustNewConstMetric(descPoolUsed, prometheus.GaugeValue, float64(c.pool.Used()))
	ch <- prometheus.MustNewConstMetric(descPoolPeak, prometheus.GaugeValue, float64(c.pool.Peak()))
	if t := c.pool.Total(); t > 0 {
		ch <- prometheus.MustNewConstMetric(descPoolLimit, prometheus.GaugeValue, float64(t))
	}
}

// EndpointCacheCollector reads the endpoint result cache of the query
// runner in place at scrape time (one may be installed after start).
type EndpointCacheCollector struct {
	runner func() any
}

// cacheStatser is a query runner with a result cache (endpoints.Service).
type cacheStatser interface {
	CacheStats() endpoints.CacheStats
}

// NewEndpointCacheCollector returns a collector of the cache of the query
// runner that runner returns at each scrape; a runner without a cache
// (one without a CacheStats() endpoints.CacheStats method, or none) adds
// nothing.
func NewEndpointCacheCollector(runner func() any) *EndpointCacheCollector {
	return &EndpointCacheCollector{runner: runner}
}

var (
	descCacheHits = prometheus.NewDesc("sediment_endpoint_cache_hits_total",
		"Endpoint query calls answered by a stored result (endpoints with cache_duration_seconds above 0).", nil, nil)
	descCacheMisses = prometheus.NewDesc("sediment_endpoint_cache_misses_total",
		"Endpoint query calls of caching endpoints that ran the query, or waited for an identical run.", nil, nil)
	descCacheEntries = prometheus.NewDesc("sediment_endpoint_cache_entries",
		"Endpoint results held in the cache.", nil, nil)
	descCacheBytes = prometheus.NewDesc("sediment_endpoint_cache_bytes",
		"Size of the endpoint results held in the cache.", nil, nil)
)

// Describe implements prometheus.Collector.
func (c *EndpointCacheCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- descCacheHits
	ch <- descCacheMisses
	ch <- descCacheEntries
	ch <- descCacheBytes
}

// Collect implements prometheus.Collector.
func (c *EndpointCacheCollector) Collect(ch chan<- prometheus.Metric) {
	r, ok := c.runner().(cacheStatser)
	if !ok {
		return
	}
	st := r.CacheStats()
	ch <- prometheus.MustNewConstMetric(descCacheHits, prometheus.CounterValue, float64(st.Hits))
	ch <- prometheus.MustNewConstMetric(descCacheMisses, prometheus.CounterValue, float64(st.Misses))
	ch <- prometheus.MustNewConstMetric(descCacheEntries, prometheus.GaugeValue, float64(st.Entries))
	ch <- prometheus.MustNewConstMetric(descCacheBytes, prometheus.GaugeValue, float64(st.Bytes))
}
