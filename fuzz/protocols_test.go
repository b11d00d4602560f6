package fuzz

import (
	"strings"
	"testing"

	"github.com/klauspost/compress/s2"
	"google.golang.org/protobuf/encoding/protowire"

	"github.com/sediment/sediment/event"
	"github.com/sediment/sediment/httpapi/ingest"
)

// The decoders of other ecosystems' protocols: OTLP/HTTP logs, Loki push,
// Elasticsearch bulk, and syslog frames from the listener (RFC 5424 and
// RFC 3164).

// otlpJSONSeed is an OTLP/JSON request as the collector writes it.
const otlpJSONSeed = `{"resourceLogs":[{"resource":{"attributes":[{"key":"service.name","value":{"stringValue":"checkout"}},` +
	`{"key":"host.name","value":{"stringValue":"web-1"}}]},"scopeLogs":[{"scope":{"name":"s","version":"1"},"logRecords":[` +
	`{"timeUnixNano":"1752148805123456789","severityNumber":9,"severityText":"INFO","body":{"stringValue":"order placed"},` +
	`"attributes":[{"key":"http.request.method","value":{"stringValue":"POST"}},{"key":"a","value":{"kvlistValue":{"values":[{"key":"b","value":{"intValue":"1"}}]}}},` +
	`{"key":"arr","value":{"arrayValue":{"values":[{"doubleValue":1.5},{"boolValue":true},{"bytesValue":"3q0="}]}}}],` +
	`"traceId":"5b8efff798038103d269b633813fc60c","spanId":"eee19b7ec3c1b174","flags":1},` +
	`{"observedTimeUnixNano":"1","body":{"kvlistValue":{"values":[{"key":"k","value":{}}]}}}]}]}]}`

// otlpProtoSeed hand-encodes a small ExportLogsServiceRequest.
func otlpProtoSeed() []byte {
	kv := func(k, v string) []byte {
		var any, b []byte
		any = protowire.AppendTag(any, 1, protowire.BytesType)
		any = protowire.AppendString(any, v)
		b = protowire.AppendTag(b, 1, protowire.BytesType)
		b = protowire.AppendString(b, k)
		b = protowire.AppendTag(b, 2, protowire.BytesType)
		return protowire.AppendBytes(b, any)
	}
	var rec, body, scope, res, rl, req []byte
	body = protowire.AppendTag(body, 1, protowire.BytesType)
	body = protowire.AppendString(body, "hello")
	rec = protowire.AppendTag(rec, 1, protowire.Fixed64Type)
	rec = protowire.AppendFixed64(rec, 1752148805123456789)
	rec = protowire.AppendTag(rec, 2, protowire.VarintType)
	rec = protowire.AppendVarint(rec, 13)
	rec = protowire.AppendTag(rec, 5, protowire.BytesType)
	rec = protowire.AppendBytes(rec, body)
	rec = protowire.AppendTag(rec, 6, protowire.BytesType)
	rec = protowire.AppendBytes(rec, kv("user.id", "u-1"))
	rec = protowire.AppendTag(rec, 9, protowire.BytesType)
	rec = protowire.AppendBytes(rec, make([]byte, 16))
	scope = protowire.AppendTag(scope, 2, protowire.BytesType)
	scope = protowire.AppendBytes(scope, rec)
	res = protowire.AppendTag(res, 1, protowire.BytesType)
	res = protowire.AppendBytes(res, kv("service.name", "checkout"))
	rl = protowire.AppendTag(rl, 1, protowire.BytesType)
	rl = protowire.AppendBytes(rl, res)
	rl = protowire.AppendTag(rl, 2, protowire.BytesType)
	rl = protowire.AppendBytes(rl, scope)
	req = protowire.AppendTag(req, 1, protowire.BytesType)
	return protowire.AppendBytes(req, rl)
}

// checkRawEvents normalises raw events and checks their JSON parses back.
func checkRawEvents(t *testing.T, evs []event.Value) {
	t.Helper()
	var norm event.Normalizer
	for _, raw := range evs {
		if raw.Kind != event.Object {
			t.Fatalf("decoded event is %v, not an object", raw.Kind)
		}
		e, _ := norm.Normalize(raw, fixedNow, event.NormalizeOptions{NewID: idSeq()})
		js := event.AppendEventJSON(nil, e)
		if _, err := event.Parse(js); err != nil {
			t.Fatalf("normalised event's JSON does not parse: %v\n%s", err, js)
		}
	}
}

// FuzzOTLPLogs: POST /v1/logs in both encodings (json selects).
func FuzzOTLPLogs(f *testing.F) {
	f.Add(false, otlpProtoSeed())
	f.Add(true, []byte(otlpJSONSeed))
	f.Add(true, []byte(`{"resourceLogs":[{"scopeLogs":[{"logRecords":[{}]}]}]}`))
	f.Add(false, []byte{0x0a, 0x00})
	d := ingest.NewDecoder()
	d.MaxBodyBytes = maxInput
	f.Fuzz(func(t *testing.T, json bool, body []byte) {
		ct := "application/x-protobuf"
		if json {
			ct = "application/json"
		}
		checkAlloc(t, allocLimit(len(body)), func() {
			logs, err := d.DecodeOTLPLogs(ingest.Request{ContentType: ct, Body: body})
			if err != nil {
				checkDecodeErr(t, err)
				return
			}
			if logs.Rejected < 0 || (logs.Rejected > 0) != (logs.Reason != "") {
				t.Fatalf("rejected %d with reason %q", logs.Rejected, logs.Reason)
			}
			for _, r := range logs.Resources {
				checkRawEvents(t, r.Events)
			}
			// The answer encodes whatever was rejected.
			_ = ingest.AppendOTLPExportResponse(nil, ingest.OTLPProtobuf, logs.Rejected, logs.Reason)
		})
	})
}

// lokiProtoSeed is a PushRequest by push.proto's numbers.
func lokiProtoSeed(labels, line string) []byte {
	var ts, ent, st, req []byte
	ts = protowire.AppendTag(ts, 1, protowire.VarintType)
	ts = protowire.AppendVarint(ts, 1752148805)
	ent = protowire.AppendTag(ent, 1, protowire.BytesType)
	ent = protowire.AppendBytes(ent, ts)
	ent = protowire.AppendTag(ent, 2, protowire.BytesType)
	ent = protowire.AppendString(ent, line)
	st = protowire.AppendTag(st, 1, protowire.BytesType)
	st = protowire.AppendString(st, labels)
	st = protowire.AppendTag(st, 2, protowire.BytesType)
	st = protowire.AppendBytes(st, ent)
	req = protowire.AppendTag(req, 1, protowire.BytesType)
	return protowire.AppendBytes(req, st)
}

// FuzzLokiPush: POST /loki/api/v1/push. For protobuf the fuzzer's bytes
// are the PushRequest (snappy-compressed here, so that the fuzzer explores
// the message rather than the compression) or, with raw, the body as sent.
func FuzzLokiPush(f *testing.F) {
	f.Add(byte(0), lokiProtoSeed(`{job="nginx", source="edge"}`, `GET / 200`))
	f.Add(byte(0), lokiProtoSeed(`{a="\"q\" \\"}`, `{"level":"info","n":1}`))
	f.Add(byte(1), []byte(`{"streams":[{"stream":{"app":"a"},"values":[["1752148805000000000","line"],["1","{\"k\":[1]}",{"trace":"t"}]]}]}`))
	f.Add(byte(2), s2.EncodeSnappy(nil, lokiProtoSeed(`{}`, "x")))
	d := ingest.NewDecoder()
	d.MaxBodyBytes = maxInput
	f.Fuzz(func(t *testing.T, mode byte, body []byte) {
		ct := "application/x-protobuf"
		switch mode % 3 {
		case 0:
			body = s2.EncodeSnappy(nil, body)
		case 1:
			ct = "application/json"
		}
		checkAlloc(t, allocLimit(len(body)), func() {
			push, err := d.DecodeLokiPush(ingest.Request{ContentType: ct, Body: body})
			if err != nil {
				checkDecodeErr(t, err)
				return
			}
			for _, s := range push.Streams {
				checkRawEvents(t, s.Events)
			}
		})
	})
}

// FuzzBulk: POST /_bulk with NDJSON action and document lines.
func FuzzBulk(f *testing.F) {
	f.Add([]byte(strings.Join([]string{
		`{"create":{"_index":"web"}}`, `{"@timestamp":"2025-07-10T12:00:05Z","message":"m","host":{"name":"h"}}`,
		`{"index":{"_id":7}}`, `{"event_message":"e","timestamp":1752148805}`,
		`{"update":{"_id":"1"}}`, `{"doc":{}}`, `{"delete":{"_id":"1"}}`, `{"create":{}}`, `[1]`,
	}, "\n") + "\n"))
	f.Add([]byte("{\"index\":{}}\n"))
	f.Add([]byte("{\"upsert\":{}}\n{}\n"))
	d := ingest.NewDecoder()
	d.MaxBodyBytes = maxInput
	f.Fuzz(func(t *testing.T, body []byte) {
		checkAlloc(t, allocLimit(len(body)), func() {
			items, err := d.DecodeBulk(ingest.Request{ContentType: "application/x-ndjson", Body: body}, "default")
			if err != nil {
				checkDecodeErr(t, err)
				return
			}
			var evs []event.Value
			for _, it := range items {
				if it.Failed() {
					if it.Reason == "" {
						t.Fatalf("failed item without a reason: %+v", it)
					}
					continue
				}
				evs = append(evs, it.Event)
			}
			checkRawEvents(t, evs)
		})
	})
}

// FuzzSyslogFrames: messages as the syslog listener frames them, split
// here on NUL bytes.
func FuzzSyslogFrames(f *testing.F) {
	for _, s := range []string{
		"<13>Jul 10 12:00:05 web-1 shop[42]: order placed\x00<14>1 2025-07-10T12:00:05Z h app 1 - - five",
		"<165>1 2025-07-10T12:00:06.5Z web-1 shop 42 ID7 [ex@32473 k=\"v\\\"\"] with sd\r\n",
		"<34>Oct 11 22:14:15 mymachine su: 'su root' failed\x00<0>Jan  1 00:00:00 h t: {\"json\":1}",
		"<30>2025-07-10T14:00:05.250+02:00 h app[1]: m\x00garbage\x00<999>x",
		"<189>237: 000485: router1: *Jan  8 19:46:03.295: %SYS-5-CONFIG_I: Configured",
	} {
		f.Add([]byte(s))
	}
	d := ingest.NewDecoder()
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > maxInput {
			return
		}
		var frames [][]byte
		for _, fr := range strings.Split(string(data), "\x00") {
			frames = append(frames, []byte(fr))
		}
		checkAlloc(t, allocLimit(len(data)), func() {
			res := d.DecodeSyslogFrames(frames, fixedNow)
			if res.Skipped < 0 || res.Skipped+len(res.Events) > len(frames) {
				t.Fatalf("%d events and %d skipped from %d frames", len(res.Events), res.Skipped, len(frames))
			}
			checkRawEvents(t, res.Events)
		})
	})
}
