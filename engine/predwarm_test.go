package engine

import (
	"sync"
	"testing"
	"time"

	"github.com/sediment/sediment/event"
	"github.com/sediment/sediment/internal/vec"
	"github.com/sediment/sediment/internal/vfs"
	"github.com/sediment/sediment/sql/scan"
)

// warmClock is a test clock the tests move by hand.
type warmClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *warmClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *warmClock) advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// warmFixture opens an engine on a hand-moved clock with one shard.
func warmFixture(t *testing.T) (*Engine, *Shard, *warmClock) {
	t.Helper()
	fs := vfs.NewMemFS()
	opts := testOptions(fs)
	clock := &warmClock{now: time.Unix(1_700_000_000, 0)}
	opts.Now = clock.Now
	e := openTestEngine(t, fs, opts)
	s, err := e.Shard(shardID)
	if err != nil {
		t.Fatal(err)
	}
	return e, s, clock
}

// warmRegex is a Studio-like regexp filter on event_message.
var warmRegex = scan.Predicate{Path: "event_message", Type: vec.String, Op: scan.Regex, Args: []scan.Const{str(`request \d+5 (GET|POST)`)}}

// appendFlushed appends n events after those in all, and flushes them.
func appendFlushed(t *testing.T, s *Shard, all []event.Event, n int) []event.Event {
	t.Helper()
	base := int64(1_700_000_000_000_000)
	var evs []event.Event
	for i := len(all); i < len(all)+n; i++ {
		evs = append(evs, testEvent(i, base+int64(i)*1000))
	}
	if err := s.Append(ctx, evs); err != nil {
		t.Fatal(err)
	}
	if err := s.Flush(); err != nil {
		t.Fatal(err)
	}
	return append(all, evs...)
}

// newestSegment returns the shard's segment with the highest id.
func newestSegment(t *testing.T, s *Shard) *segRef {
	t.Helper()
	s.mu.RLock()
	defer s.mu.RUnlock()
	var out *segRef
	for _, sg := range s.segs {
		if out == nil || sg.id > out.id {
			out = sg
		}
	}
	if out == nil {
		t.Fatal("no segment")
	}
	return out
}

// cachedBlocks counts the blocks of sg whose answer to p the cache has.
func cachedBlocks(t *testing.T, sg *segRef, p scan.Predicate) int {
	t.Helper()
	cp, err := compilePred(p)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for b := range sg.r.NumBlocks() {
		if hasCachedRows(predUnit{owner: cacheOwner(&sg.cacheID), part: b, lo: 0, hi: sg.r.Block(b).Rows}, cp) {
			n++
		}
	}
	return n
}

// queryFromCache runs the filter over the shard, checks the answer
// against the events, and that the new segment's blocks came from the
// cache: the hits grow by at least its blocks.
func queryFromCache(t *testing.T, s *Shard, all []event.Event, sg *segRef, p scan.Predicate) {
	t.Helper()
	blocks := sg.r.NumBlocks()
	if got := cachedBlocks(t, sg, p); got != blocks {
		t.Fatalf("%d of the new segment's %d blocks warmed", got, blocks)
	}
	hits := predCache.hits.Load()
	checkScan(t, s, all, "repeat", []scan.Predicate{p}, 0, 0)
	if got := predCache.hits.Load() - hits; got < uint64(blocks) {
		t.Fatalf("%s %v: the repeat took %d answers from the cache, want at least the new segment's %d blocks", p.Path, p.Op, got, blocks)
	}
}

// TestWarmAfterFlush: a filter queried before a flush finds the flushed
// segment's answers cached, and answers as a full scan does.
func TestWarmAfterFlush(t *testing.T) {
	e, s, _ := warmFixture(t)
	defer e.Close()
	all := appendFlushed(t, s, nil, 300)
	checkScan(t, s, all, "first", []scan.Predicate{warmRegex}, 0, 0) // Studio's chart asks
	warmed := predCache.warmedBlocks.Load()
	all = appendFlushed(t, s, all, 500)
	e.warm.pending.Wait()
	sg := newestSegment(t, s)
	if predCache.warmedBlocks.Load()-warmed < uint64(sg.r.NumBlocks()) {
		t.Fatalf("warmed blocks counter grew by %d, want %d", predCache.warmedBlocks.Load()-warmed, sg.r.NumBlocks())
	}
	queryFromCache(t, s, all, sg, warmRegex)
	// A substring test is warmed as well.
	like := scan.Predicate{Path: "metadata.request.path", Type: vec.String, Op: scan.Like, Args: []scan.Const{str("%/t_")}}
	contains := scan.Predicate{Path: "event_message", Type: vec.String, Op: scan.Contains, Args: []scan.Const{str("in 1")}}
	checkScan(t, s, all, "like", []scan.Predicate{like}, 0, 0)
	checkScan(t, s, all, "contains", []scan.Predicate{contains}, 0, 0)
	all = appendFlushed(t, s, all, 200)
	e.warm.pending.Wait()
	sg = newestSegment(t, s)
	for _, p := range []scan.Predicate{warmRegex, contains} {
		queryFromCache(t, s, all, sg, p)
	}
	// A dictionary or the index decides the LIKE over a few paths:
	// queries never store its answers, nor does warming compute them.
	if got := cachedBlocks(t, sg, like); got != 0 {
		t.Fatalf("%d blocks warmed for a filter the index decides", got)
	}
}

// TestWarmAfterCompaction: the segment a compaction writes is warmed.
func TestWarmAfterCompaction(t *testing.T) {
	e, s, _ := warmFixture(t)
	defer e.Close()
	all := appendFlushed(t, s, nil, 200) // small segments, merged
	all = appendFlushed(t, s, all, 200)
	checkScan(t, s, all, "first", []scan.Predicate{warmRegex}, 0, 0)
	e.warm.pending.Wait()
	n, err := s.Compact()
	if err != nil {
		t.Fatal(err)
	}
	if n == 0 {
		t.Fatal("nothing compacted")
	}
	e.warm.pending.Wait()
	queryFromCache(t, s, all, newestSegment(t, s), warmRegex)
}

// TestWarmOnlyRecentPredicates: a filter not queried for longer than the
// window is not warmed; queried again, it is.
func TestWarmOnlyRecentPredicates(t *testing.T) {
	e, s, clock := warmFixture(t)
	defer e.Close()
	all := appendFlushed(t, s, nil, 300)
	checkScan(t, s, all, "first", []scan.Predicate{warmRegex}, 0, 0)
	clock.advance(warmWindow + time.Second)
	all = appendFlushed(t, s, all, 300)
	e.warm.pending.Wait()
	if got := cachedBlocks(t, newestSegment(t, s), warmRegex); got != 0 {
		t.Fatalf("%d blocks warmed for a filter unused for longer than the window", got)
	}
	if got := s.recentPreds.current(clock.Now()); len(got) != 0 {
		t.Fatalf("still remembered: %v", got)
	}
	checkScan(t, s, all, "again", []scan.Predicate{warmRegex}, 0, 0)
	clock.advance(warmWindow - time.Second)
	all = appendFlushed(t, s, all, 300)
	e.warm.pending.Wait()
	queryFromCache(t, s, all, newestSegment(t, s), warmRegex)
}

// TestWarmRecentBounded: a shard remembers at most warmMaxPreds filters,
// the least recently used leaving first.
func TestWarmRecentBounded(t *testing.T) {
	var r recentPreds
	now := time.Unix(1_700_000_000, 0)
	for i := range warmMaxPreds + 3 {
		p, err := compilePred(scan.Predicate{Path: "m", Type: vec.String, Op: scan.Contains, Args: []scan.Const{str(string(rune('a' + i)))}})
		if err != nil {
			t.Fatal(err)
		}
		r.note([]*pred{p}, now.Add(time.Duration(i)*time.Second))
	}
	got := r.current(now.Add(time.Minute))
	if len(got) != warmMaxPreds {
		t.Fatalf("%d remembered, want %d", len(got), warmMaxPreds)
	}
	for _, p := range got {
		if p.Args[0].Str < "d" {
			t.Fatalf("%q remembered, one of the oldest", p.Args[0].Str)
		}
	}
}

// TestWarmSkipsRemoved: a segment removed before its turn is not read.
func TestWarmSkipsRemoved(t *testing.T) {
	e, s, _ := warmFixture(t)
	defer e.Close()
	all := appendFlushed(t, s, nil, 300)
	checkScan(t, s, all, "first", []scan.Predicate{warmRegex}, 0, 0)
	sg := newestSegment(t, s)
	gone := &segRef{id: sg.id + 100, shard: s} // its last reference gone
	skipped := predCache.warmSkipped.Load()
	e.warm.pending.Add(1)
	e.warm.jobs <- warmJob{s: s, ref: gone}
	e.warm.pending.Wait()
	if predCache.warmSkipped.Load() == skipped {
		t.Fatal("a removed segment was not counted as skipped")
	}
}

// TestWarmRecoversFromPanic: a job that panics is counted and the worker
// goes on with the next.
func TestWarmRecoversFromPanic(t *testing.T) {
	e, s, _ := warmFixture(t)
	defer e.Close()
	all := appendFlushed(t, s, nil, 300)
	checkScan(t, s, all, "first", []scan.Predicate{warmRegex}, 0, 0)
	broken := &segRef{id: 1 << 40, shard: s} // no reader: reading it panics
	broken.refs.Store(2)                     // the release leaves one: no close
	panics := predCache.warmPanics.Load()
	e.warm.pending.Add(1)
	e.warm.jobs <- warmJob{s: s, ref: broken}
	e.warm.pending.Wait()
	if predCache.warmPanics.Load() == panics {
		t.Fatal("the panic was not counted")
	}
	all = appendFlushed(t, s, all, 300)
	e.warm.pending.Wait()
	queryFromCache(t, s, all, newestSegment(t, s), warmRegex)
}

// TestWarmCloseDuringWarming: closing the engine with segments queued
// and one being warmed returns, the worker gone, every queued segment let
// go and every reference the worker took given back.
func TestWarmCloseDuringWarming(t *testing.T) {
	e, s, _ := warmFixture(t)
	all := appendFlushed(t, s, nil, 300)
	checkScan(t, s, all, "first", []scan.Predicate{warmRegex}, 0, 0)
	for range 6 {
		all = appendFlushed(t, s, all, 2000) // about 30 blocks each
	}
	s.mu.RLock()
	segs := append([]*segRef(nil), s.segs...)
	s.mu.RUnlock()
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	e.warm.pending.Wait() // the worker finished or let go of every job
	select {
	case <-e.warm.jobs:
		t.Fatal("a job left in the queue")
	default:
	}
	for _, sg := range segs {
		if n := sg.refs.Load(); n != 0 {
			t.Fatalf("segment %d still has %d references after close", sg.id, n)
		}
	}
}
