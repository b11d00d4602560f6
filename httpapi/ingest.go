package httpapi

import (
	"errors"

	"github.com/valyala/fasthttp"

	"github.com/sediment/sediment/catalog"
	"github.com/sediment/sediment/engine"
	"github.com/sediment/sediment/event"
	"github.com/sediment/sediment/httpapi/ingest"
)

// ingestWorker is the reusable state of one ingest request: the body
// decoder, the normaliser's arena and the event slice. Workers are pooled;
// a warm one allocates nothing per event.
type ingestWorker struct {
	dec    *ingest.Decoder
	norm   event.Normalizer
	events []event.Event
	msg    []byte      // scratch for custom event messages
	recent recentBatch // encoded events handed to the recent store
}

func newIngestWorker(maxBody int) *ingestWorker {
	d := ingest.NewDecoder()
	d.MaxBodyBytes = maxBody
	return &ingestWorker{dec: d}
}

// handleIngest serves every ingest route (logflare-compat §1.2):
// the key is checked before the body is read; then the body is decoded,
// the source chosen, events normalised, filtered and appended; 200
// {"message":"Logged!"} once they are durable.
func (s *Server) handleIngest(ctx *fasthttp.RequestCtx, route ingest.Route) {
	tok := s.authenticate(ctx)
	if tok == nil {
		sendStatic(ctx, fasthttp.StatusUnauthorized, bodyUnauthorized)
		return
	}

	w := s.workers.Get().(*ingestWorker)
	defer s.workers.Put(w)

	req := ingest.Request{
		Route:           route,
		ContentType:     b2s(ctx.Request.Header.ContentType()),
		ContentEncoding: b2s(ctx.Request.Header.ContentEncoding()),
		Body:            ctx.PostBody(),
	}
	if route == ingest.RouteCloudEvent {
		req.Headers = ctx.Request.Header.All()
	}
	res, err := w.dec.Decode(req)
	if err != nil {
		sendDetail(ctx, ingest.StatusCode(err), err.Error())
		return
	}

	src := s.selectSource(ctx, res.Params)
	if src == nil {
		s.noteUnknownSource(ctx, res.Params)
	}
	if src == nil || !tok.CanIngest(src.ID) {
		sendStatic(ctx, fasthttp.StatusUnauthorized, bodyUnauthorized)
		return
	}
	if err := s.store(w, src, res.Events, nil); err != nil {
		s.appendFailed(ctx, src, err)
		return
	}
	s.stats.requests.Add(1)
	s.countDropped(src, dropUnparsed, res.Skipped)
	sendStatic(ctx, fasthttp.StatusOK, bodyLogged)
}

// appendFailed answers an engine error: 429 with retry-after when the
// shard pushes back, 503 when shutting down, 500 otherwise.
func (s *Server) appendFailed(ctx *fasthttp.RequestCtx, src *catalog.Source, err error) {
	switch {
	case errors.Is(err, engine.ErrBackpressure):
		ctx.Response.Header.Set(fasthttp.HeaderRetryAfter, "3")
		sendStatic(ctx, fasthttp.StatusTooManyRequests, bodyBufferFull)
	case errors.Is(err, engine.ErrClosed):
		sendStatic(ctx, fasthttp.StatusServiceUnavailable, bodyUnavailable)
	default:
		s.log.Error("ingest append failed", "source_id", src.ID, "err", err)
		sendStatic(ctx, fasthttp.StatusInternalServerError, bodyInternal)
	}
}

// selectSource picks the request's source (logflare-compat §1.3). Params
// are the query string merged with the body's top-level members, the body
// winning as in Phoenix. A name (source_name, alias collection_name) is
// looked up by name; otherwise a token (source, alias collection, or the
// x-source / x-collection header) must be a UUID of a source. nil when
// nothing matches.
func (s *Server) selectSource(ctx *fasthttp.RequestCtx, bp ingest.BodyParams) *catalog.Source {
	args := ctx.QueryArgs()
	pick := func(body, key string) []byte {
		if body != "" {
			return []byte(body)
		}
		return args.Peek(key)
	}
	name := pick(bp.SourceName, "source_name")
	if len(name) == 0 {
		name = pick(bp.CollectionName, "collection_name")
	}
	if len(name) > 0 {
		return s.cat.SourceByName(b2s(name))
	}
	tok := pick(bp.Source, "source")
	if len(tok) == 0 {
		tok = pick(bp.Collection, "collection")
	}
	if len(tok) == 0 {
		tok = ctx.Request.Header.Peek("X-Source")
	}
	if len(tok) == 0 {
		tok = ctx.Request.Header.Peek("X-Collection")
	}
	if len(tok) == 0 {
		return nil
	}
	if src := s.cat.SourceByToken(b2s(tok)); src != nil {
		return src
	}
	// Not in canonical form (upper case, braces, urn:uuid:...).
	if canon, ok := catalog.CanonicalToken(b2s(tok)); ok {
		return s.cat.SourceByToken(canon)
	}
	return nil
}
