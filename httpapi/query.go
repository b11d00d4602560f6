package httpapi

import (
	"bytes"
	"context"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/sediment/sediment/catalog"
)

// QueryRunner executes queries for the HTTP API; the query layer
// implements it. Both methods return the complete response body, sent
// with HTTP 200 and Content-Type application/json: {"result": [...]} on
// success (with a top-level "warnings" list of strings when the answer
// misses stored data set aside as damaged), {"error": ...} when the query
// fails (Logflare answers query
// failures with 200, docs/compat/logflare.md §6.6). Implementations must be safe
// for concurrent use and must honour ctx (it ends at the query timeout,
// when the client goes away and when the server shuts down). The server
// bounds how many calls run at once (admission.go).
type QueryRunner interface {
	// RunEndpoint runs endpoint ep. params holds every request parameter
	// as a string (path parameter, query string, body): the endpoint's
	// @parameters, the consumer sql=/lql= of a sandboxed query, and any
	// others (which take part in cache keys). redactPII is the effective
	// PII redaction setting: the LF-ENDPOINT-REDACT-PII header when sent,
	// else ep.RedactPII. The runner owns params.
	RunEndpoint(ctx context.Context, ep *catalog.Endpoint, params map[string]string, redactPII bool) []byte
	// RunSQL runs an ad-hoc query (GET /api/query?sql=...).
	RunSQL(ctx context.Context, sql string) []byte
}

// CachedRunner is a QueryRunner that can answer some endpoint calls from
// memory. Such an answer runs no query, so it skips admission control (a
// full query queue does not delay it).
type CachedRunner interface {
	QueryRunner
	// CachedEndpoint returns what RunEndpoint would return for the same
	// arguments when it can be had without running a query (a fresh cached
	// result), and false otherwise. It does not block.
	CachedEndpoint(ep *catalog.Endpoint, params map[string]string, redactPII bool) ([]byte, bool)
}

// lookupMode says how a query route finds its endpoint.
type lookupMode uint8

const (
	// lookupByTokenOrName: a UUID is a token, anything else a name.
	lookupByTokenOrName lookupMode = iota
	// lookupByName: always a name (GET /api/endpoints/query/name/:name).
	lookupByName
)

// redactHeader overrides an endpoint's redact_pii per request.
const redactHeader = "LF-ENDPOINT-REDACT-PII"

// handleEndpointQuery serves the query endpoint routes
// (docs/compat/logflare.md §6.1, §6.2): it finds the endpoint (by token
// for anyone, by name only for an authenticated caller), checks access
// (enable_auth false needs no key; otherwise a token with scope private,
// query or query:endpoint:<id>),
// collects the parameters and runs the endpoint. Every failure to find or
// to authorise answers 401 {"error":"Unauthorized"}, never 404.
func (s *Server) handleEndpointQuery(ctx *fasthttp.RequestCtx, pathKey, pathValue string, mode lookupMode) {
	setCORS(ctx, corsEndpoints)
	tok := s.authenticate(ctx)
	var ep *catalog.Endpoint
	canon, isUUID := "", false
	if mode == lookupByTokenOrName {
		canon, isUUID = catalog.CanonicalToken(pathValue)
	}
	switch {
	case isUUID:
		ep = s.cat.EndpointByToken(canon)
	case tok != nil:
		ep = s.cat.EndpointByName(pathValue)
	}
	if ep == nil || (ep.EnableAuth && (tok == nil || !tok.CanQuery(ep.ID))) {
		sendStatic(ctx, fasthttp.StatusUnauthorized, bodyUnauthorized)
		return
	}
	noteEndpoint(ctx, ep)
	runner := s.queryRunner()
	if runner == nil {
		sendStatic(ctx, fasthttp.StatusServiceUnavailable, bodyNoRunner)
		return
	}
	if !s.readBody(ctx) {
		return
	}
	params, err := collectParams(ctx, pathKey, pathValue, ep.Sandboxable)
	if err != nil {
		sendError(ctx, fasthttp.StatusBadRequest, err.Error())
		return
	}
	redact := ep.RedactPII
	if h := ctx.Request.Header.Peek(redactHeader); h != nil {
		redact = bytes.EqualFold(bytes.TrimSpace(h), []byte("true"))
	}
	if c, ok := runner.(CachedRunner); ok {
		// A fresh cached answer needs no query slot.
		start := time.Now()
		if body, hit := c.CachedEndpoint(ep, params, redact); hit {
			ctx.Response.Header.Set(headerCache, "hit")
			ctx.Response.Header.Set("Server-Timing", serverTiming(time.Since(start)))
			sendRunnerBody(ctx, body)
			return
		}
	}
	qctx, done := s.startQuery(ctx)
	if qctx == nil {
		return
	}
	defer done()
	runEndpoint(ctx, qctx, runner, ep, params, redact)
}

// handleSQL serves GET /api/query?sql= (also bq_sql=, pg_sql=, ch_sql=),
// ad-hoc SQL for private tokens.
func (s *Server) handleSQL(ctx *fasthttp.RequestCtx) {
	if !s.authorizeManagement(ctx) {
		return
	}
	args := ctx.QueryArgs()
	var sql []byte
	for _, k := range [...]string{"sql", "bq_sql", "pg_sql", "ch_sql"} {
		if v := args.Peek(k); len(v) > 0 {
			sql = v
			break
		}
	}
	if len(bytes.TrimSpace(sql)) == 0 {
		sendStatic(ctx, fasthttp.StatusBadRequest, bodyNoQuery)
		return
	}
	runner := s.queryRunner()
	if runner == nil {
		sendStatic(ctx, fasthttp.StatusServiceUnavailable, bodyNoRunner)
		return
	}
	qctx, done := s.startQuery(ctx)
	if qctx == nil {
		return
	}
	defer done()
	sendRunnerBody(ctx, runner.RunSQL(qctx, string(sql)))
}

func sendRunnerBody(ctx *fasthttp.RequestCtx, body []byte) {
	ctx.SetStatusCode(fasthttp.StatusOK)
	ctx.SetContentType(contentTypeJSON)
	ctx.SetBody(body)
}
