package endpoints

// Benchmarks of Studio's queries over fresh data: the same events queried
// while they are in the engine's in-memory head and after they were
// flushed to segments (issue 14: "the freshest data is the slowest").
//
//	go test ./query/endpoints -run '^$' -bench Fresh -count 6 | tee new.txt
//	benchstat old.txt new.txt
//
// SEDIMENT_BENCH_FRESH_EVENTS sets the number of events (default 300,000,
// the figure).

import (
	"bytes"
	"context"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/sediment/sediment/bench/gen"
	"github.com/sediment/sediment/catalog"
	"github.com/sediment/sediment/engine"
	"github.com/sediment/sediment/event"
)

// processCPU returns the CPU time the process has used (user and system).
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// benchPredicateCache is the engine's predicate cache bound for the
// fixtures: SEDIMENT_BENCH_PREDCACHE=off disables it, to measure queries
// that find no answer kept from an earlier run.
func benchPredicateCache() int64 {
	if os.Getenv("SEDIMENT_BENCH_PREDCACHE") == "off" {
		return -1
	}
	return 0
}

// benchFooterCache is the engine's block directory cache bound for the
// fixtures: SEDIMENT_BENCH_FOOTERCACHE=<bytes> sets it (0: the default),
// to measure queries whose blocks' directories do not all fit.
func benchFooterCache() int64 {
	n, _ := strconv.ParseInt(os.Getenv("SEDIMENT_BENCH_FOOTERCACHE"), 10, 64)
	return n
}

func freshEvents() int {
	if n, err := strconv.Atoi(os.Getenv("SEDIMENT_BENCH_FRESH_EVENTS")); err == nil && n > 0 {
		return n
	}
	return 300_000
}

// freshFixture is a service over n self-hosted Kong events (as Vector
// sends them) in cloudflare.logs.prod, kept in one head (inHead) or
// flushed and compacted.
type freshFixture struct {
	svc  *Service
	cat  *catalog.Catalog
	now  time.Time
	rows int
}

var freshFixtures sync.Map // "head"/"segments" → *freshFixture

func loadFresh(b *testing.B, inHead bool) *freshFixture {
	key := "segments"
	if inHead {
		key = "head"
	}
	if v, ok := freshFixtures.Load(key); ok {
		return v.(*freshFixture)
	}
	n := freshEvents()
	dir, err := os.MkdirTemp("", "sediment-fresh-bench-")
	if err != nil {
		b.Fatal(err)
	}
	fixtureDirs.add(dir)
	// One head takes every event (no size or age bound is reached), as
	// the freshest minutes of a busy source are.
	eng, err := engine.Open(dir, &engine.Options{DisableBackground: true, AckMode: engine.AckBuffered,
		HeadMaxRows: 1 << 30, HeadMaxBytes: 1 << 30, HeadMemoryBudget: 1 << 40, HeadMaxAge: time.Hour,
		PredicateCacheBytes: benchPredicateCache(), FooterCacheBytes: benchFooterCache()})
	if err != nil {
		b.Fatal(err)
	}
	cat, err := catalog.Open(dir, nil)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := cat.SeedSupabase(); err != nil {
		b.Fatal(err)
	}
	sh, err := eng.Shard(cat.SourceByName("cloudflare.logs.prod").Token)
	if err != nil {
		b.Fatal(err)
	}
	g := gen.New(gen.EdgeLogs, gen.Options{Seed: 11, Shape: gen.SelfHosted, Rate: 2000})
	var p event.Parser
	var norm event.Normalizer
	var buf []byte
	batch := make([]event.Event, 0, 500)
	var last int64
	for i := 0; i < n; i++ {
		buf = g.AppendEvent(buf[:0])
		v, err := p.Parse(buf)
		if err != nil {
			b.Fatal(err)
		}
		ev, _ := norm.Normalize(v, time.Now(), event.NormalizeOptions{})
		last = max(last, ev.Timestamp)
		batch = append(batch, ev.Clone()) // ev aliases buf
		if len(batch) == cap(batch) || i == n-1 {
			if err := sh.Append(context.Background(), batch); err != nil {
				b.Fatal(err)
			}
			batch = batch[:0]
			p.Reset()
			norm.Reset()
		}
	}
	if !inHead {
		if err := sh.Flush(); err != nil {
			b.Fatal(err)
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
	}
	now := time.UnixMicro(last).UTC()
	f := &freshFixture{cat: cat, now: now, rows: n,
		svc: New(eng, cat, &Options{DisableBackground: true, Now: func() time.Time { return now }})}
	freshFixtures.Store(key, f)
	return f
}

// BenchmarkStudioFresh runs Studio's queries over the same events in the
// head and in segments: logs.all's default (the newest 100 of the last
// hour), a regexp count over event_message and a status range, both over
// all time.
func BenchmarkStudioFresh(b *testing.B) {
	queries := []struct {
		name string
		sql  string // "" is logs.all's own query
		hour bool
	}{
		{"newest100", "", true},
		{"regexpCount", "select count(*) as count from edge_logs where regexp_contains(event_message, 'auth/v1/(token|user)')", false},
		{"statusRange", "select count(*) as count from edge_logs cross join unnest(metadata) as m cross join unnest(m.response) as r where r.status_code >= 500", false},
	}
	for _, where := range []string{"head", "segments"} {
		for _, q := range queries {
			b.Run(where+"/"+q.name, func(b *testing.B) {
				f := loadFresh(b, where == "head")
				ep := f.cat.EndpointByName("logs.all")
				params := map[string]string{"project": "default"}
				if q.hour {
					params["iso_timestamp_start"] = f.now.Add(-time.Hour).Format(time.RFC3339Nano)
					params["iso_timestamp_end"] = f.now.Format(time.RFC3339Nano)
				}
				if q.sql != "" {
					params["sql"] = q.sql
				}
				body := f.svc.RunEndpoint(context.Background(), ep, params, false)
				if !bytes.HasPrefix(body, []byte(`{"result":[{`)) {
					b.Fatalf("%s: %.300s", q.name, body)
				}
				b.ReportAllocs()
				b.ResetTimer()
				cpu := processCPU()
				for i := 0; i < b.N; i++ {
					f.svc.RunEndpoint(context.Background(), ep, params, false)
				}
				// CPU time is steadier than wall time on a shared machine.
				b.ReportMetric(float64(processCPU()-cpu)/float64(b.N), "cpu-ns/op")
			})
		}
	}
}

// peersFixture is a service over platform edge events spread over a week
// (50 projects, Zipf-like), flushed and compacted with a given sort key.
type peersFixture struct {
	svc     *Service
	cat     *catalog.Catalog
	now     time.Time
	project string // the fifth busiest, 4.4% of the events
	rows    int
	dir     string // the engine's data directory
}

var peersFixtures sync.Map // sort key → *peersFixture

// peersEvents is the number of events of the peers-shaped benchmarks
// (SEDIMENT_BENCH_EVENTS, default 1,000,000).
func peersEvents() int {
	if n, err := strconv.Atoi(os.Getenv("SEDIMENT_BENCH_EVENTS")); err == nil && n > 0 {
		return n
	}
	return 1_000_000
}

func loadPeers(b *testing.B, sortKey string) *peersFixture {
	if v, ok := peersFixtures.Load(sortKey); ok {
		return v.(*peersFixture)
	}
	n := peersEvents()
	dir, err := os.MkdirTemp("", "sediment-peers-bench-")
	if err != nil {
		b.Fatal(err)
	}
	fixtureDirs.add(dir)
	eng, err := engine.Open(dir, &engine.Options{DisableBackground: true, AckMode: engine.AckBuffered,
		HeadMaxRows: 1 << 30, HeadMaxBytes: 1 << 30, HeadMemoryBudget: 1 << 40, HeadMaxAge: time.Hour,
		PredicateCacheBytes: benchPredicateCache(), FooterCacheBytes: benchFooterCache()})
	if err != nil {
		b.Fatal(err)
	}
	cat, err := catalog.Open(dir, nil)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := cat.SeedSupabase(); err != nil {
		b.Fatal(err)
	}
	sh, err := eng.Shard(cat.SourceByName("cloudflare.logs.prod").Token)
	if err != nil {
		b.Fatal(err)
	}
	if err := sh.SetSortKey(sortKey); err != nil {
		b.Fatal(err)
	}
	week := 7 * 24 * time.Hour
	g := gen.New(gen.EdgeLogs, gen.Options{Seed: 5, Shape: gen.Platform, Projects: 50, Rate: float64(n) / week.Seconds()})
	var p event.Parser
	var norm event.Normalizer
	var buf []byte
	batch := make([]event.Event, 0, 500)
	var last int64
	for i := 0; i < n; i++ {
		buf = g.AppendEvent(buf[:0])
		v, err := p.Parse(buf)
		if err != nil {
			b.Fatal(err)
		}
		ev, _ := norm.Normalize(v, time.Now(), event.NormalizeOptions{})
		last = max(last, ev.Timestamp)
		batch = append(batch, ev.Clone())
		if len(batch) == cap(batch) || i == n-1 {
			if err := sh.Append(context.Background(), batch); err != nil {
				b.Fatal(err)
			}
			batch = batch[:0]
			p.Reset()
			norm.Reset()
		}
		// Heads of 100,000 events, as a busy source's are.
		if (i+1)%100_000 == 0 || i == n-1 {
			if err := sh.Flush(); err != nil {
				b.Fatal(err)
			}
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
	now := time.UnixMicro(last).UTC()
	f := &peersFixture{cat: cat, now: now, rows: n, project: g.Projects()[4], dir: dir,
		svc: New(eng, cat, &Options{DisableBackground: true, Now: func() time.Time { return now }})}
	peersFixtures.Store(sortKey, f)
	return f
}

// BenchmarkPeersSortKey runs the six query shapes over the same
// week of edge events stored in time order (key=time) and ordered by
// project (key=project), plus an unfiltered newest 100 (the case a sort
// key could slow down):
//
//	go test ./query/endpoints -run '^$' -bench PeersSortKey -count 6 | tee new.txt
//
// Q2 and Q3 go through logs.all as Studio sends them, the others are
// ad-hoc SQL; Q5 looks for a rare path in event_message.
func BenchmarkPeersSortKey(b *testing.B) {
	type query struct {
		name     string
		endpoint bool   // logs.all (with the project) or ad-hoc SQL
		sql      string // for logs.all, "" is its own query
		since    time.Duration
	}
	queries := []query{
		{name: "Q1status500", sql: "select count(*) as count from `cloudflare.logs.prod` as t cross join unnest(t.metadata) as m cross join unnest(m.response) as response where response.status_code = 500"},
		{name: "Q2project1h", endpoint: true, since: time.Hour},
		{name: "Q3projectHourly7d", endpoint: true, since: 7 * 24 * time.Hour, sql: `select timestamp_trunc(t.timestamp, hour) as timestamp,
  countif(regexp_contains(request.path, '/rest')) as rest, countif(regexp_contains(request.path, '/storage')) as storage,
  countif(regexp_contains(request.path, '/auth')) as auth, countif(regexp_contains(request.path, '/realtime')) as realtime
from edge_logs t cross join unnest(t.metadata) as m cross join unnest(m.request) as request
where regexp_contains(request.url, '^https://[a-z]{20}[.]supabase[.]co/(rest|storage|auth|realtime)/')
group by timestamp order by timestamp`},
		{name: "Q4perMinute1h", since: time.Hour, sql: "select timestamp_trunc(t.timestamp, minute) as timestamp, count(*) as count from `cloudflare.logs.prod` as t where t.timestamp > @start group by timestamp order by timestamp"},
		{name: "Q5rareNewest1000", sql: "select id, timestamp, event_message, metadata, project from `cloudflare.logs.prod` where regexp_contains(event_message, 'photo-1267[0-9]') order by timestamp desc limit 1000"},
		{name: "Q6topPaths", sql: "select request.path as path, count(*) as count from `cloudflare.logs.prod` as t cross join unnest(t.metadata) as m cross join unnest(m.request) as request group by path order by count desc limit 10"},
		{name: "newest100all", sql: "select id, timestamp, event_message, metadata from `cloudflare.logs.prod` order by timestamp desc limit 100"},
	}
	for _, key := range []string{"", "project"} {
		name := "key=" + key
		if key == "" {
			name = "key=time"
		}
		for _, q := range queries {
			b.Run(name+"/"+q.name, func(b *testing.B) {
				f := loadPeers(b, key)
				run := func() []byte {
					if q.endpoint {
						params := map[string]string{"project": f.project,
							"iso_timestamp_start": f.now.Add(-q.since).Format(time.RFC3339Nano), "iso_timestamp_end": f.now.Format(time.RFC3339Nano)}
						if q.sql != "" {
							params["sql"] = q.sql
						}
						return f.svc.RunEndpoint(context.Background(), f.cat.EndpointByName("logs.all"), params, false)
					}
					sql := q.sql
					if q.since > 0 {
						sql = strings.ReplaceAll(sql, "@start", "timestamp '"+f.now.Add(-q.since).Format(time.RFC3339Nano)+"'")
					}
					return f.svc.RunSQL(context.Background(), sql)
				}
				if body := run(); !bytes.HasPrefix(body, []byte(`{"result":[`)) {
					b.Fatalf("%s: %.300s", q.name, body)
				}
				b.ReportAllocs()
				b.ResetTimer()
				cpu := processCPU()
				for i := 0; i < b.N; i++ {
					run()
				}
				b.ReportMetric(float64(processCPU()-cpu)/float64(b.N), "cpu-ns/op")
			})
		}
	}
}
