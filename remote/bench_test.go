package remote

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sediment/sediment/engine"
	"github.com/sediment/sediment/event"
	"github.com/sediment/sediment/internal/miniotest"
	"github.com/sediment/sediment/internal/vec"
	"github.com/sediment/sediment/internal/vfs"
	"github.com/sediment/sediment/objstore"
	"github.com/sediment/sediment/sql/scan"
)

// benchQuery is a query in the style of `sediment bench query`'s Q1-Q6,
// as the scan the SQL executor would push down, with what the executor
// would do with its rows done here.
type benchQuery struct {
	name string
	req  func(now int64) scan.Request
	// count: the units' counts are the answer; otherwise rows are read.
	count bool
}

var benchPaths = []string{"/rest/v1/orders", "/rest/v1/users", "/auth/v1/token", "/storage/v1/object", "/rest/v1/rpc/search",
	"/realtime/v1/websocket", "/rest/v1/items", "/functions/v1/hello"}

func benchQueries() []benchQuery {
	hour := time.Hour.Microseconds()
	return []benchQuery{
		{name: "Q1_count_status_500", count: true, req: func(int64) scan.Request {
			return scan.Request{TimeMin: scan.MinTime, TimeMax: scan.MaxTime,
				Filters: []scan.Predicate{{Path: "status_code", Type: vec.Int64, Op: scan.Eq, Args: []scan.Const{{Type: vec.Int64, Int: 500}}}}}
		}},
		{name: "Q2_newest_100_of_a_project_1h", req: func(now int64) scan.Request {
			return scan.Request{TimeMin: now - hour, TimeMax: now, Order: scan.Descending, Limit: 100,
				Columns: []scan.Column{{Path: "id", Type: vec.String}, {Path: "timestamp", Type: vec.Timestamp}, {Path: "event_message", Type: vec.String}},
				Filters: []scan.Predicate{{Path: "project", Type: vec.String, Op: scan.Eq, Args: []scan.Const{{Type: vec.String, Str: "p3"}}}}}
		}},
		{name: "Q4_count_1h", count: true, req: func(now int64) scan.Request {
			return scan.Request{TimeMin: now - hour, TimeMax: now}
		}},
		{name: "Q5_rare_word", req: func(int64) scan.Request {
			return scan.Request{TimeMin: scan.MinTime, TimeMax: scan.MaxTime,
				Columns: []scan.Column{{Path: "id", Type: vec.String}, {Path: "event_message", Type: vec.String}},
				Filters: []scan.Predicate{{Path: "event_message", Type: vec.String, Op: scan.Contains, Args: []scan.Const{{Type: vec.String, Str: "zebra"}}}},
				Order:   scan.Descending, Limit: 1000}
		}},
		{name: "Q6_paths_all_data", req: func(int64) scan.Request {
			return scan.Request{TimeMin: scan.MinTime, TimeMax: scan.MaxTime, Columns: []scan.Column{{Path: "path", Type: vec.String}}}
		}},
	}
}

// runBenchQuery runs q on a snapshot of sh and returns how many rows it
// counted or read.
func runBenchQuery(b *testing.B, sh *engine.Shard, q benchQuery, now int64) int64 {
	sn := sh.Snapshot()
	defer sn.Release()
	ctx := context.Background()
	req := q.req(now)
	sc, err := sn.Table("t").Open(ctx, &req)
	if err != nil {
		b.Fatal(err)
	}
	defer sc.Close()
	var n int64
	for _, u := range sc.Units() {
		if q.count {
			c, err := u.Count(ctx)
			if err != nil {
				b.Fatal(err)
			}
			n += c
			continue
		}
		err := u.Read(ctx, func(bt *vec.Batch) error {
			bt.ForEach(func(int) { n++ })
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	return n
}

// BenchmarkQueryNode compares Q1-Q6-style scans of one source on the
// ingest node's local disk ("local") with a query node reading the same
// segments from the store through its cache, warm (every chunk cached)
// and cold (an empty cache each run), reporting the bytes and GETs each
// query fetched. It uses MinIO on loopback when it can be had, else the
// in-memory store. SEDIMENT_BENCH_EVENTS sets the events (default
// 200,000).
func BenchmarkQueryNode(b *testing.B) {
	events := 200_000
	if v, err := strconv.Atoi(os.Getenv("SEDIMENT_BENCH_EVENTS")); err == nil && v > 0 {
		events = v
	}
	dir := b.TempDir()
	var store objstore.Store = objstore.NewMemStore(nil)
	storeName := "mem"
	os.MkdirAll(filepath.Join(dir, "minio"), 0o755)
	if srv, err := miniotest.Launch(filepath.Join(dir, "minio")); err == nil {
		defer srv.Stop()
		store = minioStore(b, srv)
		storeName = "minio"
	} else {
		b.Logf("MinIO not available (%v): the in-memory store", err)
	}
	b.Logf("store: %s, %d events", storeName, events)
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	cache, err := objstore.OpenCache(store, objstore.CacheOptions{Dir: filepath.Join(dir, "pubcache")})
	if err != nil {
		b.Fatal(err)
	}
	rem, err := New(Options{Store: store, Cache: cache, Node: "n1"})
	if err != nil {
		b.Fatal(err)
	}
	eng, err := engine.Open(filepath.Join(dir, "data"), &engine.Options{DisableBackground: true, Remote: rem, Now: func() time.Time { return now }})
	if err != nil {
		b.Fatal(err)
	}
	defer func() { eng.Close(); rem.Close(); cache.Close() }()
	sh, _ := eng.Shard(source)
	span := 7 * 24 * time.Hour.Microseconds()
	for from := 0; from < events; from += 50_000 {
		var batch []event.Event
		for i := from; i < min(from+50_000, events); i++ {
			word := ""
			if i%20_000 == 7 {
				word = " zebra"
			}
			batch = append(batch, event.Event{
				ID:         fmt.Sprintf("%08x-0000-4000-8000-%012x", i, i),
				Timestamp:  now.UnixMicro() - span + int64(i)*span/int64(events),
				Message:    fmt.Sprintf("GET %s?select=* %d in %dms from client %d%s", benchPaths[i%len(benchPaths)], []int{200, 201, 404, 500}[i%4], i%97, i*7919%10007, word),
				HasMessage: true,
				Fields: event.ObjectValue(
					event.Member("project", event.StringValue(fmt.Sprintf("p%d", i%10))),
					event.Member("status_code", event.IntValue(int64([]int{200, 201, 404, 500}[i%4]))),
					event.Member("path", event.StringValue(benchPaths[(i*31)%len(benchPaths)])),
				),
			})
		}
		if err := sh.Append(context.Background(), batch); err != nil {
			b.Fatal(err)
		}
		if err := sh.Flush(); err != nil {
			b.Fatal(err)
		}
	}
	if _, err := sh.Compact(); err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if err := rem.Drain(ctx); err != nil {
		b.Fatal(err)
	}

	// openQueryNode starts a query node's engine over a cache in cacheDir.
	openQueryNode := func(cacheDir string) (*engine.Shard, *objstore.Cache, func()) {
		qc, err := objstore.OpenCache(store, objstore.CacheOptions{Dir: cacheDir, MaxBytes: 4 << 30})
		if err != nil {
			b.Fatal(err)
		}
		qs, _ := NewQuerySource(QueryOptions{Store: store, Cache: qc})
		q, err := engine.Open(filepath.Join(cacheDir, "data"), &engine.Options{FS: vfs.NewMemFS(), DisableBackground: true, External: qs,
			Now: func() time.Time { return now }})
		if err != nil {
			b.Fatal(err)
		}
		qsh, _ := q.Shard(source)
		return qsh, qc, func() { q.Close(); qc.Close() }
	}
	nowUs := now.UnixMicro()
	for _, q := range benchQueries() {
		want := runBenchQuery(b, sh, q, nowUs)
		b.Run(q.name+"/local", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				runBenchQuery(b, sh, q, nowUs)
			}
		})
		b.Run(q.name+"/warm", func(b *testing.B) {
			qsh, qc, done := openQueryNode(filepath.Join(dir, "warm-"+q.name))
			defer done()
			if got := runBenchQuery(b, qsh, q, nowUs); got != want {
				b.Fatalf("query node: %d rows, local %d", got, want)
			}
			before := qc.Stats()
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				runBenchQuery(b, qsh, q, nowUs)
			}
			after := qc.Stats()
			b.ReportMetric(float64(after.FetchedBytes-before.FetchedBytes)/float64(b.N), "fetched-B/op")
		})
		b.Run(q.name+"/cold", func(b *testing.B) {
			b.ReportAllocs()
			var fetched, fetches int64
			for i := range b.N {
				b.StopTimer()
				qsh, qc, done := openQueryNode(filepath.Join(dir, fmt.Sprintf("cold-%s-%d", q.name, i)))
				b.StartTimer()
				if got := runBenchQuery(b, qsh, q, nowUs); got != want {
					b.Fatalf("query node: %d rows, local %d", got, want)
				}
				b.StopTimer()
				st := qc.Stats()
				fetched += st.FetchedBytes
				fetches += st.Fetches
				done()
				b.StartTimer()
			}
			b.ReportMetric(float64(fetched)/float64(b.N), "fetched-B/op")
			b.ReportMetric(float64(fetches)/float64(b.N), "GETs/op")
		})
	}
	var total int64
	m, _, _ := objstore.ReadManifest(context.Background(), store, source)
	for _, e := range m.Segments {
		total += e.Size
	}
	b.Logf("segments in the store: %d, %d bytes", len(m.Segments), total)
}

// ingestRuns numbers BenchmarkIngestNodes' runs: each gets new directories.
var ingestRuns atomic.Int64

// BenchmarkIngestNodes measures the ingest rate of one and of two ingest
// nodes (engines in this process, each with its own data directory and
// node id) taking events of one source, with their segments published to
// the store as they are flushed; the time includes publishing everything
// (Drain). It uses MinIO on loopback when it can be had.
func BenchmarkIngestNodes(b *testing.B) {
	dir := b.TempDir()
	var store objstore.Store = objstore.NewMemStore(nil)
	os.MkdirAll(filepath.Join(dir, "minio"), 0o755)
	if srv, err := miniotest.Launch(filepath.Join(dir, "minio")); err == nil {
		defer srv.Stop()
		store = minioStore(b, srv)
	} else {
		b.Logf("MinIO not available (%v): the in-memory store", err)
	}
	const batchEvents = 5000
	batch := make([]event.Event, batchEvents)
	base := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC).UnixMicro()
	for i := range batch {
		batch[i] = event.Event{Timestamp: base + int64(i), HasMessage: true,
			Message: fmt.Sprintf("GET %s?select=* %d in %dms from client %d", benchPaths[i%len(benchPaths)], []int{200, 201, 404, 500}[i%4], i%97, i*7919%10007),
			Fields: event.ObjectValue(
				event.Member("project", event.StringValue(fmt.Sprintf("p%d", i%10))),
				event.Member("status_code", event.IntValue(int64([]int{200, 201, 404, 500}[i%4]))),
			)}
	}
	for _, nodes := range []int{1, 2} {
		b.Run(fmt.Sprintf("nodes=%d", nodes), func(b *testing.B) {
			var shards []*engine.Shard
			var rems []*Segments
			for range nodes {
				run := ingestRuns.Add(1) // new directories and node ids: never a name reused
				ndir := filepath.Join(dir, fmt.Sprintf("run-%d", run))
				cache, err := objstore.OpenCache(store, objstore.CacheOptions{Dir: filepath.Join(ndir, "cache")})
				if err != nil {
					b.Fatal(err)
				}
				rem, err := New(Options{Store: store, Cache: cache, Node: fmt.Sprintf("bench%d", run)})
				if err != nil {
					b.Fatal(err)
				}
				eng, err := engine.Open(filepath.Join(ndir, "data"), &engine.Options{Remote: rem, AckMode: engine.AckBuffered})
				if err != nil {
					b.Fatal(err)
				}
				defer func() { eng.Close(); rem.Close(); cache.Close() }()
				sh, _ := eng.Shard(source)
				shards, rems = append(shards, sh), append(rems, rem)
			}
			b.ResetTimer()
			errs := make(chan error, nodes)
			for n, sh := range shards {
				go func() {
					var err error
					for i := n; i < b.N; i += nodes {
						if err = sh.Append(context.Background(), batch); err != nil {
							break
						}
					}
					if err == nil {
						err = sh.Flush()
					}
					errs <- err
				}()
			}
			for range shards {
				if err := <-errs; err != nil {
					b.Fatal(err)
				}
			}
			for _, rem := range rems {
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
				err := rem.Drain(ctx)
				cancel()
				if err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			b.ReportMetric(float64(b.N*batchEvents)/b.Elapsed().Seconds(), "events/s")
		})
	}
}
