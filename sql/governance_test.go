package sql_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"runtime/metrics"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sediment/sediment/engine"
	"github.com/sediment/sediment/internal/vfs"
	"github.com/sediment/sediment/sql"
	"github.com/sediment/sediment/sql/parser"
)

// newServerShapedDB is an engine cut as the server cuts segments (blocks
// of 65,536 rows, so that a scan hands out large batches, as in
// production) holding the source "edge" of n events in one segment.
func newServerShapedDB(t testing.TB, n int) *testDB {
	t.Helper()
	eng, err := engine.Open("/db", &engine.Options{FS: vfs.NewMemFS(), DisableBackground: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { eng.Close() })
	db := &testDB{eng: eng, sources: map[string]*engine.Shard{}}
	var nd strings.Builder
	start := fixedNow.Add(-time.Hour)
	for i := range n {
		fmt.Fprintf(&nd, `{"id":"ev-%06d","event_message":"GET /rest/v1/todos?id=eq.%d HTTP/1.1 200","project":"default","timestamp":"%s"}`+"\n",
			i, i, start.Add(time.Duration(i)*time.Millisecond).Format(time.RFC3339Nano))
	}
	db.load(t, "edge", nd.String(), n)
	return db
}

// heapWatch samples the heap (runtime/metrics, no stop-the-world) until
// stop is called, which says whether the heap stayed within what a query
// with this budget may make it: heapBound.
func heapWatch(budget int64) (stop func() (ok bool, peak, bound int64)) {
	runtime.GC()
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	read := func() int64 {
		metrics.Read(sample)
		return int64(sample[0].Value.Uint64())
	}
	base := read()
	var peak atomic.Int64
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(200 * time.Microsecond)
		defer t.Stop()
		for {
			if h := read(); h > peak.Load() {
				peak.Store(h)
			}
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	}()
	return func() (bool, int64, int64) {
		close(done)
		wg.Wait()
		bound := heapBound(base, budget)
		return peak.Load() <= bound, peak.Load(), bound
	}
}

// run validates and runs q over db's sources with opts.
func (db *testDB) run(t testing.TB, ctx context.Context, q string, opts sql.Options) (*sql.Result, error) {
	t.Helper()
	names := db.names()
	pq, err := parser.Validate(q, parser.ValidateOptions{KnownSource: func(n string) bool { return names[n] }})
	if err != nil {
		t.Fatal(err)
	}
	cat := &catalog{db: db, snaps: map[string]*engine.Snapshot{}}
	defer cat.release()
	opts.Now = fixedNow
	if opts.Workers == 0 {
		opts.Workers = 2
	}
	return sql.Run(ctx, pq, cat, opts)
}

// heapBound is the most the heap may hold while a query with this budget
// runs, from base, the live heap before it. The query holds its budget and
// 8 MiB more that is not charged: batches in flight between operators
// (three per scan worker, one in and one out per streaming operator) and
// the scan's decompressed pages. The collector lets the heap grow to twice
// what is live (GOGC=100) before it reclaims the garbage of batches
// already processed.
func heapBound(base, budget int64) int64 { return 2 * (base + budget + 8<<20) }

// The cross join of the issue, under a small budget: COUNT(*) streams and
// holds almost nothing; selecting the joined rows fails once the result
// passes the budget, with the limit named, long before the nine million
// rows are made; capped at 1,000 rows (as an endpoint caps them) it
// answers. The heap stays within heapBound throughout.
func TestCrossJoinUnderBudget(t *testing.T) {
	const rows = 3000
	const budget = 8 << 20
	db := newServerShapedDB(t, rows)
	opts := sql.Options{MemoryLimit: budget, MemoryLimitSetting: "--query-memory"}

	stop := heapWatch(budget)
	res, err := db.run(t, context.Background(), "select count(*) as n from edge a cross join edge b", opts)
	ok, peak, bound := stop()
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Cols[0].IntAt(0); got != rows*rows {
		t.Fatalf("count %d, want %d", got, rows*rows)
	}
	t.Logf("count(*): charged peak %d, heap peak %d (bound %d)", res.PeakMemory, peak, bound)
	if res.PeakMemory > 1<<20 || !ok {
		t.Fatalf("count(*) over a cross join held %d bytes charged, %d of heap", res.PeakMemory, peak)
	}

	stop = heapWatch(budget)
	_, err = db.run(t, context.Background(), "select a.id as x, b.event_message as y from edge a cross join edge b", opts)
	ok, peak, bound = stop()
	var me *sql.MemoryLimitError
	if !errors.As(err, &me) || me.Shared {
		t.Fatalf("got %v, want the per-query memory limit", err)
	}
	if !strings.Contains(err.Error(), "the limit of one query (8MiB, set by --query-memory)") {
		t.Fatalf("message: %s", err)
	}
	t.Logf("rows: heap peak %d (bound %d)", peak, bound)
	if !ok {
		t.Fatalf("the failing query held %d bytes of heap", peak)
	}

	res, err = db.run(t, context.Background(), "select a.id as x, b.id as y from edge a cross join edge b", sql.Options{MemoryLimit: budget, MaxRows: 1000})
	if err != nil || res.Len != 1000 {
		t.Fatalf("capped at 1000 rows: %v", err)
	}
}

// A GROUP BY with millions of distinct keys under a small budget fails
// with the limit named, and the heap stays within the budget plus
// within heapBound; under a budget that fits, it answers.
func TestHugeGroupByUnderBudget(t *testing.T) {
	const budget = 16 << 20
	db := newServerShapedDB(t, 3000)
	for _, q := range []string{
		// 3,000 ids x 1,000 numbers: three million groups of two keys.
		"select e.id, x, count(*) as n from edge e cross join unnest(generate_array(1, 1000)) as x group by e.id, x",
		// A million integer groups, no table at all.
		"select x, count(*) as n from unnest(generate_array(1, 1000000)) as x group by x",
		// Three million string groups.
		"select concat(e.id, '/', cast(x as string)) as k, count(*) as n from edge e cross join unnest(generate_array(1, 1000)) as x group by k",
	} {
		stop := heapWatch(budget)
		_, err := db.run(t, context.Background(), q, sql.Options{MemoryLimit: budget, MemoryLimitSetting: "--query-memory"})
		ok, peak, bound := stop()
		if !errors.Is(err, sql.ErrMemoryLimit) || !strings.Contains(err.Error(), "(16MiB, set by --query-memory)") {
			t.Fatalf("%s: got %v, want the memory limit", q, err)
		}
		t.Logf("%s: heap peak %d (bound %d)", q, peak, bound)
		if !ok {
			t.Fatalf("%s: held %d bytes of heap", q, peak)
		}
	}
	res, err := db.run(t, context.Background(), "select x, count(*) as n from unnest(generate_array(1, 200000)) as x group by x", sql.Options{MemoryLimit: 64 << 20})
	if err != nil || res.Len != 200_000 {
		t.Fatalf("under a budget that fits: %v", err)
	}
	res.Release()
}

// Two queries that each fit the shared pool alone do not fit it together:
// the second fails naming the limit of all queries, the first is
// unaffected, and once the first lets go of its result the second runs.
func TestSharedPoolTwoQueries(t *testing.T) {
	db := newServerShapedDB(t, 20_000)
	// About 3 MiB of rows (20,000 rows of ~80 bytes), held as the result
	// (and charged as much again for its encoding).
	const q = "select id, event_message from edge order by event_message desc"
	// Measure one query alone: the most it holds while it runs, and what
	// its result keeps charged after it.
	probe := sql.NewMemoryPool(0, "")
	res, err := db.run(t, context.Background(), q, sql.Options{MemoryPool: probe})
	if err != nil {
		t.Fatal(err)
	}
	peak, kept := res.PeakMemory, probe.Used()
	res.Release()
	if kept < 1<<20 || peak < kept {
		t.Fatalf("peak %d, result %d", peak, kept)
	}
	// A pool that fits one query (peak plus a margin) but not a second one
	// beside the first one's result.
	total := (peak + kept/2) &^ (1<<10 - 1)
	pool := sql.NewMemoryPool(total, "--query-memory-total")
	opts := sql.Options{MemoryLimit: total, MemoryPool: pool}
	first, err := db.run(t, context.Background(), q, opts)
	if err != nil {
		t.Fatalf("first query alone: %v", err)
	}
	held := pool.Used()
	_, err = db.run(t, context.Background(), q, opts)
	var me *sql.MemoryLimitError
	if !errors.As(err, &me) || !me.Shared || !strings.Contains(err.Error(), "the limit of all queries ("+sql.FormatBytes(total)+", set by --query-memory-total)") {
		t.Fatalf("second query beside the first: %v", err)
	}
	if pool.Used() != held {
		t.Fatalf("the failed query left %d bytes in the pool", pool.Used()-held)
	}
	first.Release()
	if pool.Used() != 0 {
		t.Fatalf("pool holds %d bytes with no query running", pool.Used())
	}
	second, err := db.run(t, context.Background(), q, opts)
	if err != nil {
		t.Fatalf("second query alone: %v", err)
	}
	second.Release()
	second.Release() // idempotent
	if pool.Used() != 0 {
		t.Fatalf("pool holds %d bytes", pool.Used())
	}

	// Many queries at once on one pool: each fails cleanly or answers, and
	// every byte comes back.
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := db.run(t, context.Background(), q, opts)
			if err != nil && !errors.Is(err, sql.ErrMemoryLimit) {
				t.Errorf("query %d: %v", i, err)
			}
			res.Release()
		}()
	}
	wg.Wait()
	if pool.Used() != 0 {
		t.Fatalf("pool holds %d bytes after concurrent queries", pool.Used())
	}
}

// A cancelled query returns the context's error, whatever it was doing:
// the cross join, sort and window of the issue, cancelled while they run.
func TestRunStopsOnCancel(t *testing.T) {
	db := newServerShapedDB(t, 3000)
	for _, q := range []string{
		"select count(*) from edge a cross join edge b",
		"select a.id, b.id from edge a cross join edge b order by b.id, a.id",
		"select a.id, row_number() over (partition by b.id order by a.id) as r from edge a cross join edge b",
	} {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if _, err := db.run(t, ctx, q, sql.Options{}); !errors.Is(err, context.Canceled) {
			t.Fatalf("%s, cancelled: %v", q, err)
		}
		// Cancelled while running: the query must end with the context's
		// error (or, if it finished first, with its answer).
		ctx, cancel = context.WithCancel(context.Background())
		go func() {
			time.Sleep(20 * time.Millisecond)
			cancel()
		}()
		_, err := db.run(t, ctx, q, sql.Options{})
		if err != nil && !errors.Is(err, context.Canceled) {
			t.Fatalf("%s: %v", q, err)
		}
		cancel()
	}
}

// The streaming join gives the rows a nested loop gives, for every kind
// of join, with and without a residual condition, including left rows
// with more matches than one chunk of output holds.
func TestJoinsMatchNestedLoop(t *testing.T) {
	db := newTestDB(t)
	r := rand.New(rand.NewPCG(3, 4))
	type row struct {
		id   string
		k, v int
		null bool
	}
	var left, right []row
	var nd strings.Builder
	for i := range 60 {
		x := row{id: fmt.Sprintf("l%02d", i), k: r.IntN(6), v: r.IntN(100), null: i%13 == 0}
		left = append(left, x)
		if x.null {
			fmt.Fprintf(&nd, `{"id":%q,"event_message":"l","v":%d}`+"\n", x.id, x.v)
		} else {
			fmt.Fprintf(&nd, `{"id":%q,"event_message":"l","k":%d,"v":%d}`+"\n", x.id, x.k, x.v)
		}
	}
	db.load(t, "L", nd.String(), 30)
	nd.Reset()
	for i := range 9000 {
		k := 0 // most right rows share key 0: more than 8192 matches for a left row
		if i%10 == 0 {
			k = r.IntN(5) + 1
		}
		x := row{id: fmt.Sprintf("r%04d", i), k: k, v: r.IntN(100)}
		right = append(right, x)
		fmt.Fprintf(&nd, `{"id":%q,"event_message":"r","k":%d,"v":%d}`+"\n", x.id, x.k, x.v)
	}
	db.load(t, "R", nd.String(), 4000)

	type agg struct{ rows, matched, sum int }
	cases := []struct {
		join  string
		match func(l, r row) bool
		left  bool
	}{
		{"join R r on l.k = r.k", func(l, r row) bool { return !l.null && l.k == r.k }, false},
		{"left join R r on l.k = r.k", func(l, r row) bool { return !l.null && l.k == r.k }, true},
		{"join R r on l.k = r.k and r.v < l.v", func(l, r row) bool { return !l.null && l.k == r.k && r.v < l.v }, false},
		{"left join R r on l.k = r.k and r.v < l.v", func(l, r row) bool { return !l.null && l.k == r.k && r.v < l.v }, true},
		{"left join R r on r.v > l.v + 90", func(l, r row) bool { return r.v > l.v+90 }, true},
		{"join R r on r.v = l.v + 1 or r.v = l.v - 1", func(l, r row) bool { return r.v == l.v+1 || r.v == l.v-1 }, false},
		{"cross join R r", func(l, r row) bool { return true }, false},
	}
	for _, c := range cases {
		q := "select l.id, count(*) as n, count(r.id) as m, sum(r.v) as s from L l " + c.join + " group by l.id"
		res, err := db.run(t, context.Background(), q, sql.Options{})
		if err != nil {
			t.Fatalf("%s: %v", c.join, err)
		}
		got := map[string]agg{}
		for i := 0; i < res.Len; i++ {
			got[res.Cols[0].StringAt(i)] = agg{int(res.Cols[1].IntAt(i)), int(res.Cols[2].IntAt(i)), int(res.Cols[3].IntAt(i))}
		}
		want := map[string]agg{}
		for _, l := range left {
			a := agg{}
			for _, r := range right {
				if c.match(l, r) {
					a.matched++
					a.sum += r.v
				}
			}
			a.rows = a.matched
			if a.matched == 0 {
				if !c.left {
					continue
				}
				a.rows = 1
			}
			want[l.id] = a
		}
		if len(got) != len(want) {
			t.Fatalf("%s: %d left rows, want %d", c.join, len(got), len(want))
		}
		for id, w := range want {
			if got[id] != w {
				t.Fatalf("%s: %s got %+v, want %+v", c.join, id, got[id], w)
			}
		}
	}
}
