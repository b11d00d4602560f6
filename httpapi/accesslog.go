package httpapi

import (
	"context"
	"log/slog"
	"time"

	"github.com/valyala/fasthttp"
)

// logRequest logs one request at debug level: method, path (never the
// query string, which may carry an API key), status and duration. Event
// contents and keys are never logged.
func (s *Server) logRequest(ctx *fasthttp.RequestCtx, start time.Time) {
	if !s.log.Enabled(context.Background(), slog.LevelDebug) {
		return
	}
	s.log.LogAttrs(context.Background(), slog.LevelDebug, "request",
		slog.String("method", string(ctx.Method())),
		slog.String("path", string(ctx.Path())),
		slog.Int("status", ctx.Response.StatusCode()),
		slog.Duration("duration", time.Since(start)),
	)
}
