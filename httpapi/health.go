package httpapi

import "github.com/valyala/fasthttp"

// handleHealth answers GET /health: 503 {"status":"coming_up"} until
// SetReady (in Supabase mode, until seeding is done), then 200
// {"status":"ok"} (logflare-compat §5.2). Docker's healthcheck polls it.
func (s *Server) handleHealth(ctx *fasthttp.RequestCtx) {
	if !s.ready.Load() {
		sendStatic(ctx, fasthttp.StatusServiceUnavailable, bodyComingUp)
		return
	}
	sendStatic(ctx, fasthttp.StatusOK, bodyHealthOK)
}

// handleReady answers GET /ready: 200 {"status":"ok"} while serving, 503
// {"status":"not_ready"} while starting and while draining for shutdown.
func (s *Server) handleReady(ctx *fasthttp.RequestCtx) {
	if !s.ready.Load() || s.draining.Load() {
		sendStatic(ctx, fasthttp.StatusServiceUnavailable, bodyNotReady)
		return
	}
	sendStatic(ctx, fasthttp.StatusOK, bodyHealthOK)
}
