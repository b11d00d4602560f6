package ingest

// acceptedContentTypes names the Content-Type values a route parses, for
// the message of a 415: the client learns what to send.
func acceptedContentTypes(r Route) string {
	switch r {
	case RouteLogplex, RouteSyslogs:
		return "application/logplex-1"
	case RouteCloudflare:
		return "application/json, application/x-ndjson or text/plain (Logpush's NDJSON)"
	case RouteBrowserReports:
		return "application/json, application/csp-report or application/x-ndjson"
	}
	return "application/json or application/x-ndjson"
}
