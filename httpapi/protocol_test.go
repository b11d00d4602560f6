package httpapi

import (
	"encoding/base64"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/klauspost/compress/s2"
	"google.golang.org/protobuf/encoding/protowire"
)

// otlpJSONRecords is an OTLP/JSON request with one resource (service.name
// service, unless empty) holding records with the given bodies.
func otlpJSONRecords(service string, timeNanos int64, bodies ...string) []byte {
	var recs []string
	for _, b := range bodies {
		recs = append(recs, fmt.Sprintf(`{"timeUnixNano":"%d","severityNumber":9,"body":{"stringValue":%q}}`, timeNanos, b))
	}
	res := `{}`
	if service != "" {
		res = fmt.Sprintf(`{"attributes":[{"key":"service.name","value":{"stringValue":%q}}]}`, service)
	}
	return []byte(fmt.Sprintf(`{"resourceLogs":[{"resource":%s,"scopeLogs":[{"logRecords":[%s]}]}]}`, res, strings.Join(recs, ",")))
}

// TestOTLPRoute covers what OTLP clients see: statuses, bodies in the
// request's encoding, partial success, and how the source is chosen.
func TestOTLPRoute(t *testing.T) {
	ts := startServer(t, serverConfig{opts: Options{Now: serverNow}})
	ts.createSource("checkout")
	ts.createSource("billing")
	at := serverNow().Add(-time.Minute).UnixNano()
	future := serverNow().Add(2 * time.Hour).UnixNano()
	jsonCT := []string{"Content-Type", "application/json"}
	with := func(h ...string) []string { return append(append([]string{}, jsonCT...), h...) }

	// No key; unknown key; the key in each form OTLP exporters can send.
	ts.do("POST", "/v1/logs", otlpJSONRecords("checkout", at, "a"), jsonCT...).expect(t, 401, "")
	ts.do("POST", "/v1/logs", otlpJSONRecords("checkout", at, "a"), with("Authorization", "Bearer nope")...).expect(t, 401, "")
	r := ts.do("POST", "/v1/logs", otlpJSONRecords("checkout", at, "bearer"), with("Authorization", "Bearer "+pubKey)...)
	r.expect(t, 200, "{}")
	if ct := r.header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("content type %q", ct)
	}
	ts.do("POST", "/api/v1/logs", otlpJSONRecords("checkout", at, "x-api-key"), with("x-api-key", pubKey)...).expect(t, 200, "{}")
	ts.do("POST", "/otlp/v1/logs", otlpJSONRecords("billing", at, "routed by service.name"), with("x-api-key", pubKey)...).expect(t, 200, "{}")
	// The header wins over service.name.
	ts.do("POST", "/v1/logs", otlpJSONRecords("checkout", at, "header wins"), with("x-api-key", pubKey, "X-Source", "billing")...).expect(t, 200, "{}")
	// Through Kong's prefix.
	ts.do("POST", "/analytics/v1/v1/logs", otlpJSONRecords("checkout", at, "through kong"), with("x-api-key", pubKey)...).expect(t, 200, "{}")

	if got := messages(ts.events("checkout")); got != "bearer,through kong,x-api-key" {
		t.Errorf("checkout: %s", got)
	}
	if got := messages(ts.events("billing")); got != "header wins,routed by service.name" {
		t.Errorf("billing: %s", got)
	}

	// An unknown source named by the request: 401; no source at all: 401
	// with the reason.
	ts.do("POST", "/v1/logs", otlpJSONRecords("checkout", at, "a"), with("x-api-key", pubKey, "X-Source", "nope")...).expect(t, 401, "")
	r = ts.do("POST", "/v1/logs", otlpJSONRecords("unknown-service", at, "a"), with("x-api-key", pubKey)...)
	if r.status != 401 || !strings.Contains(r.body, `"code":16`) || !strings.Contains(r.body, "unknown-service") {
		t.Errorf("no source: %d %s", r.status, r.body)
	}
	// A key scoped to one source writes there whatever service.name says.
	ts.do("POST", "/v1/logs", otlpJSONRecords("unknown-service", at, "scoped key"), with("x-api-key", ingestKey2)...).expect(t, 200, "{}")
	if got := messages(ts.events("postgres.logs")); got != "scoped key" {
		t.Errorf("postgres.logs: %s", got)
	}

	// Partial success: a resource without a source, and a record from the
	// future, are rejected and counted; the rest is stored.
	body := []byte(fmt.Sprintf(`{"resourceLogs":[`+
		`{"resource":{"attributes":[{"key":"service.name","value":{"stringValue":"checkout"}}]},"scopeLogs":[{"logRecords":[`+
		`{"timeUnixNano":"%[1]d","body":{"stringValue":"kept"}},{"timeUnixNano":"%[2]d","body":{"stringValue":"future"}}]}]},`+
		`{"resource":{"attributes":[{"key":"service.name","value":{"stringValue":"nobody"}}]},"scopeLogs":[{"logRecords":[`+
		`{"timeUnixNano":"%[1]d","body":{"stringValue":"lost 1"}},{"timeUnixNano":"%[1]d","body":{"stringValue":"lost 2"}}]}]}]}`, at, future))
	before := ts.srv.Stats()
	r = ts.do("POST", "/v1/logs", body, with("x-api-key", pubKey)...)
	if r.status != 200 || !strings.Contains(r.body, `"rejectedLogRecords":"3"`) || !strings.Contains(r.body, "nobody") {
		t.Errorf("partial success: %d %s", r.status, r.body)
	}
	if got := messages(ts.events("checkout")); got != "bearer,kept,through kong,x-api-key" {
		t.Errorf("checkout after partial success: %s", got)
	}
	after := ts.srv.Stats()
	if after.Dropped(DropRejected)-before.Dropped(DropRejected) != 2 || after.Dropped(DropFutureTimestamp)-before.Dropped(DropFutureTimestamp) != 1 {
		t.Errorf("counters: rejected +%d, future +%d", after.Dropped(DropRejected)-before.Dropped(DropRejected), after.Dropped(DropFutureTimestamp)-before.Dropped(DropFutureTimestamp))
	}

	// Protobuf: partial success and errors come back in protobuf.
	r = ts.do("POST", "/v1/logs", []byte{0x0a, 0x05}, "Content-Type", "application/x-protobuf", "x-api-key", pubKey)
	if r.status != 400 || r.header.Get("Content-Type") != "application/x-protobuf" {
		t.Errorf("bad protobuf: %d %q", r.status, r.header.Get("Content-Type"))
	}
	if code, msg := rpcStatus(t, []byte(r.body)); code != 3 || !strings.Contains(msg, "malformed") {
		t.Errorf("status %d %q", code, msg)
	}
	r = ts.do("POST", "/v1/logs", []byte("x"), "Content-Type", "text/plain", "x-api-key", pubKey)
	if r.status != 415 {
		t.Errorf("text/plain: %d %s", r.status, r.body)
	}
	ts.do("POST", "/v1/logs", gzipped(t, otlpJSONRecords("checkout", at, "gzipped")), with("x-api-key", pubKey, "Content-Encoding", "gzip")...).expect(t, 200, "{}")
	ts.do("GET", "/v1/logs", nil).expect(t, 404, "")
}

// rpcStatus decodes a google.rpc.Status.
func rpcStatus(t *testing.T, b []byte) (code int, msg string) {
	t.Helper()
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			t.Fatalf("bad status %x", b)
		}
		b = b[n:]
		switch {
		case num == 1 && typ == protowire.VarintType:
			v, n := protowire.ConsumeVarint(b)
			code, b = int(v), b[n:]
		case num == 2 && typ == protowire.BytesType:
			v, n := protowire.ConsumeBytes(b)
			msg, b = string(v), b[n:]
		default:
			t.Fatalf("unexpected field %d", num)
		}
	}
	return code, msg
}

// messages lists the events' messages, sorted, comma-separated.
func messages(evs []map[string]any) string {
	var out []string
	for _, e := range evs {
		m, _ := e["event_message"].(string)
		out = append(out, m)
	}
	sortStrings(out)
	return strings.Join(out, ",")
}

func sortStrings(s []string) {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
}

// TestLokiRoute: Promtail's snappy protobuf, statuses, all-or-nothing
// routing, and the auth forms Loki clients send.
func TestLokiRoute(t *testing.T) {
	ts := startServer(t, serverConfig{opts: Options{Now: serverNow}})
	ts.createSource("edge")
	secs := serverNow().Add(-time.Minute).Unix()
	// push encodes a PushRequest with one stream per {labels, line} pair.
	push := func(streams ...[2]string) []byte {
		var req []byte
		for _, sl := range streams {
			var st, ts, e []byte
			st = protowire.AppendTag(st, 1, protowire.BytesType)
			st = protowire.AppendString(st, sl[0])
			ts = protowire.AppendTag(ts, 1, protowire.VarintType)
			ts = protowire.AppendVarint(ts, uint64(secs))
			e = protowire.AppendTag(e, 1, protowire.BytesType)
			e = protowire.AppendBytes(e, ts)
			e = protowire.AppendTag(e, 2, protowire.BytesType)
			e = protowire.AppendString(e, sl[1])
			st = protowire.AppendTag(st, 2, protowire.BytesType)
			st = protowire.AppendBytes(st, e)
			req = protowire.AppendTag(req, 1, protowire.BytesType)
			req = protowire.AppendBytes(req, st)
		}
		return s2.EncodeSnappy(nil, req)
	}
	pb := []string{"Content-Type", "application/x-protobuf"}
	basic := "Basic " + base64.StdEncoding.EncodeToString([]byte("tenant:"+pubKey))

	ts.do("POST", "/loki/api/v1/push", push([2]string{`{source="edge"}`, "a"}), pb...).expect(t, 401, "")
	ts.do("POST", "/loki/api/v1/push", push([2]string{`{source="edge", job="promtail"}`, "basic auth"}, [2]string{`{source="edge", job="other"}`, "second"}),
		append(pb, "Authorization", basic)...).expect(t, 204, "")
	ts.do("POST", "/loki/api/v1/push", push([2]string{`{job="promtail"}`, "header"}), append(pb, "Authorization", "Bearer "+pubKey, "X-Source", "edge")...).expect(t, 204, "")
	// A stream without a source fails the request before anything is stored.
	r := ts.do("POST", "/loki/api/v1/push", push([2]string{`{source="edge"}`, "not stored"}, [2]string{`{job="x"}`, "no source"}), append(pb, "Authorization", "Bearer "+pubKey)...)
	if r.status != 401 || !strings.Contains(r.body, `{job=\"x\"}`) {
		t.Errorf("no source: %d %s", r.status, r.body)
	}
	ts.do("POST", "/loki/api/v1/push", []byte("not snappy"), append(pb, "Authorization", "Bearer "+pubKey)...).expect(t, 400, "")
	ts.do("POST", "/loki/api/v1/push", []byte(`x`), "Content-Type", "text/plain", "Authorization", "Bearer "+pubKey).expect(t, 415, "")
	ts.do("POST", "/loki/api/v1/push", gzipped(t, []byte(`{"streams":[{"stream":{"source":"edge"},"values":[["`+fmt.Sprint(secs*1e9)+`","gzip json"]]}]}`)),
		"Content-Type", "application/json", "Content-Encoding", "gzip", "Authorization", "Bearer "+pubKey).expect(t, 204, "")

	if got := messages(ts.events("edge")); got != "basic auth,gzip json,header,second" {
		t.Errorf("edge: %s", got)
	}
}

// TestBulkRoute: per-item answers, the version probe and its headers, and
// GET / for browsers left to the web UI.
func TestBulkRoute(t *testing.T) {
	ts := startServer(t, serverConfig{opts: Options{Now: serverNow}})
	ts.createSource("web")
	apiKey := "ApiKey " + base64.StdEncoding.EncodeToString([]byte("some-id:"+pubKey))

	r := ts.do("GET", "/", nil, "Accept", "application/json")
	if r.status != 200 || r.header.Get("X-Elastic-Product") != "Elasticsearch" || !strings.Contains(r.body, `"number":"8.`) {
		t.Errorf("GET /: %d %v %s", r.status, r.header, r.body)
	}
	if r := ts.do("HEAD", "/", nil); r.status != 200 || r.header.Get("X-Elastic-Product") != "Elasticsearch" {
		t.Errorf("HEAD /: %d", r.status)
	}
	if r := ts.do("GET", "/", nil, "Accept", "text/html,application/xhtml+xml"); r.header.Get("X-Elastic-Product") != "" {
		t.Errorf("a browser got the Elasticsearch answer: %d %s", r.status, r.body)
	}

	ts.do("POST", "/_bulk", []byte("{\"create\":{\"_index\":\"web\"}}\n{}\n"), "Content-Type", "application/x-ndjson").expect(t, 401, "")
	future := serverNow().Add(2 * time.Hour).Format(time.RFC3339)
	body := strings.Join([]string{
		`{"create":{}}`, `{"message":"one","@timestamp":"2025-07-10T12:00:00Z"}`,
		`{"index":{"_index":"nope"}}`, `{"message":"no such index"}`,
		`{"create":{"_index":"postgres.logs"}}`, `{"message":"forbidden"}`,
		`{"delete":{"_id":"1"}}`,
		`{"create":{}}`, `{"message":"future","@timestamp":"` + future + `"}`,
		`{"create":{}}`, `{broken`,
	}, "\n") + "\n"
	before := ts.srv.Stats()
	r = ts.do("POST", "/web/_bulk", []byte(body), "Content-Type", "application/x-ndjson", "Authorization", apiKey)
	if r.status != 200 || r.header.Get("X-Elastic-Product") != "Elasticsearch" {
		t.Fatalf("bulk: %d %s", r.status, r.body)
	}
	for _, want := range []string{
		`{"create":{"_index":"web","_id":"`, `"result":"created"`, `"status":201`,
		`{"index":{"_index":"nope","_id":"","status":404,"error":{"type":"index_not_found_exception"`,
		`{"delete":{"_index":"web","_id":"1","status":400,"error":{"type":"action_request_validation_exception"`,
		`"status":400,"error":{"type":"document_parsing_exception","reason":"@timestamp is more than an hour in the future"}`,
		`"status":400,"error":{"type":"document_parsing_exception","reason":"failed to parse`,
		`"errors":true`,
	} {
		if !strings.Contains(r.body, want) {
			t.Errorf("bulk answer lacks %s:\n%s", want, r.body)
		}
	}
	// pubKey may write to every source: postgres.logs is found and written.
	if got := messages(ts.events("postgres.logs")); got != "forbidden" {
		t.Errorf("postgres.logs: %s", got)
	}
	after := ts.srv.Stats()
	if after.Dropped(DropRejected)-before.Dropped(DropRejected) != 3 || after.Dropped(DropFutureTimestamp)-before.Dropped(DropFutureTimestamp) != 1 {
		t.Errorf("counters: rejected +%d, future +%d", after.Dropped(DropRejected)-before.Dropped(DropRejected), after.Dropped(DropFutureTimestamp)-before.Dropped(DropFutureTimestamp))
	}
	// A key scoped to postgres.logs is refused another source per item.
	r = ts.do("POST", "/_bulk", []byte("{\"create\":{\"_index\":\"web\"}}\n{\"message\":\"m\"}\n"), "Content-Type", "application/json", "Authorization", "Bearer "+ingestKey2)
	if !strings.Contains(r.body, `"status":403`) {
		t.Errorf("scoped key: %s", r.body)
	}
	r = ts.do("POST", "/_bulk", []byte("{\"upsert\":{}}\n{}\n"), "Content-Type", "application/json", "Authorization", apiKey)
	if r.status != 400 || !strings.Contains(r.body, `"type":"illegal_argument_exception"`) || !strings.Contains(r.body, `"status":400`) {
		t.Errorf("unknown action: %d %s", r.status, r.body)
	}
	if got := messages(ts.events("web")); got != "one" {
		t.Errorf("web: %s", got)
	}
}
