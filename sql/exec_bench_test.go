package sql_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/sediment/sediment/engine"
	"github.com/sediment/sediment/internal/vfs"
	"github.com/sediment/sediment/sql"
	"github.com/sediment/sediment/sql/parser"
)

// benchRows is the size of the source the end-to-end benchmarks query.
const benchRows = 200_000

// newBenchDB is a source of benchRows request-log events in segments cut as
// the server cuts them (the engine's default block and page sizes), with
// about 2,000 distinct paths, 8 projects and one event per 20 ms.
func newBenchDB(b *testing.B) *testDB {
	b.Helper()
	eng, err := engine.Open("/db", &engine.Options{FS: vfs.NewMemFS(), DisableBackground: true})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { eng.Close() })
	db := &testDB{eng: eng, sources: map[string]*engine.Shard{}}
	projects := []string{"default", "other", "staging", "prod-eu", "prod-us", "dev", "test", "edge"}
	start := fixedNow.Add(-time.Duration(benchRows) * 20 * time.Millisecond)
	var nd strings.Builder
	for i := range benchRows {
		ts := start.Add(time.Duration(i) * 20 * time.Millisecond).Format(time.RFC3339Nano)
		fmt.Fprintf(&nd, `{"event_message":"GET /rest/v1/t%d 200","metadata":{"request":{"path":"/rest/v1/table_%d?select=*"},"response":{"status_code":%d}},"project":"%s","timestamp":"%s"}`+"\n",
			i%2000, (i*7919)%2000, 200+100*(i%4), projects[i%len(projects)], ts)
	}
	db.load(b, "edge", nd.String(), benchRows/2)
	return db
}

// runBench runs q repeatedly and reports ns per source row.
func runBench(b *testing.B, db *testDB, q string) {
	names := db.names()
	pq, err := parser.Validate(q, parser.ValidateOptions{KnownSource: func(n string) bool { return names[n] }})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		cat := &catalog{db: db, snaps: map[string]*engine.Snapshot{}}
		res, err := sql.Run(context.Background(), pq, cat, sql.Options{Now: fixedNow, Workers: 2})
		cat.release()
		if err != nil {
			b.Fatal(err)
		}
		if res.Len == 0 {
			b.Fatal("no rows")
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/benchRows, "ns/row")
}

// BenchmarkRun is Studio-shaped queries end to end (plan, scan, operators,
// result) over benchRows events: the paths memory accounting and
// cancellation checks run on.
//
//	go test ./sql -run '^$' -bench 'BenchmarkRun|BenchmarkGroupBy|BenchmarkWindow|BenchmarkDistinct' -count 6 | tee exec.txt
func BenchmarkRun(b *testing.B) {
	db := newBenchDB(b)
	for _, c := range []struct{ name, q string }{
		{"chart", "select timestamp_trunc(timestamp, minute) as m, count(*) as n from edge group by m order by m"},
		{"groupByPath", "select metadata.request.path as p, count(*) as n from edge cross join unnest(metadata) as metadata cross join unnest(metadata.request) as request group by p order by n desc limit 10"},
		{"groupByTwoKeys", "select project, metadata.response.status_code as s, count(*) as n from edge cross join unnest(metadata) as metadata cross join unnest(metadata.response) as response group by project, s"},
		{"filterCount", "select count(*) from edge where regexp_contains(event_message, 't1[0-9]7 ')"},
		{"distinct", "select distinct event_message from edge"},
		{"sortAll", "select timestamp, event_message from edge order by event_message, timestamp desc"},
		{"topK", "select timestamp, event_message from edge order by event_message desc limit 100"},
		{"hashJoin", "select count(*) from edge a join (select distinct project from edge) b on a.project = b.project"},
		{"window", "select count(*) from (select row_number() over (partition by project order by timestamp desc) as r from edge) where r <= 10"},
	} {
		b.Run(c.name, func(b *testing.B) { runBench(b, db, c.q) })
	}
}
