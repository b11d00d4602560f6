package httpapi

import (
	"bufio"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	logspb "go.opentelemetry.io/proto/otlp/logs/v1"
	"google.golang.org/protobuf/proto"
)

// otlpProtoRecords is a protobuf OTLP request of n records shaped like an
// instrumented service's (a message, a severity, six attributes): about
// 130 bytes each on the wire, ten times that decoded.
func otlpProtoRecords(t testing.TB, n int) []byte {
	recs := make([]*logspb.LogRecord, n)
	for i := range recs {
		recs[i] = &logspb.LogRecord{
			TimeUnixNano: uint64(time.Now().UnixNano()), SeverityNumber: logspb.SeverityNumber_SEVERITY_NUMBER_INFO,
			Body: &commonpb.AnyValue{Value: &commonpb.AnyValue_StringValue{StringValue: fmt.Sprintf("GET /api/orders/%d 200", i)}},
			Attributes: []*commonpb.KeyValue{
				{Key: "http.request.method", Value: &commonpb.AnyValue{Value: &commonpb.AnyValue_StringValue{StringValue: "GET"}}},
				{Key: "http.response.status_code", Value: &commonpb.AnyValue{Value: &commonpb.AnyValue_IntValue{IntValue: 200}}},
				{Key: "url.path", Value: &commonpb.AnyValue{Value: &commonpb.AnyValue_StringValue{StringValue: fmt.Sprintf("/api/orders/%d", i)}}},
				{Key: "user.id", Value: &commonpb.AnyValue{Value: &commonpb.AnyValue_StringValue{StringValue: fmt.Sprintf("u-%d", i%50)}}},
				{Key: "duration_ms", Value: &commonpb.AnyValue{Value: &commonpb.AnyValue_IntValue{IntValue: int64(i % 97)}}},
				{Key: "region", Value: &commonpb.AnyValue{Value: &commonpb.AnyValue_StringValue{StringValue: "eu-west-1"}}},
			},
		}
	}
	b, err := proto.Marshal(&logspb.LogsData{ResourceLogs: []*logspb.ResourceLogs{{ScopeLogs: []*logspb.ScopeLogs{{LogRecords: recs}}}}})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// holdBudget has a slow client reserve n bytes of the in-flight budget: a
// logging request that declares an n-byte body and sends a tenth of it. It
// returns a function that sends the rest and checks the request is served.
func holdBudget(t *testing.T, ts *testServer, n int) (release func()) {
	t.Helper()
	body := []byte(`[{"message":"` + strings.Repeat("h", n-16) + `"}]`)
	c := dialServer(t, ts)
	fmt.Fprintf(c, "POST /api/logs?source_name=postgres.logs HTTP/1.1\r\nHost: x\r\nX-API-KEY: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n", pubKey, len(body))
	c.Write(body[:n/10])
	waitFor(t, "the slow body to be reserved", func() bool { return ts.srv.bodies.used.Load() == int64(len(body)) })
	return func() {
		t.Helper()
		c.Write(body[n/10:])
		if res, got := readResponse(t, c, bufio.NewReader(c)); res.StatusCode != 200 || got != logged {
			t.Fatalf("slow request: %d %s", res.StatusCode, got)
		}
	}
}

// esErrorType reads the type of an Elasticsearch error answer.
func esErrorType(t *testing.T, body string) string {
	t.Helper()
	var e struct {
		Error struct {
			Type string `json:"type"`
		} `json:"error"`
		Status int `json:"status"`
	}
	if err := json.Unmarshal([]byte(body), &e); err != nil {
		t.Fatalf("not an Elasticsearch error: %s", body)
	}
	return e.Error.Type
}

// TestInflightBudgetCountsDecoded: the in-flight budget counts what a
// request holds once its body is decompressed and decoded, not only the
// bytes received. With a slow client holding 3 of its 4 MB, a 40 KB gzip
// body that inflates to 2 MB, and a 300 KB OTLP request that decodes to
// about 3 MB, are answered 429 with Retry-After, each in its route's
// shape; once the slow client is served, both are served; and every byte
// charged is given back.
func TestInflightBudgetCountsDecoded(t *testing.T) {
	const budget = 4 << 20
	ts := startServer(t, serverConfig{opts: Options{MaxInflightBodyBytes: budget}})
	var batch strings.Builder
	batch.WriteString("[")
	for i := range 20_000 {
		fmt.Fprintf(&batch, `{"message":"inflated %06d","metadata":{"padding":"%s"}},`, i, strings.Repeat("p", 60))
	}
	batch.WriteString(`{"message":"last"}]`)
	gz := gzipped(t, []byte(batch.String()))
	otlp := otlpProtoRecords(t, 1500)
	if len(gz) > 100_000 || batch.Len() < 2_000_000 || len(otlp) > 400_000 {
		t.Fatalf("gzip %d bytes for %d; OTLP %d bytes", len(gz), batch.Len(), len(otlp))
	}
	logs := func() response {
		return ts.do("POST", "/api/logs?source_name=postgres.logs", gz, withKey(pubKey, "Content-Type", "application/json", "Content-Encoding", "gzip")...)
	}
	otlpReq := func() response {
		return ts.do("POST", "/v1/logs", otlp, "Content-Type", "application/x-protobuf", "x-api-key", pubKey, "X-Source", "postgres.logs")
	}
	bulk := func() response {
		return ts.do("POST", "/postgres.logs/_bulk", gzipped(t, []byte(strings.Repeat("{\"create\":{}}\n{\"message\":\"bulk\"}\n", 60_000))),
			withKey(pubKey, "Content-Type", "application/x-ndjson", "Content-Encoding", "gzip")...)
	}

	release := holdBudget(t, ts, 3_000_000)
	r := logs()
	r.expect(t, 429, `{"error":"Buffer Full: Too Many Requests"}`)
	if r.header.Get("Retry-After") != "1" {
		t.Fatalf("gzip body: retry-after %q", r.header.Get("Retry-After"))
	}
	r = otlpReq()
	if code, _ := rpcStatus(t, []byte(r.body)); r.status != 429 || code != 8 || r.header.Get("Retry-After") != "1" || r.header.Get("Content-Type") != "application/x-protobuf" {
		t.Fatalf("OTLP: %d %s retry-after %q, want 429 with a google.rpc.Status RESOURCE_EXHAUSTED", r.status, r.header.Get("Content-Type"), r.header.Get("Retry-After"))
	}
	if r = bulk(); r.status != 429 || esErrorType(t, r.body) != "es_rejected_execution_exception" || r.header.Get("Retry-After") != "1" {
		t.Fatalf("bulk: %d %s", r.status, r.body)
	}
	if used := ts.srv.bodies.used.Load(); used != 3_000_000 {
		t.Fatalf("%d bytes reserved after the refusals, want the slow client's alone", used)
	}

	release()
	logs().expect(t, 200, logged)
	otlpReq().expect(t, 200, "")
	if r = bulk(); r.status != 200 {
		t.Fatalf("bulk: %d %s", r.status, r.body)
	}
	waitFor(t, "the budget to be given back", func() bool { return ts.srv.bodies.used.Load() == 0 })
	if n := len(ts.events("postgres.logs")); n != 1+20_001+1500+60_000 {
		t.Fatalf("%d events stored", n)
	}
}

// TestProtocolBodyRefusals: a body refused before it is decoded (413 past
// MaxBodyBytes, from the handler or from the headers of a request waiting
// for 100 Continue; 413 past the decoded-size limit) is answered in the
// route's protocol: a google.rpc.Status in the request's encoding on
// /v1/logs, an Elasticsearch error on _bulk.
func TestProtocolBodyRefusals(t *testing.T) {
	ts := startServer(t, serverConfig{opts: Options{MaxBodyBytes: 64 << 10}})
	big := make([]byte, 70<<10)
	r := ts.do("POST", "/v1/logs", big, "Content-Type", "application/x-protobuf", "x-api-key", pubKey, "X-Source", "postgres.logs")
	if code, msg := rpcStatus(t, []byte(r.body)); r.status != 413 || code != 8 || !strings.Contains(msg, "65536") || r.header.Get("Content-Type") != "application/x-protobuf" {
		t.Fatalf("protobuf over the limit: %d %s %q", r.status, r.header.Get("Content-Type"), r.body)
	}
	r = ts.do("POST", "/v1/logs", big, "Content-Type", "application/json", "x-api-key", pubKey, "X-Source", "postgres.logs")
	r.expect(t, 413, `{"code":8,"message":"request body exceeds 65536 bytes"}`)
	if r.header.Get("Content-Type") != "application/json" {
		t.Fatalf("JSON over the limit: content type %q", r.header.Get("Content-Type"))
	}

	// 30,000 empty records: 60 KB on the wire, about 12 MB decoded, over
	// 16 times the body limit.
	empty, err := proto.Marshal(&logspb.LogsData{ResourceLogs: []*logspb.ResourceLogs{{ScopeLogs: []*logspb.ScopeLogs{{LogRecords: make([]*logspb.LogRecord, 30_000)}}}}})
	if err != nil {
		t.Fatal(err)
	}
	r = ts.do("POST", "/v1/logs", empty, "Content-Type", "application/x-protobuf", "x-api-key", pubKey, "X-Source", "postgres.logs")
	if code, msg := rpcStatus(t, []byte(r.body)); r.status != 413 || code != 8 || !strings.Contains(msg, "fewer log records") {
		t.Fatalf("decoded size over the limit: %d %q", r.status, r.body)
	}

	// Refused from the headers of a request that waits for 100 Continue
	// (curl's way for bodies over 1 MiB): the same shapes.
	for _, tc := range []struct{ path, contentType, want string }{
		{"/v1/logs", "application/json", `{"code":8,"message":"request body exceeds 65536 bytes"}`},
		{"/_bulk", "application/x-ndjson", `"type":"content_too_long_exception"`},
		{"/api/logs", "application/json", `{"errors":{"detail":"request body exceeds 65536 bytes"}}`},
	} {
		c := dialServer(t, ts)
		br := bufio.NewReader(c)
		fmt.Fprintf(c, "POST %s HTTP/1.1\r\nHost: x\r\nX-API-KEY: %s\r\nContent-Type: %s\r\nContent-Length: %d\r\nExpect: 100-continue\r\n\r\n", tc.path, pubKey, tc.contentType, len(big))
		if res, got := readResponse(t, c, br); res.StatusCode != 413 || !strings.Contains(got, tc.want) {
			t.Fatalf("%s with Expect: %d %s", tc.path, res.StatusCode, got)
		}
	}

	r = ts.do("POST", "/_bulk", big, withKey(pubKey, "Content-Type", "application/x-ndjson")...)
	if r.status != 413 || esErrorType(t, r.body) != "content_too_long_exception" {
		t.Fatalf("bulk over the limit: %d %s", r.status, r.body)
	}
	if n := len(ts.events("postgres.logs")); n != 0 {
		t.Fatalf("%d events stored", n)
	}
}

// TestIngestRoutesAuthBeforeBody: every ingest route (Logflare's, OTLP,
// Loki, Elasticsearch bulk) answers 401 from the headers when the key is
// missing or unknown, or when the request names (X-Source) a source the
// key may not write, while the client still holds back its 12 MB body, and
// reserves none of it.
func TestIngestRoutesAuthBeforeBody(t *testing.T) {
	ts := startServer(t, serverConfig{})
	routes := []struct{ path, contentType string }{
		{"/api/logs", "application/json"},
		{"/logs/vector", "application/json"},
		{"/v1/logs", "application/x-protobuf"},
		{"/v1/logs", "application/json"},
		{"/loki/api/v1/push", "application/x-protobuf"},
		{"/_bulk", "application/x-ndjson"},
		{"/postgres.logs/_bulk", "application/x-ndjson"},
	}
	for _, route := range routes {
		for _, auth := range []string{"", "X-API-KEY: wrong-key\r\n", "X-API-KEY: " + ingestKey2 + "\r\nX-Source: cloudflare.logs.prod\r\n"} {
			c := dialServer(t, ts)
			br := bufio.NewReader(c)
			fmt.Fprintf(c, "POST %s HTTP/1.1\r\nHost: x\r\nContent-Type: %s\r\n%sContent-Length: %d\r\n\r\n", route.path, route.contentType, auth, bigBody)
			c.Write(make([]byte, 16<<10))
			res, _ := readResponse(t, c, br)
			if res.StatusCode != 401 {
				t.Errorf("%s with %q: %d, want 401 before the body", route.path, auth, res.StatusCode)
			}
			if used := ts.srv.bodies.used.Load(); used != 0 {
				t.Errorf("%s with %q: %d body bytes reserved", route.path, auth, used)
			}
			c.Close()
		}
	}
}
