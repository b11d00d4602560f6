package ingest

import (
	"bytes"
	"compress/gzip"
	"errors"
	"math"
	"strings"
	"testing"

	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	logspb "go.opentelemetry.io/proto/otlp/logs/v1"
	resourcepb "go.opentelemetry.io/proto/otlp/resource/v1"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"github.com/sediment/sediment/event"
)

func strAttr(k, v string) *commonpb.KeyValue {
	return &commonpb.KeyValue{Key: k, Value: &commonpb.AnyValue{Value: &commonpb.AnyValue_StringValue{StringValue: v}}}
}

func anyAttr(k string, v *commonpb.AnyValue) *commonpb.KeyValue {
	return &commonpb.KeyValue{Key: k, Value: v}
}

func intVal(i int64) *commonpb.AnyValue {
	return &commonpb.AnyValue{Value: &commonpb.AnyValue_IntValue{IntValue: i}}
}

func strVal(s string) *commonpb.AnyValue {
	return &commonpb.AnyValue{Value: &commonpb.AnyValue_StringValue{StringValue: s}}
}

// otlpRequest is one resource with one scope holding records.
func otlpRequest(resAttrs []*commonpb.KeyValue, records ...*logspb.LogRecord) *logspb.LogsData {
	return &logspb.LogsData{ResourceLogs: []*logspb.ResourceLogs{{
		Resource: &resourcepb.Resource{Attributes: resAttrs},
		ScopeLogs: []*logspb.ScopeLogs{{
			Scope:      &commonpb.InstrumentationScope{Name: "io.example.checkout", Version: "1.4.0"},
			LogRecords: records,
		}},
	}}}
}

// The record every encoding test sends, and the event it must become.
var (
	fullRecord = &logspb.LogRecord{
		TimeUnixNano:         1752148805123456789,
		ObservedTimeUnixNano: 1752148806000000000,
		SeverityNumber:       logspb.SeverityNumber_SEVERITY_NUMBER_INFO,
		SeverityText:         "INFO",
		EventName:            "order.placed",
		Body:                 strVal("order placed"),
		Attributes: []*commonpb.KeyValue{
			strAttr("http.request.method", "POST"),
			anyAttr("http.response.status_code", intVal(201)),
			strAttr("user", "u-1"),
			anyAttr("ratio", &commonpb.AnyValue{Value: &commonpb.AnyValue_DoubleValue{DoubleValue: 0.25}}),
			anyAttr("ok", &commonpb.AnyValue{Value: &commonpb.AnyValue_BoolValue{BoolValue: true}}),
			anyAttr("tags", &commonpb.AnyValue{Value: &commonpb.AnyValue_ArrayValue{ArrayValue: &commonpb.ArrayValue{Values: []*commonpb.AnyValue{strVal("a"), intVal(2)}}}}),
			anyAttr("raw", &commonpb.AnyValue{Value: &commonpb.AnyValue_BytesValue{BytesValue: []byte{0xde, 0xad}}}),
			anyAttr("nan", &commonpb.AnyValue{Value: &commonpb.AnyValue_DoubleValue{DoubleValue: math.NaN()}}),
			anyAttr("empty", &commonpb.AnyValue{}),
		},
		Flags:   1,
		TraceId: []byte{0x5b, 0x8e, 0xff, 0xf7, 0x98, 0x03, 0x81, 0x03, 0xd2, 0x69, 0xb6, 0x33, 0x81, 0x3f, 0xc6, 0x0c},
		SpanId:  []byte{0xee, 0xe1, 0x9b, 0x7e, 0xc3, 0xc1, 0xb1, 0x74},
	}
	fullResource = []*commonpb.KeyValue{strAttr("service.name", "checkout"), strAttr("service.version", "2.0.1"), strAttr("host.name", "web-1")}
	fullEvent    = `[{"event_message":"order placed","timestamp":1752148805123456,"metadata":{"level":"info","severity_number":9,` +
		`"severity_text":"INFO","event_name":"order.placed","trace_id":"5b8efff798038103d269b633813fc60c","span_id":"eee19b7ec3c1b174",` +
		`"trace_flags":1,"attributes":{"empty":null,"http":{"request":{"method":"POST"},"response":{"status_code":201}},"nan":"NaN","ok":true,` +
		`"ratio":0.25,"raw":"3q0=","tags":["a",2],"user":"u-1"},` +
		`"resource":{"host":{"name":"web-1"},"service":{"name":"checkout","version":"2.0.1"}},` +
		`"scope":{"name":"io.example.checkout","version":"1.4.0"}}}]`
	// fullJSON is fullRecord in OTLP/JSON, as the collector and the JS
	// exporter write it: camelCase, hex ids, int64 as strings, enums as
	// numbers.
	fullJSON = `{"resourceLogs":[{"resource":{"attributes":[{"key":"service.name","value":{"stringValue":"checkout"}},` +
		`{"key":"service.version","value":{"stringValue":"2.0.1"}},{"key":"host.name","value":{"stringValue":"web-1"}}]},` +
		`"scopeLogs":[{"scope":{"name":"io.example.checkout","version":"1.4.0"},"logRecords":[{"timeUnixNano":"1752148805123456789",` +
		`"observedTimeUnixNano":"1752148806000000000","severityNumber":9,"severityText":"INFO","eventName":"order.placed",` +
		`"body":{"stringValue":"order placed"},"attributes":[{"key":"http.request.method","value":{"stringValue":"POST"}},` +
		`{"key":"http.response.status_code","value":{"intValue":"201"}},{"key":"user","value":{"stringValue":"u-1"}},` +
		`{"key":"ratio","value":{"doubleValue":0.25}},{"key":"ok","value":{"boolValue":true}},` +
		`{"key":"tags","value":{"arrayValue":{"values":[{"stringValue":"a"},{"intValue":2}]}}},{"key":"raw","value":{"bytesValue":"3q0="}},` +
		`{"key":"nan","value":{"doubleValue":"NaN"}},{"key":"empty","value":{}}],"flags":1,` +
		`"traceId":"5b8efff798038103d269b633813fc60c","spanId":"eee19b7ec3c1b174","unknownField":{"x":1}}]}]}]}`
)

func mustMarshal(t testing.TB, m proto.Message) []byte {
	t.Helper()
	b, err := proto.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func gz(t *testing.T, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := gzip.NewWriter(&buf)
	w.Write(b)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestDecodeOTLPLogs(t *testing.T) {
	cases := []struct {
		name, contentType, encoding string
		body                        []byte
		want                        string // events of all resources, as JSON
		service                     string
		rejected                    int
	}{
		{name: "protobuf", contentType: "application/x-protobuf", body: mustMarshal(t, otlpRequest(fullResource, fullRecord)), want: fullEvent, service: "checkout"},
		{name: "protobuf gzip", contentType: "application/x-protobuf", encoding: "gzip", body: gz(t, mustMarshal(t, otlpRequest(fullResource, fullRecord))), want: fullEvent, service: "checkout"},
		{name: "json", contentType: "application/json; charset=utf-8", body: []byte(fullJSON), want: fullEvent, service: "checkout"},
		{
			name: "observed time, text severity, map body", contentType: "application/x-protobuf",
			body: mustMarshal(t, otlpRequest(nil, &logspb.LogRecord{
				ObservedTimeUnixNano: 1752148806000000000,
				SeverityText:         "Warning",
				Body: &commonpb.AnyValue{Value: &commonpb.AnyValue_KvlistValue{KvlistValue: &commonpb.KeyValueList{Values: []*commonpb.KeyValue{
					strAttr("event", "low_stock"), anyAttr("left", intVal(3)), strAttr("a.b", "kept flat"),
				}}}},
				DroppedAttributesCount: 2,
			})),
			want: `[{"event_message":"{\"event\":\"low_stock\",\"left\":3,\"a.b\":\"kept flat\"}","timestamp":1752148806000000,` +
				`"metadata":{"level":"warning","severity_text":"Warning","body":{"event":"low_stock","left":3,"a.b":"kept flat"},` +
				`"dropped_attributes_count":2,"resource":{},"scope":{"name":"io.example.checkout","version":"1.4.0"}}}]`,
		},
		{
			name: "no time, scalar body, a key that is also a prefix", contentType: "application/x-protobuf",
			body: mustMarshal(t, otlpRequest(nil, &logspb.LogRecord{
				SeverityNumber: logspb.SeverityNumber_SEVERITY_NUMBER_FATAL,
				Body:           intVal(42),
				Attributes:     []*commonpb.KeyValue{strAttr("a.b", "y"), strAttr("a", "x"), strAttr("a..c", "z"), strAttr("a.b.c", "w")},
			})),
			want: `[{"event_message":"42","metadata":{"level":"critical","severity_number":21,` +
				`"attributes":{"a":"x","a.b":"y","a.b.c":"w","a..c":"z"},"resource":{},"scope":{"name":"io.example.checkout","version":"1.4.0"}}}]`,
		},
		{
			name: "a record nested too deeply is rejected, the others kept", contentType: "application/x-protobuf",
			body: mustMarshal(t, otlpRequest(nil, &logspb.LogRecord{Body: deepValue(maxOTLPDepth + 1)}, &logspb.LogRecord{Body: strVal("fine")})),
			want: `[{"event_message":"fine","metadata":{"resource":{},"scope":{"name":"io.example.checkout","version":"1.4.0"}}}]`, rejected: 1,
		},
		{name: "empty request", contentType: "application/x-protobuf", body: nil, want: `[]`},
		{name: "empty JSON request", contentType: "application/json", body: []byte(`{}`), want: `[]`},
	}
	d := NewDecoder()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			logs, err := d.DecodeOTLPLogs(Request{ContentType: tc.contentType, ContentEncoding: tc.encoding, Body: tc.body})
			if err != nil {
				t.Fatal(err)
			}
			var all []event.Value
			for _, r := range logs.Resources {
				all = append(all, r.Events...)
				if tc.service != "" && r.ServiceName != tc.service {
					t.Errorf("service %q, want %q", r.ServiceName, tc.service)
				}
			}
			if got := eventsJSON(all); got != tc.want {
				t.Errorf("\n got  %s\n want %s", got, tc.want)
			}
			if logs.Rejected != tc.rejected || (tc.rejected > 0 && !strings.Contains(logs.Reason, "deeper")) {
				t.Errorf("rejected %d (%q), want %d", logs.Rejected, logs.Reason, tc.rejected)
			}
		})
	}
}

// deepValue is an array nested n levels deep.
func deepValue(n int) *commonpb.AnyValue {
	v := strVal("bottom")
	for range n {
		v = &commonpb.AnyValue{Value: &commonpb.AnyValue_ArrayValue{ArrayValue: &commonpb.ArrayValue{Values: []*commonpb.AnyValue{v}}}}
	}
	return v
}

func TestDecodeOTLPLogsErrors(t *testing.T) {
	d := &Decoder{MaxBodyBytes: 1 << 10}
	cases := []struct {
		name, contentType, encoding string
		body                        []byte
		err                         error
		status                      int
	}{
		{"text/plain", "text/plain", "", []byte("x"), ErrUnsupportedContentType, 415},
		{"no content type", "", "", []byte("x"), ErrUnsupportedContentType, 415},
		{"truncated protobuf", "application/x-protobuf", "", []byte{0x0a, 0x05, 0x0a}, ErrMalformed, 400},
		{"bad JSON", "application/json", "", []byte(`{"resourceLogs":[`), ErrMalformed, 400},
		{"JSON of the wrong shape", "application/json", "", []byte(`{"resourceLogs":{"a":1}}`), ErrMalformed, 400},
		{"corrupt gzip", "application/x-protobuf", "gzip", []byte("not gzip"), ErrMalformed, 400},
		{"brotli", "application/x-protobuf", "br", []byte("x"), ErrUnsupportedEncoding, 400},
		{"over the limit", "application/x-protobuf", "", make([]byte, 2<<10), ErrTooLarge, 413},
		{"over the limit once inflated", "application/json", "gzip", gz(t, bytes.Repeat([]byte(" "), 4<<10)), ErrTooLarge, 413},
	}
	for _, tc := range cases {
		_, err := d.DecodeOTLPLogs(Request{ContentType: tc.contentType, ContentEncoding: tc.encoding, Body: tc.body})
		if !errors.Is(err, tc.err) || StatusCode(err) != tc.status {
			t.Errorf("%s: err %v (status %d), want %v (%d)", tc.name, err, StatusCode(err), tc.err, tc.status)
		}
	}
}

func TestOTLPResponses(t *testing.T) {
	if got := AppendOTLPExportResponse(nil, OTLPProtobuf, 0, ""); len(got) != 0 {
		t.Errorf("full success in protobuf is an empty message, got %x", got)
	}
	if got := string(AppendOTLPExportResponse(nil, OTLPJSON, 0, "")); got != "{}" {
		t.Errorf("full success in JSON: %s", got)
	}
	if got, want := string(AppendOTLPExportResponse(nil, OTLPJSON, 3, `no "source"`)),
		`{"partialSuccess":{"rejectedLogRecords":"3","errorMessage":"no \"source\""}}`; got != want {
		t.Errorf("partial success in JSON:\n got  %s\n want %s", got, want)
	}
	// Protobuf: field 1 (partial_success) holding field 1 = 3 and field 2.
	b := AppendOTLPExportResponse(nil, OTLPProtobuf, 3, "why")
	num, typ, n := protowire.ConsumeTag(b)
	inner, m := protowire.ConsumeBytes(b[n:])
	if num != 1 || typ != protowire.BytesType || m != len(b)-n {
		t.Fatalf("partial success in protobuf: %x", b)
	}
	want := protowire.AppendString(protowire.AppendTag(protowire.AppendVarint(protowire.AppendTag(nil, 1, protowire.VarintType), 3), 2, protowire.BytesType), "why")
	if !bytes.Equal(inner, want) {
		t.Errorf("partial success fields %x, want %x", inner, want)
	}
	if got := string(AppendOTLPStatus(nil, OTLPJSON, 16, "Unauthorized")); got != `{"code":16,"message":"Unauthorized"}` {
		t.Errorf("status in JSON: %s", got)
	}
}
