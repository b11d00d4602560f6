package httpapi

import (
	"context"
	"errors"
	"strconv"
	"strings"

	json "github.com/goccy/go-json"
	"github.com/valyala/fasthttp"

	"github.com/sediment/sediment/catalog"
	"github.com/sediment/sediment/engine"
	"github.com/sediment/sediment/query/search"
)

// A search with full=true returns whole events instead of chosen columns:
// every field of each matching event, metadata included, in the event's
// own shape (nested objects as objects, timestamp in microseconds), as
// /event, /recent and the live tail show them:
//
//	GET /api/sources/:token_or_name/search?lql=...&full=true
//	200 {"result": [event, ...], "chart": [...], "omitted_fields": [...]}
//
// Events are bigger than columns, so limit is at most maxFullSearchLimit.
// The LQL may filter and chart but not select (s: clauses are 400: every
// field is returned). Top-level fields whose names LQL cannot write are
// not fetched and are named in "omitted_fields", as for /event.

// maxFullSearchLimit bounds the whole events one search returns.
const maxFullSearchLimit = 1000

// fullParam reads the full parameter: true/1 or false/0 (default false).
func fullParam(params map[string]string) (bool, error) {
	switch v := strings.ToLower(strings.TrimSpace(params["full"])); v {
	case "", "false", "0":
		return false, nil
	case "true", "1":
		return true, nil
	default:
		return false, errors.New("full must be true or false, got " + strconv.Quote(v))
	}
}

// checkFullSearch checks what a full=true search asks before it takes a
// query slot.
func checkFullSearch(req search.Request) error {
	if req.Limit > maxFullSearchLimit {
		return errors.New("with full=true, limit must be from 1 to " + strconv.Itoa(maxFullSearchLimit))
	}
	return nil
}

// searchFull runs a full=true search (see above) in the query slot the
// caller took; qctx is the query's context.
func (s *Server) searchFull(ctx *fasthttp.RequestCtx, qctx context.Context, shard *engine.Shard, src *catalog.Source, req search.Request) {
	sn := shard.Snapshot()
	defer sn.Release()
	tbl := sn.Table(src.Name)

	// The request's own LQL first: its errors are the user's to see as
	// written, and it must not select.
	p, err := s.search.Prepare(qctx, tbl, req)
	if err == nil && len(p.Query.Selects) > 0 {
		sendError(ctx, fasthttp.StatusBadRequest, "full=true returns every field of the events: remove the s: clauses")
		return
	}
	var res *search.Response
	names, arrays := eventShape(sn)
	sel, omitted := selectAllLQL(names)
	if err == nil {
		all := req
		all.LQL = req.LQL + " " + sel
		if p, err = s.search.Prepare(qctx, tbl, all); err == nil {
			res, err = s.search.Run(qctx, tbl, p)
		}
	}
	var reqErr *search.RequestError
	switch {
	case errors.As(err, &reqErr):
		sendRequestError(ctx, err)
		return
	case err != nil:
		if errors.Is(err, context.DeadlineExceeded) {
			err = errTimeout
		}
		sendError(ctx, fasthttp.StatusOK, strings.TrimSpace(err.Error()))
		return
	}
	events, err := plainEvents(res.Events.AppendJSON(nil), arrays)
	if err != nil {
		s.log.Error("decode a full search's rows", "err", err)
		sendStatic(ctx, fasthttp.StatusInternalServerError, bodyInternal)
		return
	}
	out := map[string]any{"result": events}
	if res.Chart != nil {
		out["chart"] = json.RawMessage(res.Chart.AppendJSON(nil))
	}
	if len(omitted) > 0 {
		out["omitted_fields"] = omitted
	}
	sendJSON(ctx, fasthttp.StatusOK, out)
}
