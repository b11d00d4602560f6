package ingest

import (
	"bytes"
	"math"
	"strconv"
	"strings"

	"github.com/klauspost/compress/s2"
	"google.golang.org/protobuf/encoding/protowire"

	"github.com/sediment/sediment/event"
)

// Loki push (POST /loki/api/v1/push), as Promtail, Grafana Alloy,
// Fluent Bit's loki output and pino-loki send it:
//
//   - application/x-protobuf: a snappy-compressed (block format) PushRequest.
//     It is read field by field against the numbers of Loki's push.proto
//     (Loki's Go module is AGPL, so its generated types are not used):
//
//     PushRequest    { repeated StreamAdapter streams = 1; }
//     StreamAdapter  { string labels = 1; repeated EntryAdapter entries = 2; uint64 hash = 3; }
//     EntryAdapter   { google.protobuf.Timestamp timestamp = 1; string line = 2;
//     repeated LabelPairAdapter structuredMetadata = 3; }
//     LabelPairAdapter { string name = 1; string value = 2; }
//     Timestamp      { int64 seconds = 1; int32 nanos = 2; }
//
//   - application/json: {"streams":[{"stream":{labels},"values":[["<unix ns>","<line>"],
//     ["<unix ns>","<line>",{structured metadata}],...]}]}, gzip or not.
//
// Each entry becomes one event: the line is event_message, the entry's
// time the timestamp, and metadata holds the stream's labels, the entry's
// structured metadata and, when the line is a JSON object, its members (a
// label wins over a structured-metadata pair, which wins over a member of
// the line, when their names are equal).

// LokiPush is a decoded push request: one entry per stream.
type LokiPush struct {
	Streams []LokiStream
}

// LokiStream is the events of one stream.
type LokiStream struct {
	// Labels is the stream's label set as sent (selector syntax, or the
	// JSON object's text), for messages.
	Labels string
	// SourceLabel is the value of the stream's "source" label, "" if none.
	SourceLabel string
	// Events are raw events ready for event.Normalize.
	Events []event.Value
}

// Entries returns how many entries the request holds.
func (p *LokiPush) Entries() int {
	n := 0
	for i := range p.Streams {
		n += len(p.Streams[i].Events)
	}
	return n
}

// LokiSourceLabel is the stream label that names the source of a stream.
const LokiSourceLabel = "source"

// DecodeLokiPush decodes a Loki push body. Errors: 415 for a content type
// other than protobuf or JSON, 413 over the limit, 400 for a body, label
// set or timestamp that does not parse.
//
// The result aliases the request body and the Decoder's buffers until the
// next decode.
func (d *Decoder) DecodeLokiPush(req Request) (LokiPush, error) {
	d.parser.Reset()
	d.proto.reset()
	limit := d.limit()
	media := mediaType(req.ContentType)
	var isProto bool
	switch media {
	case "application/x-protobuf", "application/protobuf":
		isProto = true
	case "application/json", "":
	default:
		return LokiPush{}, errorf(ErrUnsupportedContentType, "%q: Loki push takes application/x-protobuf (snappy) or application/json", req.ContentType)
	}
	encoding := req.ContentEncoding
	if strings.EqualFold(strings.TrimSpace(encoding), "snappy") {
		encoding = "" // protobuf bodies are snappy-compressed whether or not they say so
	}
	body, err := d.decomp.decompress(req.Body, encoding, limit, req.Charge)
	if err != nil {
		return LokiPush{}, err
	}
	if isProto {
		n, err := s2.DecodedLen(body)
		if err != nil {
			return LokiPush{}, wrap(ErrMalformed, err, "snappy")
		}
		if n > limit {
			return LokiPush{}, errorf(ErrTooLarge, "snappy body decompresses to %d bytes, over the limit of %d", n, limit)
		}
		if req.Charge != nil && !req.Charge(int64(n)) {
			return LokiPush{}, errorf(ErrBudget, "snappy body: no memory for its %d decompressed bytes now", n)
		}
		if cap(d.proto.snappy) < n {
			d.proto.snappy = make([]byte, n)
		}
		raw, err := s2.Decode(d.proto.snappy[:cap(d.proto.snappy)], body)
		if err != nil {
			return LokiPush{}, wrap(ErrMalformed, err, "snappy")
		}
		return d.lokiProto(raw)
	}
	return d.lokiJSON(body)
}

// lokiProto walks a PushRequest.
func (d *Decoder) lokiProto(b []byte) (LokiPush, error) {
	var out LokiPush
	err := eachField(b, func(num protowire.Number, typ protowire.Type, val []byte, _ uint64) error {
		if num != 1 || typ != protowire.BytesType {
			return nil
		}
		s, err := d.lokiProtoStream(val)
		if err != nil {
			return err
		}
		out.Streams = append(out.Streams, s)
		return nil
	})
	return out, err
}

func (d *Decoder) lokiProtoStream(b []byte) (LokiStream, error) {
	var labels []byte
	var entries [][]byte
	err := eachField(b, func(num protowire.Number, typ protowire.Type, val []byte, _ uint64) error {
		switch {
		case num == 1 && typ == protowire.BytesType:
			labels = val
		case num == 2 && typ == protowire.BytesType:
			entries = append(entries, val)
		}
		return nil
	})
	if err != nil {
		return LokiStream{}, err
	}
	s := LokiStream{Labels: aliasString(labels)}
	lbls, err := d.parseLokiLabels(s.Labels)
	if err != nil {
		return LokiStream{}, err
	}
	s.SourceLabel = memberString(lbls, LokiSourceLabel)
	s.Events = make([]event.Value, 0, len(entries))
	for _, e := range entries {
		var ns uint64
		var line []byte
		sm := d.proto.vals.alloc(0)
		err := eachField(e, func(num protowire.Number, typ protowire.Type, val []byte, _ uint64) error {
			switch {
			case num == 1 && typ == protowire.BytesType:
				var err error
				if ns, err = protoTimestampNanos(val); err != nil {
					return err
				}
			case num == 2 && typ == protowire.BytesType:
				line = val
			case num == 3 && typ == protowire.BytesType:
				name, value, err := labelPair(val)
				if err != nil {
					return err
				}
				sm = append(sm, event.Member(name, event.StringValue(value)))
			}
			return nil
		})
		if err != nil {
			return LokiStream{}, err
		}
		s.Events = append(s.Events, d.lokiEvent(lbls, sm, ns, aliasString(line)))
	}
	return s, nil
}

// protoTimestampNanos reads a google.protobuf.Timestamp as unix
// nanoseconds; times before 1970 read as 0 (no time: arrival is used).
func protoTimestampNanos(b []byte) (uint64, error) {
	var secs, nanos int64
	err := eachField(b, func(num protowire.Number, typ protowire.Type, _ []byte, v uint64) error {
		if typ != protowire.VarintType {
			return nil
		}
		switch num {
		case 1:
			secs = int64(v)
		case 2:
			nanos = int64(int32(v))
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	if secs < 0 || nanos < 0 || nanos >= 1e9 {
		return 0, nil
	}
	if secs > (math.MaxInt64-nanos)/1e9 {
		return math.MaxInt64, nil // far future: dropped as such by Normalize
	}
	return uint64(secs*1e9 + nanos), nil
}

func labelPair(b []byte) (name, value string, err error) {
	err = eachField(b, func(num protowire.Number, typ protowire.Type, val []byte, _ uint64) error {
		if typ != protowire.BytesType {
			return nil
		}
		switch num {
		case 1:
			name = aliasString(val)
		case 2:
			value = aliasString(val)
		}
		return nil
	})
	return name, value, err
}

// eachField calls fn for each field of a protobuf message: val holds a
// length-delimited field's bytes, v a varint's or fixed field's value.
func eachField(b []byte, fn func(num protowire.Number, typ protowire.Type, val []byte, v uint64) error) error {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return wrap(ErrMalformed, protowire.ParseError(n), "protobuf")
		}
		b = b[n:]
		var val []byte
		var v uint64
		switch typ {
		case protowire.VarintType:
			v, n = protowire.ConsumeVarint(b)
		case protowire.BytesType:
			val, n = protowire.ConsumeBytes(b)
		case protowire.Fixed32Type:
			var x uint32
			x, n = protowire.ConsumeFixed32(b)
			v = uint64(x)
		case protowire.Fixed64Type:
			v, n = protowire.ConsumeFixed64(b)
		default:
			n = protowire.ConsumeFieldValue(num, typ, b)
		}
		if n < 0 {
			return wrap(ErrMalformed, protowire.ParseError(n), "protobuf field %d", num)
		}
		b = b[n:]
		if err := fn(num, typ, val, v); err != nil {
			return err
		}
	}
	return nil
}

// parseLokiLabels parses a label set in Prometheus selector syntax,
// {name="value", ...}, values quoted as Go strings.
func (d *Decoder) parseLokiLabels(s string) ([]event.Value, error) {
	bad := func(why string) ([]event.Value, error) {
		return nil, errorf(ErrBadShape, "stream labels %s: %s", strconv.Quote(truncate(s, 200)), why)
	}
	rest := strings.TrimSpace(s)
	if !strings.HasPrefix(rest, "{") || !strings.HasSuffix(rest, "}") {
		return bad("want {name=\"value\", ...}")
	}
	rest = strings.TrimSpace(rest[1 : len(rest)-1])
	out := d.proto.vals.alloc(strings.Count(rest, "=") + 1)
	for rest != "" {
		eq := strings.IndexByte(rest, '=')
		if eq <= 0 {
			return bad("a label without =")
		}
		name := strings.TrimSpace(rest[:eq])
		if !validLabelName(name) {
			return bad("invalid label name " + strconv.Quote(truncate(name, 64)))
		}
		rest = strings.TrimLeft(rest[eq+1:], " ")
		if rest == "" || rest[0] != '"' {
			return bad("label " + name + ": value must be a quoted string")
		}
		end := 1
		for end < len(rest) && rest[end] != '"' {
			if rest[end] == '\\' {
				end++
			}
			end++
		}
		if end >= len(rest) {
			return bad("label " + name + ": unterminated value")
		}
		quoted := rest[:end+1]
		value := quoted[1 : len(quoted)-1]
		if strings.IndexByte(value, '\\') >= 0 {
			u, err := strconv.Unquote(quoted)
			if err != nil {
				return bad("label " + name + ": " + err.Error())
			}
			value = u
		}
		out = append(out, event.Member(name, event.StringValue(value)))
		rest = strings.TrimLeft(rest[end+1:], " ")
		if rest == "" {
			break
		}
		if rest[0] != ',' {
			return bad("want , between labels")
		}
		rest = strings.TrimLeft(rest[1:], " ")
	}
	return out, nil
}

// validLabelName: [a-zA-Z_][a-zA-Z0-9_]*, Prometheus's label names.
func validLabelName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '_' || ('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z') || (i > 0 && '0' <= c && c <= '9') {
			continue
		}
		return false
	}
	return true
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// memberString returns the string value of the member named key.
func memberString(members []event.Value, key string) string {
	for i := range members {
		if members[i].Key == key && members[i].Kind == event.String {
			return members[i].Str
		}
	}
	return ""
}

// lokiEvent builds one entry's event. labels are shared by the stream's
// entries and not modified.
func (d *Decoder) lokiEvent(labels, sm []event.Value, ns uint64, line string) event.Value {
	var fields event.Value
	if t := strings.TrimSpace(line); len(t) > 1 && t[0] == '{' && t[len(t)-1] == '}' {
		if v, err := d.parser.Parse([]byte(t)); err == nil && v.Kind == event.Object {
			fields = v
		}
	}
	meta := d.proto.vals.alloc(len(labels) + len(sm) + len(fields.Kids))
	meta = append(meta, labels...)
	seen := newKeySet(labels)
	for _, m := range sm {
		if !seen.has(m.Key) {
			meta = append(meta, m)
		}
	}
	if len(fields.Kids) > 0 {
		seen.add(sm)
		for _, m := range fields.Kids {
			if !seen.has(m.Key) {
				meta = append(meta, m)
			}
		}
	}
	ev := d.proto.vals.alloc(3)
	ev = append(ev, event.Member("event_message", event.StringValue(line)))
	if ts, ok := d.nanosTimestamp(ns); ok {
		ev = append(ev, event.Member("timestamp", ts))
	}
	ev = append(ev, event.Member("metadata", event.ObjectValue(meta...)))
	return event.ObjectValue(ev...)
}

// keySet answers "is this member name taken?" in linear time for the few
// names a stream usually has and through a map past that, so that hostile
// label sets cannot make merging quadratic.
type keySet struct {
	small []event.Value
	large map[string]struct{}
}

func newKeySet(members []event.Value) keySet {
	var k keySet
	k.add(members)
	return k
}

func (k *keySet) add(members []event.Value) {
	if k.large == nil && len(k.small)+len(members) <= 16 {
		k.small = append(k.small[:len(k.small):len(k.small)], members...)
		return
	}
	if k.large == nil {
		k.large = make(map[string]struct{}, len(k.small)+len(members))
		for _, m := range k.small {
			k.large[m.Key] = struct{}{}
		}
		k.small = nil
	}
	for _, m := range members {
		k.large[m.Key] = struct{}{}
	}
}

func (k *keySet) has(key string) bool {
	if k.large != nil {
		_, ok := k.large[key]
		return ok
	}
	for i := range k.small {
		if k.small[i].Key == key {
			return true
		}
	}
	return false
}

// lokiJSON decodes the JSON form of a push request.
func (d *Decoder) lokiJSON(body []byte) (LokiPush, error) {
	var out LokiPush
	if len(bytes.TrimSpace(body)) == 0 {
		return out, nil
	}
	v, err := d.parser.Parse(body)
	if err != nil {
		return out, wrap(ErrMalformed, err, "Loki push JSON")
	}
	streams := v.Get("streams")
	if v.Kind != event.Object || streams == nil || streams.Kind != event.Array {
		return out, errorf(ErrBadShape, `Loki push JSON must be {"streams":[...]}`)
	}
	for i := range streams.Kids {
		st := &streams.Kids[i]
		if st.Kind != event.Object {
			return out, errorf(ErrBadShape, "streams[%d] is %v, not an object", i, st.Kind)
		}
		labels := d.proto.vals.alloc(0)
		if l := st.Get("stream"); l != nil {
			if l.Kind != event.Object {
				return out, errorf(ErrBadShape, "streams[%d].stream is %v, not an object", i, l.Kind)
			}
			for _, m := range l.Kids {
				if m.Kind != event.String {
					return out, errorf(ErrBadShape, "streams[%d].stream.%s is %v, not a string", i, m.Key, m.Kind)
				}
				labels = append(labels, m)
			}
		}
		s := LokiStream{SourceLabel: memberString(labels, LokiSourceLabel)}
		s.Labels = d.proto.text(func(b []byte) []byte { return event.AppendJSON(b, event.ObjectValue(labels...)) })
		values := st.Get("values")
		if values == nil || values.Kind != event.Array {
			return out, errorf(ErrBadShape, "streams[%d].values must be an array", i)
		}
		s.Events = make([]event.Value, 0, len(values.Kids))
		for j := range values.Kids {
			e := &values.Kids[j]
			if e.Kind != event.Array || len(e.Kids) < 2 || len(e.Kids) > 3 || e.Kids[1].Kind != event.String {
				return out, errorf(ErrBadShape, `streams[%d].values[%d] must be ["<unix ns>", "<line>"] or with a third, structured metadata object`, i, j)
			}
			ns, ok := jsonNanos(e.Kids[0])
			if !ok {
				return out, errorf(ErrBadShape, "streams[%d].values[%d]: timestamp must be unix nanoseconds as a string", i, j)
			}
			var sm []event.Value
			if len(e.Kids) == 3 {
				md := e.Kids[2]
				if md.Kind != event.Object {
					return out, errorf(ErrBadShape, "streams[%d].values[%d]: structured metadata must be an object", i, j)
				}
				sm = md.Kids
			}
			s.Events = append(s.Events, d.lokiEvent(labels, sm, ns, e.Kids[1].Str))
		}
		out.Streams = append(out.Streams, s)
	}
	return out, nil
}

// jsonNanos reads a Loki JSON timestamp: unix nanoseconds as a decimal
// string (as Loki requires) or, leniently, as a number.
func jsonNanos(v event.Value) (uint64, bool) {
	switch v.Kind {
	case event.String:
		n, err := strconv.ParseUint(v.Str, 10, 64)
		return n, err == nil
	case event.Int:
		return uint64(v.Int()), v.Int() >= 0
	case event.Float:
		f := v.Float()
		if !(f >= 0) || f >= math.MaxUint64 {
			return 0, false
		}
		return uint64(f), true
	}
	return 0, false
}
