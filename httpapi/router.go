package httpapi

import (
	"strings"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/sediment/sediment/httpapi/ingest"
)

// gatewayPrefix is the path Supabase's Kong gateway serves the analytics
// service under; requests reaching us through a gateway that does not
// strip it are routed as if it were not there.
const gatewayPrefix = "/analytics/v1"

// handle is the fasthttp handler: route, recover, log.
func (s *Server) handle(ctx *fasthttp.RequestCtx) {
	start := time.Now()
	defer func() {
		if r := recover(); r != nil {
			s.log.Error("handler panic", "method", string(ctx.Method()), "path", string(ctx.Path()), "panic", r)
			ctx.Response.Reset()
			sendStatic(ctx, fasthttp.StatusInternalServerError, bodyInternal)
		}
		s.logRequest(ctx, start)
	}()
	s.route(ctx)
}

// route dispatches on method and path. Unknown paths and methods answer
// 404 {"error":"Not Found"}, as Phoenix's router does.
func (s *Server) route(ctx *fasthttp.RequestCtx) {
	path := b2s(ctx.Path())
	if rest, ok := strings.CutPrefix(path, gatewayPrefix); ok && (rest == "" || rest[0] == '/') {
		path = rest
		if path == "" {
			path = "/"
		}
	}
	method := b2s(ctx.Method())

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
