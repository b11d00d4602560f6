package httpapi

import (
	"bytes"
	"encoding/base64"
	"strconv"
	"strings"

	"github.com/valyala/fasthttp"

	"github.com/sediment/sediment/catalog"
	"github.com/sediment/sediment/httpapi/ingest"
)

// What the routes of other ecosystems' protocols (OTLP, Loki push,
// Elasticsearch bulk; the syslog listener has its own) share: how a key is
// found in what their clients can send, and how a source is chosen.

// routeProtocols serves the protocol routes and reports whether path was
// one of them. path has the gateway prefix removed but not a trailing
// slash.
func (s *Server) routeProtocols(ctx *fasthttp.RequestCtx, method, path string) bool {
	post := method == fasthttp.MethodPost
	switch {
	case otlpPath(path):
		if !post {
			return false
		}
		s.handleOTLPLogs(ctx)
		return true
	case path == "/loki/api/v1/push" || path == "/api/prom/push":
		if !post {
			return false
		}
		s.handleLokiPush(ctx)
		return true
	}
	if index, ok := bulkIndex(path); ok && (post || method == fasthttp.MethodPut) {
		s.handleBulk(ctx, index)
		return true
	}
	return false
}

// otlpPath reports whether path is an OTLP/HTTP logs route.
func otlpPath(path string) bool {
	return path == "/v1/logs" || path == "/api/v1/logs" || path == "/otlp/v1/logs"
}

// sendBodyRefusal answers a body refusal made before any handler runs
// (handleExpect) in the shape of the route path names: OTLP's, Elasticsearch
// bulk's, or Logflare's.
func sendBodyRefusal(ctx *fasthttp.RequestCtx, path string, r bodyRefusal) {
	if otlpPath(path) {
		enc, ok := ingest.OTLPEncodingOf(b2s(ctx.Request.Header.ContentType()))
		if !ok {
			enc = ingest.OTLPProtobuf
		}
		otlpRefusal(ctx, enc, r)
		return
	}
	if _, ok := bulkIndex(path); ok {
		esRefusal(ctx, r)
		return
	}
	r.send(ctx)
}

// protocolKeys returns the keys a request may carry, most specific first:
// what every route reads (Authorization: Bearer, X-API-KEY, ?api_key=),
// then the forms clients of Elasticsearch and Loki send:
//
//	Authorization: ApiKey <key>                 (Elasticsearch clients' apiKey)
//	Authorization: ApiKey <base64(id:key)>      (an id/key pair: the key part)
//	Authorization: Basic <base64(user:key)>     (basic auth: the password, or
//	                                             the user name when there is none)
func protocolKeys(ctx *fasthttp.RequestCtx) [][]byte {
	if k := apiKey(ctx); len(k) > 0 {
		return [][]byte{k}
	}
	a := ctx.Request.Header.Peek(fasthttp.HeaderAuthorization)
	scheme, cred, ok := bytes.Cut(bytes.TrimSpace(a), []byte{' '})
	cred = bytes.TrimSpace(cred)
	if !ok || len(cred) == 0 {
		return nil
	}
	decoded, _ := base64.StdEncoding.AppendDecode(nil, cred)
	switch {
	case bytes.EqualFold(scheme, []byte("ApiKey")):
		keys := [][]byte{cred}
		if _, key, ok := bytes.Cut(decoded, []byte{':'}); ok && len(key) > 0 {
			keys = append(keys, key)
		}
		return keys
	case bytes.EqualFold(scheme, []byte("Basic")):
		user, pass, ok := bytes.Cut(decoded, []byte{':'})
		if !ok {
			return nil
		}
		var keys [][]byte
		if len(pass) > 0 {
			keys = append(keys, pass)
		}
		if len(user) > 0 {
			keys = append(keys, user)
		}
		return keys
	}
	return nil
}

// authenticateProtocol returns the access token of the request's key (see
// protocolKeys), or nil.
func (s *Server) authenticateProtocol(ctx *fasthttp.RequestCtx) *catalog.AccessToken {
	for _, k := range protocolKeys(ctx) {
		if tok := s.cat.Authenticate(b2s(k)); tok != nil {
			return tok
		}
	}
	return nil
}

// sourcePicker chooses the source of each group of events of a protocol
// request, in this order:
//
//  1. the request names one: ?source=<token>, ?source_name=<name>, or the
//     header X-Source (a token or a name) or X-Source-Name;
//  2. the protocol's own hint for the group names one (by name or token):
//     OTLP's service.name resource attribute, a Loki stream's "source"
//     label, an Elasticsearch index;
//  3. the key's own source, when the key may ingest into exactly one
//     (scope ingest:source:<id>).
//
// A source the key may not ingest into is never chosen: a group whose hint
// names one is refused rather than sent to the key's own source.
type sourcePicker struct {
	s        *Server
	tok      *catalog.AccessToken
	explicit *catalog.Source // from the request, when it names one
	fallback *catalog.Source // the key's own source, or nil
}

// newSourcePicker reads the request's choice; ok is false when the request
// names a source that does not exist or that the key may not write (the
// caller answers 401, as for every ingest route).
func (s *Server) newSourcePicker(ctx *fasthttp.RequestCtx, tok *catalog.AccessToken) (p sourcePicker, ok bool) {
	p = sourcePicker{s: s, tok: tok}
	named := false
	for _, q := range [...]string{"source", "source_name", "collection", "collection_name"} {
		named = named || len(ctx.QueryArgs().Peek(q)) > 0
	}
	for _, h := range [...]string{"X-Source", "X-Collection", "X-Source-Name"} {
		named = named || len(ctx.Request.Header.Peek(h)) > 0
	}
	if named {
		src := s.selectSource(ctx, ingest.BodyParams{})
		if src == nil {
			for _, h := range [...]string{"X-Source-Name", "X-Source"} {
				if name := ctx.Request.Header.Peek(h); len(name) > 0 {
					src = s.cat.SourceByName(b2s(name))
					break
				}
			}
		}
		if src == nil || !tok.CanIngest(src.ID) {
			return p, false
		}
		p.explicit = src
		return p, true
	}
	if id, ok := singleSourceScope(tok); ok {
		if src := s.cat.SourceByID(id); src != nil && tok.CanIngest(src.ID) {
			p.fallback = src
		}
	}
	return p, true
}

// pick returns the source for a group whose protocol hint is hint ("" for
// none), or nil when there is none the key may write.
func (p *sourcePicker) pick(hint string) *catalog.Source {
	if p.explicit != nil {
		return p.explicit
	}
	if src := p.lookup(hint); src != nil {
		if p.tok.CanIngest(src.ID) {
			return src
		}
		return nil
	}
	return p.fallback
}

// lookup finds a source by name, else by token.
func (p *sourcePicker) lookup(nameOrToken string) *catalog.Source {
	if nameOrToken == "" {
		return nil
	}
	if src := p.s.cat.SourceByName(nameOrToken); src != nil {
		return src
	}
	if src := p.s.cat.SourceByToken(nameOrToken); src != nil {
		return src
	}
	if canon, ok := catalog.CanonicalToken(nameOrToken); ok {
		return p.s.cat.SourceByToken(canon)
	}
	return nil
}

// singleSourceScope returns the source id of a key that may ingest into
// one source only (its scopes are ingest:source:<id> or
// ingest:collection:<id> for one id, with no broader ingest scope).
func singleSourceScope(tok *catalog.AccessToken) (int64, bool) {
	var id int64
	for _, sc := range tok.Scopes {
		rest, ok := strings.CutPrefix(sc, "ingest:source:")
		if !ok {
			rest, ok = strings.CutPrefix(sc, "ingest:collection:")
		}
		if !ok {
			if sc == catalog.ScopePrivate || sc == catalog.ScopePublic || sc == catalog.ScopeIngest {
				return 0, false
			}
			continue
		}
		n, err := strconv.ParseInt(rest, 10, 64)
		if err != nil || (id != 0 && n != id) {
			return 0, false
		}
		id = n
	}
	return id, id != 0
}

// sourceGroups gathers events by source, keeping the order in which each
// source first appears.
type sourceGroups[T any] struct {
	order []*catalog.Source
	items map[*catalog.Source][]T
}

func (g *sourceGroups[T]) add(src *catalog.Source, items ...T) {
	if g.items == nil {
		g.items = make(map[*catalog.Source][]T)
	}
	if _, ok := g.items[src]; !ok {
		g.order = append(g.order, src)
	}
	g.items[src] = append(g.items[src], items...)
}

// bulkIndex reports whether path is a bulk route, /_bulk or
// /<index>/_bulk, and returns the index ("" for /_bulk).
func bulkIndex(path string) (string, bool) {
	path = strings.TrimSuffix(path, "/")
	rest, ok := strings.CutSuffix(path, "/_bulk")
	if !ok {
		return "", false
	}
	if rest == "" {
		return "", true
	}
	index := strings.TrimPrefix(rest, "/")
	if index == "" || strings.Contains(index, "/") {
		return "", false
	}
	return index, true
}
