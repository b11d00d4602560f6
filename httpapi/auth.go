package httpapi

import (
	"bytes"
	"unsafe"

	"github.com/valyala/fasthttp"

	"github.com/sediment/sediment/catalog"
)

// apiKey returns the key a request carries, by Logflare's precedence
// (docs/compat/logflare.md §2.1): `Authorization: Bearer <key>`, else the
// `X-API-KEY` header, else the `api_key` query parameter, else Cloudflare
// Logpush's `header_X_API_KEY` query parameter. nil when there is none.
// The slice aliases the request; it is valid during the handler only.
func apiKey(ctx *fasthttp.RequestCtx) []byte {
	if a := ctx.Request.Header.Peek(fasthttp.HeaderAuthorization); len(a) > 0 {
		if len(a) > len("bearer ") && bytes.EqualFold(a[:len("bearer ")], []byte("bearer ")) {
			if k := bytes.TrimSpace(a[len("bearer "):]); len(k) > 0 {
				return k
			}
		}
	}
	if k := ctx.Request.Header.Peek("X-API-KEY"); len(k) > 0 {
		return k
	}
	args := ctx.QueryArgs()
	if k := args.Peek("api_key"); len(k) > 0 {
		return k
	}
	if k := args.Peek("header_X_API_KEY"); len(k) > 0 {
		return k
	}
	return nil
}

// authenticate returns the access token of the request's key, or nil when
// there is no key or it is unknown.
func (s *Server) authenticate(ctx *fasthttp.RequestCtx) *catalog.AccessToken {
	k := apiKey(ctx)
	if len(k) == 0 {
		return nil
	}
	return s.cat.Authenticate(b2s(k))
}

// authorizeManagement returns whether the request carries a private token,
// answering 401 when it does not. Then it reads the request's body, if any
// (body.go), answering and returning false when that fails: management
// handlers check the key before anything else, so their bodies are read
// here.
func (s *Server) authorizeManagement(ctx *fasthttp.RequestCtx) bool {
	tok := s.authenticate(ctx)
	if tok == nil || !tok.CanManage() {
		sendStatic(ctx, fasthttp.StatusUnauthorized, bodyUnauthorized)
		return false
	}
	return s.readBody(ctx)
}

// b2s views b as a string without copying, for lookups that do not keep
// the string: b must not change while the string is used.
func b2s(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(&b[0], len(b))
}
