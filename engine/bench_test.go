package engine

// Benchmarks of the storage engine on generated Supabase edge events
// (platform shape, ~1.2 KB of JSON each).
//
// Compare before and after a change with benchstat:
//
//	go test ./engine -run '^$' -bench . -count 6 | tee new.txt
//	benchstat old.txt new.txt
//
// SEDIMENT_BENCH_EVENTS sets the data size of the query benchmarks
// (default 1,000,000; the README's figures use 10,000,000).

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/sediment/sediment/bench/gen"
	"github.com/sediment/sediment/event"
	"github.com/sediment/sediment/internal/vec"
	"github.com/sediment/sediment/internal/vfs"
	"github.com/sediment/sediment/sql/scan"
)

// edgeEvents generates n normalised edge events and their total JSON size.
func edgeEvents(tb testing.TB, n int, seed int64) ([]event.Event, int64) {
	tb.Helper()
	g := gen.New(gen.EdgeLogs, gen.Options{Seed: seed, Shape: gen.Platform, Rate: 2000})
	var p event.Parser
	var norm event.Normalizer
	now := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	evs := make([]event.Event, 0, n)
	var raw int64
	var buf []byte
	for i := 0; i < n; i++ {
		buf = g.AppendEvent(buf[:0])
		raw += int64(len(buf))
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
	return evs, raw
}

func benchEvents() int {
	if s := os.Getenv("SEDIMENT_BENCH_EVENTS"); s != "" {
		if n, err := strconv.Atoi(s); err == nil && n > 0 {
			return n
		}
	}
	return 1_000_000
}

// BenchmarkAppendSync measures durable ingest through the engine alone:
// 4 writers appending 500-event batches in sync ack mode on the real file
// system, with background flush and compaction running. One op is one
// event. After the run it flushes, compacts and reports bytes per event
// on disk.
func BenchmarkAppendSync(b *testing.B) {
	evs, raw := edgeEvents(b, 100_000, 1)
	dir := b.TempDir()
	e, err := Open(dir, &Options{CompactionInterval: 200 * time.Millisecond, CompactZstdLevel: benchCompactLevel()})
	if err != nil {
		b.Fatal(err)
	}
	defer e.Close()
	s, err := e.Shard("bench")
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(raw / int64(len(evs)))
	span := evs[len(evs)-1].Timestamp - evs[0].Timestamp + 1_000_000
	b.ReportAllocs()
	b.ResetTimer()
	const batch = 500
	var next atomic.Int64
	var wg sync.WaitGroup
	start := time.Now()
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := next.Add(batch) - batch
				if i >= int64(b.N) {
					return
				}
				n := min(int64(batch), int64(b.N)-i)
				off := int(i) % (len(evs) - batch)
				// Later passes over the events move on in time, as a live
				// source does.
				shift := (i / int64(len(evs)-batch)) * span
				chunk := make([]event.Event, n)
				for k := range chunk {
					chunk[k] = evs[off+k]
					chunk[k].Timestamp += shift
				}
				for {
					err := s.Append(context.Background(), chunk)
					if err == ErrBackpressure {
						time.Sleep(time.Millisecond)
						continue
					}
					if err != nil {
						b.Error(err)
						return
					}
					break
				}
			}
		}()
	}
	wg.Wait()
	b.StopTimer()
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "events/s")
	if err := s.Flush(); err != nil {
		b.Fatal(err)
	}
	for {
		n, err := s.Compact()
		if err != nil {
			b.Fatal(err)
		}
		if n == 0 {
			break
		}
	}
	if b.N >= 100_000 {
		b.ReportMetric(float64(segmentBytes(b, dir))/float64(b.N), "disk-B/event")
	}
}

func segmentBytes(tb testing.TB, dir string) int64 {
	var total int64
	filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if err == nil && !info.IsDir() && filepath.Ext(p) == ".seg" {
			total += info.Size()
		}
		return nil
	})
	return total
}

// BenchmarkFlush measures writing a full head (131,072 events) to a
// segment with its index, in time order and ordered by project (100
// projects). One op is one flush; MB/s is of raw JSON.
func BenchmarkFlush(b *testing.B) {
	evs, raw := edgeEvents(b, 131072, 2)
	for _, key := range []string{"", "project"} {
		b.Run("key="+map[string]string{"": "time"}[key]+key, func(b *testing.B) { benchFlush(b, evs, raw, key) })
	}
}

func benchFlush(b *testing.B, evs []event.Event, raw int64, sortKey string) {
	b.SetBytes(raw)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		dir := b.TempDir()
		// One head of every event, flushed once: no early freezing.
		e, err := Open(dir, &Options{DisableBackground: true, AckMode: AckBuffered, HeadMaxBytes: 1 << 30, HeadMemoryBudget: 1 << 30, SortKey: sortKey})
		if err != nil {
			b.Fatal(err)
		}
		s, _ := e.Shard("bench")
		for off := 0; off < len(evs); off += 4096 {
			if err := s.Append(context.Background(), evs[off:min(off+4096, len(evs))]); err != nil {
				b.Fatal(err)
			}
		}
		b.StartTimer()
		if err := s.Flush(); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		if i == 0 {
			b.ReportMetric(float64(segmentBytes(b, dir))/float64(len(evs)), "disk-B/event")
		}
		e.Close()
		b.StartTimer()
	}
}

// loadedShard ingests n edge events into a fresh engine (flushed and
// compacted) once per configuration, shared by the query benchmarks.
var loaded sync.Map

type loadedData struct {
	e *Engine
	s *Shard
}

func loadedShard(b *testing.B, name string, n int, opts Options) *Shard {
	key := name + "/" + strconv.Itoa(n)
	if v, ok := loaded.Load(key); ok {
		return v.(*loadedData).s
	}
	dir, err := os.MkdirTemp("", "sediment-bench-")
	if err != nil {
		b.Fatal(err)
	}
	opts.DisableBackground = true
	opts.AckMode = AckBuffered
	opts.HeadMaxBytes, opts.HeadMemoryBudget = 1<<30, 1<<30 // flushed explicitly below
	e, err := Open(dir, &opts)
	if err != nil {
		b.Fatal(err)
	}
	s, _ := e.Shard("bench")
	const chunk = 100_000
	for done := 0; done < n; done += chunk {
		evs, _ := edgeEvents(b, min(chunk, n-done), int64(done)+7)
		for off := 0; off < len(evs); off += 5000 {
			if err := s.Append(context.Background(), evs[off:min(off+5000, len(evs))]); err != nil {
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
	loaded.Store(key, &loadedData{e: e, s: s})
	return s
}

func status500() scan.Predicate {
	return scan.Predicate{Path: "metadata.response.status_code", Type: vec.Int64, Op: scan.Eq, Args: []scan.Const{{Type: vec.Int64, Int: 500}}}
}

func countUnits(b *testing.B, sn *Snapshot, req *scan.Request) int64 {
	sc, err := sn.Table("bench").Open(context.Background(), req)
	if err != nil {
		b.Fatal(err)
	}
	var total int64
	for _, u := range sc.Units() {
		n, err := u.Count(context.Background())
		if err != nil {
			b.Fatal(err)
		}
		total += n
	}
	return total
}

// BenchmarkCountStatus500 counts metadata.response.status_code = 500 over
// the loaded data through the value index, and with the index disabled
// (so every block's column is decoded and compared).
func BenchmarkCountStatus500(b *testing.B) {
	n := benchEvents()
	for _, tc := range []struct {
		name string
		opts Options
	}{
		{"index", Options{}},
		{"scan", Options{IndexMaxValueTerms: 1}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			s := loadedShard(b, tc.name, n, tc.opts)
			sn := s.Snapshot()
			defer sn.Release()
			req := &scan.Request{TimeMin: scan.MinTime, TimeMax: scan.MaxTime, Filters: []scan.Predicate{status500()}}
			b.ReportAllocs()
			b.ResetTimer()
			var got int64
			for i := 0; i < b.N; i++ {
				got = countUnits(b, sn, req)
			}
			b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
			b.ReportMetric(float64(got), "matches")
		})
	}
}

// BenchmarkScanFilter reads a non-indexed float column (origin_time >
// 1000) over all loaded rows: the plain decode-and-compare speed.
func BenchmarkScanFilter(b *testing.B) {
	n := benchEvents()
	s := loadedShard(b, "index", n, Options{})
	sn := s.Snapshot()
	defer sn.Release()
	req := &scan.Request{TimeMin: scan.MinTime, TimeMax: scan.MaxTime, Filters: []scan.Predicate{{
		Path: "metadata.response.origin_time", Type: vec.Int64, Op: scan.Gt, Args: []scan.Const{{Type: vec.Int64, Int: 1000}}}}}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		countUnits(b, sn, req)
	}
	b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
}

// benchCompactLevel lets a run compare compaction zstd levels
// (SEDIMENT_BENCH_COMPACT_LEVEL, default: the engine's default).
func benchCompactLevel() int {
	n, _ := strconv.Atoi(os.Getenv("SEDIMENT_BENCH_COMPACT_LEVEL"))
	return n
}

// BenchmarkCompactMerge merges 8 segments of 16,384 edge events that
// overlap in time, written with 1024-row blocks and merged row by row
// into 65,536-row blocks (the path issue 11's crash was on), in time order
// and, for key=project, written and merged ordered by project. One op is
// one event merged.
func BenchmarkCompactMerge(b *testing.B) {
	const segs, perSeg = 8, 16384
	evs, raw := edgeEvents(b, segs*perSeg, 3)
	for _, key := range []string{"", "project"} {
		b.Run("key="+map[string]string{"": "time"}[key]+key, func(b *testing.B) { benchCompactMerge(b, evs, raw, segs, key) })
	}
}

func benchCompactMerge(b *testing.B, evs []event.Event, raw int64, segs int, sortKey string) {
	base := vfs.NewMemFS()
	e, err := Open("/data", &Options{FS: base, DisableBackground: true, AckMode: AckBuffered, BlockRows: 1024,
		HeadMaxBytes: 1 << 30, HeadMemoryBudget: 1 << 30, SortKey: sortKey})
	if err != nil {
		b.Fatal(err)
	}
	s, _ := e.Shard("bench")
	for k := 0; k < segs; k++ {
		// Every eighth event to segment k: all segments span the same time.
		var part []event.Event
		for i := k; i < len(evs); i += segs {
			part = append(part, evs[i])
		}
		if err := s.Append(context.Background(), part); err != nil {
			b.Fatal(err)
		}
		if err := s.Flush(); err != nil {
			b.Fatal(err)
		}
	}
	if err := e.Close(); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(raw / int64(len(evs)))
	b.ReportAllocs()
	b.ResetTimer()
	var cpu time.Duration
	defer func() { b.ReportMetric(float64(cpu)/float64(b.N), "cpu-ns/op") }()
	for i := 0; i < b.N; i += len(evs) {
		b.StopTimer()
		// A merge by key waits for a quarter of SegmentMaxRows.
		e, err := Open("/data", &Options{FS: base.CrashClone(), DisableBackground: true, CompactionMinInputs: segs, SortKey: sortKey,
			SegmentMaxRows: 4 * len(evs)})
		if err != nil {
			b.Fatal(err)
		}
		s, _ := e.Shard("bench")
		b.StartTimer()
		c := processCPU()
		if n, err := s.Compact(); err != nil || n != segs {
			b.Fatalf("merged %d: %v", n, err)
		}
		cpu += processCPU() - c
		b.StopTimer()
		e.Close()
		b.StartTimer()
	}
}

// BenchmarkStoreCPU measures the CPU the background work spends per 1M
// events of a source, in time order and ordered by project: 700,000 edge
// events flushed in heads of 35,000 (what the default HeadMaxBytes holds),
// compacted after every flush as the background loop does, until nothing
// is left to merge. It reports CPU seconds per 1M events for the flushes
// and for compaction, and the bytes per event on disk after.
//
//	go test ./engine -run '^$' -bench StoreCPU -count 6 -benchtime 1x | tee new.txt
//
// The benchmark holds its 700,000 events as value trees, a heap far larger
// than the engine's: each collection of it costs about a second and lands
// in whichever phase is running, so a change that allocates less in one
// phase moves collections into the other. To compare the work itself, run
// it with GOGC=off (it needs about 6 GiB then). SEDIMENT_BENCH_COMPACT_LEVEL
// sets the compaction's zstd level (default: the engine's).
func BenchmarkStoreCPU(b *testing.B) {
	const n, head = 700_000, 35_000
	var evs []event.Event
	for done := 0; done < n; done += 100_000 {
		part, _ := edgeEvents(b, 100_000, int64(done)+17)
		evs = append(evs, part...)
	}
	for _, key := range []string{"", "project"} {
		b.Run("key="+map[string]string{"": "time"}[key]+key, func(b *testing.B) {
			var flushCPU, compactCPU time.Duration
			var bytes int64
			for i := 0; i < b.N; i++ {
				dir := b.TempDir()
				e, err := Open(dir, &Options{DisableBackground: true, AckMode: AckBuffered, HeadMaxBytes: 1 << 30,
					HeadMemoryBudget: 1 << 30, SortKey: key, CompactZstdLevel: benchCompactLevel()})
				if err != nil {
					b.Fatal(err)
				}
				s, _ := e.Shard("bench")
				compact := func() {
					c := processCPU()
					for {
						m, err := s.Compact()
						if err != nil {
							b.Fatal(err)
						}
						if m == 0 {
							break
						}
					}
					compactCPU += processCPU() - c
				}
				for off := 0; off < n; off += head {
					for k := off; k < off+head; k += 5000 {
						if err := s.Append(context.Background(), evs[k:k+5000]); err != nil {
							b.Fatal(err)
						}
					}
					c := processCPU()
					if err := s.Flush(); err != nil {
						b.Fatal(err)
					}
					flushCPU += processCPU() - c
					compact()
				}
				bytes = segmentBytes(b, dir)
				e.Close()
			}
			per := float64(b.N) * n / 1e6
			b.ReportMetric(flushCPU.Seconds()/per, "flush-cpu-s/1M")
			b.ReportMetric(compactCPU.Seconds()/per, "compact-cpu-s/1M")
			b.ReportMetric(float64(bytes)/n, "disk-B/event")
		})
	}
}

// processCPU returns the CPU time the process has used (user and system).
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkFreshSegments reads the last hour of a source whose events are
// still in the segments its flushes wrote (heads of 35,000 events, as the
// default HeadMaxBytes makes them for edge events), not compacted yet, in
// time order and ordered by project: every timestamp of the hour (a
// per-minute chart), the newest 100 rows, and one project's rows.
//
//	go test ./engine -run '^$' -bench FreshSegments -count 6 | tee new.txt
func BenchmarkFreshSegments(b *testing.B) {
	const n, head = 350_000, 35_000
	for _, key := range []string{"", "project"} {
		name := "key=" + map[string]string{"": "time"}[key] + key
		b.Run(name, func(b *testing.B) {
			s := freshShard(b, name, n, head, key)
			sn := s.Snapshot()
			defer sn.Release()
			_, maxT := sn.segs[len(sn.segs)-1].r.TimeRange()
			for _, tc := range []struct {
				name string
				req  scan.Request
			}{
				{"lastHour", scan.Request{TimeMin: maxT - 3600_000_000, TimeMax: scan.MaxTime, Columns: []scan.Column{{Path: "timestamp", Type: vec.Timestamp}}}},
				{"newest100", scan.Request{TimeMin: scan.MinTime, TimeMax: scan.MaxTime, Order: scan.Descending, Limit: 100,
					Columns: []scan.Column{{Path: "id", Type: vec.String}, {Path: "timestamp", Type: vec.Timestamp}}}},
				{"projectLastHour", scan.Request{TimeMin: maxT - 3600_000_000, TimeMax: scan.MaxTime, Columns: []scan.Column{{Path: "timestamp", Type: vec.Timestamp}},
					Filters: []scan.Predicate{{Path: "project", Type: vec.String, Op: scan.Eq, Args: []scan.Const{{Type: vec.String, Str: gen.ProjectRefs(23, gen.DefaultProjects)[0]}}}}}},
			} {
				b.Run(tc.name, func(b *testing.B) {
					b.ReportAllocs()
					units := 0
					for i := 0; i < b.N; i++ {
						units = readUnits(b, sn, &tc.req)
					}
					b.ReportMetric(float64(units), "units")
				})
			}
		})
	}
}

// freshShard ingests n edge events in heads of head events, flushed and
// not compacted, once per configuration.
func freshShard(b *testing.B, name string, n, head int, sortKey string) *Shard {
	key := "fresh/" + name
	if v, ok := loaded.Load(key); ok {
		return v.(*loadedData).s
	}
	dir, err := os.MkdirTemp("", "sediment-bench-")
	if err != nil {
		b.Fatal(err)
	}
	e, err := Open(dir, &Options{DisableBackground: true, AckMode: AckBuffered, HeadMaxBytes: 1 << 30, HeadMemoryBudget: 1 << 30, SortKey: sortKey})
	if err != nil {
		b.Fatal(err)
	}
	s, _ := e.Shard("bench")
	evs, _ := edgeEvents(b, n, 23)
	for off := 0; off < n; off += head {
		if err := s.Append(context.Background(), evs[off:min(off+head, n)]); err != nil {
			b.Fatal(err)
		}
		if err := s.Flush(); err != nil {
			b.Fatal(err)
		}
	}
	loaded.Store(key, &loadedData{e: e, s: s})
	return s
}

// readUnits reads every unit of a scan (as the executor does, without a
// top-K's skipping) and returns how many there were.
func readUnits(b *testing.B, sn *Snapshot, req *scan.Request) int {
	sc, err := sn.Table("bench").Open(context.Background(), req)
	if err != nil {
		b.Fatal(err)
	}
	for _, u := range sc.Units() {
		if err := u.Read(context.Background(), func(*vec.Batch) error { return nil }); err != nil {
			b.Fatal(err)
		}
	}
	return len(sc.Units())
}
