package engine

import (
	"context"
	"os"
	"testing"

	"github.com/sediment/sediment/event"
	"github.com/sediment/sediment/internal/vec"
	"github.com/sediment/sediment/sql/scan"
)

// BenchmarkRepeatAfterFlush measures Studio's repeated regexp count on
// the newest rows right after they were flushed: each op appends a head
// of 35,000 edge events (sorted by project at flush, as the edge source
// is), flushes it, lets the warmer finish (warm=on) and counts
// regexp_contains(event_message, 'auth/v1/(token|user)') over the new
// rows, which the same count had asked over the rows before. With
// warm=off the count scans the new segment; with warm=on it takes the
// answers the warmer stored. cpu-ns/op is the count's CPU; warm-cpu-s/1M
// is the warmer's CPU per 1M events ingested, for this one predicate.
//
//	go test ./engine -run '^$' -bench RepeatAfterFlush -benchtime 10x -count 6
func BenchmarkRepeatAfterFlush(b *testing.B) {
	const head = 35_000
	evs, _ := edgeEvents(b, head, 29)
	minT, maxT := evs[0].Timestamp, evs[0].Timestamp
	for _, ev := range evs {
		minT, maxT = min(minT, ev.Timestamp), max(maxT, ev.Timestamp)
	}
	span := maxT - minT + 1
	regex := scan.Predicate{Path: "event_message", Type: vec.String, Op: scan.Regex, Args: []scan.Const{{Type: vec.String, Str: `auth/v1/(token|user)`}}}
	for _, warm := range []string{"off", "on"} {
		b.Run("warm="+warm, func(b *testing.B) {
			dir, err := os.MkdirTemp("", "sediment-bench-")
			if err != nil {
				b.Fatal(err)
			}
			defer os.RemoveAll(dir)
			e, err := Open(dir, &Options{DisableBackground: true, AckMode: AckBuffered, HeadMaxBytes: 1 << 30,
				HeadMemoryBudget: 1 << 30, SortKey: "project"})
			if err != nil {
				b.Fatal(err)
			}
			defer e.Close()
			w := e.warm
			if warm == "off" {
				e.warm = nil
			}
			s, _ := e.Shard("bench")
			shifted := make([]event.Event, head)
			batch := 0
			// ingest appends and flushes the next head, returning the time
			// its rows start at.
			ingest := func() int64 {
				off := int64(batch) * span
				batch++
				for i := range evs {
					shifted[i] = evs[i]
					shifted[i].Timestamp += off
				}
				if err := s.Append(context.Background(), shifted); err != nil {
					b.Fatal(err)
				}
				if err := s.Flush(); err != nil {
					b.Fatal(err)
				}
				return minT + off
			}
			count := func(from int64) int64 {
				sn := s.Snapshot()
				defer sn.Release()
				return countUnits(b, sn, &scan.Request{TimeMin: from, TimeMax: scan.MaxTime, Filters: []scan.Predicate{regex}})
			}
			from := ingest()
			count(from) // Studio's chart asks; then keeps asking
			b.ReportAllocs()
			b.ResetTimer()
			var queryCPU, warmCPU int64
			hits := predCache.hits.Load()
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				from = ingest()
				cpu := processCPU()
				w.pending.Wait()
				warmCPU += int64(processCPU() - cpu)
				b.StartTimer()
				cpu = processCPU()
				if count(from) == 0 {
					b.Fatal("no rows matched")
				}
				queryCPU += int64(processCPU() - cpu)
			}
			b.ReportMetric(float64(queryCPU)/float64(b.N), "cpu-ns/op")
			b.ReportMetric(float64(warmCPU)/1e9/(float64(b.N)*head/1e6), "warm-cpu-s/1M")
			b.ReportMetric(float64(predCache.hits.Load()-hits)/float64(b.N), "hits/op")
		})
	}
}
