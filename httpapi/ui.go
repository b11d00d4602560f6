package httpapi

import (
	"bytes"

	"github.com/valyala/fasthttp"

	"github.com/sediment/sediment/ui"
)

// The web log explorer (package ui): GET / answers the page to browsers,
// GET /ui/<file> its scripts and styles. Neither shadows a Logflare route:
// Logflare serves nothing at / to API clients and has no /ui/ path.

// uiAssetPrefix is the path the explorer's files are served under.
const uiAssetPrefix = "/ui/"

// rootAudience says who sent a GET /, to answer each in its own way.
type rootAudience uint8

const (
	// audienceAPI is any client that does not ask for a page: it gets the
	// Elasticsearch version answer that Elasticsearch clients (Filebeat,
	// Logstash, Fluent Bit, the JS client) probe before their first bulk
	// request (handleESInfo). Logflare itself serves nothing at /.
	audienceAPI rootAudience = iota
	// audienceBrowser asks for HTML (a browser's Accept: text/html): it
	// gets the explorer. Elasticsearch clients never ask for text/html.
	audienceBrowser
)

// classifyRoot decides who a GET / is from. It is the one place that
// decision is made.
func classifyRoot(ctx *fasthttp.RequestCtx) rootAudience {
	if bytes.Contains(ctx.Request.Header.Peek(fasthttp.HeaderAccept), []byte("text/html")) {
		return audienceBrowser
	}
	return audienceAPI
}

// handleRoot serves GET and HEAD /.
func (s *Server) handleRoot(ctx *fasthttp.RequestCtx) {
	ctx.Response.Header.Add(fasthttp.HeaderVary, fasthttp.HeaderAccept)
	switch classifyRoot(ctx) {
	case audienceBrowser:
		serveAsset(ctx, ui.Index())
	default:
		s.handleESInfo(ctx)
	}
}

// handleUIAsset serves GET and HEAD /ui/<name>.
func (s *Server) handleUIAsset(ctx *fasthttp.RequestCtx, name string) {
	a, ok := ui.Lookup(name)
	if !ok || name == ui.IndexName {
		sendStatic(ctx, fasthttp.StatusNotFound, bodyNotFound)
		return
	}
	serveAsset(ctx, a)
}

// uiSecurityPolicy keeps the page to its own origin: scripts, styles and
// connections to the server only, never framed.
const uiSecurityPolicy = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
	"connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

// serveAsset answers an embedded file: revalidated on every load by its
// ETag (a new binary serves new files at once), gzip when the client
// takes it.
func serveAsset(ctx *fasthttp.RequestCtx, a *ui.Asset) {
	h := &ctx.Response.Header
	h.Set(fasthttp.HeaderETag, a.ETag)
	h.Set(fasthttp.HeaderCacheControl, "no-cache")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Content-Security-Policy", uiSecurityPolicy)
	h.Add(fasthttp.HeaderVary, fasthttp.HeaderAcceptEncoding)
	if inm := ctx.Request.Header.Peek(fasthttp.HeaderIfNoneMatch); len(inm) > 0 && bytes.Contains(inm, []byte(a.ETag)) {
		ctx.SetStatusCode(fasthttp.StatusNotModified)
		return
	}
	ctx.SetStatusCode(fasthttp.StatusOK)
	ctx.SetContentType(a.ContentType)
	if a.Gzip != nil && ctx.Request.Header.HasAcceptEncoding("gzip") {
		h.Set(fasthttp.HeaderContentEncoding, "gzip")
		ctx.Response.SetBodyRaw(a.Gzip)
		return
	}
	ctx.Response.SetBodyRaw(a.Body)
}
