package httpapi

import (
	"fmt"
	"maps"
	"net"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/valyala/fasthttp"

	"github.com/sediment/sediment/catalog"
	"github.com/sediment/sediment/httpapi/metrics"
)

// GET /metrics serves the server's Prometheus metrics in the text format
// (docs/metrics.md lists them). Who may read it is MetricsAccess: by
// default only a key with scope private, as for the management API; the
// answer to anyone else is 401 {"error":"Unauthorized"}.

// MetricsAccess says who may read GET /metrics.
type MetricsAccess uint8

const (
	// MetricsPrivate: only a key with scope private (the default).
	MetricsPrivate MetricsAccess = iota
	// MetricsLoopback: also any client connecting from a loopback address
	// (127.0.0.0/8, ::1), without a key. Behind a reverse proxy on the
	// same host every client looks local: use it only where the proxy
	// does not forward /metrics.
	MetricsLoopback
	// MetricsPublic: anyone, without a key.
	MetricsPublic
)

// ParseMetricsAccess parses the values of --metrics-public: "none" (or
// "") for MetricsPrivate, "loopback", "all".
func ParseMetricsAccess(s string) (MetricsAccess, error) {
	switch s {
	case "", "none":
		return MetricsPrivate, nil
	case "loopback":
		return MetricsLoopback, nil
	case "all":
		return MetricsPublic, nil
	}
	return 0, fmt.Errorf("unknown metrics access %q (none, loopback or all)", s)
}

// String returns the value ParseMetricsAccess reads.
func (a MetricsAccess) String() string {
	switch a {
	case MetricsLoopback:
		return "loopback"
	case MetricsPublic:
		return "all"
	}
	return "none"
}

// handleMetrics answers GET /metrics.
func (s *Server) handleMetrics(ctx *fasthttp.RequestCtx) {
	if !s.mayReadMetrics(ctx) {
		sendStatic(ctx, fasthttp.StatusUnauthorized, bodyUnauthorized)
		return
	}
	ct, err := s.metrics.Write(ctx)
	if err != nil {
		s.log.Error("metrics: encoding failed", "err", err)
		ctx.Response.ResetBody()
		sendStatic(ctx, fasthttp.StatusInternalServerError, bodyInternal)
		return
	}
	ctx.SetStatusCode(fasthttp.StatusOK)
	ctx.SetContentType(ct)
}

// mayReadMetrics applies MetricsAccess to the request.
func (s *Server) mayReadMetrics(ctx *fasthttp.RequestCtx) bool {
	switch s.opts.MetricsAccess {
	case MetricsPublic:
		return true
	case MetricsLoopback:
		if isLoopback(ctx.RemoteAddr()) {
			return true
		}
	}
	tok := s.authenticate(ctx)
	return tok != nil && tok.CanManage()
}

// isLoopback reports whether a client address is a loopback one.
func isLoopback(addr net.Addr) bool {
	tcp, ok := addr.(*net.TCPAddr)
	return ok && tcp.IP.IsLoopback()
}

// endpointMetricKey is the request user value under which an endpoint
// query's handler leaves the endpoint's name, for the label endpoint of
// sediment_query_duration_seconds.
type endpointMetricKey struct{}

// noteEndpoint records which endpoint a request queries.
func noteEndpoint(ctx *fasthttp.RequestCtx, ep *catalog.Endpoint) {
	ctx.SetUserValue(endpointMetricKey{}, ep.Name)
}

// observeRequest counts an answered request, under the route the router
// dispatched it to, and records how long it took; an answered query also
// goes to the query histogram.
func (s *Server) observeRequest(ctx *fasthttp.RequestCtx, start time.Time) {
	route := metricRoute(routePath(ctx))
	code := ctx.Response.StatusCode()
	d := time.Since(start)
	s.metrics.ObserveRequest(route, code, d)
	if code == fasthttp.StatusOK && isQueryRoute(route) {
		endpoint, _ := ctx.UserValue(endpointMetricKey{}).(string)
		s.metrics.ObserveQuery(route, endpoint, d)
	}
}

// countUnhandled counts a request answered before a handler ran: refused
// from its headers under `Expect: 100-continue`, or unreadable.
func (s *Server) countUnhandled(ctx *fasthttp.RequestCtx, code int) {
	s.metrics.CountRequest(metricRoute(routePath(ctx)), code)
}

// expectCounted is handleExpect, counting the requests it refuses.
func (s *Server) expectCounted(ctx *fasthttp.RequestCtx) int {
	code := s.handleExpect(ctx)
	if code != fasthttp.StatusContinue {
		s.countUnhandled(ctx, code)
	}
	return code
}

// forgetEndpointMetrics drops the query series of an endpoint deleted or
// renamed.
func (s *Server) forgetEndpointMetrics(ch catalog.Change) {
	if old := ch.OldEndpoint; old != nil && (ch.Endpoint == nil || ch.Endpoint.Name != old.Name) {
		s.metrics.ForgetEndpoint(old.Name)
	}
}

// registerMetrics adds the server's collectors to its registry: its own
// counts (serverCollector), the engine's, the query memory pool's, the
// endpoint cache's, the predicate cache's and segment footers' memory.
func (s *Server) registerMetrics() error {
	cs := []prometheus.Collector{
		&serverCollector{s: s},
		metrics.NewEngineCollector(s.eng, s.cat),
		metrics.NewEndpointCacheCollector(func() any { return s.queryRunner() }),
		metrics.NewPredicateCacheCollector(),
		metrics.NewFooterCollector(),
	}
	if p := s.opts.Search.MemoryPool; p != nil {
		cs = append(cs, metrics.NewMemoryPoolCollector(p))
	}
	for _, c := range cs {
		if err := s.metrics.Register(c); err != nil {
			return fmt.Errorf("httpapi: metrics registry (one registry per server): %w", err)
		}
	}
	return nil
}

// serverCollector reads what the server counts anyway: ingest per source
// and route, drops per source and reason (drops.go), and the query gate
// (admission.go).
type serverCollector struct{ s *Server }

var (
	descIngestEvents = prometheus.NewDesc("sediment_ingest_events_total",
		"Events stored, by source and by the route that brought them.", []string{"source", "route"}, nil)
	descIngestBytes = prometheus.NewDesc("sediment_ingest_bytes_total",
		"Request body bytes as received (before decompression) of requests that stored events, by source and route; a request whose events went to several sources splits its bytes among them by their share of its events.",
		[]string{"source", "route"}, nil)
	descIngestDropped = prometheus.NewDesc("sediment_ingest_dropped_events_total",
		"Events of requests answered 200 that were not stored, by source (empty when no source could be chosen for them) and reason (see GET /api/sources/:token dropped_events).",
		[]string{"source", "reason"}, nil)
	descQueriesRunning = prometheus.NewDesc("sediment_query_running",
		"Queries holding a query slot now.", nil, nil)
	descQueriesQueued = prometheus.NewDesc("sediment_query_queued",
		"Queries waiting for a query slot now (the query queue's length).", nil, nil)
	descQuerySlots = prometheus.NewDesc("sediment_query_slots",
		"Queries that may run at once (--max-concurrent-queries).", nil, nil)
	descQueueCapacity = prometheus.NewDesc("sediment_query_queue_capacity",
		"Queries that may wait for a slot (--max-queued-queries).", nil, nil)
	descQueriesRejected = prometheus.NewDesc("sediment_query_rejected_total",
		"Queries answered 429 by admission control, by reason: queue_full (no room to wait) or queue_wait (no slot within --query-queue-wait).",
		[]string{"reason"}, nil)
)

// Describe implements prometheus.Collector.
func (c *serverCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descIngestEvents, descIngestBytes, descIngestDropped,
		descQueriesRunning, descQueriesQueued, descQuerySlots, descQueueCapacity, descQueriesRejected} {
		ch <- d
	}
}

// Collect implements prometheus.Collector.
func (c *serverCollector) Collect(ch chan<- prometheus.Metric) {
	s := c.s
	names := metrics.SourceNames(s.cat)
	s.stats.mu.RLock()
	sources := maps.Clone(s.stats.sources)
	s.stats.mu.RUnlock()
	for token, sc := range sources {
		name := ""
		if token != noSource {
			var ok bool
			if name, ok = names.Take(token); !ok {
				continue // deleted meanwhile
			}
		}
		sc.mu.Lock()
		for route, rc := range sc.routes {
			ch <- prometheus.MustNewConstMetric(descIngestEvents, prometheus.CounterValue, float64(rc.events), name, route)
			ch <- prometheus.MustNewConstMetric(descIngestBytes, prometheus.CounterValue, float64(rc.bytes), name, route)
		}
		for reason, n := range sc.dropped {
			ch <- prometheus.MustNewConstMetric(descIngestDropped, prometheus.CounterValue, float64(n), name, string(reason))
		}
		sc.mu.Unlock()
	}
	g := s.queries
	ch <- prometheus.MustNewConstMetric(descQueriesRunning, prometheus.GaugeValue, float64(g.running()))
	ch <- prometheus.MustNewConstMetric(descQueriesQueued, prometheus.GaugeValue, float64(max(g.queued.Load(), 0)))
	ch <- prometheus.MustNewConstMetric(descQuerySlots, prometheus.GaugeValue, float64(cap(g.slots)))
	ch <- prometheus.MustNewConstMetric(descQueueCapacity, prometheus.GaugeValue, float64(g.maxQueue))
	ch <- prometheus.MustNewConstMetric(descQueriesRejected, prometheus.CounterValue, float64(g.rejectedFull.Load()), "queue_full")
	ch <- prometheus.MustNewConstMetric(descQueriesRejected, prometheus.CounterValue, float64(g.rejectedWait.Load()), "queue_wait")
}
