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
	dec  *ingest.Decoder
	norm event.Normalizer
	// batch is the events of the request being stored, encoded for the
	// engine batchEng (see batchFor).
	batch    *engine.Batch
	batchEng *engine.Engine
	idDec    event.EventDecoder // reads ids back from batch (storedID)
	// retainedBytes is what the worker's buffers held when it was last
	// returned to the pool (workers.go).
	retainedBytes int
	msg           []byte      // scratch for custom event messages
	recent        recentBatch // encoded events handed to the recent store
	meter         ingestMeter // the request's route and bytes, for store's counts
}

func newIngestWorker(maxBody int) *ingestWorker {
	d := ingest.NewDecoder()
	d.MaxBodyBytes = maxBody
	return &ingestWorker{dec: d}
}

// handleIngest serves every ingest route (docs/compat/logflare.md §3.2): the key
// (and the source, when the query string or a header names it) is checked
// before the body is read; then the body is read and decoded, the source
// chosen, events normalised, filtered and appended; 200
// {"message":"Logged!"} once they are durable. The in-flight budget
// counts the body and what it takes decompressed (body.go). Events the request carried
// but that are not stored are counted per source and reason (drops.go).
func (s *Server) handleIngest(ctx *fasthttp.RequestCtx, route ingest.Route) {
	tok := s.checkIngestHeaders(ctx)
	if tok == nil {
		sendStatic(ctx, fasthttp.StatusUnauthorized, bodyUnauthorized)
		return
	}
	charge, refusal, ok := s.takeBody(ctx)
	if !ok {
		refusal.send(ctx)
		return
	}

	w := s.workers.get()
	defer s.workers.put(w)

	req := ingest.Request{
		Route:           route,
		ContentType:     b2s(ctx.Request.Header.ContentType()),
		ContentEncoding: b2s(ctx.Request.Header.ContentEncoding()),
		Body:            ctx.PostBody(),
		Charge:          charge,
		// An array body is parsed as its events are stored (storeEach).
		Stream: true,
	}
	if route == ingest.RouteCloudEvent {
		req.Headers = ctx.Request.Header.All()
	}
	res, err := w.dec.Decode(req)
	if err != nil {
		sendDecodeError(ctx, err)
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
	// One store for the whole body: the meter gives it every body byte.
	w.meter.start(ingestRouteName(route), len(ctx.PostBody()), 0)
	n, err := s.storeEach(w, src, len(req.Body), func(fn func(event.Value) error, take func(*event.Parser) bool) error {
		if err := w.dec.EachWith(&res, take, fn); err != nil {
			return err // its message may quote the body: keep it
		}
		// Every event is encoded into the worker's batch now, which holds
		// about as much again as the body: give the body's buffer back
		// before waiting for the commit (an fsync with sync acks) rather
		// than after, so that requests waiting on the log do not each hold
		// both. What the in-flight budget charged stays charged until the
		// handler returns, and now stands for the batch.
		releaseRequestBody(ctx)
		return nil
	}, nil)
	var derr *decodeError
	switch {
	case errors.As(err, &derr):
		sendDecodeError(ctx, derr.err)
		return
	case err != nil:
		s.appendFailed(ctx, src, err)
		return
	}
	s.countDrops(src, DropUnparseableLine, res.Skipped, "lines of route "+route.String()+" that did not parse")
	if n == 0 && res.Skipped == 0 {
		s.countDrops(src, DropEmptyBatch, 1, "a request with no event (empty body or empty batch)")
	}
	sendStatic(ctx, fasthttp.StatusOK, bodyLogged)
}

// sendDecodeError answers a body that did not decode, in Logflare's
// shapes: 400, 413 or 415 {"errors":{"detail": ...}}, or 429 with
// Retry-After when the in-flight budget refused what decoding it holds.
func sendDecodeError(ctx *fasthttp.RequestCtx, err error) {
	if r, ok := decodeRefusal(err); ok {
		r.send(ctx)
		return
	}
	sendDetail(ctx, ingest.StatusCode(err), err.Error())
}

// checkIngestHeaders checks what an ingest request's headers and URL
// allow to check before its body is read: the key must be known and allowed
// to ingest somewhere, and a source the query string or a header names must
// exist and take the key. It returns the key's token, or nil when the
// request is to be answered 401.
//
// A source named in the body wins over the query string (docs/compat/logflare.md
// §3.3), and is checked once the body is read. Logflare would accept a
// request whose query string names an unknown or forbidden source when its
// body names a good one; here such a request is refused from the headers:
// the price of never reading bodies of requests we would refuse.
func (s *Server) checkIngestHeaders(ctx *fasthttp.RequestCtx) *catalog.AccessToken {
	tok := s.authenticate(ctx)
	if tok == nil || !tok.CanIngestSomewhere() {
		return nil
	}
	if src, named := s.sourceNamedInURL(ctx); named && (src == nil || !tok.CanIngest(src.ID)) {
		if src == nil {
			s.noteUnknownSource(ctx, ingest.BodyParams{})
		}
		return nil
	}
	return tok
}

// sourceNamedInURL is selectSource before the body is read: the source the
// query string or the headers name, and whether they name one.
func (s *Server) sourceNamedInURL(ctx *fasthttp.RequestCtx) (src *catalog.Source, named bool) {
	args := ctx.QueryArgs()
	for _, k := range [...]string{"source_name", "collection_name", "source", "collection"} {
		if len(args.Peek(k)) > 0 {
			named = true
		}
	}
	for _, h := range [...]string{"X-Source", "X-Collection"} {
		if len(ctx.Request.Header.Peek(h)) > 0 {
			named = true
		}
	}
	if !named {
		return nil, false
	}
	return s.selectSource(ctx, ingest.BodyParams{}), true
}

// appendFailed answers an engine error: 429 with retry-after when the
// shard pushes back, 507 with retry-after while the disk is full (or below
// its free-space floor; the engine logs that once and /ready shows it),
// 503 when shutting down, when the source's log is damaged (read-only
// until repaired) or when replaying it at startup failed, 500 otherwise.
func (s *Server) appendFailed(ctx *fasthttp.RequestCtx, src *catalog.Source, err error) {
	switch {
	case errors.Is(err, engine.ErrBackpressure):
		s.countRejected(src, rejectReason(err), err.Error())
		ctx.Response.Header.Set(fasthttp.HeaderRetryAfter, "3")
		sendStatic(ctx, fasthttp.StatusTooManyRequests, bodyBufferFull)
	case errors.Is(err, engine.ErrDiskFull):
		ctx.Response.Header.Set(fasthttp.HeaderRetryAfter, diskFullRetryAfter)
		sendStatic(ctx, fasthttp.StatusInsufficientStorage, bodyDiskFull)
	case errors.Is(err, engine.ErrClosed):
		sendStatic(ctx, fasthttp.StatusServiceUnavailable, bodyUnavailable)
	case errors.Is(err, engine.ErrWALDamaged):
		// The source serves what it has but takes no events until an
		// operator repairs its log; GET /ready says what to run.
		sendError(ctx, fasthttp.StatusServiceUnavailable, "source "+src.Name+
			" is read-only: its write-ahead log is damaged and must be repaired by an operator (GET /ready names it); events are not accepted until then")
	case errors.Is(err, engine.ErrReplayFailed):
		// Replaying its log at startup hit an internal error: it serves its
		// segments, and a restart replays the kept log again.
		sendError(ctx, fasthttp.StatusServiceUnavailable, "source "+src.Name+
			" is read-only: replaying its write-ahead log at startup failed (an internal error, logged by the server; GET /ready names it); events are not accepted until the server restarts")
	default:
		s.log.Error("ingest append failed", "source_id", src.ID, "err", err)
		sendStatic(ctx, fasthttp.StatusInternalServerError, bodyInternal)
	}
}

// selectSource picks the request's source (docs/compat/logflare.md §3.3). Params
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

// releaseRequestBody returns the request body's buffer to fasthttp's pool:
// ctx.PostBody is empty from then on, and nothing may still read the bytes
// it returned before.
func releaseRequestBody(ctx *fasthttp.RequestCtx) { ctx.Request.ResetBody() }
