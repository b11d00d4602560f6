package gen_test

import (
	"testing"

	"github.com/sediment/sediment/bench/gen"
)

// BenchmarkAppendEvent measures event generation per source and shape,
// reporting events/s and bytes/event. For benchstat:
//
//	go test -run '^$' -bench AppendEvent -count 6 ./bench/gen | tee gen.txt
func BenchmarkAppendEvent(b *testing.B) {
	for _, shape := range []gen.Shape{gen.Platform, gen.SelfHosted} {
		for _, src := range gen.AllSources() {
			b.Run(src.Table()+"/"+shape.String(), func(b *testing.B) {
				g := gen.New(src, gen.Options{Seed: 1, Shape: shape})
				buf := make([]byte, 0, 64<<10)
				var total int
				b.ReportAllocs()
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					if len(buf) > 60<<10 {
						buf = buf[:0]
					}
					n := len(buf)
					buf = g.AppendEvent(buf)
					total += len(buf) - n
				}
				b.StopTimer()
				b.ReportMetric(float64(total)/float64(b.N), "bytes/event")
				b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "events/s")
				b.SetBytes(int64(total / b.N))
			})
		}
	}
}

// BenchmarkAppendVectorBatch measures whole 500-event request bodies of
// platform edge events, the ingest benchmark's unit of work.
func BenchmarkAppendVectorBatch(b *testing.B) {
	g := gen.New(gen.EdgeLogs, gen.Options{Seed: 1, Shape: gen.Platform})
	var buf []byte
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		buf = g.AppendVectorBatch(buf[:0], 500)
	}
	b.SetBytes(int64(len(buf)))
	b.ReportMetric(float64(500*b.N)/b.Elapsed().Seconds(), "events/s")
}

// BenchmarkNew measures setting up a platform edge generator (project refs,
// client pool).
func BenchmarkNew(b *testing.B) {
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		gen.New(gen.EdgeLogs, gen.Options{Seed: int64(i), Shape: gen.Platform})
	}
}
