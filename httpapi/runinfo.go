package httpapi

import (
	"context"
	"strconv"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/sediment/sediment/catalog"
)

// An endpoint query's answer says how it was made, in two headers that
// Logflare does not send and its clients ignore:
//
//	X-Sediment-Cache: hit | miss | off   whether the endpoint's cache answered
//	Server-Timing: query;dur=12.345      time spent running it, in milliseconds
//
// The cache header is there when the runner reports it
// (query/endpoints.Service does).

// headerCache is the cache status header of endpoint query answers.
const headerCache = "X-Sediment-Cache"

// cacheReporter is implemented by a QueryRunner that says how its cache
// answered: "hit", "miss" or "off".
type cacheReporter interface {
	RunEndpointReportingCache(ctx context.Context, ep *catalog.Endpoint, params map[string]string, redactPII bool) ([]byte, string)
}

// runEndpoint runs ep and answers its body with the headers above.
func runEndpoint(ctx *fasthttp.RequestCtx, qctx context.Context, runner QueryRunner, ep *catalog.Endpoint, params map[string]string, redact bool) {
	start := time.Now()
	var body []byte
	if cr, ok := runner.(cacheReporter); ok {
		var status string
		body, status = cr.RunEndpointReportingCache(qctx, ep, params, redact)
		ctx.Response.Header.Set(headerCache, status)
	} else {
		body = runner.RunEndpoint(qctx, ep, params, redact)
	}
	ctx.Response.Header.Set("Server-Timing", serverTiming(time.Since(start)))
	sendRunnerBody(ctx, body)
}

// serverTiming formats d as a Server-Timing metric named query.
func serverTiming(d time.Duration) string {
	return "query;dur=" + strconv.FormatFloat(float64(d.Microseconds())/1000, 'f', 3, 64)
}
