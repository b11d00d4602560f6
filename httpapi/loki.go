package httpapi

import (
	"github.com/valyala/fasthttp"

	"github.com/sediment/sediment/event"
	"github.com/sediment/sediment/httpapi/ingest"
)

// handleLokiPush serves POST /loki/api/v1/push. Every stream must find a
// source (see sourcePicker; the stream label "source" is the protocol's
// hint) before anything is stored, so that a request is stored whole or
// not at all: 204 No Content once every entry is durable, as Loki answers;
// 401 without a key or when a stream has no source; 400, 413, 415 for a
// body that does not decode; 429 and 503 as on every ingest route (429
// also when the server holds too many request bytes, body.go).
// Entries dropped by the source's rules (a timestamp more than an hour
// ahead, drop_lql_string) are counted, as on /api/logs.
func (s *Server) handleLokiPush(ctx *fasthttp.RequestCtx) {
	tok := s.authenticateProtocol(ctx)
	if tok == nil {
		sendStatic(ctx, fasthttp.StatusUnauthorized, bodyUnauthorized)
		return
	}
	picker, ok := s.newSourcePicker(ctx, tok)
	if !ok {
		sendStatic(ctx, fasthttp.StatusUnauthorized, bodyUnauthorized)
		return
	}
	// The key and the source are checked: now the body may be read
	// (body.go: size and in-flight limits).
	charge, refusal, ok := s.takeBody(ctx)
	if !ok {
		refusal.send(ctx)
		return
	}
	w := s.workers.get()
	defer s.workers.put(w)
	push, err := w.dec.DecodeLokiPush(ingest.Request{
		ContentType:     b2s(ctx.Request.Header.ContentType()),
		ContentEncoding: b2s(ctx.Request.Header.ContentEncoding()),
		Body:            ctx.PostBody(),
		Charge:          charge,
	})
	if err != nil {
		sendDecodeError(ctx, err)
		return
	}
	var groups sourceGroups[event.Value]
	for i := range push.Streams {
		st := &push.Streams[i]
		if len(st.Events) == 0 {
			continue
		}
		src := picker.pick(st.SourceLabel)
		if src == nil {
			sendError(ctx, fasthttp.StatusUnauthorized, "Unauthorized: no source for stream "+st.Labels+
				": name it with the X-Source header or a source=\"<name>\" label, or use a key scoped to one source")
			return
		}
		groups.add(src, st.Events...)
	}
	w.meter.start(routeIngestLoki, len(ctx.PostBody()), groups.total())
	for _, src := range groups.order {
		if err := s.store(w, src, groups.items[src], nil); err != nil {
			s.appendFailed(ctx, src, err)
			return
		}
	}
	sendNoContent(ctx)
}
