package httpapi

import (
	"bufio"
	"crypto/subtle"
	"encoding/json"

	"github.com/valyala/fasthttp"

	"github.com/sediment/sediment/httpapi/ingest"
)

// Routes and refusals of a node that is one of several sharing an object
// store (docs/scale.md): the ingest nodes' internal route a query node
// asks for the events they have not published, and a query node's
// refusal of events.

// UnsealedPath and ClusterKeyHeader are the internal route and its key's
// header; remote.UnsealedPath and remote.ClusterKeyHeader, which query
// nodes use, are the same (this package stays below remote's concerns;
// TestClusterMinIO goes through both).
const (
	UnsealedPath     = "/internal/v1/unsealed"
	ClusterKeyHeader = "X-Sediment-Cluster-Key"
)

// handleUnsealed answers POST /internal/v1/unsealed (UnsealedPath)
// for a query node that presents the cluster key: the binary answer
// Options.Unsealed writes (remote.WriteUnsealed), streamed. 404 when the
// node has no such route (no Options.Unsealed), 401 without the key.
func (s *Server) handleUnsealed(ctx *fasthttp.RequestCtx) {
	if s.opts.Unsealed == nil || s.opts.ClusterKey == "" {
		sendStatic(ctx, fasthttp.StatusNotFound, bodyNotFound)
		return
	}
	key := ctx.Request.Header.Peek(ClusterKeyHeader)
	if subtle.ConstantTimeCompare(key, []byte(s.opts.ClusterKey)) != 1 {
		sendStatic(ctx, fasthttp.StatusUnauthorized, bodyUnauthorized)
		return
	}
	var req struct {
		Source string   `json:"source"`
		Listed []string `json:"listed"`
	}
	if err := json.Unmarshal(ctx.PostBody(), &req); err != nil || req.Source == "" {
		sendError(ctx, fasthttp.StatusBadRequest, "want {\"source\": token, \"listed\": [segment names]}")
		return
	}
	ctx.SetContentType("application/octet-stream")
	ctx.SetStatusCode(fasthttp.StatusOK)
	unsealed := s.opts.Unsealed
	ctx.SetBodyStreamWriter(func(w *bufio.Writer) {
		// An error cuts the stream short: the query node finds no end
		// marker and reports this node as not answering.
		if err := unsealed(w, req.Source, req.Listed); err != nil {
			s.log.Warn("answering a query node's request for unsealed events failed", "source_token", req.Source, "err", err)
		}
	})
}

// refuseIngest answers an ingest request on a query node (Options.QueryOnly)
// and reports whether it did: 503 with Retry-After, so that a client a
// load balancer misdirected keeps its events and retries rather than
// dropping them.
func (s *Server) refuseIngest(ctx *fasthttp.RequestCtx, method, path string) bool {
	if !s.opts.QueryOnly || (method != fasthttp.MethodPost && method != fasthttp.MethodPut) {
		return false
	}
	_, logflare := ingest.RouteForPath(path)
	_, bulk := bulkIndex(path)
	if !logflare && !bulk && !otlpPath(path) && path != "/loki/api/v1/push" && path != "/api/prom/push" {
		return false
	}
	ctx.Response.Header.Set("Retry-After", "5")
	sendError(ctx, fasthttp.StatusServiceUnavailable, "this node only answers queries (--role query): send events to an ingest node")
	return true
}
