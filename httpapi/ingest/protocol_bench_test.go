package ingest

import (
	"fmt"
	"strings"
	"testing"

	"github.com/klauspost/compress/s2"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	logspb "go.opentelemetry.io/proto/otlp/logs/v1"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
)

// Benchmarks of the protocol decoders on 500-record requests shaped like
// an instrumented service's logs (a message, a severity, trace ids, six
// attributes, three resource attributes). Per-record cost is ns/op / 500.
//
//	go test ./httpapi/ingest -run '^$' -bench 'OTLP|Loki|Bulk' -count 6 | tee new.txt
const benchRecords = 500

func benchOTLP() *logspb.LogsData {
	recs := make([]*logspb.LogRecord, benchRecords)
	for i := range recs {
		r := proto.Clone(fullRecord).(*logspb.LogRecord)
		r.Body = strVal(fmt.Sprintf("GET /api/orders/%d 200 in %dms", i, i%97))
		r.Attributes = []*commonpb.KeyValue{
			strAttr("http.request.method", "GET"), anyAttr("http.response.status_code", intVal(200)),
			strAttr("url.path", fmt.Sprintf("/api/orders/%d", i)), strAttr("user.id", fmt.Sprintf("u-%d", i%50)),
			anyAttr("duration_ms", intVal(int64(i%97))), strAttr("region", "eu-west-1"),
		}
		recs[i] = r
	}
	return otlpRequest(fullResource, recs...)
}

func BenchmarkDecodeOTLPLogs(b *testing.B) {
	data := benchOTLP()
	for _, enc := range []struct {
		name, ct string
		body     []byte
	}{
		{"protobuf", "application/x-protobuf", mustMarshal(b, data)},
		{"json", "application/json", []byte(protojson.Format(data))},
	} {
		b.Run(enc.name, func(b *testing.B) {
			d := NewDecoder()
			b.SetBytes(int64(len(enc.body)))
			b.ReportAllocs()
			for b.Loop() {
				logs, err := d.DecodeOTLPLogs(Request{ContentType: enc.ct, Body: enc.body})
				if err != nil || logs.Records() != benchRecords {
					b.Fatal(err, logs.Records())
				}
			}
		})
	}
}

func BenchmarkDecodeLokiPush(b *testing.B) {
	entries := make([]lokiEntry, benchRecords)
	for i := range entries {
		entries[i] = lokiEntry{secs: 1752148805 + int64(i), line: fmt.Sprintf(`{"level":"info","msg":"GET /api/orders/%d","status":200,"ms":%d}`, i, i%97)}
	}
	labels := `{job="api", source="edge", host="web-1"}`
	body := s2.EncodeSnappy(nil, lokiPushProto(map[string][]lokiEntry{labels: entries}, labels))
	d := NewDecoder()
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		p, err := d.DecodeLokiPush(Request{ContentType: "application/x-protobuf", Body: body})
		if err != nil || p.Entries() != benchRecords {
			b.Fatal(err)
		}
	}
}

func BenchmarkDecodeBulk(b *testing.B) {
	var sb strings.Builder
	for i := range benchRecords {
		fmt.Fprintf(&sb, "{\"create\":{\"_index\":\"web\"}}\n{\"@timestamp\":\"2025-07-10T12:00:05Z\",\"message\":\"GET /a/%d 200\",\"host\":{\"name\":\"web-1\"},\"log\":{\"file\":{\"path\":\"/var/log/x.log\"}},\"http\":{\"status\":200}}\n", i)
	}
	body := []byte(sb.String())
	d := NewDecoder()
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		items, err := d.DecodeBulk(Request{ContentType: "application/x-ndjson", Body: body}, "")
		if err != nil || len(items) != benchRecords {
			b.Fatal(err)
		}
	}
}
