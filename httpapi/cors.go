package httpapi

import "github.com/valyala/fasthttp"

// CORS as Logflare sends it: any origin, on the ingest routes /, /json
// and /browser/reports and on the query endpoint routes, with preflight
// requests answered (docs/compat/logflare.md §1.4).
const (
	corsMaxAge           = "1728000"
	corsIngestMethods    = "POST, OPTIONS"
	corsIngestHeaders    = "Authorization, Content-Type, Content-Length, X-Requested-With"
	corsEndpointMethods  = "GET, POST, OPTIONS"
	corsEndpointsHeaders = "Authorization, Content-Type, Content-Length, X-Requested-With, X-API-Key, LF-ENDPOINT-LABELS, LF-ENDPOINT-REDACT-PII, LF-ENDPOINT-BIGQUERY-RESERVATION"
)

// corsKind selects a route family's CORS policy.
type corsKind uint8

const (
	corsNone corsKind = iota
	corsIngest
	corsEndpoints
)

// setCORS adds the CORS headers of kind to the response.
func setCORS(ctx *fasthttp.RequestCtx, kind corsKind) {
	h := &ctx.Response.Header
	switch kind {
	case corsIngest:
		h.Set(fasthttp.HeaderAccessControlAllowOrigin, "*")
		h.Set(fasthttp.HeaderAccessControlAllowMethods, corsIngestMethods)
		h.Set(fasthttp.HeaderAccessControlAllowHeaders, corsIngestHeaders)
		h.Set(fasthttp.HeaderAccessControlMaxAge, corsMaxAge)
	case corsEndpoints:
		h.Set(fasthttp.HeaderAccessControlAllowOrigin, "*")
		h.Set(fasthttp.HeaderAccessControlAllowMethods, corsEndpointMethods)
		h.Set(fasthttp.HeaderAccessControlAllowHeaders, corsEndpointsHeaders)
		h.Set(fasthttp.HeaderAccessControlMaxAge, corsMaxAge)
	}
}

// preflight answers an OPTIONS request: 204 with the CORS headers.
func preflight(ctx *fasthttp.RequestCtx, kind corsKind) {
	setCORS(ctx, kind)
	sendNoContent(ctx)
}
