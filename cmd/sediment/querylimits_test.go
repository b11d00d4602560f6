package main

import (
	"encoding/json"
	"fmt"
	"net/url"
	"runtime"
	"runtime/metrics"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// The defaults fit the default memory limit: a query a quarter of it, all
// queries half; flags win; a total below one query is raised to it.
func TestQueryBudgets(t *testing.T) {
	for _, c := range []struct {
		cfg             serveConfig
		perQuery, total int64
	}{
		{serveConfig{MemoryLimit: 256 << 20}, 64 << 20, 128 << 20},
		{serveConfig{MemoryLimit: 1 << 30}, 256 << 20, 512 << 20},
		{serveConfig{}, 512 << 20, 2 << 30},
		{serveConfig{MemoryLimit: 8 << 20}, 4 << 20, 4 << 20},
		{serveConfig{MemoryLimit: 256 << 20, QueryMemory: 32 << 20}, 32 << 20, 128 << 20},
		{serveConfig{MemoryLimit: 256 << 20, QueryMemory: 512 << 20}, 512 << 20, 512 << 20},
		{serveConfig{MemoryLimit: 256 << 20, QueryMemoryTotal: 1 << 30}, 64 << 20, 1 << 30},
	} {
		p, tot := queryBudgets(c.cfg)
		if p != c.perQuery || tot != c.total {
			t.Errorf("%+v: %d/%d, want %d/%d", c.cfg, p, tot, c.perQuery, c.total)
		}
	}
}

// The cross join of the issue through Studio's SQL editor route
// (GET /api/endpoints/query/logs.all?sql=...) on a server with a small
// query budget: the COUNT(*) streams and answers; a query that must hold
// the joined rows fails at once with the limit and its flag named, the
// heap stays bounded, and the server goes on answering /health and
// queries.
func TestQueryLimitsThroughStudioRoute(t *testing.T) {
	const budget = 8 << 20
	cfg := serveConfig{DataDir: t.TempDir(), Supabase: true, PrivateToken: "k", QueryMemory: budget, QueryMemoryTotal: 2 * budget}
	r := startWith(t, cfg, productionDeps())
	const events = 2000
	for b := 0; b < events/500; b++ {
		var batch []string
		for i := range 500 {
			n := b*500 + i
			batch = append(batch, fmt.Sprintf(`{"event_message":"GET /rest/v1/todos?id=eq.%d 200","project":"default","metadata":{"request":{"path":"/rest/v1/todos"}},"id":"ev-%05d"}`, n, n))
		}
		r.mustDo("POST", "/api/logs?source_name=cloudflare.logs.prod", "k", "["+strings.Join(batch, ",")+"]", 200)
	}
	studio := func(sql string) map[string]any {
		t.Helper()
		body := r.mustDo("GET", "/api/endpoints/query/logs.all?project=default&sql="+url.QueryEscape(sql), "k", "", 200)
		var out map[string]any
		if err := json.Unmarshal([]byte(body), &out); err != nil {
			t.Fatalf("%s: %v", body, err)
		}
		return out
	}

	watch := serverHeapWatch()
	out := studio("select count(*) as n from edge_logs a cross join edge_logs b")
	if rows, _ := out["result"].([]any); len(rows) != 1 || rows[0].(map[string]any)["n"] != float64(events*events) {
		t.Fatalf("count over the cross join: %v", out)
	}
	out = studio("select a.id, b.event_message from edge_logs a cross join edge_logs b order by b.event_message, a.id")
	msg, _ := out["error"].(string)
	if !strings.Contains(msg, "the limit of one query (8MiB, set by --query-memory)") {
		t.Fatalf("sort over the cross join: %v", out)
	}
	out = studio("select a.id, count(*) as n from edge_logs a cross join edge_logs b group by a.id, b.id")
	msg, _ = out["error"].(string)
	if !strings.Contains(msg, "set by --query-memory") {
		t.Fatalf("group by over the cross join: %v", out)
	}
	peak, base := watch()
	t.Logf("heap: %d before, %d at most", base, peak)
	if bound := 2 * (base + 2*budget + 8<<20); peak > bound {
		t.Fatalf("the heap reached %d bytes (bound %d)", peak, bound)
	}

	r.mustDo("GET", "/health", "", "", 200)
	out = studio("select count(*) as n from edge_logs")
	if rows, _ := out["result"].([]any); len(rows) != 1 || rows[0].(map[string]any)["n"] != float64(events) {
		t.Fatalf("a plain query after the failures: %v", out)
	}
}

// serverHeapWatch samples the heap until the returned function is called,
// which returns the most it saw and the live heap at the start.
func serverHeapWatch() func() (peak, base int64) {
	runtime.GC()
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	read := func() int64 {
		metrics.Read(sample)
		return int64(sample[0].Value.Uint64())
	}
	base := read()
	var max atomic.Int64
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		tick := time.NewTicker(200 * time.Microsecond)
		defer tick.Stop()
		for {
			if h := read(); h > max.Load() {
				max.Store(h)
			}
			select {
			case <-done:
				return
			case <-tick.C:
			}
		}
	}()
	return func() (int64, int64) {
		close(done)
		wg.Wait()
		return max.Load(), base
	}
}
