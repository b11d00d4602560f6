package httpapi

import (
	"errors"
	"time"

	json "github.com/goccy/go-json"
	"github.com/valyala/fasthttp"

	"github.com/sediment/sediment/catalog"
	"github.com/sediment/sediment/engine"
	"github.com/sediment/sediment/event"
	"github.com/sediment/sediment/httpapi/ingest"
)

// The Elasticsearch bulk API, enough of it for log shippers (Filebeat,
// Logstash, Fluent Bit, Vector's elasticsearch sink) and Elasticsearch
// clients: POST /_bulk and /<index>/_bulk, and GET / (the version probe).
// Every answer carries X-Elastic-Product: Elasticsearch, which the
// official clients check before they read a response.

// esVersion is the Elasticsearch version Sediment answers as: clients
// choose their wire behaviour by the major version.
const esVersion = "8.17.0"

// esInfo is the body of GET /.
var esInfo = []byte(`{"name":"sediment","cluster_name":"sediment","cluster_uuid":"sediment",` +
	`"version":{"number":"` + esVersion + `","build_flavor":"default","build_type":"sediment","build_hash":"sediment",` +
	`"build_date":"2024-12-11T00:00:00.000Z","build_snapshot":false,"lucene_version":"9.12.0",` +
	`"minimum_wire_compatibility_version":"7.17.0","minimum_index_compatibility_version":"7.0.0"},` +
	`"tagline":"You Know, for Search"}`)

// esHeaders sets what Elasticsearch's clients check on every answer.
func esHeaders(ctx *fasthttp.RequestCtx) {
	ctx.Response.Header.Set("X-Elastic-Product", "Elasticsearch")
	ctx.SetContentType("application/json; charset=UTF-8")
}

// handleESInfo answers GET / with the cluster information Elasticsearch
// gives, so that clients that probe the version before sending accept the
// server. It needs no key: it reveals nothing but the version.
func (s *Server) handleESInfo(ctx *fasthttp.RequestCtx) {
	esHeaders(ctx)
	ctx.SetStatusCode(fasthttp.StatusOK)
	if ctx.IsHead() {
		ctx.Response.Header.SetContentLength(len(esInfo))
		ctx.Response.SkipBody = true
		return
	}
	ctx.Response.SetBodyRaw(esInfo)
}

// esError writes Elasticsearch's error shape:
// {"error":{"root_cause":[{type,reason}],"type":..,"reason":..},"status":N}.
func esError(ctx *fasthttp.RequestCtx, status int, typ, reason string) {
	type cause struct {
		Type   string `json:"type"`
		Reason string `json:"reason"`
	}
	b, _ := json.Marshal(struct {
		Error struct {
			RootCause []cause `json:"root_cause"`
			cause
		} `json:"error"`
		Status int `json:"status"`
	}{Error: struct {
		RootCause []cause `json:"root_cause"`
		cause
	}{[]cause{{typ, reason}}, cause{typ, reason}}, Status: status})
	esHeaders(ctx)
	ctx.SetStatusCode(status)
	ctx.SetBody(b)
}

// bulkItemResult is one entry of a bulk answer's items.
type bulkItemResult struct {
	Index       string       `json:"_index"`
	ID          string       `json:"_id"`
	Version     int          `json:"_version,omitempty"`
	Result      string       `json:"result,omitempty"`
	Shards      *bulkShards  `json:"_shards,omitempty"`
	SeqNo       *int64       `json:"_seq_no,omitempty"`
	PrimaryTerm int          `json:"_primary_term,omitempty"`
	Status      int          `json:"status"`
	Error       *bulkItemErr `json:"error,omitempty"`
}

type bulkShards struct {
	Total      int `json:"total"`
	Successful int `json:"successful"`
	Failed     int `json:"failed"`
}

type bulkItemErr struct {
	Type   string `json:"type"`
	Reason string `json:"reason"`
}

var oneShard = &bulkShards{Total: 1, Successful: 1}

// handleBulk serves the bulk API. index is the URL's index ("" for
// /_bulk). Each item's index names its source (by name or token; see
// sourcePicker for the request-wide overrides and the key's own source).
// The answer is 200 with per-item statuses: 201 created; 400 for an
// update, a delete or a document that does not parse, or a timestamp more
// than an hour ahead; 403 when the key may not write to the index's
// source; 404 when no source matches; 429 or 503 when the source's shard
// pushes back (retry those items). The whole request fails with 401
// without a valid key, 400 when an action line does not parse, 413, 415,
// and 429 with Retry-After when the server holds too many request bytes
// (body.go).
func (s *Server) handleBulk(ctx *fasthttp.RequestCtx, index string) {
	start := time.Now()
	tok := s.authenticateProtocol(ctx)
	if tok == nil {
		ctx.Response.Header.Set("WWW-Authenticate", `Basic realm="sediment", ApiKey`)
		esError(ctx, fasthttp.StatusUnauthorized, "security_exception",
			"missing or unknown key: send Authorization: ApiKey <key>, Bearer <key>, or basic auth with the key as password")
		return
	}
	picker, ok := s.newSourcePicker(ctx, tok)
	if !ok {
		esError(ctx, fasthttp.StatusUnauthorized, "security_exception", "the source named by the request does not exist or the key may not write to it")
		return
	}
	// The key and the source are checked: now the body may be read
	// (body.go: size and in-flight limits), its refusals answered as
	// Elasticsearch's.
	charge, refusal, ok := s.takeBody(ctx)
	if !ok {
		esRefusal(ctx, refusal)
		return
	}
	w := s.workers.get()
	defer s.workers.put(w)
	items, err := w.dec.DecodeBulk(ingest.Request{
		ContentType:     b2s(ctx.Request.Header.ContentType()),
		ContentEncoding: b2s(ctx.Request.Header.ContentEncoding()),
		Body:            ctx.PostBody(),
		Charge:          charge,
	}, index)
	if r, ok := decodeRefusal(err); ok {
		esRefusal(ctx, r)
		return
	}
	if err != nil {
		typ := "illegal_argument_exception"
		switch ingest.StatusCode(err) {
		case fasthttp.StatusRequestEntityTooLarge:
			typ = "content_too_long_exception"
		case fasthttp.StatusUnsupportedMediaType:
			typ = "media_type_header_exception"
		}
		esError(ctx, ingest.StatusCode(err), typ, err.Error())
		return
	}

	results := make([]bulkItemResult, len(items))
	var groups sourceGroups[int] // item positions per source
	refused := 0                 // items refused for good (not those to retry)
	for i := range items {
		it := &items[i]
		results[i] = bulkItemResult{Index: it.Index, ID: it.ID}
		if it.Failed() {
			results[i].fail(fasthttp.StatusBadRequest, it.ErrType, it.Reason)
			refused++
			continue
		}
		src := picker.pick(it.Index)
		if src == nil {
			refused++
			switch {
			case it.Index == "":
				results[i].fail(fasthttp.StatusBadRequest, "action_request_validation_exception", "index is missing")
			case picker.lookup(it.Index) != nil:
				results[i].fail(fasthttp.StatusForbidden, "security_exception", "the key may not write to the source of index ["+it.Index+"]")
			default:
				results[i].fail(fasthttp.StatusNotFound, "index_not_found_exception", "no such index ["+it.Index+"]: create a source of that name first")
			}
			continue
		}
		groups.add(src, i)
	}

	var raws []event.Value
	var fates []eventFate
	w.meter.start(routeIngestBulk, len(ctx.PostBody()), groups.total())
	for _, src := range groups.order {
		pos := groups.items[src]
		raws = raws[:0]
		for _, i := range pos {
			raws = append(raws, items[i].Event)
		}
		fates = append(fates[:0], make([]eventFate, len(raws))...)
		if err := s.store(w, src, raws, fates); err != nil {
			status, typ, reason := s.bulkAppendFailed(src, err)
			for _, i := range pos {
				results[i].fail(status, typ, reason)
			}
			continue
		}
		stored := 0
		for k, i := range pos {
			switch fates[k] {
			case fateFuture:
				results[i].fail(fasthttp.StatusBadRequest, "document_parsing_exception", "@timestamp is more than an hour in the future")
			default:
				// Stored, or dropped by the source's own drop_lql_string:
				// acknowledged, as on every ingest route.
				if fates[k] == fateStored {
					results[i].ID = w.storedID(stored)
					stored++
				}
				results[i].created()
			}
		}
	}

	failed := 0
	type entry map[string]*bulkItemResult
	out := make([]entry, len(items))
	for i := range items {
		if results[i].Error != nil {
			failed++
		}
		out[i] = entry{items[i].Action: &results[i]}
	}
	s.countDrops(nil, DropRejected, refused, "records refused by a protocol route, each answered in its response") // store counted future timestamps
	b, err := json.Marshal(struct {
		Took   int64   `json:"took"`
		Errors bool    `json:"errors"`
		Items  []entry `json:"items"`
	}{time.Since(start).Milliseconds(), failed > 0, out})
	if err != nil {
		esError(ctx, fasthttp.StatusInternalServerError, "exception", "encoding the answer failed")
		return
	}
	esHeaders(ctx)
	ctx.SetStatusCode(fasthttp.StatusOK)
	ctx.SetBody(b)
}

// esRefusal answers a body that cannot be had or held (body.go) as an
// Elasticsearch error: 413 content_too_long_exception, 429
// es_rejected_execution_exception with Retry-After (shippers retry it),
// 408 timeout_exception, 400 parse_exception.
func esRefusal(ctx *fasthttp.RequestCtx, r bodyRefusal) {
	typ := "parse_exception"
	switch r.Status {
	case fasthttp.StatusRequestEntityTooLarge:
		typ = "content_too_long_exception"
	case fasthttp.StatusTooManyRequests:
		typ = "es_rejected_execution_exception"
	case fasthttp.StatusRequestTimeout:
		typ = "timeout_exception"
	}
	if r.RetryAfter != "" {
		ctx.Response.Header.Set(fasthttp.HeaderRetryAfter, r.RetryAfter)
	}
	esError(ctx, r.Status, typ, r.Detail)
}

func (r *bulkItemResult) fail(status int, typ, reason string) {
	r.Status = status
	r.Error = &bulkItemErr{Type: typ, Reason: reason}
}

func (r *bulkItemResult) created() {
	var zero int64
	r.Status, r.Result, r.Version, r.Shards, r.SeqNo, r.PrimaryTerm = fasthttp.StatusCreated, "created", 1, oneShard, &zero, 1
}

// bulkAppendFailed maps an engine error to an item status: 429 and 503
// are retried by shippers.
func (s *Server) bulkAppendFailed(src *catalog.Source, err error) (int, string, string) {
	switch {
	case errors.Is(err, engine.ErrBackpressure):
		s.countRejected(src, rejectReason(err), err.Error())
		return fasthttp.StatusTooManyRequests, "es_rejected_execution_exception", "Buffer Full: Too Many Requests"
	case errors.Is(err, engine.ErrClosed):
		return fasthttp.StatusServiceUnavailable, "unavailable_shards_exception", "Service Unavailable"
	}
	s.log.Error("ingest append failed", "source_id", src.ID, "err", err)
	return fasthttp.StatusInternalServerError, "exception", "Internal Server Error"
}
