package httpapi

import (
	"bytes"
	"context"
	"errors"
	"sort"
	"strings"

	json "github.com/goccy/go-json"
	"github.com/valyala/fasthttp"

	"github.com/sediment/sediment/engine"
	"github.com/sediment/sediment/query/search"
)

// GET /api/sources/:token_or_name/event?id=<id>&timestamp=<µs> answers
// one stored event whole, the way the web explorer shows it when a search
// result is opened: 200 {"result": [event]} (several when events share the
// id and the timestamp; [] when there is none), each event as stored, with
// nested objects as plain JSON objects (not BigQuery's one-element arrays)
// and timestamp in unix microseconds, the shape of /recent and the live
// tail. The key must be one that may search (scope private or query), as
// for the search route; a missing id or timestamp is 400. The lookup runs
// a search, so it takes a query slot (admission.go): 429 with Retry-After
// when none is to be had. It is Sediment's own route: a search returns
// chosen columns only, and LQL has no `s:*` that would return everything.
//
// Top-level fields whose names LQL cannot write are not fetched; they are
// listed in "omitted_fields" so that the event is never shown incomplete
// without saying so.

// maxEventIDBytes bounds the id parameter (event ids are UUIDs).
const maxEventIDBytes = 256

// eventMatches bounds the events one lookup returns.
const eventMatches = 10

func (s *Server) handleEvent(ctx *fasthttp.RequestCtx, tokenOrName string) {
	setCORS(ctx, corsEndpoints)
	src := s.querySource(ctx, tokenOrName)
	if src == nil {
		return
	}
	args := ctx.QueryArgs()
	id := string(args.Peek("id"))
	if id == "" || len(id) > maxEventIDBytes {
		sendError(ctx, fasthttp.StatusBadRequest, "id must be an event id of 1 to 256 bytes")
		return
	}
	ts, err := search.ParseTime(string(args.Peek("timestamp")), nil, false)
	if err != nil {
		sendError(ctx, fasthttp.StatusBadRequest, "timestamp: "+err.Error())
		return
	}
	shard, err := s.eng.Shard(src.Token)
	if err != nil {
		s.shardFailed(ctx, src, err)
		return
	}
	// A lookup is a search (of one timestamp): it takes a query slot.
	qctx, done := s.startQuery(ctx)
	if qctx == nil {
		return
	}
	defer done()
	sn := shard.Snapshot()
	defer sn.Release()

	names, arrays := eventShape(sn)
	text, omitted := eventLQL(id, names)
	tbl := sn.Table(src.Name)
	req := search.Request{LQL: text, From: &ts, To: &ts, Limit: eventMatches}
	p, err := s.search.Prepare(qctx, tbl, req)
	var res *search.Response
	if err == nil {
		res, err = s.search.Run(qctx, tbl, p)
	}
	var reqErr *search.RequestError
	switch {
	case errors.As(err, &reqErr):
		sendError(ctx, fasthttp.StatusBadRequest, "id: "+err.Error()) // an id LQL cannot hold (not UTF-8)
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
		s.log.Error("decode an event lookup's rows", "err", err)
		sendStatic(ctx, fasthttp.StatusInternalServerError, bodyInternal)
		return
	}
	out := map[string]any{"result": events}
	if len(omitted) > 0 {
		out["omitted_fields"] = omitted
	}
	sendJSON(ctx, fasthttp.StatusOK, out)
}

// eventLQL writes the LQL of an event lookup: the id as a quoted value
// (so that no id is read as LQL), and an s: clause for each top-level
// field name besides the base ones. Names LQL cannot write are returned
// apart.
func eventLQL(id string, names []string) (text string, omitted []string) {
	var b strings.Builder
	b.WriteString(`id:"`)
	b.WriteString(strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(id))
	b.WriteString(`" `)
	sel, omitted := selectAllLQL(names)
	b.WriteString(sel)
	return b.String(), omitted
}

// selectAllLQL writes s: clauses selecting every top-level field of names,
// the base ones first. Names LQL cannot write are returned apart.
func selectAllLQL(names []string) (text string, omitted []string) {
	var b strings.Builder
	b.WriteString(`s:timestamp s:id s:event_message`)
	omitted = []string{}
	for _, n := range names {
		switch {
		case n == "timestamp" || n == "id" || n == "event_message":
		case !lqlName(n):
			omitted = append(omitted, n)
		default:
			b.WriteString(" s:" + n)
		}
	}
	return b.String(), omitted
}

// eventShape returns the top-level field names of a snapshot's events,
// sorted, and the paths (from the event's root) that hold arrays.
func eventShape(sn *engine.Snapshot) (names []string, arrays map[string]bool) {
	arrays = map[string]bool{}
	top := map[string]bool{}
	for path, f := range sn.Schema().Fields {
		name, _, _ := strings.Cut(path, ".")
		top[name] = true
		if f.Array {
			arrays[path] = true
		}
		for _, ef := range f.ElemFields {
			if ef.Array {
				arrays[path+"."+ef.Path] = true
			}
		}
	}
	names = make([]string, 0, len(top))
	for n := range top {
		names = append(names, n)
	}
	sort.Strings(names)
	return names, arrays
}

// plainEvents decodes search rows (a JSON array in BigQuery's shape) into
// events in their own shape (plainValue); fields an event does not have
// (null) are left out.
func plainEvents(rowsJSON []byte, arrays map[string]bool) ([]map[string]any, error) {
	var rows []map[string]any
	dec := json.NewDecoder(bytes.NewReader(rowsJSON))
	dec.UseNumber() // integers keep every digit
	if err := dec.Decode(&rows); err != nil {
		return nil, err
	}
	events := make([]map[string]any, 0, len(rows))
	for _, row := range rows {
		ev := make(map[string]any, len(row))
		for k, v := range row {
			if v != nil {
				ev[k] = plainValue(v, k, arrays)
			}
		}
		events = append(events, ev)
	}
	return events, nil
}

// errTimeout is the message of a query past its deadline, as the search
// route words it.
var errTimeout = errors.New("Query timed out. Retry your query or reduce the time range.")

// lqlName reports whether a top-level field name can be written in an s:
// clause.
func lqlName(n string) bool {
	if n == "" {
		return false
	}
	for _, r := range n {
		if !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}

// plainValue turns a value of a search row (BigQuery's shape: every nested
// object is a one-element array) back into the event's own shape. path is
// the value's dotted path from the event's root; arrays says which paths
// hold real arrays, which stay arrays.
func plainValue(v any, path string, arrays map[string]bool) any {
	switch x := v.(type) {
	case []any:
		if !arrays[path] && len(x) == 1 {
			if m, ok := x[0].(map[string]any); ok {
				return plainObject(m, path, arrays)
			}
		}
		for i, e := range x {
			if m, ok := e.(map[string]any); ok {
				x[i] = plainObject(m, path, arrays)
			}
		}
		return x
	case map[string]any:
		return plainObject(x, path, arrays)
	}
	return v
}

func plainObject(m map[string]any, path string, arrays map[string]bool) map[string]any {
	for k, v := range m {
		m[k] = plainValue(v, path+"."+k, arrays)
	}
	return m
}
