package httpapi

import (
	"errors"
	"strconv"

	"github.com/valyala/fasthttp"

	"github.com/sediment/sediment/engine"
	"github.com/sediment/sediment/event"
	"github.com/sediment/sediment/httpapi/ingest"
)

// gRPC status codes that OTLP/HTTP error bodies (google.rpc.Status) carry.
const (
	rpcInvalidArgument   = 3
	rpcDeadlineExceeded  = 4
	rpcResourceExhausted = 8
	rpcInternal          = 13
	rpcUnavailable       = 14
	rpcUnauthenticated   = 16
)

// handleOTLPLogs serves POST /v1/logs (OTLP/HTTP). It answers as the OTLP
// specification says: 200 with an ExportLogsServiceResponse in the
// request's encoding, whose partial_success counts the records not stored
// and says why; on failure a google.rpc.Status with 400 (bad body), 401
// (no key, or no source), 408, 413, 415, 429 (retry after 3 s when the
// storage pushes back, 1 s when the server holds too many request bytes)
// or 503.
func (s *Server) handleOTLPLogs(ctx *fasthttp.RequestCtx) {
	enc, ok := ingest.OTLPEncodingOf(b2s(ctx.Request.Header.ContentType()))
	if !ok {
		enc = ingest.OTLPProtobuf
	}
	tok := s.authenticateProtocol(ctx)
	if tok == nil {
		otlpStatus(ctx, enc, fasthttp.StatusUnauthorized, rpcUnauthenticated, "Unauthorized: send the key as Authorization: Bearer <key> or x-api-key")
		return
	}
	picker, ok := s.newSourcePicker(ctx, tok)
	if !ok {
		otlpStatus(ctx, enc, fasthttp.StatusUnauthorized, rpcUnauthenticated, "Unauthorized: the source named by the request does not exist or the key may not write to it")
		return
	}

	// The key and the source are checked: now the body may be read
	// (body.go: size and in-flight limits), its refusals answered as
	// OTLP's.
	charge, refusal, ok := s.takeBody(ctx)
	if !ok {
		otlpRefusal(ctx, enc, refusal)
		return
	}
	w := s.workers.get()
	defer s.workers.put(w)
	logs, err := w.dec.DecodeOTLPLogs(ingest.Request{
		ContentType:     b2s(ctx.Request.Header.ContentType()),
		ContentEncoding: b2s(ctx.Request.Header.ContentEncoding()),
		Body:            ctx.PostBody(),
		Charge:          charge,
	})
	if err != nil {
		if r, ok := decodeRefusal(err); ok {
			otlpRefusal(ctx, enc, r)
			return
		}
		status := ingest.StatusCode(err)
		code := rpcInvalidArgument
		if status == fasthttp.StatusRequestEntityTooLarge {
			code = rpcResourceExhausted
		}
		otlpStatus(ctx, enc, status, code, err.Error())
		return
	}

	rejected, reason := logs.Rejected, logs.Reason
	s.countDrops(nil, DropRejected, logs.Rejected, "records refused by a protocol route, each answered in its response")
	var groups sourceGroups[event.Value]
	unrouted := 0
	for i := range logs.Resources {
		r := &logs.Resources[i]
		if len(r.Events) == 0 {
			continue
		}
		src := picker.pick(r.ServiceName)
		if src == nil {
			unrouted += len(r.Events)
			if rejected == 0 {
				reason = "no source this key may write for service.name " + strconv.Quote(r.ServiceName) +
					": name the source with the X-Source header, create a source of that name, or use a key scoped to one source"
			}
			rejected += len(r.Events)
			continue
		}
		groups.add(src, r.Events...)
	}
	s.countDrops(nil, DropRejected, unrouted, "records refused by a protocol route, each answered in its response")
	if unrouted > 0 && len(groups.order) == 0 && logs.Rejected == 0 {
		otlpStatus(ctx, enc, fasthttp.StatusUnauthorized, rpcUnauthenticated, "Unauthorized: "+reason)
		return
	}

	var fates []eventFate
	w.meter.start(routeIngestOTLP, len(ctx.PostBody()), groups.total())
	for _, src := range groups.order {
		raws := groups.items[src]
		fates = append(fates[:0], make([]eventFate, len(raws))...)
		if err := s.store(w, src, raws, fates); err != nil {
			s.otlpAppendFailed(ctx, enc, src.ID, err)
			return
		}
		for _, f := range fates {
			if f == fateFuture {
				if rejected == 0 {
					reason = "timestamp more than an hour in the future"
				}
				rejected++
			}
		}
	}
	otlpExportResponse(ctx, enc, rejected, reason)
}

// otlpRefusal answers a body that cannot be had or held (body.go) as a
// google.rpc.Status in the request's encoding: 413 and 429 (with
// Retry-After, which exporters honour) RESOURCE_EXHAUSTED, 408
// DEADLINE_EXCEEDED, 400 INVALID_ARGUMENT.
func otlpRefusal(ctx *fasthttp.RequestCtx, enc ingest.OTLPEncoding, r bodyRefusal) {
	code := rpcInvalidArgument
	switch r.Status {
	case fasthttp.StatusRequestEntityTooLarge, fasthttp.StatusTooManyRequests:
		code = rpcResourceExhausted
	case fasthttp.StatusRequestTimeout:
		code = rpcDeadlineExceeded
	}
	if r.RetryAfter != "" {
		ctx.Response.Header.Set(fasthttp.HeaderRetryAfter, r.RetryAfter)
	}
	otlpStatus(ctx, enc, r.Status, code, r.Detail)
}

// otlpAppendFailed answers an engine error as OTLP asks: 429 or 503 (both
// retryable, with Retry-After) or 500.
func (s *Server) otlpAppendFailed(ctx *fasthttp.RequestCtx, enc ingest.OTLPEncoding, sourceID int64, err error) {
	switch {
	case errors.Is(err, engine.ErrBackpressure):
		s.countRejected(s.cat.SourceByID(sourceID), rejectReason(err), err.Error())
		ctx.Response.Header.Set(fasthttp.HeaderRetryAfter, "3")
		otlpStatus(ctx, enc, fasthttp.StatusTooManyRequests, rpcResourceExhausted, "Buffer Full: Too Many Requests")
	case errors.Is(err, engine.ErrClosed):
		ctx.Response.Header.Set(fasthttp.HeaderRetryAfter, "3")
		otlpStatus(ctx, enc, fasthttp.StatusServiceUnavailable, rpcUnavailable, "Service Unavailable")
	default:
		s.log.Error("ingest append failed", "source_id", sourceID, "err", err)
		otlpStatus(ctx, enc, fasthttp.StatusInternalServerError, rpcInternal, "Internal Server Error")
	}
}

// otlpExportResponse writes a 200 ExportLogsServiceResponse.
func otlpExportResponse(ctx *fasthttp.RequestCtx, enc ingest.OTLPEncoding, rejected int, reason string) {
	ctx.SetStatusCode(fasthttp.StatusOK)
	otlpContentType(ctx, enc)
	ctx.SetBody(ingest.AppendOTLPExportResponse(nil, enc, rejected, reason))
}

// otlpStatus writes a failure as a google.rpc.Status in the request's
// encoding.
func otlpStatus(ctx *fasthttp.RequestCtx, enc ingest.OTLPEncoding, httpStatus, code int, msg string) {
	ctx.SetStatusCode(httpStatus)
	otlpContentType(ctx, enc)
	ctx.SetBody(ingest.AppendOTLPStatus(nil, enc, code, msg))
}

func otlpContentType(ctx *fasthttp.RequestCtx, enc ingest.OTLPEncoding) {
	if enc == ingest.OTLPJSON {
		ctx.SetContentType("application/json")
	} else {
		ctx.SetContentType("application/x-protobuf")
	}
}
