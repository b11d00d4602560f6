package httpapi

import (
	"net"
	"runtime"
	"testing"
	"time"

	"github.com/valyala/fasthttp"
	"github.com/valyala/fasthttp/fasthttputil"

	"github.com/sediment/sediment/bench/gen"
	"github.com/sediment/sediment/engine"
)

// BenchmarkIngestPath measures what one event costs from the request body
// to the head: Vector-style POSTs of pathBatchEvents platform-shaped edge
// events (as `sediment bench peers` sends them) go through the real
// server (body read, decode, normalise, batch, log record, commit into
// the head) over an in-memory connection, into an engine in a temporary
// directory (sync acks, as the server's default). Heads fill up
// (pathHeadRows, about what HeadMaxBytes holds of these events) and are
// frozen as in a running server, so each is sized from its predecessor;
// they are flushed every pathFlushEvery batches (a multiple of a head)
// with the timer stopped, so flushing is not counted. One op is one batch; cpu-ns/event is the
// process's CPU time (the client's share included, small next to the
// server's), B/event and allocs/event what was allocated.
//
//	go test ./httpapi -run '^$' -bench IngestPath -benchtime 60x -count 6 | tee new.txt
func BenchmarkIngestPath(b *testing.B) {
	const pathBatchEvents, pathHeadRows, pathFlushEvery = 5000, 50_000, 40
	g := gen.New(gen.EdgeLogs, gen.Options{Seed: 11, Shape: gen.Platform})
	bodies := make([][]byte, 8)
	total := 0
	for i := range bodies {
		bodies[i] = g.AppendVectorBatch(nil, pathBatchEvents)
		total += len(bodies[i])
	}
	ts := startServer(b, serverConfig{engine: engine.Options{
		DisableBackground: true, MaxFrozenHeads: 1 << 20, HeadMemoryBudget: 1 << 40,
		HeadMaxRows: pathHeadRows,
	}})
	ln := fasthttputil.NewInmemoryListener()
	go func() { _ = ts.srv.Serve(ln) }()
	client := &fasthttp.HostClient{Addr: "mem", Dial: func(string) (net.Conn, error) { return ln.Dial() }, MaxConns: 1}
	req, res := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
	defer fasthttp.ReleaseRequest(req)
	defer fasthttp.ReleaseResponse(res)
	req.SetRequestURI("http://mem/api/logs?source_name=cloudflare.logs.prod")
	req.Header.SetMethod(fasthttp.MethodPost)
	req.Header.SetContentType("application/json")
	req.Header.Set("x-api-key", pubKey)

	b.SetBytes(int64(total / len(bodies)))
	b.ReportAllocs()
	var cpu timeSum
	var before, after runtime.MemStats
	var allocBytes, allocs uint64
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		if i > 0 && i%pathFlushEvery == 0 {
			b.StopTimer()
			for _, sh := range ts.eng.Shards() {
				if err := sh.Flush(); err != nil {
					b.Fatal(err)
				}
			}
			b.StartTimer()
		}
		runtime.ReadMemStats(&before)
		cpu.start()
		req.SetBodyRaw(bodies[i%len(bodies)])
		if err := client.Do(req, res); err != nil || res.StatusCode() != fasthttp.StatusOK {
			b.Fatalf("status %d: %s (%v)", res.StatusCode(), res.Body(), err)
		}
		cpu.stop()
		runtime.ReadMemStats(&after)
		allocBytes += after.TotalAlloc - before.TotalAlloc
		allocs += after.Mallocs - before.Mallocs
	}
	events := float64(b.N * pathBatchEvents)
	b.ReportMetric(float64(cpu.total)/events, "cpu-ns/event")
	b.ReportMetric(float64(allocBytes)/events, "B/event")
	b.ReportMetric(float64(allocs)/events, "allocs/event")
	if st := ts.srv.Stats(); st.Events != int64(b.N*pathBatchEvents) {
		b.Fatalf("server stored %d events, want %d", st.Events, b.N*pathBatchEvents)
	}
}

// timeSum adds up the process's CPU time over the timed parts of a run.
type timeSum struct {
	total time.Duration
	from  time.Duration
}

func (t *timeSum) start() { t.from = processCPU() }
func (t *timeSum) stop()  { t.total += processCPU() - t.from }
