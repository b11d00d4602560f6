package ingest

import (
	"errors"
	"testing"

	"github.com/klauspost/compress/s2"
	"google.golang.org/protobuf/encoding/protowire"

	"github.com/sediment/sediment/event"
)

// lokiEntry is one entry of a test push request.
type lokiEntry struct {
	secs, nanos int64
	line        string
	sm          [][2]string
}

// lokiPushProto encodes a PushRequest by push.proto's field numbers
// (snappy is the caller's).
func lokiPushProto(streams map[string][]lokiEntry, order ...string) []byte {
	var req []byte
	for _, labels := range order {
		var st []byte
		st = protowire.AppendTag(st, 1, protowire.BytesType)
		st = protowire.AppendString(st, labels)
		for _, e := range streams[labels] {
			var ts, ent []byte
			ts = protowire.AppendTag(ts, 1, protowire.VarintType)
			ts = protowire.AppendVarint(ts, uint64(e.secs))
			ts = protowire.AppendTag(ts, 2, protowire.VarintType)
			ts = protowire.AppendVarint(ts, uint64(e.nanos))
			ent = protowire.AppendTag(ent, 1, protowire.BytesType)
			ent = protowire.AppendBytes(ent, ts)
			ent = protowire.AppendTag(ent, 2, protowire.BytesType)
			ent = protowire.AppendString(ent, e.line)
			for _, kv := range e.sm {
				var p []byte
				p = protowire.AppendTag(p, 1, protowire.BytesType)
				p = protowire.AppendString(p, kv[0])
				p = protowire.AppendTag(p, 2, protowire.BytesType)
				p = protowire.AppendString(p, kv[1])
				ent = protowire.AppendTag(ent, 3, protowire.BytesType)
				ent = protowire.AppendBytes(ent, p)
			}
			st = protowire.AppendTag(st, 2, protowire.BytesType)
			st = protowire.AppendBytes(st, ent)
		}
		st = protowire.AppendTag(st, 3, protowire.VarintType) // hash: ignored
		st = protowire.AppendVarint(st, 12345)
		req = protowire.AppendTag(req, 1, protowire.BytesType)
		req = protowire.AppendBytes(req, st)
	}
	return req
}

func TestDecodeLokiPush(t *testing.T) {
	promtail := lokiPushProto(map[string][]lokiEntry{
		`{job="nginx", source="edge-logs", host="web-1"}`: {
			{secs: 1752148805, nanos: 123456789, line: `GET /a 200`},
			{secs: 1752148806, line: `{"status":502,"path":"/b","job":"from line"}`, sm: [][2]string{{"trace_id", "t-1"}, {"host", "from sm"}}},
		},
		`{job="app",msg="a \"quoted\" \\ value"}`: {{secs: 1752148807, line: "plain"}},
	}, `{job="nginx", source="edge-logs", host="web-1"}`, `{job="app",msg="a \"quoted\" \\ value"}`)
	cases := []struct {
		name, contentType, encoding string
		body                        []byte
		want                        string
		sources                     []string
	}{
		{
			name: "promtail protobuf (snappy)", contentType: "application/x-protobuf", body: s2.EncodeSnappy(nil, promtail),
			want: `[{"event_message":"GET /a 200","timestamp":1752148805123456,"metadata":{"job":"nginx","source":"edge-logs","host":"web-1"}},` +
				`{"event_message":"{\"status\":502,\"path\":\"/b\",\"job\":\"from line\"}","timestamp":1752148806000000,` +
				`"metadata":{"job":"nginx","source":"edge-logs","host":"web-1","trace_id":"t-1","status":502,"path":"/b"}},` +
				`{"event_message":"plain","timestamp":1752148807000000,"metadata":{"job":"app","msg":"a \"quoted\" \\ value"}}]`,
			sources: []string{"edge-logs", ""},
		},
		{
			name: "JSON", contentType: "application/json",
			body: []byte(`{"streams":[{"stream":{"app":"shop","level":"info","source":"s"},"values":[["1752148805123456789","hello"],` +
				`["1752148806000000000","{\"level\":30,\"msg\":\"hi\",\"user\":{\"id\":\"u-1\"}}",{"trace_id":"t-2"}]]}]}`),
			want: `[{"event_message":"hello","timestamp":1752148805123456,"metadata":{"app":"shop","level":"info","source":"s"}},` +
				`{"event_message":"{\"level\":30,\"msg\":\"hi\",\"user\":{\"id\":\"u-1\"}}","timestamp":1752148806000000,` +
				`"metadata":{"app":"shop","level":"info","source":"s","trace_id":"t-2","msg":"hi","user":{"id":"u-1"}}}]`,
			sources: []string{"s"},
		},
		{
			name: "JSON, gzip", contentType: "application/json", encoding: "gzip",
			body:    gz(t, []byte(`{"streams":[{"stream":{},"values":[["1","old"]]}]}`)),
			want:    `[{"event_message":"old","timestamp":"1970-01-01T00:00:00.000000Z","metadata":{}}]`,
			sources: []string{""},
		},
		{name: "empty JSON body", contentType: "application/json", body: nil, want: `[]`},
		{name: "empty protobuf", contentType: "application/x-protobuf", body: s2.EncodeSnappy(nil, nil), want: `[]`},
	}
	d := NewDecoder()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			push, err := d.DecodeLokiPush(Request{ContentType: tc.contentType, ContentEncoding: tc.encoding, Body: tc.body})
			if err != nil {
				t.Fatal(err)
			}
			var all []event.Value
			var sources []string
			for _, s := range push.Streams {
				all = append(all, s.Events...)
				sources = append(sources, s.SourceLabel)
			}
			if got := eventsJSON(all); got != tc.want {
				t.Errorf("\n got  %s\n want %s", got, tc.want)
			}
			if len(sources) != len(tc.sources) {
				t.Fatalf("source labels %q, want %q", sources, tc.sources)
			}
			for i := range sources {
				if sources[i] != tc.sources[i] {
					t.Errorf("source labels %q, want %q", sources, tc.sources)
				}
			}
		})
	}
}

func TestDecodeLokiPushErrors(t *testing.T) {
	d := &Decoder{MaxBodyBytes: 1 << 10}
	bad := func(labels string) []byte {
		return s2.EncodeSnappy(nil, lokiPushProto(map[string][]lokiEntry{labels: {{secs: 1, line: "x"}}}, labels))
	}
	cases := []struct {
		name, contentType string
		body              []byte
		err               error
		status            int
	}{
		{"text/plain", "text/plain", []byte("x"), ErrUnsupportedContentType, 415},
		{"protobuf without snappy", "application/x-protobuf", []byte{0x0a, 0x02, 0x0a, 0x00}, ErrMalformed, 400},
		{"truncated protobuf", "application/x-protobuf", s2.EncodeSnappy(nil, []byte{0x0a, 0x09, 0x0a}), ErrMalformed, 400},
		{"snappy claiming a huge body", "application/x-protobuf", []byte{0xff, 0xff, 0xff, 0xff, 0x0f, 0x00}, ErrTooLarge, 413},
		{"labels without braces", "application/x-protobuf", bad(`job="x"`), ErrBadShape, 400},
		{"unquoted label value", "application/x-protobuf", bad(`{job=x}`), ErrBadShape, 400},
		{"unterminated label value", "application/x-protobuf", bad(`{job="x}`), ErrBadShape, 400},
		{"bad label name", "application/x-protobuf", bad(`{1job="x"}`), ErrBadShape, 400},
		{"bad escape", "application/x-protobuf", bad(`{job="\q"}`), ErrBadShape, 400},
		{"JSON without streams", "application/json", []byte(`{"values":[]}`), ErrBadShape, 400},
		{"JSON label not a string", "application/json", []byte(`{"streams":[{"stream":{"a":1},"values":[]}]}`), ErrBadShape, 400},
		{"JSON entry of one element", "application/json", []byte(`{"streams":[{"stream":{},"values":[["1"]]}]}`), ErrBadShape, 400},
		{"JSON timestamp not a number", "application/json", []byte(`{"streams":[{"stream":{},"values":[["soon","x"]]}]}`), ErrBadShape, 400},
		{"malformed JSON", "application/json", []byte(`{"streams":[`), ErrMalformed, 400},
	}
	for _, tc := range cases {
		_, err := d.DecodeLokiPush(Request{ContentType: tc.contentType, Body: tc.body})
		if !errors.Is(err, tc.err) || StatusCode(err) != tc.status {
			t.Errorf("%s: err %v (status %d), want %v (%d)", tc.name, err, StatusCode(err), tc.err, tc.status)
		}
	}
}
