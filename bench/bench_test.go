package bench

import (
	"context"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sediment/sediment/bench/gen"
	"github.com/sediment/sediment/catalog"
	"github.com/sediment/sediment/engine"
	"github.com/sediment/sediment/query/endpoints"
)

// The end-to-end pipeline as Go benchmarks, for benchstat comparisons of a
// change (docs/benchmarking.md):
//
//	go test -run '^$' -bench . -count 6 ./bench | tee old.txt
//	# change the code
//	go test -run '^$' -bench . -count 6 ./bench | tee new.txt
//	benchstat old.txt new.txt

// BenchmarkIngestInProcess times what the server does with ingest request
// bodies (decode, normalise, append with group commit, flushes) on 20,000
// generated edge events, into a fresh engine per iteration.
func BenchmarkIngestInProcess(b *testing.B) {
	for _, shape := range []gen.Shape{gen.SelfHosted, gen.Platform} {
		b.Run("shape="+shape.String(), func(b *testing.B) {
			ds := Dataset{Shape: shape, Seed: 1, Events: 20_000, End: gen.DefaultStart().Add(24 * time.Hour)}
			batches, _ := generate(ds, 500, 0, nil)
			var bodyBytes int64
			for _, bt := range batches {
				bodyBytes += int64(len(bt.Body))
			}
			b.SetBytes(bodyBytes)
			b.ReportAllocs()
			for b.Loop() {
				b.StopTimer()
				dir, err := os.MkdirTemp(b.TempDir(), "ingest-*")
				if err != nil {
					b.Fatal(err)
				}
				cat, eng := openBenchEngine(b, dir, engine.Options{AckMode: engine.AckBuffered})
				b.StartTimer()
				if _, err := ingestInProcess(context.Background(), eng, cat, sourcesOf(ds), batchFeed(context.Background(), ds, 500, batches), 2, nil); err != nil {
					b.Fatal(err)
				}
				b.StopTimer()
				if err := eng.Close(); err != nil {
					b.Fatal(err)
				}
				os.RemoveAll(dir)
				b.StartTimer()
			}
			b.ReportMetric(float64(ds.Events)*float64(b.N)/b.Elapsed().Seconds(), "events/s")
		})
	}
}

// BenchmarkStudioSuite times each query of the Studio suite, in process,
// over 100,000 settled self-hosted edge events.
func BenchmarkStudioSuite(b *testing.B) {
	end := gen.DefaultStart().Add(24 * time.Hour)
	ds := Dataset{Seed: 1, Events: 100_000, End: end}
	dir := b.TempDir()
	cat, eng := openBenchEngine(b, dir, engine.Options{AckMode: engine.AckBuffered})
	if _, err := ingestInProcess(context.Background(), eng, cat, sourcesOf(ds), batchFeed(context.Background(), ds, 500, nil), 2, nil); err != nil {
		b.Fatal(err)
	}
	if err := eng.Close(); err != nil {
		b.Fatal(err)
	}
	eng, err := engine.Open(dir, settleOptions(engine.Options{}))
	if err != nil {
		b.Fatal(err)
	}
	defer eng.Close()
	if err := Settle(eng); err != nil {
		b.Fatal(err)
	}
	now := end.Add(time.Second)
	svc := endpoints.New(eng, cat, &endpoints.Options{Now: func() time.Time { return now }, DisableBackground: true})
	defer svc.Close()
	target := &ServiceTarget{Service: svc, Catalog: cat}
	for _, q := range StudioSuite(SuiteOptions{Project: ds.Project(), Now: now, Sources: sourcesOf(ds), NoCached: true}) {
		name := strings.NewReplacer(" ", "_", ",", "", "/", "-").Replace(q.Name)
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			rows := 0
			n := 0
			for b.Loop() {
				n++
				body, _, err := target.Run(context.Background(), q, strconv.Itoa(n))
				if err != nil {
					b.Fatal(err)
				}
				b.StopTimer()
				r, err := target.Rows(q, body)
				if err != nil {
					b.Fatal(err)
				}
				rows = len(r)
				b.StartTimer()
			}
			b.ReportMetric(float64(rows), "rows")
		})
	}
}

func openBenchEngine(b *testing.B, dir string, opts engine.Options) (*catalog.Catalog, *engine.Engine) {
	b.Helper()
	cat, err := catalog.Open(dir, nil)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := cat.SeedSupabase(); err != nil {
		b.Fatal(err)
	}
	eng, err := engine.Open(dir, &opts)
	if err != nil {
		b.Fatal(err)
	}
	return cat, eng
}
