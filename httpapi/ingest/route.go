package ingest

import "strings"

// Route names the processor that turns a request body into raw events.
type Route uint8

const (
	// RouteCreate: POST / — {"batch":[...]}, a top-level array or one object.
	RouteCreate Route = iota + 1
	// RouteJSON: /json — every object becomes {"message": <its JSON>, "metadata": <it>}.
	RouteJSON
	// RouteBrowserReports: /browser/reports — as RouteJSON (CSP reports).
	RouteBrowserReports
	// RouteCloudEvent: /cloud-event — as RouteCreate, plus the ce-* headers.
	RouteCloudEvent
	// RouteVector: /vector — {message, metadata, timestamp, project}.
	RouteVector
	// RouteGithub: /github — GitHub webhook payloads.
	RouteGithub
	// RouteCloudflare: /cloudflare — Logpush NDJSON, or JSON as RouteCreate.
	RouteCloudflare
	// RouteElixirLogger: /elixir/logger, /erlang, /erlang/logger,
	// /erlang/lager — as RouteCreate but the body must carry "batch".
	RouteElixirLogger
	// RouteLogplex: /logplex and /syslog — Heroku-dialect syslog lines.
	RouteLogplex
	// RouteSyslogs: /syslogs — RFC 5424-dialect syslog lines.
	RouteSyslogs
)

var routeNames = [...]string{
	RouteCreate: "create", RouteJSON: "json", RouteBrowserReports: "browser_reports",
	RouteCloudEvent: "cloud_event", RouteVector: "vector", RouteGithub: "github",
	RouteCloudflare: "cloudflare", RouteElixirLogger: "elixir_logger",
	RouteLogplex: "logplex", RouteSyslogs: "syslogs",
}

func (r Route) String() string {
	if int(r) < len(routeNames) && routeNames[r] != "" {
		return routeNames[r]
	}
	return "route(?)"
}

// routeSuffixes maps the path after the /logs, /api/logs or /api/events
// prefix to its route.
var routeSuffixes = map[string]Route{
	"":                 RouteCreate,
	"/":                RouteCreate,
	"/json":            RouteJSON,
	"/browser/reports": RouteBrowserReports,
	"/cloud-event":     RouteCloudEvent,
	"/vector":          RouteVector,
	"/github":          RouteGithub,
	"/cloudflare":      RouteCloudflare,
	"/elixir/logger":   RouteElixirLogger,
	"/erlang":          RouteElixirLogger,
	"/erlang/logger":   RouteElixirLogger,
	"/erlang/lager":    RouteElixirLogger,
	"/logplex":         RouteLogplex,
	"/syslog":          RouteLogplex,
	"/syslogs":         RouteSyslogs,
}

// RouteForPath returns the route of an ingest request path such as
// "/api/logs/vector" (prefixes /logs, /api/logs and /api/events; a trailing
// slash is ignored). Unlike Logflare, the syslog routes are accepted under
// every prefix, not only /logs. ok is false for paths that are not ingest
// routes (Vercel, Netlify, typecasts and OTLP are not decoded here).
func RouteForPath(path string) (r Route, ok bool) {
	for _, prefix := range [...]string{"/api/events", "/api/logs", "/logs"} {
		if rest, found := strings.CutPrefix(path, prefix); found {
			if len(rest) > 1 {
				rest = strings.TrimSuffix(rest, "/")
			}
			r, ok = routeSuffixes[rest]
			return r, ok
		}
	}
	return 0, false
}
