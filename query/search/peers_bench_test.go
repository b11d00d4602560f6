package search

// Benchmarks shaped like issue 14's six peer queries, over generated
// platform edge events (bench/gen: 50 projects with Zipf-like sizes,
// spread over 7 days of log time, a rare word in about one message in
// 100,000), run as SQL through the executor on a loaded engine, with Go's
// memory limit at the server's default (256 MiB) and the caches at the
// sizes the server gives them under it.
//
//	go test ./query/search -run '^$' -bench Peers -count 6 | tee new.txt
//	benchstat old.txt new.txt
//
// SEDIMENT_BENCH_EVENTS sets the number of events (default 1,000,000);
// SEDIMENT_BENCH_PAGE_BYTES and SEDIMENT_BENCH_HISTORY_BYTES the engine's
// PageBytes and HistoryBytes (default: the engine's). Each query reports
// gc-%: the share of the process's CPU the garbage collector took while it
// ran (runtime/metrics); Q1 also reports the bytes per event on disk.

import (
	"context"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime/debug"
	"runtime/metrics"
	"runtime/pprof"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/sediment/sediment/bench/gen"
	"github.com/sediment/sediment/engine"
	"github.com/sediment/sediment/event"
	"github.com/sediment/sediment/segment"
)

const (
	peersProjects  = 50
	peersRareEvery = 100_000
	peersRareToken = "xq7rareprobe"
	peersSpan      = 7 * 24 * time.Hour
)

// peersData is the loaded engine of the peer benchmarks and what the
// queries need to know about its data.
type peersData struct {
	sh      *engine.Shard
	dir     string
	project string // the project Q2 and Q3 ask for (the largest)
	now     time.Time
	rare    int // events carrying the rare word
}

var peersLoaded sync.Map // int → *peersData

// peersEvents generates n platform edge events over peersSpan, the rare
// word added to the message of about one in peersRareEvery (a fixed
// random choice per seed).
func peersEvents(tb testing.TB, g *gen.Generator, rng *rand.Rand, n int, counts map[string]int, rare *int) []event.Event {
	tb.Helper()
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
		ev = ev.Clone()
		if rng.IntN(peersRareEvery) == 0 {
			ev.Message += " " + peersRareToken
			*rare++
		}
		if pv := ev.Fields.Get("project"); pv != nil {
			counts[pv.Str]++
		}
		evs = append(evs, ev)
		if i%4096 == 0 {
			p.Reset()
			norm.Reset()
		}
	}
	return evs
}

func loadPeers(b *testing.B) *peersData {
	n := benchEvents()
	if v, ok := peersLoaded.Load(n); ok {
		return v.(*peersData)
	}
	dir, err := os.MkdirTemp("", "sediment-peers-bench-")
	if err != nil {
		b.Fatal(err)
	}
	pageBytes, _ := strconv.Atoi(os.Getenv("SEDIMENT_BENCH_PAGE_BYTES"))
	historyBytes, _ := strconv.Atoi(os.Getenv("SEDIMENT_BENCH_HISTORY_BYTES")) // 0: none
	e, err := engine.Open(dir, &engine.Options{DisableBackground: true, AckMode: engine.AckBuffered,
		HeadMaxBytes: 256 << 20, HeadMemoryBudget: 1 << 30, PageBytes: pageBytes, HistoryBytes: historyBytes})
	if err != nil {
		b.Fatal(err)
	}
	sh, err := e.Shard("edge")
	if err != nil {
		b.Fatal(err)
	}
	rate := float64(n) / peersSpan.Seconds()
	g := gen.New(gen.EdgeLogs, gen.Options{Seed: 14, Shape: gen.Platform, Projects: peersProjects, Rate: rate, InOrder: true})
	rng := rand.New(rand.NewPCG(14, 14))
	counts := map[string]int{}
	d := &peersData{sh: sh, dir: dir}
	var last int64
	const chunk = 100_000
	for done := 0; done < n; done += chunk {
		evs := peersEvents(b, g, rng, min(chunk, n-done), counts, &d.rare)
		last = max(last, evs[len(evs)-1].Timestamp)
		for off := 0; off < len(evs); off += 5000 {
			batch := evs[off:min(off+5000, len(evs))]
			err := sh.Append(context.Background(), batch)
			if err == engine.ErrBackpressure {
				if err = sh.Flush(); err == nil {
					err = sh.Append(context.Background(), batch)
				}
			}
			if err != nil {
				b.Fatal(err)
			}
		}
		if err := sh.Flush(); err != nil {
			b.Fatal(err)
		}
	}
	for {
		m, err := sh.Compact()
		if err != nil {
			b.Fatal(err)
		}
		if m == 0 {
			break
		}
	}
	for p, c := range counts {
		if c > counts[d.project] || c == counts[d.project] && p < d.project {
			d.project = p
		}
	}
	d.now = time.UnixMicro(last + 1).UTC()
	peersLoaded.Store(n, d)
	return d
}

func sqlTime(t time.Time) string {
	return "timestamp '" + t.Format("2006-01-02 15:04:05.999999") + "'"
}

// BenchmarkPeers runs the six query shapes of issue 14 (see the peers
// suite of `sediment bench peers`): Q1 a count through the value index,
// Q2 the newest 100 events of one project in the last hour, Q3 hourly
// counts of one project over 7 days with a URL regex and four path
// regexes, Q4 per-minute counts of the last hour, Q5 the newest 1000
// events with a rare word, every field, and Q6 the top 10 paths.
func BenchmarkPeers(b *testing.B) {
	d := loadPeers(b)
	hour, week := d.now.Add(-time.Hour), d.now.Add(-peersSpan)
	inWindow := func(from time.Time) string {
		return "t.timestamp > " + sqlTime(from) + " and t.timestamp <= " + sqlTime(d.now)
	}
	project := "t.project = '" + d.project + "'"
	q3 := "select timestamp_trunc(t.timestamp, hour) as timestamp"
	for _, re := range [][2]string{{"/rest", "rest"}, {"/storage", "storage"}, {"/auth", "auth"}, {"/realtime", "realtime"}} {
		q3 += ", countif(regexp_contains(request.path, '" + re[0] + "')) as " + re[1]
	}
	q3 += " from edge t cross join unnest(t.metadata) as m cross join unnest(m.request) as request" +
		" where " + project + " and " + inWindow(week) +
		" and regexp_contains(request.url, '^https://[a-z]{20}[.]supabase[.]co/(rest|storage|auth|realtime)/')" +
		" group by timestamp order by timestamp"
	for _, tc := range []struct {
		name, sql string
		rows      int // expected rows, or -1
	}{
		{"Q1", "select count(*) as count from edge t cross join unnest(t.metadata) as m cross join unnest(m.response) as response where response.status_code = 500", 1},
		{"Q2", "select t.timestamp, t.id, t.event_message, t.metadata from edge t where " + project + " and " + inWindow(hour) + " order by t.timestamp desc limit 100", 100},
		{"Q3", q3, -1},
		{"Q4", "select timestamp_trunc(t.timestamp, minute) as timestamp, count(*) as count from edge t where " + inWindow(hour) + " group by timestamp order by timestamp", -1},
		{"Q5", "select id, timestamp, event_message, metadata, project from edge where regexp_contains(event_message, '" + peersRareToken + "') order by timestamp desc limit 1000", min(d.rare, 1000)},
		{"Q6", "select request.path as path, count(*) as count from edge t cross join unnest(t.metadata) as m cross join unnest(m.request) as request group by path order by count desc limit 10", 10},
	} {
		b.Run(tc.name, func(b *testing.B) {
			sn := d.sh.Snapshot()
			defer sn.Release()
			tbl := sn.Table("edge")
			s := New(Options{})
			ctx := context.Background()
			defer debug.SetMemoryLimit(debug.SetMemoryLimit(256 << 20))
			defer segment.SetPageCacheBytes(segment.SetPageCacheBytes(256 << 20 / 8))
			defer segment.SetDictCacheBytes(segment.SetDictCacheBytes(256 << 20 / 16))
			run := func() int {
				res, err := s.query(ctx, tbl, tc.sql, 100_000)
				if err != nil {
					b.Fatal(err)
				}
				return res.Len
			}
			if got := run(); tc.rows >= 0 && got != tc.rows {
				b.Fatalf("%d rows, want %d", got, tc.rows)
			}
			gc0, all0 := gcCPU()
			stopProfile := startProfile(b, tc.name)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				run()
			}
			b.StopTimer()
			stopProfile()
			gc1, all1 := gcCPU()
			if all1 > all0 {
				b.ReportMetric(100*(gc1-gc0)/(all1-all0), "gc-%")
			}
			if tc.name == "Q1" {
				b.ReportMetric(float64(segmentBytes(b, d.dir))/float64(benchEvents()), "disk-B/event")
			}
		})
	}
}

// startProfile writes a CPU profile of the timed loop of one query to
// $SEDIMENT_BENCH_CPUPROFILE-<query>.prof when that variable is set (a
// -cpuprofile would also cover loading the data).
func startProfile(b *testing.B, name string) (stop func()) {
	prefix := os.Getenv("SEDIMENT_BENCH_CPUPROFILE")
	if prefix == "" {
		return func() {}
	}
	f, err := os.Create(prefix + "-" + name + ".prof")
	if err != nil {
		b.Fatal(err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		b.Fatal(err)
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}
}

// gcCPU returns the CPU seconds the garbage collector and the whole
// process (not idle) have used, as the runtime estimates them.
func gcCPU() (gc, total float64) {
	s := []metrics.Sample{{Name: "/cpu/classes/gc/total:cpu-seconds"}, {Name: "/cpu/classes/total:cpu-seconds"}, {Name: "/cpu/classes/idle:cpu-seconds"}}
	metrics.Read(s)
	return s[0].Value.Float64(), s[1].Value.Float64() - s[2].Value.Float64()
}

// segmentBytes is the size of the segment files under dir.
func segmentBytes(tb testing.TB, dir string) int64 {
	var total int64
	err := filepath.WalkDir(dir, func(p string, de fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !de.IsDir() && filepath.Ext(p) == ".seg" {
			info, err := de.Info()
			if err != nil {
				return err
			}
			total += info.Size()
		}
		return nil
	})
	if err != nil {
		tb.Fatal(err)
	}
	return total
}
