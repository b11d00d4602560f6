package metrics

import (
	"fmt"
	"log/slog"
	"runtime/debug"

	"github.com/prometheus/client_golang/prometheus"
)

// safeCollector recovers a panic of the collector it wraps. Metrics it
// sent before the panic are kept.
type safeCollector struct {
	c   prometheus.Collector
	log *slog.Logger
}

// Describe implements prometheus.Collector.
func (s *safeCollector) Describe(ch chan<- *prometheus.Desc) { s.c.Describe(ch) }

// Collect implements prometheus.Collector.
func (s *safeCollector) Collect(ch chan<- prometheus.Metric) {
	defer func() {
		if r := recover(); r != nil {
			s.log.Error("metrics: a collector panicked; its metrics are left out of this scrape",
				"panic", fmt.Sprint(r), "stack", string(debug.Stack()))
		}
	}()
	s.c.Collect(ch)
}
