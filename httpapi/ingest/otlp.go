package ingest

import (
	"strconv"

	logspb "go.opentelemetry.io/proto/otlp/logs/v1"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/encoding/protowire"

	"github.com/sediment/sediment/event"
)

// OTLP/HTTP logs (POST /v1/logs): the body is an ExportLogsServiceRequest
// in protobuf or in OTLP's JSON encoding. It is decoded with the official
// generated types of logs/v1.LogsData, whose wire and JSON forms are those
// of ExportLogsServiceRequest (both are `repeated ResourceLogs
// resource_logs = 1`, and the OTLP specification keeps them in step): the
// collector service package that holds the request type also pulls in gRPC,
// which Sediment does not serve. OTLP/JSON is decoded into a LogsData;
// protobuf one Resource, InstrumentationScope and LogRecord at a time
// (otlpwire.go).
//
// One log record becomes one event:
//
//	event_message   the body: a string as is, any other value as its JSON
//	timestamp       time_unix_nano, else observed_time_unix_nano, else arrival
//	metadata.level  from severity_number (1–8 debug, 9–12 info, 13–16 warning,
//	                17–20 error, 21–24 critical), else from severity_text
//	metadata.severity_number, severity_text, event_name, trace_id and span_id
//	                (lower-case hex), trace_flags, dropped_attributes_count
//	metadata.body   the body when it is a map or an array
//	metadata.attributes           the record's attributes
//	metadata.resource             the resource's attributes
//	metadata.scope.{name,version,attributes}
//
// Attribute keys are split on dots into nested objects, so `service.name`
// is stored as metadata.resource.service.name (a key that is both a value
// and a prefix of another, such as "a" and "a.b", keeps the longer one
// flat). Absent and empty values are left out, as on every ingest route.

// OTLPEncoding is the encoding of an OTLP/HTTP body and its answer.
type OTLPEncoding uint8

const (
	// OTLPProtobuf is application/x-protobuf.
	OTLPProtobuf OTLPEncoding = iota + 1
	// OTLPJSON is application/json (OTLP's JSON encoding of protobuf).
	OTLPJSON
)

// OTLPEncodingOf returns the encoding a Content-Type names; ok is false
// for other types (OTLP answers 415).
func OTLPEncodingOf(contentType string) (enc OTLPEncoding, ok bool) {
	switch mediaType(contentType) {
	case "application/x-protobuf", "application/protobuf", "application/vnd.google.protobuf":
		return OTLPProtobuf, true
	case "application/json":
		return OTLPJSON, true
	}
	return 0, false
}

// OTLPLogs is a decoded OTLP logs export request.
type OTLPLogs struct {
	// Resources holds one entry per ResourceLogs, in request order.
	Resources []OTLPResource
	// Rejected counts the log records that could not become events;
	// Reason says why the first of them was rejected.
	Rejected int
	Reason   string
}

// OTLPResource is the events of one resource.
type OTLPResource struct {
	// ServiceName is the resource's service.name attribute, "" when absent.
	ServiceName string
	// Events are raw events ready for event.Normalize.
	Events []event.Value
}

// Records returns how many log records became events.
func (l *OTLPLogs) Records() int {
	n := 0
	for i := range l.Resources {
		n += len(l.Resources[i].Events)
	}
	return n
}

// maxOTLPDepth bounds how deeply an attribute or body value may nest: a
// record whose values nest deeper is rejected, so that the event stays
// within what the JSON encoder and parser accept (event.MaxDepth) with
// room for the levels the mapping adds above it (event, metadata, scope,
// attributes, and up to maxKeySegments for a dotted key).
const maxOTLPDepth = event.MaxDepth - 32

// maxKeySegments is the most dotted segments a key is nested into; a key
// with more stays flat.
const maxKeySegments = 16

// DecodeOTLPLogs decodes an OTLP/HTTP logs request body. Errors: 415 for a
// content type other than protobuf or JSON, 413 for a body over the limit
// or one that would take more than MaxDecodedBytes once decoded, 429
// (ErrBudget) when req.Charge refuses the memory, 400 (ErrMalformed) for a
// body that does not decode. Records that decode but cannot be stored are
// counted in Rejected rather than failing the request (OTLP's partial
// success).
//
// Memory: what a request takes once decoded is computed from its form
// before it is decoded (otlpcost.go), checked against MaxDecodedBytes and
// charged with req.Charge. Protobuf is decoded one log record at a time
// into the official generated types (otlpwire.go), so that the messages
// of one record are held at once, not the whole request's; OTLP/JSON is
// decoded whole by protojson, and each record is let go once converted.
//
// The result aliases the Decoder's buffers until the next decode.
func (d *Decoder) DecodeOTLPLogs(req Request) (OTLPLogs, error) {
	d.proto.reset()
	enc, ok := OTLPEncodingOf(req.ContentType)
	if !ok {
		return OTLPLogs{}, errorf(ErrUnsupportedContentType, "%q: OTLP/HTTP takes application/x-protobuf or application/json", req.ContentType)
	}
	body, err := d.decomp.decompress(req.Body, req.ContentEncoding, d.limit(), req.Charge)
	if err != nil {
		return OTLPLogs{}, err
	}
	if enc == OTLPProtobuf {
		return d.otlpProtobuf(body, req.Charge)
	}
	return d.otlpJSON(body, req.Charge)
}

// limit is the body limit in force.
func (d *Decoder) limit() int {
	if d.MaxBodyBytes <= 0 {
		return DefaultMaxBodyBytes
	}
	return d.MaxBodyBytes
}

// DecodedBytesPerBodyByte sets the default of Decoder.MaxDecodedBytes: this
// many times the body limit. A typical OTLP request takes 5 to 10 times its
// protobuf size once decoded into events; one made of empty records takes
// hundreds of times its size.
const DecodedBytesPerBodyByte = 16

// maxDecoded is the decoded-size limit in force.
func (d *Decoder) maxDecoded() int64 {
	if d.MaxDecodedBytes > 0 {
		return d.MaxDecodedBytes
	}
	return DecodedBytesPerBodyByte * int64(d.limit())
}

// chargeDecoded checks that a request whose decoding holds held bytes
// already may hold n more, and asks charge for them.
func (d *Decoder) chargeDecoded(held, n int64, charge func(int64) bool) error {
	if limit := d.maxDecoded(); held+n > limit {
		return errorf(ErrTooLarge, "the request takes about %d bytes of memory once decoded, over the limit of %d: send fewer log records per request", held+n, limit)
	}
	if charge != nil && !charge(n) {
		return errorf(ErrBudget, "no memory for the %d bytes the request takes once decoded now", held+n)
	}
	return nil
}

// otlpJSON decodes OTLP/JSON: protojson builds the whole message, whose
// size is bounded from the text and charged first; then what the events
// take is charged, and the records are converted and let go one by one.
func (d *Decoder) otlpJSON(body []byte, charge func(int64) bool) (OTLPLogs, error) {
	bound := otlpJSONMessageBound(body)
	if err := d.chargeDecoded(0, bound, charge); err != nil {
		return OTLPLogs{}, err
	}
	var data logspb.LogsData
	opts := protojson.UnmarshalOptions{DiscardUnknown: true}
	if err := opts.Unmarshal(body, &data); err != nil {
		return OTLPLogs{}, wrap(ErrMalformed, err, "OTLP logs request")
	}
	cost := otlpTreeCost(&data)
	if err := d.chargeDecoded(bound, cost.retained(), charge); err != nil {
		return OTLPLogs{}, err
	}
	c := otlpConverter{d: d, jsonIDs: true}
	out := OTLPLogs{Resources: make([]OTLPResource, 0, len(data.ResourceLogs))}
	for i, rl := range data.ResourceLogs {
		data.ResourceLogs[i] = nil
		out.Resources = append(out.Resources, c.resourceLogs(rl, &out))
	}
	return out, nil
}

// resourceLogs converts the records of one decoded ResourceLogs, letting
// each go once converted.
func (c *otlpConverter) resourceLogs(rl *logspb.ResourceLogs, out *OTLPLogs) OTLPResource {
	var res OTLPResource
	service, resAttrs, ok := c.resource(rl.GetResource())
	res.ServiceName = service
	n := 0
	for _, sl := range rl.ScopeLogs {
		n += len(sl.GetLogRecords())
	}
	if !ok {
		out.reject(n, reasonDeepResource)
		return res
	}
	res.Events = make([]event.Value, 0, n)
	for i, sl := range rl.ScopeLogs {
		rl.ScopeLogs[i] = nil
		scope, ok := c.scope(sl.GetScope())
		if !ok {
			out.reject(len(sl.LogRecords), reasonDeepScope)
			continue
		}
		for j, rec := range sl.LogRecords {
			sl.LogRecords[j] = nil
			ev, ok := c.record(rec, resAttrs, scope)
			if !ok {
				out.reject(1, reasonDeepRecord)
				continue
			}
			res.Events = append(res.Events, ev)
		}
	}
	return res
}

// AppendOTLPExportResponse appends an ExportLogsServiceResponse in enc:
// empty when nothing was rejected, else with partial_success
// {rejected_log_records = 1, error_message = 2} (message field 1). In
// JSON the int64 count is a string, as protobuf's JSON mapping writes it.
func AppendOTLPExportResponse(dst []byte, enc OTLPEncoding, rejected int, reason string) []byte {
	if enc == OTLPJSON {
		if rejected == 0 {
			return append(dst, "{}"...)
		}
		dst = append(dst, `{"partialSuccess":{"rejectedLogRecords":"`...)
		dst = strconv.AppendInt(dst, int64(rejected), 10)
		dst = append(dst, '"')
		if reason != "" {
			dst = append(dst, `,"errorMessage":`...)
			dst = event.AppendJSON(dst, event.StringValue(reason))
		}
		return append(dst, "}}"...)
	}
	if rejected == 0 {
		return dst
	}
	var ps []byte
	ps = protowire.AppendTag(ps, 1, protowire.VarintType)
	ps = protowire.AppendVarint(ps, uint64(rejected))
	if reason != "" {
		ps = protowire.AppendTag(ps, 2, protowire.BytesType)
		ps = protowire.AppendString(ps, reason)
	}
	dst = protowire.AppendTag(dst, 1, protowire.BytesType)
	return protowire.AppendBytes(dst, ps)
}

// AppendOTLPStatus appends a google.rpc.Status {code = 1, message = 2} in
// enc: the body of an OTLP/HTTP failure.
func AppendOTLPStatus(dst []byte, enc OTLPEncoding, code int, msg string) []byte {
	if enc == OTLPJSON {
		dst = append(dst, `{"code":`...)
		dst = strconv.AppendInt(dst, int64(code), 10)
		dst = append(dst, `,"message":`...)
		dst = event.AppendJSON(dst, event.StringValue(msg))
		return append(dst, '}')
	}
	dst = protowire.AppendTag(dst, 1, protowire.VarintType)
	dst = protowire.AppendVarint(dst, uint64(code))
	dst = protowire.AppendTag(dst, 2, protowire.BytesType)
	return protowire.AppendString(dst, msg)
}
