package engine

import (
	"fmt"
	"slices"
	"sort"
	"testing"

	"github.com/sediment/sediment/event"
	"github.com/sediment/sediment/internal/vec"
	"github.com/sediment/sediment/sql/scan"
)

// TestPredCacheMatchesReference runs each text predicate several times over
// segments and over a head (sealed chunks and an open tail), in the
// shapes that take its answers from the predicate cache and those that
// must not store theirs (a time range, a limit, another predicate first),
// and checks every answer against the events themselves. Then it adds
// events to the head: the grown tail is a new unit, the new rows are
// found.
func TestPredCacheMatchesReference(t *testing.T) {
	fixtures := map[string]func(*testing.T, int) (*Engine, *Shard, []event.Event){"segments": scanFixture, "head": headScanFixture}
	preds := []scan.Predicate{
		{Path: "event_message", Type: vec.String, Op: scan.Regex, Args: []scan.Const{str(`request \d+5 (GET|POST)`)}},
		{Path: "event_message", Type: vec.String, Op: scan.Regex, Not: true, Args: []scan.Const{str(`GET`)}},
		{Path: "event_message", Type: vec.String, Op: scan.Contains, Args: []scan.Const{str("in 1")}},
		{Path: "metadata.request.path", Type: vec.String, Op: scan.Like, Args: []scan.Const{str("%/_2")}},
		// Every path passes: decided by the head chunks' dictionary codes
		// and the segments' index without evaluating (nothing to cache).
		{Path: "metadata.request.path", Type: vec.String, Op: scan.Like, Args: []scan.Const{str("%/t_")}},
		{Path: "metadata.level", Type: vec.String, Op: scan.Regex, Args: []scan.Const{str(`^(2|err)`)}},
		{Path: "metadata.never", Type: vec.String, Op: scan.Regex, Args: []scan.Const{str(`x`)}},
	}
	status200 := scan.Predicate{Path: "metadata.response.status_code", Type: vec.Int64, Op: scan.Eq, Args: []scan.Const{num(200)}}
	for name, fixture := range fixtures {
		t.Run(name, func(t *testing.T) {
			e, s, all := fixture(t, 64)
			defer e.Close()
			mid := all[len(all)/2].Timestamp
			for _, p := range preds {
				t.Run(fmt.Sprintf("%s %v not=%v %s", p.Path, p.Op, p.Not, p.Args[0].Str), func(t *testing.T) {
					hits := predCache.hits.Load()
					shapes := []struct {
						name    string
						filters []scan.Predicate
						tmin    int64
						limit   int
					}{
						{name: "all (stores)", filters: []scan.Predicate{p}},
						{name: "all again (cached)", filters: []scan.Predicate{p}},
						{name: "second half", filters: []scan.Predicate{p}, tmin: mid},
						{name: "newest 13", filters: []scan.Predicate{p}, limit: 13},
						{name: "after status 200", filters: []scan.Predicate{status200, p}},
					}
					for _, sh := range shapes {
						checkScan(t, s, all, sh.name, sh.filters, sh.tmin, sh.limit)
					}
					if predCache.hits.Load() == hits && p.Path != "metadata.never" && p.Args[0].Str != "%/t_" {
						t.Fatal("no answer came from the predicate cache")
					}
				})
			}
			// More events: a head's tail grows (and a new head starts
			// after the segments); the answers count them.
			base := all[len(all)-1].Timestamp + 1000
			var more []event.Event
			for i := range 300 {
				more = append(more, testEvent(len(all)+i, base+int64(i)*1000))
			}
			if err := s.Append(ctx, more); err != nil {
				t.Fatal(err)
			}
			all = append(all, more...)
			for _, p := range preds {
				checkScan(t, s, all, "after append "+p.Args[0].Str, []scan.Predicate{p}, 0, 0)
			}
		})
	}
}

// checkScan compares a scan's rows with the events that pass the filters
// (for a limit, that the newest limit of them are all there).
func checkScan(t *testing.T, s *Shard, all []event.Event, name string, filters []scan.Predicate, tmin int64, limit int) {
	t.Helper()
	sn := s.Snapshot()
	defer sn.Release()
	req := &scan.Request{Columns: []scan.Column{{Path: "id", Type: vec.String}}, Filters: filters,
		TimeMin: scan.MinTime, TimeMax: scan.MaxTime, Limit: limit}
	if tmin != 0 {
		req.TimeMin = tmin
	}
	if limit > 0 {
		req.Order = scan.Descending
	}
	var want []event.Event
	for i := range all {
		ev := &all[i]
		if ev.Timestamp < req.TimeMin {
			continue
		}
		ok := true
		for _, p := range filters {
			ok = ok && refMatch(ev, p)
		}
		if ok {
			want = append(want, *ev)
		}
	}
	got := runScan(t, sn.Table("test"), req)
	if limit > 0 {
		sort.SliceStable(want, func(i, j int) bool { return want[i].Timestamp > want[j].Timestamp })
		want = want[:min(len(want), limit)]
	} else if len(got) != len(want) {
		t.Fatalf("%s: %d rows, want %d", name, len(got), len(want))
	}
	var missing []string
	for _, w := range want {
		if _, ok := got[w.ID]; !ok {
			missing = append(missing, w.ID)
		}
	}
	if len(missing) > 0 {
		slices.Sort(missing)
		t.Fatalf("%s: rows missing: %v", name, missing)
	}
}

// TestPredCacheBounded: the cache keeps within its budget, the least
// recently used answers leaving first, and keeps nothing when disabled.
func TestPredCacheBounded(t *testing.T) {
	defer setPredCacheBytes(defaultPredCacheBytes)
	dropPredCache()
	p, err := compilePred(scan.Predicate{Path: "m", Type: vec.String, Op: scan.Regex, Args: []scan.Const{str("x")}})
	if err != nil {
		t.Fatal(err)
	}
	const budget = 64 << 10
	setPredCacheBytes(budget)
	unit := func(i int) predUnit { return predUnit{owner: 1 << 40, part: i, lo: 0, hi: 8192} }
	for i := range 100 {
		cacheRows(unit(i), p, []int32{int32(i)})
		if predCache.bytes > budget {
			t.Fatalf("%d bytes kept, budget %d", predCache.bytes, budget)
		}
	}
	if _, ok := cachedRows(unit(0), p); ok {
		t.Fatal("the oldest answer outlived 99 newer ones")
	}
	set, ok := cachedRows(unit(99), p)
	if !ok {
		t.Fatal("the newest answer is gone")
	}
	if got := rowsFromBits(set, unit(99), nil, 0, 8192); !slices.Equal(got, []int32{99}) {
		t.Fatalf("rows %v, want [99]", got)
	}
	setPredCacheBytes(0)
	if len(predCache.m) != 0 {
		t.Fatal("a disabled cache keeps answers")
	}
	cacheRows(unit(0), p, nil)
	if _, ok := cachedRows(unit(0), p); ok {
		t.Fatal("a disabled cache took an answer")
	}
}
