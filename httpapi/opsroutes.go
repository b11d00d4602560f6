package httpapi

import (
	"strings"

	"github.com/valyala/fasthttp"
)

// routeOps serves the operations routes (access token management, online
// snapshots) and reports whether path was one of them. path has the
// gateway prefix and a trailing slash removed.
func (s *Server) routeOps(ctx *fasthttp.RequestCtx, method, path string) bool {
	switch path {
	case "/api/access-tokens":
		switch method {
		case fasthttp.MethodGet:
			s.listAccessTokens(ctx)
			return true
		case fasthttp.MethodPost:
			s.createAccessToken(ctx)
			return true
		}
		return false
	case "/api/admin/snapshot":
		if method == fasthttp.MethodPost {
			s.handleSnapshot(ctx)
			return true
		}
		return false
	}
	if rest, ok := strings.CutPrefix(path, "/api/access-tokens/"); ok && rest != "" && !strings.Contains(rest, "/") {
		if method == fasthttp.MethodDelete {
			s.revokeAccessToken(ctx, rest)
			return true
		}
	}
	return false
}
