package ingest

import (
	"bytes"
	"fmt"
	"iter"
	"strings"
	"time"

	"github.com/sediment/sediment/event"
)

// Request is what the decoder needs of an ingest request.
type Request struct {
	Route           Route
	ContentType     string // the Content-Type header as sent
	ContentEncoding string // the Content-Encoding header as sent
	Body            []byte
	// Headers yields every request header (name, value); only RouteCloudEvent
	// reads it, and it may be nil. fasthttp's RequestHeader.All fits.
	Headers iter.Seq2[[]byte, []byte]
	// Charge, when not nil, is asked for memory before the decoder holds
	// it beyond Body: the decompressed body as it is produced (every
	// route), and what an OTLP request decodes to, before it is decoded
	// (see DecodeOTLPLogs). It returns false to refuse, and the decode
	// fails with ErrBudget. What it granted stays granted: the caller
	// gives it back once it is done with the result.
	Charge func(n int64) bool
	// Stream lets Decode leave a JSON array body to be parsed element by
	// element as Decoder.Each goes, so that the events of a large body are
	// never all held at once. The caller must then read the events with
	// Each (Result.Events is empty).
	Stream bool
}

// BodyParams are the source-selecting members found at the top level of a
// JSON object body (the older pino transport's {"batch":[...],"source":...},
// the Cloudflare worker's {"source":...,"log_entry":...}). Logflare merges
// them with the query string; the caller decides precedence. Only string
// values are reported.
type BodyParams struct {
	Source         string
	Collection     string
	SourceName     string
	CollectionName string
}

// Result is the outcome of decoding one request body.
type Result struct {
	// Events are the raw events, ready for event.Normalize.
	Events []event.Value
	// Params are the source-selecting members of the body, if any.
	Params BodyParams
	// Skipped counts lines that could not be parsed and were dropped
	// (logplex/syslog and Cloudflare NDJSON); the request still succeeds.
	Skipped int

	// stream is a JSON array body Decode left for Each to parse, of route
	// streamRoute (Request.Stream).
	stream      []byte
	streamRoute Route
}

// Decoder decodes ingest bodies. It reuses its parser, decompressors and
// buffers across calls, so a warm Decoder allocates little.
//
// Lifetime: the Values of a Result alias the request body and the Decoder's
// buffers. They stay valid until the next Decode on the same Decoder and as
// long as Request.Body is unchanged; Clone (or normalise and let the engine
// copy) whatever must outlive that.
//
// A Decoder is not safe for concurrent use; keep one per worker.
type Decoder struct {
	// MaxBodyBytes caps the (decompressed) body; 0 means DefaultMaxBodyBytes.
	MaxBodyBytes int
	// MaxDecodedBytes caps the memory an OTLP request may take once
	// decoded, as DecodeOTLPLogs computes it before decoding; 0 means
	// DecodedBytesPerBodyByte times the body limit. Past it the request
	// fails with ErrTooLarge.
	MaxDecodedBytes int64
	// Now is the clock that gives RFC 3164 syslog timestamps their year
	// (default time.Now).
	Now func() time.Time

	parser  event.Parser
	decomp  decompressor
	events  []event.Value
	scratch []byte
	proto   protocolState // OTLP, Loki, Elasticsearch bulk and syslog decoders
	rfc3164 syslog3164
}

// RetainedBytes returns about how much memory the Decoder keeps for reuse
// (its decompression buffer and scratch), for pools that bound it.
func (d *Decoder) RetainedBytes() int {
	return cap(d.decomp.buf) + cap(d.scratch)
}

// NewDecoder returns a Decoder with the default body limit.
func NewDecoder() *Decoder { return &Decoder{} }

type contentKind uint8

const (
	contentUnsupported contentKind = iota
	contentJSON
	contentNDJSON
	contentLogplex
)

// classify maps a Content-Type to how the body is framed. A missing content
// type is read as JSON (Logflare would not parse such a body; being lenient
// costs nothing). application/csp-report is JSON (Logflare rewrites it), and
// on /cloudflare text/plain is NDJSON (Logflare rewrites Logpush's
// "text/plain; charset=utf-8").
func classify(contentType string, route Route) contentKind {
	media := strings.TrimSpace(contentType)
	if i := strings.IndexByte(media, ';'); i >= 0 {
		media = strings.TrimSpace(media[:i])
	}
	media = strings.ToLower(media)
	switch {
	case media == "":
		return contentJSON
	case media == "application/json" || strings.HasSuffix(media, "+json") || media == "application/csp-report":
		return contentJSON
	case media == "application/x-ndjson":
		return contentNDJSON
	case media == "application/logplex-1":
		return contentLogplex
	case media == "text/plain" && route == RouteCloudflare:
		return contentNDJSON
	}
	return contentUnsupported
}

// Decode turns one request body into raw events for its route. See the
// package documentation for the errors.
func (d *Decoder) Decode(req Request) (Result, error) {
	d.parser.Reset()
	clear(d.events)
	d.events = d.events[:0]

	limit := d.MaxBodyBytes
	if limit <= 0 {
		limit = DefaultMaxBodyBytes
	}
	// Content type first: a 415 needs no decompression.
	kind := classify(req.ContentType, req.Route)
	syslogRoute := req.Route == RouteLogplex || req.Route == RouteSyslogs
	if kind == contentUnsupported || syslogRoute != (kind == contentLogplex) {
		return Result{}, errorf(ErrUnsupportedContentType, "%q on route %s: send Content-Type: %s", req.ContentType, req.Route, acceptedContentTypes(req.Route))
	}
	body, err := d.decomp.decompress(req.Body, req.ContentEncoding, limit, req.Charge)
	if err != nil {
		return Result{}, err
	}

	var res Result
	if req.Stream && kind == contentJSON && streams(req.Route) && firstByte(body) == '[' {
		res.stream, res.streamRoute = body, req.Route
		return res, nil
	}
	switch req.Route {
	case RouteLogplex, RouteSyslogs:
		dialect := DialectHeroku
		if req.Route == RouteSyslogs {
			dialect = DialectRFC5424
		}
		res.Skipped = d.syslog(body, dialect)
	default:
		if kind == contentNDJSON {
			err = d.ndjson(body, req.Route, &res)
		} else {
			err = d.json(body, req.Route, &res)
		}
		if err != nil {
			return Result{}, err
		}
		if req.Route == RouteCloudEvent {
			d.mergeCloudEvent(req.Headers)
		}
	}
	res.Events = d.events
	return res, nil
}

// streams reports the routes whose array bodies Each can parse element
// by element: those whose processor takes each element on its own.
func streams(r Route) bool {
	switch r {
	case RouteCreate, RouteCloudflare, RouteJSON, RouteBrowserReports, RouteVector:
		return true
	}
	return false
}

// firstByte returns the first byte of b that is not JSON whitespace, or 0.
func firstByte(b []byte) byte {
	for _, c := range b {
		if c != ' ' && c != '\t' && c != '\r' && c != '\n' {
			return c
		}
	}
	return 0
}

// Each calls fn with every raw event of res, in order. Events of a body
// that Decode left to stream (Request.Stream) are parsed as Each goes,
// one array element at a time: each is valid only during its call, the
// Decoder reusing its memory for the next. Their errors are those Decode
// would have given for the body (ErrMalformed, ErrBadShape), found only
// as Each gets there, so fn may have been called for earlier events:
// callers act on the events once Each returns nil. An error of fn stops
// Each and is returned as it is.
func (d *Decoder) Each(res *Result, fn func(raw event.Value) error) error {
	return d.EachWith(res, nil, fn)
}

// EachWith is Each with take tried first on each element of a streamed
// body whose route stores its elements as they are (create, cloudflare):
// take reads the raw event at p's position without a Value (say with
// p.TranscodeEvent) and returns true, or leaves p where it was and
// returns false, and the element goes to fn as a Value. A nil take is
// Each.
func (d *Decoder) EachWith(res *Result, take func(p *event.Parser) bool, fn func(raw event.Value) error) error {
	if res.stream == nil {
		for i := range res.Events {
			if err := fn(res.Events[i]); err != nil {
				return err
			}
		}
		return nil
	}
	var fnErr, shapeErr error
	var try func(i int) bool
	if take != nil && (res.streamRoute == RouteCreate || res.streamRoute == RouteCloudflare) {
		try = func(int) bool {
			// Once the body is refused, elements are only checked.
			return shapeErr == nil && take(&d.parser)
		}
	}
	err := d.parser.ParseArrayWith(res.stream, try, func(i int, v event.Value) error {
		if shapeErr != nil {
			return nil // the body is refused; only a syntax error can change how
		}
		clear(d.events)
		d.events = d.events[:0]
		if shapeErr = d.addElement(res.streamRoute, i, v); shapeErr != nil {
			return nil
		}
		for j := range d.events {
			if fnErr = fn(d.events[j]); fnErr != nil {
				return fnErr
			}
		}
		return nil
	})
	clear(d.events)
	d.events = d.events[:0]
	switch {
	case fnErr != nil:
		return fnErr
	case err != nil:
		return wrap(ErrMalformed, err, "json body")
	}
	return shapeErr
}

// addElement runs the processor of route on element i of a top-level
// array, as json does for the whole array.
func (d *Decoder) addElement(route Route, i int, v event.Value) error {
	if v.Kind != event.Object {
		if route == RouteCreate || route == RouteCloudflare {
			return errorf(ErrBadShape, "batch element %d is %v, not an object", i, v.Kind)
		}
		return errorf(ErrBadShape, "array element %d is %v, not an object", i, v.Kind)
	}
	switch route {
	case RouteJSON, RouteBrowserReports:
		return d.addGeneric(v)
	case RouteVector:
		return d.addVector(v)
	}
	d.events = append(d.events, v)
	return nil
}

// json decodes a JSON body.
func (d *Decoder) json(body []byte, route Route, res *Result) error {
	if len(bytes.TrimSpace(body)) == 0 {
		return nil // Logflare reads an empty body as {}; there is nothing to ingest
	}
	v, err := d.parser.Parse(body)
	if err != nil {
		return wrap(ErrMalformed, err, "json body")
	}
	if v.Kind == event.Object {
		res.Params = bodyParams(&v)
	}
	switch route {
	case RouteJSON, RouteBrowserReports:
		return d.eachObject(v, d.addGeneric)
	case RouteVector:
		return d.eachObject(v, d.addVector)
	case RouteGithub:
		if v.Kind != event.Object {
			return errorf(ErrBadShape, "github payload must be a JSON object, not %v", v.Kind)
		}
		return d.addGithub(v)
	case RouteElixirLogger:
		if b := v.Get("batch"); b == nil || b.Kind != event.Array {
			return errorf(ErrBadShape, `body must be an object with a "batch" array`)
		}
		return d.addRaw(v, route)
	}
	return d.addRaw(v, route) // create, cloud-event, cloudflare
}

// ndjson decodes an NDJSON body: every line is one event (for the create
// processor a line holding {"batch":[...]} contributes its elements).
// Logflare's NDJSON parser wraps lines in a batch, so lines keep their
// "timestamp" and "id". A malformed line fails the request, except on
// /cloudflare, where it is skipped and counted.
func (d *Decoder) ndjson(body []byte, route Route, res *Result) error {
	if route == RouteCloudflare {
		res.Skipped = d.cloudflareLines(body)
		return nil
	}
	var err error
	event.EachLine(body, func(lineNo, offset int, line []byte) bool {
		var v event.Value
		v, err = d.parser.ParseLine(line, lineNo, offset)
		if err != nil {
			err = wrap(ErrMalformed, err, "ndjson body")
			return false
		}
		switch route {
		case RouteJSON, RouteBrowserReports:
			err = d.eachObject(v, d.addGeneric)
		case RouteVector:
			err = d.eachObject(v, d.addVector)
		case RouteGithub:
			err = d.eachObject(v, d.addGithub)
		default:
			if b := v.Get("batch"); b != nil && b.Kind == event.Array {
				err = d.addBatch(b.Kids)
			} else {
				err = d.addBatch([]event.Value{v})
			}
		}
		if err != nil {
			err = fmt.Errorf("ndjson line %d: %w", lineNo, err)
			return false
		}
		return true
	})
	return err
}

// eachObject calls add for v if it is an object, or for each element of v
// if it is an array of objects.
func (d *Decoder) eachObject(v event.Value, add func(event.Value) error) error {
	switch v.Kind {
	case event.Object:
		return add(v)
	case event.Array:
		for i := range v.Kids {
			if v.Kids[i].Kind != event.Object {
				return errorf(ErrBadShape, "array element %d is %v, not an object", i, v.Kids[i].Kind)
			}
			if err := add(v.Kids[i]); err != nil {
				return err
			}
		}
		return nil
	}
	return errorf(ErrBadShape, "body must be a JSON object or array, not %v", v.Kind)
}

// bodyParams reads the source-selecting members of a top-level object.
func bodyParams(v *event.Value) BodyParams {
	var p BodyParams
	for i := range v.Kids {
		m := &v.Kids[i]
		if m.Kind != event.String {
			continue
		}
		switch m.Key {
		case "source":
			p.Source = m.Str
		case "collection":
			p.Collection = m.Str
		case "source_name":
			p.SourceName = m.Str
		case "collection_name":
			p.CollectionName = m.Str
		}
	}
	return p
}
