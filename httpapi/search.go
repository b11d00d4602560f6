package httpapi

import (
	"errors"
	"strconv"
	"strings"

	"github.com/valyala/fasthttp"

	"github.com/sediment/sediment/catalog"
	"github.com/sediment/sediment/engine"
	"github.com/sediment/sediment/query/search"
)

// handleSearch serves GET and POST /api/sources/:token_or_name/search: an
// LQL search of one source (query/search does the work). Parameters, in
// the query string or, for a POST, a JSON (or form) body:
//
//   - lql: the query (blank matches everything);
//   - from, to: an inclusive time range, ISO-8601 or unix microseconds (a
//     date alone as `to` runs to the end of that day);
//   - limit: events to return, 1 to 10,000 (default 100);
//   - full: true returns whole events, not columns (searchfull.go).
//
// The answer is 200 {"result": [events, newest first], "chart": [buckets],
// "warnings": [...]} ("chart" only when the LQL has c: clauses, "warnings"
// only when the answer misses stored data set aside as damaged); 401 {"error":"Unauthorized"}
// without a key that may query (scope private or query) or for an unknown
// source; 400 {"error": msg} for LQL that does not parse or does not fit
// the source's schema, and for bad parameters; 200 {"error": msg} when the
// query fails, as query endpoints do.
func (s *Server) handleSearch(ctx *fasthttp.RequestCtx, tokenOrName string) {
	setCORS(ctx, corsEndpoints)
	src := s.querySource(ctx, tokenOrName)
	if src == nil || !s.readBody(ctx) {
		return
	}
	params, err := collectParams(ctx, "token_or_name", tokenOrName, false)
	if err != nil {
		sendError(ctx, fasthttp.StatusBadRequest, err.Error())
		return
	}
	req, err := searchRequest(params)
	if err != nil {
		sendError(ctx, fasthttp.StatusBadRequest, err.Error())
		return
	}
	full, err := fullParam(params)
	if err == nil && full {
		err = checkFullSearch(req)
	}
	if err != nil {
		sendError(ctx, fasthttp.StatusBadRequest, err.Error())
		return
	}
	shard, err := s.eng.Shard(src.Token)
	if err != nil {
		s.shardFailed(ctx, src, err)
		return
	}
	qctx, done := s.startQuery(ctx)
	if qctx == nil {
		return
	}
	defer done()
	if full {
		s.searchFull(ctx, qctx, shard, src, req) // searchfull.go
		return
	}
	res, err := s.search.Search(qctx, shard, src.Name, req)
	var reqErr *search.RequestError
	switch {
	case errors.As(err, &reqErr):
		sendRequestError(ctx, err)
	case err != nil:
		sendError(ctx, fasthttp.StatusOK, strings.TrimSpace(err.Error()))
	default:
		sendRunnerBody(ctx, res.AppendJSON(make([]byte, 0, 4096)))
		res.Release()
	}
}

// querySource authenticates a search or tail request and finds its source:
// a UUID is a source token, anything else a source name. It answers 401
// and returns nil when the key may not query (scopes private and query
// may) or there is no such source, so that the answer does not tell which.
func (s *Server) querySource(ctx *fasthttp.RequestCtx, tokenOrName string) *catalog.Source {
	tok := s.authenticate(ctx)
	if tok == nil || !(tok.HasScope(catalog.ScopePrivate) || tok.HasScope(catalog.ScopeQuery)) {
		sendStatic(ctx, fasthttp.StatusUnauthorized, bodyUnauthorized)
		return nil
	}
	var src *catalog.Source
	if canon, ok := catalog.CanonicalToken(tokenOrName); ok {
		src = s.cat.SourceByToken(canon)
	} else {
		src = s.cat.SourceByName(tokenOrName)
	}
	if src == nil {
		sendStatic(ctx, fasthttp.StatusUnauthorized, bodyUnauthorized)
	}
	return src
}

// shardFailed answers a search or tail whose source's shard could not be
// had: 503 while the engine closes, else 500 (logged).
func (s *Server) shardFailed(ctx *fasthttp.RequestCtx, src *catalog.Source, err error) {
	if errors.Is(err, engine.ErrClosed) {
		sendStatic(ctx, fasthttp.StatusServiceUnavailable, bodyUnavailable)
		return
	}
	s.log.Error("open the shard of a source", "source_id", src.ID, "err", err)
	sendStatic(ctx, fasthttp.StatusInternalServerError, bodyInternal)
}

// searchRequest reads a search's parameters.
func searchRequest(params map[string]string) (search.Request, error) {
	req := search.Request{LQL: params["lql"]}
	if v := strings.TrimSpace(params["limit"]); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > search.MaxLimit {
			return req, errors.New("limit must be an integer from 1 to " + strconv.Itoa(search.MaxLimit) + ", got " + strconv.Quote(v))
		}
		req.Limit = n
	}
	for _, b := range []struct {
		name     string
		dst      **int64
		endOfDay bool
	}{{"from", &req.From, false}, {"to", &req.To, true}} {
		v := params[b.name]
		if strings.TrimSpace(v) == "" {
			continue
		}
		us, err := search.ParseTime(v, nil, b.endOfDay)
		if err != nil {
			return req, errors.New(b.name + ": " + err.Error())
		}
		*b.dst = &us
	}
	return req, nil
}
