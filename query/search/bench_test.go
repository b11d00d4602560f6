package search

// Benchmarks of LQL search and live tail on generated Supabase edge
// events (bench/gen, platform shape, ~1.4 KB of JSON each).
//
//	go test ./query/search -run '^$' -bench . -count 6 | tee new.txt
//	benchstat old.txt new.txt
//
// SEDIMENT_BENCH_EVENTS sets the number of events the search benchmarks
// load (default 1,000,000), e.g. for the README's 10M figures:
//
//	SEDIMENT_BENCH_EVENTS=10000000 go test ./query/search -run '^$' -bench Search -benchtime 20x -timeout 2h

import (
	"context"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sediment/sediment/bench/gen"
	"github.com/sediment/sediment/engine"
	"github.com/sediment/sediment/event"
)

// edgeEvents generates n normalised edge events.
func edgeEvents(tb testing.TB, n int, seed int64) []event.Event {
	tb.Helper()
	g := gen.New(gen.EdgeLogs, gen.Options{Seed: seed, Shape: gen.Platform, Rate: 2000})
	var p event.Parser
	var norm event.Normalizer
	now := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	evs := make([]event.Event, 0, n)
	var buf []byte
	for i := 0; i < n; i++ {
		buf = g.AppendEvent(buf[:0])
		v, err := p.Parse(buf)
		if err != nil {
			tb.Fatal(err)
		}
		ev, _ := norm.Normalize(v, now, event.NormalizeOptions{})
		evs = append(evs, ev.Clone())
		if i%4096 == 0 {
			p.Reset()
			norm.Reset()
		}
	}
	return evs
}

func benchEvents() int {
	if s := os.Getenv("SEDIMENT_BENCH_EVENTS"); s != "" {
		if n, err := strconv.Atoi(s); err == nil && n > 0 {
			return n
		}
	}
	return 1_000_000
}

// loaded holds the engines the search benchmarks share, by event count.
var loaded sync.Map // int → *engine.Shard

// loadedShard ingests n edge events into a fresh engine once per process
// (flushed and compacted, as a source a while after ingestion).
func loadedShard(b *testing.B, n int) *engine.Shard {
	if v, ok := loaded.Load(n); ok {
		return v.(*engine.Shard)
	}
	dir, err := os.MkdirTemp("", "sediment-search-bench-")
	if err != nil {
		b.Fatal(err)
	}
	e, err := engine.Open(dir, &engine.Options{DisableBackground: true, AckMode: engine.AckBuffered})
	if err != nil {
		b.Fatal(err)
	}
	s, err := e.Shard("edge")
	if err != nil {
		b.Fatal(err)
	}
	const chunk = 100_000
	for done := 0; done < n; done += chunk {
		evs := edgeEvents(b, min(chunk, n-done), int64(done)+7)
		for off := 0; off < len(evs); off += 5000 {
			err := s.Append(context.Background(), evs[off:min(off+5000, len(evs))])
			if err == engine.ErrBackpressure {
				// Nothing flushes in the background here: make room.
				if err = s.Flush(); err == nil {
					err = s.Append(context.Background(), evs[off:min(off+5000, len(evs))])
				}
			}
			if err != nil {
				b.Fatal(err)
			}
		}
		if err := s.Flush(); err != nil {
			b.Fatal(err)
		}
	}
	for {
		m, err := s.Compact()
		if err != nil {
			b.Fatal(err)
		}
		if m == 0 {
			break
		}
	}
	loaded.Store(n, s)
	return s
}

// BenchmarkSearch runs LQL searches over the loaded events: per query,
// "count" is SELECT COUNT(*) with the LQL's filters (what a total would
// cost), "chart" the chart query alone (c:count(*) per hour bucket),
// "newest100" the event query alone (newest first, LIMIT 100, both of its
// steps), and "api" the whole search as the HTTP route runs it (snapshot,
// parse with the source schema, events and chart, JSON encoding).
func BenchmarkSearch(b *testing.B) {
	n := benchEvents()
	for _, tc := range []struct{ name, lql string }{
		// The value index answers it.
		{"status_code=500", "m.response.status_code:500"},
		// A word of event_message (the token index narrows the blocks).
		{"word=Deno", "Deno"},
		// A regex over a string field (evaluated per dictionary entry).
		{"path=~rpc", `m.request.path:~"^/rest/v1/rpc/"`},
	} {
		b.Run(tc.name, func(b *testing.B) {
			sh := loadedShard(b, n)
			sn := sh.Snapshot()
			defer sn.Release()
			tbl := sn.Table("edge")
			s := New(Options{})
			ctx := context.Background()
			p, err := s.Prepare(ctx, tbl, Request{LQL: tc.lql + " c:count(*) c:group_by(t::hour)"})
			if err != nil {
				b.Fatal(err)
			}
			countSQL := "SELECT COUNT(*) AS count " + p.NewestSQL[len("SELECT t.timestamp "):strings.Index(p.NewestSQL, " ORDER BY")]
			b.Run("count", func(b *testing.B) {
				b.ReportAllocs()
				var matches int64
				for i := 0; i < b.N; i++ {
					res, err := s.query(ctx, tbl, countSQL, 1)
					if err != nil {
						b.Fatal(err)
					}
					matches = res.Cols[0].IntAt(0)
				}
				b.ReportMetric(float64(matches), "matches")
				b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "events/s")
			})
			b.Run("chart", func(b *testing.B) {
				b.ReportAllocs()
				var matches int64
				for i := 0; i < b.N; i++ {
					res, err := s.query(ctx, tbl, p.ChartSQL, MaxChartBuckets)
					if err != nil {
						b.Fatal(err)
					}
					matches = 0
					for r := 0; r < res.Len; r++ {
						matches += res.Cols[1].IntAt(r)
					}
				}
				b.ReportMetric(float64(matches), "matches")
				b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "events/s")
			})
			b.Run("newest100", func(b *testing.B) {
				b.ReportAllocs()
				for i := 0; i < b.N; i++ {
					res, err := s.events(ctx, tbl, p)
					if err != nil {
						b.Fatal(err)
					}
					if res.Len != 100 {
						b.Fatalf("%d rows", res.Len)
					}
				}
			})
			b.Run("api", func(b *testing.B) {
				b.ReportAllocs()
				var out []byte
				for i := 0; i < b.N; i++ {
					res, err := s.Search(ctx, sh, "edge", Request{LQL: tc.lql + " c:count(*)"})
					if err != nil {
						b.Fatal(err)
					}
					out = res.AppendJSON(out[:0])
				}
				b.SetBytes(int64(len(out)))
			})
		})
	}
}

// BenchmarkTailLatency measures live-tail delivery under ingest load: one
// goroutine appends b.N batches of 500 edge events as fast as the engine
// takes them while a tail filtered on m.response.status_code:>=500
// receives them, matches each event and renders the matches as JSON (what
// the SSE route does per event). Reported: the time from Append
// returning to the tail receiving the batch ("after-ack", 0 when the
// batch arrived before Append returned: the engine publishes before it
// acknowledges), and from the Append call ("from-call", which includes the
// group commit), as p50/p99 in µs; the ingest rate; events the tail lost
// to a full buffer.
func BenchmarkTailLatency(b *testing.B) {
	for _, ack := range []engine.AckMode{engine.AckBuffered, engine.AckSync} {
		b.Run("ack="+ack.String(), func(b *testing.B) {
			benchTail(b, ack)
		})
	}
}

func benchTail(b *testing.B, ack engine.AckMode) {
	const batch = 500
	evs := edgeEvents(b, 50_000, 3)
	e, err := engine.Open(b.TempDir(), &engine.Options{AckMode: ack})
	if err != nil {
		b.Fatal(err)
	}
	defer e.Close()
	sh, err := e.Shard("edge")
	if err != nil {
		b.Fatal(err)
	}
	m, err := ParseTailFilter("m.response.status_code:>=500", time.Now())
	if err != nil {
		b.Fatal(err)
	}
	tl := NewTail(sh, m, 256)
	defer tl.Close()

	called := make([]int64, b.N)          // ns, Append called
	acked := make([]int64, b.N)           // ns, Append returned
	received := make([]atomic.Int64, b.N) // ns, the tail got the batch; 0 if dropped
	var matched atomic.Int64
	done := make(chan struct{})
	go func() {
		defer close(done)
		var buf []byte
		for batchEvs := range tl.Batches() {
			now := time.Now().UnixNano()
			for i := range batchEvs {
				if id := batchEvs[i].ID; strings.HasPrefix(id, "bench-batch-") {
					k, _ := strconv.Atoi(id[len("bench-batch-"):])
					received[k].Store(now)
				}
			}
			tl.Each(batchEvs, func(ev *event.Event) error {
				buf = event.AppendEventJSON(buf[:0], *ev)
				matched.Add(1)
				return nil
			})
		}
	}()

	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	chunk := make([]event.Event, batch)
	for k := 0; k < b.N; k++ {
		off := (k * batch) % (len(evs) - batch)
		copy(chunk, evs[off:off+batch])
		chunk[0].ID = "bench-batch-" + strconv.Itoa(k)
		called[k] = time.Now().UnixNano()
		for {
			err := sh.Append(context.Background(), chunk)
			if err == engine.ErrBackpressure {
				time.Sleep(time.Millisecond)
				continue
			}
			if err != nil {
				b.Fatal(err)
			}
			break
		}
		acked[k] = time.Now().UnixNano()
	}
	elapsed := time.Since(start)
	b.StopTimer()
	// Let the tail drain, then end it.
	deadline := time.Now().Add(10 * time.Second)
	for received[b.N-1].Load() == 0 && tl.sub.Dropped() == 0 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	time.Sleep(10 * time.Millisecond)
	tl.Close()
	<-done

	var afterAck, fromCall []float64
	for k := 0; k < b.N; k++ {
		r := received[k].Load()
		if r == 0 {
			continue
		}
		afterAck = append(afterAck, float64(max(0, r-acked[k]))/1e3)
		fromCall = append(fromCall, float64(r-called[k])/1e3)
	}
	b.ReportMetric(float64(b.N*batch)/elapsed.Seconds(), "events/s")
	b.ReportMetric(float64(tl.sub.Dropped()), "dropped")
	if len(afterAck) > 0 {
		b.ReportMetric(percentile(afterAck, 50), "after-ack-p50-µs")
		b.ReportMetric(percentile(afterAck, 99), "after-ack-p99-µs")
		b.ReportMetric(percentile(fromCall, 50), "from-call-p50-µs")
		b.ReportMetric(percentile(fromCall, 99), "from-call-p99-µs")
	}
}

func percentile(xs []float64, p int) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	i := (len(s) - 1) * p / 100
	return s[i]
}
