package httpapi

import (
	"fmt"
	"runtime/debug"
	"strings"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/sediment/sediment/httpapi/ingest"
)

// gatewayPrefix is the path Supabase's Kong gateway serves the analytics
// service under; requests reaching us through a gateway that does not
// strip it are routed as if it were not there.
const gatewayPrefix = "/analytics/v1"

// handle is the fasthttp handler: guard the body, route, recover, log.
// It runs as soon as a request's headers are in; the body is read by the
// handler that wants it (body.go).
func (s *Server) handle(ctx *fasthttp.RequestCtx) {
	start := time.Now()
	if s.conns.closedByShutdown(ctx.Conn()) {
		// Shutdown closed this connection before the request arrived
		// (conns.go): nobody can be answered, so nothing is done.
		ctx.SetConnectionClose()
		return
	}
	body := s.guardBody(ctx)
	defer func() {
		if r := recover(); r != nil {
			s.log.Error("handler panic", "method", string(ctx.Method()), "path", string(ctx.Path()),
				"panic", fmt.Sprint(r), "stack", string(debug.Stack()))
			ctx.Response.Reset()
			sendStatic(ctx, fasthttp.StatusInternalServerError, bodyInternal)
		}
		if body != nil {
			body.finish(ctx)
		}
		s.logRequest(ctx, start)
		s.observeRequest(ctx, start)
	}()
	if conflictingFraming(&ctx.Request.Header) {
		rejectConflictingFraming(ctx)
		return
	}
	s.route(ctx)
}

// routePath is the request's path without the gateway prefix.
func routePath(ctx *fasthttp.RequestCtx) string {
	path := b2s(ctx.Path())
	if rest, ok := strings.CutPrefix(path, gatewayPrefix); ok && (rest == "" || rest[0] == '/') {
		path = rest
		if path == "" {
			path = "/"
		}
	}
	return path
}

// handleExpect answers a request sent with `Expect: 100-continue` (curl
// sends it for bodies over 1 MiB) before its body: the checks handlers make
// from the headers alone are made here, so that a client that may not send
// the body is told before it does. Anything they pass gets 100 Continue
// and goes to the handler, which checks again.
func (s *Server) handleExpect(ctx *fasthttp.RequestCtx) int {
	switch {
	case conflictingFraming(&ctx.Request.Header):
		rejectConflictingFraming(ctx)
		return fasthttp.StatusBadRequest
	case ctx.Request.Header.ContentLength() > s.opts.MaxBodyBytes:
		sendBodyRefusal(ctx, routePath(ctx), bodyRefusal{Status: fasthttp.StatusRequestEntityTooLarge,
			Detail: fmt.Sprintf("request body exceeds %d bytes", s.opts.MaxBodyBytes)})
		return fasthttp.StatusRequestEntityTooLarge
	}
	if _, ok := ingest.RouteForPath(routePath(ctx)); ok && ctx.IsPost() && s.checkIngestHeaders(ctx) == nil {
		sendStatic(ctx, fasthttp.StatusUnauthorized, bodyUnauthorized)
		return fasthttp.StatusUnauthorized
	}
	return fasthttp.StatusContinue
}

// route dispatches on method and path. Unknown paths and methods answer
// 404 {"error":"Not Found"}, as Phoenix's router does.
func (s *Server) route(ctx *fasthttp.RequestCtx) {
	path := routePath(ctx)
	method := b2s(ctx.Method())
	if s.refuseIngest(ctx, method, path) {
		return
	}

	if r, ok := ingest.RouteForPath(path); ok {
		cors := corsNone
		if r == ingest.RouteCreate || r == ingest.RouteJSON || r == ingest.RouteBrowserReports {
			cors = corsIngest
		}
		switch {
		case method == fasthttp.MethodPost:
			setCORS(ctx, cors)
			s.handleIngest(ctx, r)
		case method == fasthttp.MethodOptions && cors != corsNone:
			preflight(ctx, cors)
		default:
			sendStatic(ctx, fasthttp.StatusNotFound, bodyNotFound)
		}
		return
	}

	if s.routeProtocols(ctx, method, path) {
		return
	}

	if len(path) > 1 {
		path = strings.TrimSuffix(path, "/")
	}
	if s.routeOps(ctx, method, path) {
		return
	}
	get := method == fasthttp.MethodGet || method == fasthttp.MethodHead
	switch path {
	case "/":
		if get {
			s.handleRoot(ctx)
			return
		}
	case "/api/access":
		if get {
			s.handleAccess(ctx)
			return
		}
	case "/health":
		if get {
			s.handleHealth(ctx)
			return
		}
	case "/ready":
		if get {
			s.handleReady(ctx)
			return
		}
	case "/metrics":
		if get {
			s.handleMetrics(ctx)
			return
		}
	case UnsealedPath:
		if method == fasthttp.MethodPost {
			s.handleUnsealed(ctx)
			return
		}
	case "/api/query":
		if get {
			s.handleSQL(ctx)
			return
		}
	case "/api/sources":
		switch method {
		case fasthttp.MethodGet:
			s.listSources(ctx)
			return
		case fasthttp.MethodPost:
			s.createSource(ctx)
			return
		}
	case "/api/endpoints":
		switch method {
		case fasthttp.MethodGet:
			s.listEndpoints(ctx)
			return
		case fasthttp.MethodPost:
			s.createEndpoint(ctx)
			return
		}
	}

	if rest, ok := strings.CutPrefix(path, uiAssetPrefix); ok && get {
		s.handleUIAsset(ctx, rest)
		return
	}
	if rest, ok := strings.CutPrefix(path, "/api/endpoints/query/"); ok && rest != "" {
		if name, ok := strings.CutPrefix(rest, "name/"); ok && name != "" {
			if get {
				s.handleEndpointQuery(ctx, "name", name, lookupByName)
				return
			}
		} else {
			switch method {
			case fasthttp.MethodGet, fasthttp.MethodPost:
				s.handleEndpointQuery(ctx, "token_or_name", rest, lookupByTokenOrName)
				return
			case fasthttp.MethodOptions:
				preflight(ctx, corsEndpoints)
				return
			}
		}
	}
	if rest, ok := strings.CutPrefix(path, "/endpoints/query/"); ok && rest != "" {
		switch method {
		case fasthttp.MethodGet:
			s.handleEndpointQuery(ctx, "token_or_name", rest, lookupByTokenOrName)
			return
		case fasthttp.MethodOptions:
			preflight(ctx, corsEndpoints)
			return
		}
	}
	if rest, ok := strings.CutPrefix(path, "/api/sources/"); ok {
		token, sub, _ := strings.Cut(rest, "/")
		switch {
		case sub == "" && s.routeResource(ctx, method, token, s.getSource, s.updateSource, s.deleteSource):
			return
		case sub == "schema" && get:
			s.sourceSchema(ctx, token)
			return
		case sub == "recent" && get:
			s.recentEvents(ctx, token)
			return
		case sub == "event" && get && token != "":
			s.handleEvent(ctx, token)
			return
		case sub == "repair-wal" && method == fasthttp.MethodPost && token != "":
			s.repairWAL(ctx, token)
			return
		case sub == "search" && token != "":
			switch {
			case get || method == fasthttp.MethodPost:
				s.handleSearch(ctx, token)
				return
			case method == fasthttp.MethodOptions:
				preflight(ctx, corsEndpoints)
				return
			}
		case sub == "tail" && token != "":
			switch method {
			case fasthttp.MethodGet:
				s.handleTail(ctx, token)
				return
			case fasthttp.MethodOptions:
				preflight(ctx, corsEndpoints)
				return
			}
		}
	}
	if rest, ok := strings.CutPrefix(path, "/api/endpoints/"); ok && !strings.Contains(rest, "/") {
		if s.routeResource(ctx, method, rest, s.getEndpoint, s.updateEndpoint, s.deleteEndpoint) {
			return
		}
	}
	sendStatic(ctx, fasthttp.StatusNotFound, bodyNotFound)
}

// routeResource dispatches GET/PUT/PATCH/DELETE on one management resource
// and reports whether the method was one of them.
func (s *Server) routeResource(ctx *fasthttp.RequestCtx, method, token string,
	get func(*fasthttp.RequestCtx, string),
	update func(ctx *fasthttp.RequestCtx, token string, patch bool),
	del func(*fasthttp.RequestCtx, string),
) bool {
	if token == "" {
		return false
	}
	switch method {
	case fasthttp.MethodGet:
		get(ctx, token)
	case fasthttp.MethodPut:
		update(ctx, token, false)
	case fasthttp.MethodPatch:
		update(ctx, token, true)
	case fasthttp.MethodDelete:
		del(ctx, token)
	default:
		return false
	}
	return true
}
