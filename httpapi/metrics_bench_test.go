package httpapi

import (
	"io"
	"net"
	"testing"
	"time"

	"github.com/valyala/fasthttp"
)

// Run: go test -run '^$' -bench 'Metrics' -count 6 ./httpapi | tee new.txt
// (then benchstat old.txt new.txt).

// BenchmarkMetricsScrape measures one scrape of /metrics's registry over
// the nine Supabase sources, each with events in memory and ingest
// counts: the cost of reading every collector and encoding the text.
func BenchmarkMetricsScrape(b *testing.B) {
	ts := startServer(b, serverConfig{})
	for _, src := range ts.cat.Sources() {
		ts.do("POST", "/api/logs?source_name="+src.Name, []byte(`[{"message":"a"},{"message":"b"}]`),
			"x-api-key", pubKey, "Content-Type", "application/json").expect(b, 200, "")
	}
	b.ReportAllocs()
	b.ReportMetric(float64(len(ts.cat.Sources())), "sources")
	for b.Loop() {
		if _, err := ts.srv.metrics.Write(io.Discard); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkMetricsObserveRequest measures what every request pays for
// the metrics: naming its route, counting it and timing it.
func BenchmarkMetricsObserveRequest(b *testing.B) {
	ts := startServer(b, serverConfig{})
	var req fasthttp.Request
	req.Header.SetMethod("POST")
	req.SetRequestURI("/api/logs?source_name=postgres.logs")
	var ctx fasthttp.RequestCtx
	ctx.Init(&req, &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)}, nil)
	ctx.SetStatusCode(200)
	start := time.Now()
	b.ReportAllocs()
	for b.Loop() {
		ts.srv.observeRequest(&ctx, start)
	}
}
