package ingest

import (
	"encoding/base64"
	"encoding/hex"
	"math"
	"slices"
	"strconv"
	"strings"

	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	logspb "go.opentelemetry.io/proto/otlp/logs/v1"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"github.com/sediment/sediment/event"
)

// OTLP/HTTP logs (POST /v1/logs): the body is an ExportLogsServiceRequest
// in protobuf or in OTLP's JSON encoding. It is decoded into
// logs/v1.LogsData, the official generated type whose wire and JSON forms
// are those of ExportLogsServiceRequest (both are `repeated ResourceLogs
// resource_logs = 1`, and the OTLP specification keeps them in step): the
// collector service package that holds the request type also pulls in gRPC,
// which Sediment does not serve.
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
// content type other than protobuf or JSON, 413 for a body over the limit,
// 400 (ErrMalformed) for a body that does not decode. Records that decode
// but cannot be stored are counted in Rejected rather than failing the
// request (OTLP's partial success).
//
// The result aliases the Decoder's buffers until the next decode.
func (d *Decoder) DecodeOTLPLogs(req Request) (OTLPLogs, error) {
	d.proto.reset()
	enc, ok := OTLPEncodingOf(req.ContentType)
	if !ok {
		return OTLPLogs{}, errorf(ErrUnsupportedContentType, "%q: OTLP/HTTP takes application/x-protobuf or application/json", req.ContentType)
	}
	body, err := d.decomp.decompress(req.Body, req.ContentEncoding, d.limit())
	if err != nil {
		return OTLPLogs{}, err
	}
	var data logspb.LogsData
	if enc == OTLPProtobuf {
		err = proto.Unmarshal(body, &data)
	} else {
		err = protojson.UnmarshalOptions{DiscardUnknown: true}.Unmarshal(body, &data)
	}
	if err != nil {
		return OTLPLogs{}, wrap(ErrMalformed, err, "OTLP logs request")
	}
	c := otlpConverter{d: d, jsonIDs: enc == OTLPJSON}
	var out OTLPLogs
	out.Resources = make([]OTLPResource, 0, len(data.ResourceLogs))
	for _, rl := range data.ResourceLogs {
		out.Resources = append(out.Resources, c.resource(rl, &out))
	}
	return out, nil
}

// limit is the body limit in force.
func (d *Decoder) limit() int {
	if d.MaxBodyBytes <= 0 {
		return DefaultMaxBodyBytes
	}
	return d.MaxBodyBytes
}

// otlpConverter turns OTLP messages into raw events.
type otlpConverter struct {
	d *Decoder
	// jsonIDs: trace and span ids came from OTLP/JSON, which writes them in
	// hex, while protojson reads bytes fields as base64 (see hexID).
	jsonIDs bool
}

func (c *otlpConverter) resource(rl *logspb.ResourceLogs, out *OTLPLogs) OTLPResource {
	var res OTLPResource
	var resAttrs event.Value
	resOK := true
	if r := rl.GetResource(); r != nil {
		for _, kv := range r.Attributes {
			if kv.GetKey() == "service.name" {
				res.ServiceName = kv.GetValue().GetStringValue()
			}
		}
		resAttrs, resOK = c.attributes(r.Attributes)
	}
	n := 0
	for _, sl := range rl.ScopeLogs {
		n += len(sl.GetLogRecords())
	}
	if !resOK {
		out.reject(n, "resource attributes nest deeper than "+strconv.Itoa(maxOTLPDepth)+" levels")
		return res
	}
	res.Events = make([]event.Value, 0, n)
	for _, sl := range rl.ScopeLogs {
		scope, ok := c.scope(sl.GetScope())
		if !ok {
			out.reject(len(sl.LogRecords), "scope attributes nest deeper than "+strconv.Itoa(maxOTLPDepth)+" levels")
			continue
		}
		for _, rec := range sl.LogRecords {
			ev, ok := c.record(rec, resAttrs, scope)
			if !ok {
				out.reject(1, "log record values nest deeper than "+strconv.Itoa(maxOTLPDepth)+" levels")
				continue
			}
			res.Events = append(res.Events, ev)
		}
	}
	return res
}

func (l *OTLPLogs) reject(n int, reason string) {
	if n == 0 {
		return
	}
	if l.Rejected == 0 {
		l.Reason = reason
	}
	l.Rejected += n
}

// scope returns {name, version, attributes}, or an empty Value.
func (c *otlpConverter) scope(s *commonpb.InstrumentationScope) (event.Value, bool) {
	if s == nil {
		return event.Value{}, true
	}
	kids := c.d.proto.vals.alloc(4)
	if s.Name != "" {
		kids = append(kids, event.Member("name", event.StringValue(s.Name)))
	}
	if s.Version != "" {
		kids = append(kids, event.Member("version", event.StringValue(s.Version)))
	}
	if len(s.Attributes) > 0 {
		attrs, ok := c.attributes(s.Attributes)
		if !ok {
			return event.Value{}, false
		}
		kids = append(kids, event.Member("attributes", attrs))
	}
	if s.DroppedAttributesCount > 0 {
		kids = append(kids, event.Member("dropped_attributes_count", event.IntValue(int64(s.DroppedAttributesCount))))
	}
	if len(kids) == 0 {
		return event.Value{}, true
	}
	return event.ObjectValue(kids...), true
}

// record builds one event. resource and scope are shared by the events of
// their group (Normalize does not modify its input).
func (c *otlpConverter) record(r *logspb.LogRecord, resource, scope event.Value) (event.Value, bool) {
	meta := c.d.proto.vals.alloc(14)
	if lvl := otlpLevel(r.SeverityNumber, r.SeverityText); lvl != "" {
		meta = append(meta, event.Member("level", event.StringValue(lvl)))
	}
	if r.SeverityNumber != 0 {
		meta = append(meta, event.Member("severity_number", event.IntValue(int64(r.SeverityNumber))))
	}
	if r.SeverityText != "" {
		meta = append(meta, event.Member("severity_text", event.StringValue(r.SeverityText)))
	}
	if r.EventName != "" {
		meta = append(meta, event.Member("event_name", event.StringValue(r.EventName)))
	}
	if len(r.TraceId) > 0 {
		meta = append(meta, event.Member("trace_id", event.StringValue(c.hexID(r.TraceId, 16))))
	}
	if len(r.SpanId) > 0 {
		meta = append(meta, event.Member("span_id", event.StringValue(c.hexID(r.SpanId, 8))))
	}
	if f := r.Flags & uint32(logspb.LogRecordFlags_LOG_RECORD_FLAGS_TRACE_FLAGS_MASK); f != 0 {
		meta = append(meta, event.Member("trace_flags", event.IntValue(int64(f))))
	}
	var message event.Value
	hasMessage := false
	if r.Body != nil {
		body, ok := c.any(r.Body, 0)
		if !ok {
			return event.Value{}, false
		}
		switch body.Kind {
		case event.Null:
		case event.String:
			message, hasMessage = body, true
		default:
			message = event.StringValue(c.d.proto.text(func(b []byte) []byte { return event.AppendJSON(b, body) }))
			hasMessage = true
			if body.Kind == event.Object || body.Kind == event.Array {
				meta = append(meta, event.Member("body", body))
			}
		}
	}
	if len(r.Attributes) > 0 {
		attrs, ok := c.attributes(r.Attributes)
		if !ok {
			return event.Value{}, false
		}
		meta = append(meta, event.Member("attributes", attrs))
	}
	if r.DroppedAttributesCount > 0 {
		meta = append(meta, event.Member("dropped_attributes_count", event.IntValue(int64(r.DroppedAttributesCount))))
	}
	if resource.Kind == event.Object {
		meta = append(meta, event.Member("resource", resource))
	}
	if scope.Kind == event.Object {
		meta = append(meta, event.Member("scope", scope))
	}

	ev := c.d.proto.vals.alloc(3)
	if hasMessage {
		ev = append(ev, event.Member("event_message", message))
	}
	ts := r.TimeUnixNano
	if ts == 0 {
		ts = r.ObservedTimeUnixNano
	}
	if v, ok := c.d.nanosTimestamp(ts); ok {
		ev = append(ev, event.Member("timestamp", v))
	}
	ev = append(ev, event.Member("metadata", event.ObjectValue(meta...)))
	return event.ObjectValue(ev...), true
}

// hexID returns an id in lower-case hex. OTLP/JSON carries trace and span
// ids as hex strings where protobuf's JSON mapping expects base64; protojson
// decodes such a string as base64, which for 32 (16) hex digits gives 24
// (12) bytes exactly, and re-encoding them as base64 gives the string back.
// A sender that used base64 gives ids of the right size, kept as hex.
func (c *otlpConverter) hexID(b []byte, size int) string {
	if c.jsonIDs && len(b) == size*3/2 {
		return c.d.proto.text(func(dst []byte) []byte {
			start := len(dst)
			dst = base64.StdEncoding.AppendEncode(dst, b)
			for i := start; i < len(dst); i++ {
				if 'A' <= dst[i] && dst[i] <= 'F' {
					dst[i] += 'a' - 'A'
				}
			}
			return dst
		})
	}
	return c.d.proto.text(func(dst []byte) []byte { return hex.AppendEncode(dst, b) })
}

// attributes converts a key/value list into an object, nesting dotted keys.
func (c *otlpConverter) attributes(kvs []*commonpb.KeyValue) (event.Value, bool) {
	kids := c.d.proto.vals.alloc(len(kvs))
	dotted := false
	for _, kv := range kvs {
		v, ok := c.any(kv.GetValue(), 1)
		if !ok {
			return event.Value{}, false
		}
		kids = append(kids, event.Member(kv.GetKey(), v))
		dotted = dotted || strings.IndexByte(kv.GetKey(), '.') >= 0
	}
	if dotted {
		kids = nestDotted(kids)
	}
	return event.ObjectValue(kids...), true
}

// any converts an AnyValue; false when it nests deeper than maxOTLPDepth.
func (c *otlpConverter) any(v *commonpb.AnyValue, depth int) (event.Value, bool) {
	if depth > maxOTLPDepth {
		return event.Value{}, false
	}
	switch x := v.GetValue().(type) {
	case *commonpb.AnyValue_StringValue:
		return event.StringValue(x.StringValue), true
	case *commonpb.AnyValue_BoolValue:
		return event.BoolValue(x.BoolValue), true
	case *commonpb.AnyValue_IntValue:
		return event.IntValue(x.IntValue), true
	case *commonpb.AnyValue_DoubleValue:
		f := x.DoubleValue
		if math.IsNaN(f) || math.IsInf(f, 0) {
			// JSON has no such numbers; keep them as text.
			return event.StringValue(strconv.FormatFloat(f, 'g', -1, 64)), true
		}
		return event.FloatValue(f), true
	case *commonpb.AnyValue_BytesValue:
		return event.StringValue(c.d.proto.text(func(b []byte) []byte {
			return base64.StdEncoding.AppendEncode(b, x.BytesValue)
		})), true
	case *commonpb.AnyValue_ArrayValue:
		vals := x.ArrayValue.GetValues()
		kids := c.d.proto.vals.alloc(len(vals))
		for _, e := range vals {
			ev, ok := c.any(e, depth+1)
			if !ok {
				return event.Value{}, false
			}
			kids = append(kids, ev)
		}
		return event.ArrayValue(kids...), true
	case *commonpb.AnyValue_KvlistValue:
		kvs := x.KvlistValue.GetValues()
		kids := c.d.proto.vals.alloc(len(kvs))
		for _, kv := range kvs {
			ev, ok := c.any(kv.GetValue(), depth+1)
			if !ok {
				return event.Value{}, false
			}
			kids = append(kids, event.Member(kv.GetKey(), ev))
		}
		return event.ObjectValue(kids...), true
	}
	// Unset, or a dictionary reference (string_value_strindex), which only
	// OTLP profiles use.
	return event.NullValue(), true
}

// otlpLevel maps OTLP's severity to the syslog-style level names Sediment's
// other routes and LQL's level ranges use.
func otlpLevel(n logspb.SeverityNumber, text string) string {
	switch {
	case n >= 1 && n <= 8:
		return "debug"
	case n >= 9 && n <= 12:
		return "info"
	case n >= 13 && n <= 16:
		return "warning"
	case n >= 17 && n <= 20:
		return "error"
	case n >= 21 && n <= 24:
		return "critical"
	}
	return levelName(text)
}

// levelName normalises a free-text level ("WARN", "Error", "fatal") to the
// syslog-style names; unknown names are lower-cased.
func levelName(text string) string {
	if text == "" {
		return ""
	}
	switch l := strings.ToLower(strings.TrimSpace(text)); l {
	case "trace", "debug", "dbg", "verbose":
		return "debug"
	case "info", "information", "informational":
		return "info"
	case "warn", "warning":
		return "warning"
	case "err", "error":
		return "error"
	case "fatal", "crit", "critical":
		return "critical"
	case "emerg", "panic":
		return "emergency"
	default:
		return l
	}
}

// nestDotted turns members with dotted keys into nested objects:
// {"a.b":1,"a.c":2,"d":3} → {"a":{"b":1,"c":2},"d":3}. Members are
// ordered by key, segment by segment. A key with an empty segment ("a..b",
// ".a") stays flat, and so does a dotted key whose prefix is also a plain
// member ("a" and "a.b": the second stays "a.b"), so nothing is lost.
func nestDotted(members []event.Value) []event.Value {
	type entry struct {
		segs []string
		v    event.Value
	}
	entries := make([]entry, 0, len(members))
	for _, m := range members {
		segs := []string{m.Key}
		if n := strings.Count(m.Key, "."); n > 0 && n < maxKeySegments {
			if s := strings.Split(m.Key, "."); !slices.Contains(s, "") {
				segs = s
			}
		}
		entries = append(entries, entry{segs, m})
	}
	slices.SortStableFunc(entries, func(a, b entry) int { return slices.Compare(a.segs, b.segs) })

	var build func(es []entry, level int) []event.Value
	build = func(es []entry, level int) []event.Value {
		out := make([]event.Value, 0, len(es))
		for i := 0; i < len(es); {
			seg := es[i].segs[level]
			j := i + 1
			for j < len(es) && es[j].segs[level] == seg {
				j++
			}
			group := es[i:j]
			i = j
			// Sorting puts an entry that ends here before the longer ones.
			if len(group[0].segs) == level+1 {
				for _, e := range group {
					if len(e.segs) == level+1 {
						out = append(out, event.Member(seg, e.v))
					} else {
						out = append(out, event.Member(strings.Join(e.segs[level:], "."), e.v))
					}
				}
				continue
			}
			out = append(out, event.Member(seg, event.ObjectValue(build(group, level+1)...)))
		}
		return out
	}
	return build(entries, 0)
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
