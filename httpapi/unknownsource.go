package httpapi

import (
	"sync"

	"github.com/valyala/fasthttp"

	"github.com/sediment/sediment/httpapi/ingest"
)

// maxUnknownSourcesLogged bounds the names remembered by unknownSourceLog,
// so that clients sending ever new names cannot grow memory; past it no
// further unknown source is logged.
const maxUnknownSourcesLogged = 1024

// unknownSourceLog says once per source name (or token) why ingest
// answered 401: Logflare's body gives no reason, and a newcomer who has
// not created the source yet needs one.
type unknownSourceLog struct {
	mu   sync.Mutex
	seen map[string]struct{}
	full bool
}

// first reports whether name has not been reported before and there is
// room to remember it.
func (u *unknownSourceLog) first(name string) bool {
	u.mu.Lock()
	defer u.mu.Unlock()
	if _, ok := u.seen[name]; ok || u.full {
		return false
	}
	if u.seen == nil {
		u.seen = map[string]struct{}{}
	}
	if len(u.seen) >= maxUnknownSourcesLogged {
		u.full = true
		return false
	}
	u.seen[name] = struct{}{}
	return true
}

// noteUnknownSource logs, at info level and once per name, that an ingest
// request named a source that does not exist (the answer stays Logflare's
// 401 {"error":"Unauthorized"}).
func (s *Server) noteUnknownSource(ctx *fasthttp.RequestCtx, bp ingest.BodyParams) {
	args := ctx.QueryArgs()
	pick := func(body, key string) string {
		if body != "" {
			return body
		}
		return string(args.Peek(key))
	}
	kind, name := "source_name", pick(bp.SourceName, "source_name")
	if name == "" {
		kind, name = "collection_name", pick(bp.CollectionName, "collection_name")
	}
	if name == "" {
		kind, name = "source", pick(bp.Source, "source")
	}
	if name == "" {
		kind, name = "collection", pick(bp.Collection, "collection")
	}
	if name == "" {
		kind, name = "x-source", string(ctx.Request.Header.Peek("X-Source"))
	}
	if name == "" {
		kind, name = "x-collection", string(ctx.Request.Header.Peek("X-Collection"))
	}
	if name == "" {
		if s.unknownSources.first("\x00none") {
			s.log.Info("ingest refused (401): the request names no source; send ?source_name=<name> or ?source=<token>",
				"path", string(ctx.Path()))
		}
		return
	}
	if len(name) > 256 {
		name = name[:256]
	}
	if s.unknownSources.first(kind + "\x00" + name) {
		s.log.Info("ingest refused (401): no such source; create it first with POST /api/sources (private key), e.g. {\"name\": \"...\"}",
			kind, name, "path", string(ctx.Path()))
	}
}
