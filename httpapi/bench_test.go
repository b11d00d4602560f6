package httpapi

import (
	"fmt"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/sediment/sediment/bench/gen"
	"github.com/sediment/sediment/engine"
	"github.com/sediment/sediment/event"
	"github.com/sediment/sediment/httpapi/ingest"
	"github.com/sediment/sediment/internal/vfs"
)

// Run: go test -run '^$' -bench 'Ingest' -benchtime 400x -count 6 ./httpapi | tee new.txt
// (then benchstat old.txt new.txt).

const benchBatchEvents = 500

// vectorBatches returns n Vector-style bodies of benchBatchEvents
// platform-shaped edge events (~1.4 KB each) and their total size.
func vectorBatches(n int) ([][]byte, int) {
	g := gen.New(gen.EdgeLogs, gen.Options{Seed: 7, Shape: gen.Platform})
	out := make([][]byte, n)
	total := 0
	for i := range out {
		out[i] = g.AppendVectorBatch(nil, benchBatchEvents)
		total += len(out[i])
	}
	return out, total
}

// BenchmarkIngestHTTP measures ingestion end to end over loopback: clients
// POST Vector batches to /api/logs?source_name=cloudflare.logs.prod on
// several keep-alive connections; the server decodes, normalises and
// appends them to the engine (sync acks: each 200 is sent after fsync).
// One op is one 500-event batch. Client and server share the machine.
func BenchmarkIngestHTTP(b *testing.B) {
	batches, total := vectorBatches(64)
	for _, bc := range []struct {
		name  string
		conns int
		ack   engine.AckMode
	}{
		{"conns=4/ack=sync", 4, engine.AckSync},
		{"conns=16/ack=sync", 16, engine.AckSync},
		{"conns=4/ack=buffered", 4, engine.AckBuffered},
	} {
		b.Run(bc.name, func(b *testing.B) {
			ts := startServer(b, serverConfig{engine: engine.Options{AckMode: bc.ack}})
			client := &fasthttp.HostClient{Addr: strings.TrimPrefix(ts.base, "http://"), MaxConns: bc.conns}
			uri := ts.base + "/api/logs?source_name=cloudflare.logs.prod"
			var next atomic.Int64
			var failed atomic.Value
			b.SetBytes(int64(total / len(batches)))
			b.ReportAllocs()
			cpu0 := processCPU()
			b.ResetTimer()
			var wg sync.WaitGroup
			for range bc.conns {
				wg.Add(1)
				go func() {
					defer wg.Done()
					req, res := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
					defer fasthttp.ReleaseRequest(req)
					defer fasthttp.ReleaseResponse(res)
					req.SetRequestURI(uri)
					req.Header.SetMethod(fasthttp.MethodPost)
					req.Header.SetContentType("application/json")
					req.Header.Set("x-api-key", pubKey)
					for {
						i := next.Add(1) - 1
						if i >= int64(b.N) {
							return
						}
						req.SetBodyRaw(batches[i%int64(len(batches))])
						if err := client.Do(req, res); err != nil || res.StatusCode() != 200 {
							failed.Store("status " + strconv.Itoa(res.StatusCode()) + ": " + string(res.Body()))
							return
						}
					}
				}()
			}
			wg.Wait()
			b.StopTimer()
			b.ReportMetric((processCPU()-cpu0).Seconds()/b.Elapsed().Seconds(), "cores")
			if f := failed.Load(); f != nil {
				b.Fatal(f)
			}
			b.ReportMetric(float64(b.N*benchBatchEvents)/b.Elapsed().Seconds(), "events/s")
			if st := ts.srv.Stats(); st.Events != int64(b.N*benchBatchEvents) {
				b.Fatalf("server stored %d events, want %d", st.Events, b.N*benchBatchEvents)
			}
			if rss := peakRSSMiB(); rss > 0 {
				b.ReportMetric(rss, "peak-RSS-MiB")
			}
		})
	}
}

// BenchmarkIngestHTTPLarge is BenchmarkIngestHTTP as the 10M-event
// comparison with VictoriaLogs ran it: two senders of 8,000-event batches
// (about 11.6 MB each), with sync acks, under the server's default memory
// limit (256 MiB: the Go memory limit, and heads sized from it as
// `sediment serve` sizes them). One op is one 8,000-event batch; "cores"
// is the process's CPU time per second of the run (client included).
//
//	go test ./httpapi -run '^$' -bench IngestHTTPLarge -benchtime 40x -count 6 | tee new.txt
func BenchmarkIngestHTTPLarge(b *testing.B) {
	const events, conns = 8000, 2
	g := gen.New(gen.EdgeLogs, gen.Options{Seed: 9, Shape: gen.Platform})
	batches := make([][]byte, 8)
	total := 0
	for i := range batches {
		batches[i] = g.AppendVectorBatch(nil, events)
		total += len(batches[i])
	}
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(256 << 20))
	ts := startServer(b, serverConfig{engine: engine.Options{HeadMemoryBudget: 64 << 20, HeadMaxBytes: 32 << 20}})
	client := &fasthttp.HostClient{Addr: strings.TrimPrefix(ts.base, "http://"), MaxConns: conns, MaxResponseBodySize: 1 << 20}
	uri := ts.base + "/api/logs?source_name=cloudflare.logs.prod"
	var next atomic.Int64
	var failed atomic.Value
	b.SetBytes(int64(total / len(batches)))
	b.ReportAllocs()
	cpu0 := processCPU()
	b.ResetTimer()
	var wg sync.WaitGroup
	for range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req, res := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
			defer fasthttp.ReleaseRequest(req)
			defer fasthttp.ReleaseResponse(res)
			req.SetRequestURI(uri)
			req.Header.SetMethod(fasthttp.MethodPost)
			req.Header.SetContentType("application/json")
			req.Header.Set("x-api-key", pubKey)
			for {
				i := next.Add(1) - 1
				if i >= int64(b.N) {
					return
				}
				req.SetBodyRaw(batches[i%int64(len(batches))])
				if err := client.Do(req, res); err != nil || res.StatusCode() != 200 {
					failed.Store(fmt.Sprintf("status %d: %s (%v)", res.StatusCode(), res.Body(), err))
					return
				}
			}
		}()
	}
	wg.Wait()
	b.StopTimer()
	cpu := processCPU() - cpu0
	if f := failed.Load(); f != nil {
		b.Fatal(f)
	}
	b.ReportMetric(cpu.Seconds()/b.Elapsed().Seconds(), "cores")
	b.ReportMetric(cpu.Seconds()/float64(b.N*events)*1e6, "cpu-s/1M-events")
	b.ReportMetric(float64(b.N*events)/b.Elapsed().Seconds(), "events/s")
	if rss := peakRSSMiB(); rss > 0 {
		b.ReportMetric(rss, "peak-RSS-MiB")
	}
}

// BenchmarkIngestDecode is the HTTP layer's share of the same work on one
// core: decode, normalise and encode the same batches for the engine, as
// storeEach does, with no network and no append. Compare its ns/op with
// BenchmarkIngestHTTP's to see decoding's part of the end-to-end cost.
func BenchmarkIngestDecode(b *testing.B) {
	batches, total := vectorBatches(64)
	eng, err := engine.Open("/data", &engine.Options{FS: vfs.NewMemFS(), DisableBackground: true})
	if err != nil {
		b.Fatal(err)
	}
	defer eng.Close()
	w := newIngestWorker(ingest.DefaultMaxBodyBytes)
	now := time.Now()
	b.SetBytes(int64(total / len(batches)))
	b.ReportAllocs()
	cpu0 := processCPU()
	for i := 0; b.Loop(); i++ {
		res, err := w.dec.Decode(ingest.Request{Route: ingest.RouteCreate, ContentType: "application/json", Body: batches[i%len(batches)], Stream: true})
		if err != nil {
			b.Fatal(err)
		}
		batch := w.batchFor(eng)
		err = w.dec.Each(&res, func(raw event.Value) error {
			w.norm.Reset()
			ev, _ := w.norm.Normalize(raw, now, event.NormalizeOptions{})
			batch.Add(&ev)
			return nil
		})
		if err != nil || batch.Len() != benchBatchEvents {
			b.Fatal(err, batch.Len())
		}
	}
	// The process's CPU time per batch (one core, nothing else runs):
	// steadier than ns/op on a shared machine.
	b.ReportMetric(float64(processCPU()-cpu0)/float64(b.N), "cpu-ns/op")
	b.ReportMetric(float64(b.N*benchBatchEvents)/b.Elapsed().Seconds(), "events/s")
}

// processCPU returns the CPU time (user + system) the process has used.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// peakRSSMiB reads the process's peak resident set size (Linux), or 0.
func peakRSSMiB() float64 {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")))
			if err == nil {
				return float64(kb) / 1024
			}
		}
	}
	return 0
}
