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
	resourcepb "go.opentelemetry.io/proto/otlp/resource/v1"

	"github.com/sediment/sediment/event"
)

// The conversion of decoded OTLP messages (the official generated types)
// into raw events, shared by the protobuf and JSON paths. It builds every
// member and element slice in the Decoder's value chunks, each of the
// length it needs, so that a record costs no allocation of its own: the
// strings of the events alias those of the messages, and the texts made
// here (hex ids, timestamps, JSON of structured bodies) go to the
// Decoder's text buffer.

// otlpConverter turns OTLP messages into raw events.
type otlpConverter struct {
	d *Decoder
	// jsonIDs: trace and span ids came from OTLP/JSON, which writes them in
	// hex, while protojson reads bytes fields as base64 (see hexID).
	jsonIDs bool
}

// resource returns a resource's service.name and its attributes as an
// object (an empty Value when r is nil); ok is false when they nest too
// deeply.
func (c *otlpConverter) resource(r *resourcepb.Resource) (service string, attrs event.Value, ok bool) {
	if r == nil {
		return "", event.Value{}, true
	}
	for _, kv := range r.Attributes {
		if kv.GetKey() == "service.name" {
			service = kv.GetValue().GetStringValue()
		}
	}
	attrs, ok = c.attributes(r.Attributes)
	return service, attrs, ok
}

// reject counts n records refused for reason (the first reason is kept).
func (l *OTLPLogs) reject(n int, reason string) {
	if n == 0 {
		return
	}
	if l.Rejected == 0 {
		l.Reason = reason
	}
	l.Rejected += n
}

// Reasons a record is rejected.
var (
	reasonDeepResource = "resource attributes nest deeper than " + strconv.Itoa(maxOTLPDepth) + " levels"
	reasonDeepScope    = "scope attributes nest deeper than " + strconv.Itoa(maxOTLPDepth) + " levels"
	reasonDeepRecord   = "log record values nest deeper than " + strconv.Itoa(maxOTLPDepth) + " levels"
)

// scope returns {name, version, attributes}, or an empty Value.
func (c *otlpConverter) scope(s *commonpb.InstrumentationScope) (event.Value, bool) {
	if s == nil {
		return event.Value{}, true
	}
	var buf [4]event.Value
	kids := buf[:0]
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
	return event.ObjectValue(c.d.proto.vals.copyOf(kids)...), true
}

// The most members a record's event (recordMembers) and its metadata
// (metadataMembers) have.
const (
	recordMembers   = 3
	metadataMembers = 12
)

// record builds one event. resource and scope are shared by the events of
// their group (Normalize does not modify its input). The event keeps no
// reference to r, only to its strings: r may be reused once it returns.
func (c *otlpConverter) record(r *logspb.LogRecord, resource, scope event.Value) (event.Value, bool) {
	var metaBuf [metadataMembers]event.Value
	meta := metaBuf[:0]
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

	var evBuf [recordMembers]event.Value
	ev := evBuf[:0]
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
	ev = append(ev, event.Member("metadata", event.ObjectValue(c.d.proto.vals.copyOf(meta)...)))
	return event.ObjectValue(c.d.proto.vals.copyOf(ev)...), true
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
// The members are gathered in a scratch slice and then copied, or nested,
// into the value chunks.
func (c *otlpConverter) attributes(kvs []*commonpb.KeyValue) (event.Value, bool) {
	p := &c.d.proto
	kids := p.members[:0]
	dotted := false
	for _, kv := range kvs {
		v, ok := c.any(kv.GetValue(), 1)
		if !ok {
			p.members = clearValues(kids)
			return event.Value{}, false
		}
		kids = append(kids, event.Member(kv.GetKey(), v))
		dotted = dotted || strings.IndexByte(kv.GetKey(), '.') >= 0
	}
	var out []event.Value
	if dotted {
		out = c.nestDotted(kids)
	} else {
		out = p.vals.copyOf(kids)
	}
	p.members = clearValues(kids)
	return event.ObjectValue(out...), true
}

// clearValues zeroes vs (so that a reused scratch slice keeps nothing
// alive) and returns it emptied.
func clearValues(vs []event.Value) []event.Value {
	clear(vs)
	return vs[:0]
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
// ".a") or more than maxKeySegments segments stays flat, and so does a
// dotted key whose prefix is also a plain member ("a" and "a.b": the second
// stays "a.b"), so nothing is lost.
//
// It works in the Decoder's scratch entries and builds every level in the
// value chunks, sized exactly: no allocation of its own once warm.
func (c *otlpConverter) nestDotted(members []event.Value) []event.Value {
	es := c.d.proto.dotted[:0]
	for _, m := range members {
		n := strings.Count(m.Key, ".")
		flat := n == 0 || n >= maxKeySegments || m.Key[0] == '.' || m.Key[len(m.Key)-1] == '.' || strings.Contains(m.Key, "..")
		es = append(es, dottedEntry{rest: m.Key, flat: flat, v: m})
	}
	slices.SortStableFunc(es, compareDotted)
	out := c.buildDotted(es)
	clear(es)
	c.d.proto.dotted = es[:0]
	return out
}

// dottedEntry is a member being nested: rest is its key from the level
// being built on.
type dottedEntry struct {
	rest string
	flat bool // the key is not split
	v    event.Value
}

// head returns the entry's segment at the level being built, and whether
// it is its last.
func (e *dottedEntry) head() (seg string, last bool) {
	if e.flat {
		return e.rest, true
	}
	if i := strings.IndexByte(e.rest, '.'); i >= 0 {
		return e.rest[:i], false
	}
	return e.rest, true
}

// compareDotted orders entries by their segments, as slices.Compare
// orders the lists of segments: segment by segment, a list that is a
// prefix of another first.
func compareDotted(a, b dottedEntry) int {
	for {
		as, alast := a.head()
		bs, blast := b.head()
		if c := strings.Compare(as, bs); c != 0 {
			return c
		}
		switch {
		case alast && blast:
			return 0
		case alast:
			return -1
		case blast:
			return 1
		}
		a.rest, b.rest = a.rest[len(as)+1:], b.rest[len(bs)+1:]
	}
}

// buildDotted builds one level from sorted entries; it advances the rest
// of the entries it nests.
func (c *otlpConverter) buildDotted(es []dottedEntry) []event.Value {
	n := 0
	for i := 0; i < len(es); {
		j, last := dottedGroup(es, i)
		if last {
			n += j - i
		} else {
			n++
		}
		i = j
	}
	out := c.d.proto.vals.alloc(n)
	for i := 0; i < len(es); {
		j, last := dottedGroup(es, i)
		group := es[i:j]
		i = j
		seg, _ := group[0].head()
		// Sorting puts an entry that ends here before the longer ones:
		// when there is one, the whole group stays flat at this level.
		if last {
			for k := range group {
				if _, l := group[k].head(); l {
					out = append(out, event.Member(seg, group[k].v))
				} else {
					out = append(out, event.Member(group[k].rest, group[k].v))
				}
			}
			continue
		}
		for k := range group {
			group[k].rest = group[k].rest[len(seg)+1:]
		}
		out = append(out, event.Member(seg, event.ObjectValue(c.buildDotted(group)...)))
	}
	return out
}

// dottedGroup returns the end of the group of entries that share es[i]'s
// segment, and whether es[i] ends at this level.
func dottedGroup(es []dottedEntry, i int) (end int, last bool) {
	seg, last := es[i].head()
	end = i + 1
	for end < len(es) {
		if s, _ := es[end].head(); s != seg {
			break
		}
		end++
	}
	return end, last
}
