package httpapi

import (
	"strings"

	"github.com/sediment/sediment/httpapi/ingest"
)

// Route names are the values of the label route of the metrics
// (docs/metrics.md): a fixed set, so that no path or other value a client
// chose ever becomes a label value. Paths the router does not serve are
// "other".
const (
	routeRoot           = "root" // GET / (the web explorer, or Elasticsearch clients' probe)
	routeHealth         = "health"
	routeReady          = "ready"
	routeAccess         = "access"
	routeMetrics        = "metrics"
	routeUI             = "ui"
	routeSQL            = "sql" // GET /api/query
	routeSources        = "sources"
	routeSource         = "source"
	routeSourceSchema   = "source_schema"
	routeSourceRecent   = "source_recent"
	routeSourceEvent    = "source_event"
	routeSourceRepair   = "source_repair_wal"
	routeSearch         = "search"
	routeTail           = "tail"
	routeEndpoints      = "endpoints"
	routeEndpoint       = "endpoint"
	routeEndpointQuery  = "endpoint_query"
	routeAccessTokens   = "access_tokens"
	routeIngestOTLP     = "ingest_otlp"
	routeIngestLoki     = "ingest_loki"
	routeIngestBulk     = "ingest_es_bulk"
	routeIngestSyslog   = "ingest_syslog" // the syslog listener (not HTTP)
	routeOther          = "other"
	ingestRouteNameBase = "ingest_"
)

// ingestRouteNames names the Logflare ingest routes: ingest_create (POST
// /api/logs and its aliases), ingest_json, ingest_vector, and so on.
var ingestRouteNames = func() map[ingest.Route]string {
	m := map[ingest.Route]string{}
	for r := ingest.RouteCreate; r <= ingest.RouteSyslogs; r++ {
		m[r] = ingestRouteNameBase + r.String()
	}
	return m
}()

// ingestRouteName returns the route name of a Logflare ingest route.
func ingestRouteName(r ingest.Route) string {
	if n, ok := ingestRouteNames[r]; ok {
		return n
	}
	return routeOther
}

// isQueryRoute reports whether route runs queries, whose answers
// sediment_query_duration_seconds records.
func isQueryRoute(route string) bool {
	return route == routeEndpointQuery || route == routeSQL || route == routeSearch
}

// metricRoute returns the route name of a request path (without the
// gateway prefix), as the router dispatches it; the method is not
// considered, so a method a route does not serve counts under the route.
func metricRoute(path string) string {
	if r, ok := ingest.RouteForPath(path); ok {
		return ingestRouteName(r)
	}
	switch path {
	case "/v1/logs", "/api/v1/logs", "/otlp/v1/logs":
		return routeIngestOTLP
	case "/loki/api/v1/push", "/api/prom/push":
		return routeIngestLoki
	}
	if _, ok := bulkIndex(path); ok {
		return routeIngestBulk
	}
	if len(path) > 1 {
		path = strings.TrimSuffix(path, "/")
	}
	switch path {
	case "/":
		return routeRoot
	case "/health":
		return routeHealth
	case "/ready":
		return routeReady
	case "/api/access":
		return routeAccess
	case "/metrics":
		return routeMetrics
	case "/api/query":
		return routeSQL
	case "/api/sources":
		return routeSources
	case "/api/endpoints":
		return routeEndpoints
	case "/api/access-tokens":
		return routeAccessTokens
	}
	switch {
	case strings.HasPrefix(path, uiAssetPrefix):
		return routeUI
	case strings.HasPrefix(path, "/api/endpoints/query/"), strings.HasPrefix(path, "/endpoints/query/"):
		return routeEndpointQuery
	case strings.HasPrefix(path, "/api/endpoints/"):
		return routeEndpoint
	case strings.HasPrefix(path, "/api/access-tokens/"):
		return routeAccessTokens
	}
	if rest, ok := strings.CutPrefix(path, "/api/sources/"); ok {
		_, sub, _ := strings.Cut(rest, "/")
		switch sub {
		case "":
			return routeSource
		case "schema":
			return routeSourceSchema
		case "recent":
			return routeSourceRecent
		case "event":
			return routeSourceEvent
		case "repair-wal":
			return routeSourceRepair
		case "search":
			return routeSearch
		case "tail":
			return routeTail
		}
	}
	return routeOther
}
