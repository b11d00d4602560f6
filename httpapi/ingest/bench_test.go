package ingest

import (
	"bytes"
	"os"
	"strconv"
	"testing"
	"time"

	gojson "github.com/goccy/go-json"

	"github.com/sediment/sediment/event"
)

// Run: go test -run '^$' -bench . -count 6 ./httpapi/ingest | tee new.txt (then benchstat).

func edgeEvent(tb testing.TB) []byte {
	data, err := os.ReadFile("../../event/testdata/edge_event.json")
	if err != nil {
		tb.Fatal(err)
	}
	return bytes.TrimSpace(data)
}

// vectorBatch builds the body Vector's http sink sends: one JSON array of n
// platform-shaped edge events (~1.2 KB each), ids, timestamps and statuses
// varied.
func vectorBatch(tb testing.TB, n int) []byte {
	base := edgeEvent(tb)
	var buf bytes.Buffer
	buf.WriteByte('[')
	for i := range n {
		if i > 0 {
			buf.WriteByte(',')
		}
		ev := bytes.Replace(base, []byte("1d6b5e9c0a7f"), []byte(strconv.FormatInt(100000000000+int64(i), 16)), 1)
		ev = bytes.Replace(ev, []byte("12:00:05.123456Z"), []byte("12:"+strconv.Itoa(10+i%50)+":05.123456Z"), 1)
		ev = bytes.Replace(ev, []byte(`"status_code":200`), []byte(`"status_code":`+strconv.Itoa(200+i%5*100)), 1)
		buf.Write(ev)
	}
	buf.WriteByte(']')
	return buf.Bytes()
}

// BenchmarkDecodeVectorBatch decodes a 500-event, ~600 KB Vector batch on
// /api/logs; "normalize" adds event.Normalize of every event (the whole
// per-event CPU work before the engine).
func BenchmarkDecodeVectorBatch(b *testing.B) {
	body := vectorBatch(b, 500)
	req := Request{Route: RouteCreate, ContentType: "application/json", Body: body}
	d := NewDecoder()
	b.Run("parse", func(b *testing.B) {
		b.SetBytes(int64(len(body)))
		b.ReportAllocs()
		for b.Loop() {
			if res, err := d.Decode(req); err != nil || len(res.Events) != 500 {
				b.Fatal(err)
			}
		}
		b.ReportMetric(500*float64(b.N)/b.Elapsed().Seconds(), "events/s")
	})
	b.Run("parse+normalize", func(b *testing.B) {
		now := time.Date(2025, 7, 10, 12, 30, 0, 0, time.UTC)
		var n event.Normalizer
		b.SetBytes(int64(len(body)))
		b.ReportAllocs()
		for b.Loop() {
			res, err := d.Decode(req)
			if err != nil {
				b.Fatal(err)
			}
			n.Reset()
			for _, ev := range res.Events {
				n.Normalize(ev, now, event.NormalizeOptions{})
			}
		}
		b.ReportMetric(500*float64(b.N)/b.Elapsed().Seconds(), "events/s")
	})
	b.Run("gzip", func(b *testing.B) {
		gz := gzipBytes(b, body)
		greq := req
		greq.Body, greq.ContentEncoding = gz, "gzip"
		b.SetBytes(int64(len(body)))
		b.ReportAllocs()
		for b.Loop() {
			if _, err := d.Decode(greq); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(500*float64(b.N)/b.Elapsed().Seconds(), "events/s")
	})
	b.Run("zstd", func(b *testing.B) {
		zreq := req
		zreq.Body, zreq.ContentEncoding = zstdBytes(b, body), "zstd"
		b.SetBytes(int64(len(body)))
		b.ReportAllocs()
		for b.Loop() {
			if _, err := d.Decode(zreq); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(500*float64(b.N)/b.Elapsed().Seconds(), "events/s")
	})
}

// BenchmarkEdgeEventParse compares our parser with goccy/go-json decoding
// into map[string]any on one ~1.2 KB edge event.
func BenchmarkEdgeEventParse(b *testing.B) {
	data := edgeEvent(b)
	b.Run("sediment", func(b *testing.B) {
		var p event.Parser
		b.SetBytes(int64(len(data)))
		b.ReportAllocs()
		for b.Loop() {
			p.Reset()
			if _, err := p.Parse(data); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("goccy-map", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		b.ReportAllocs()
		for b.Loop() {
			var m map[string]any
			if err := gojson.Unmarshal(data, &m); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func BenchmarkDecodeLogplex(b *testing.B) {
	var buf bytes.Buffer
	for i := range 500 {
		switch i % 3 {
		case 0:
			buf.WriteString(herokuRouterLine)
		case 1:
			buf.WriteString(phxLine)
		default:
			buf.WriteString(herokuPostgres)
		}
		buf.WriteByte('\n')
	}
	req := Request{Route: RouteLogplex, ContentType: "application/logplex-1", Body: buf.Bytes()}
	d := NewDecoder()
	b.SetBytes(int64(buf.Len()))
	b.ReportAllocs()
	for b.Loop() {
		if res, err := d.Decode(req); err != nil || len(res.Events) != 500 {
			b.Fatal(err)
		}
	}
	b.ReportMetric(500*float64(b.N)/b.Elapsed().Seconds(), "events/s")
}
