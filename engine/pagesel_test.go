package engine

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/sediment/sediment/event"
	"github.com/sediment/sediment/internal/vec"
	"github.com/sediment/sediment/internal/vfs"
	"github.com/sediment/sediment/segment"
	"github.com/sediment/sediment/sql/scan"
)

// readCountFS is a MemFS that counts the bytes read from its files.
type readCountFS struct {
	*vfs.MemFS
	read atomic.Int64
}

func (f *readCountFS) Open(n string) (vfs.File, error) {
	file, err := f.MemFS.Open(n)
	if err != nil {
		return nil, err
	}
	return &readCountFile{File: file, fs: f}, nil
}

type readCountFile struct {
	vfs.File
	fs *readCountFS
}

func (f *readCountFile) ReadAt(p []byte, off int64) (int, error) {
	n, err := f.File.ReadAt(p, off)
	f.fs.read.Add(int64(n))
	return n, err
}

// TestPagesPruned: a predicate on a column whose pages' value ranges (or
// dictionary code ranges) rule most of them out reads only the others, of
// that column and of the columns the other predicates read, and answers
// as a scan without pruning does.
func TestPagesPruned(t *testing.T) {
	fs := &readCountFS{MemFS: vfs.NewMemFS()}
	// No value index: the scan must decide from the columns.
	e := openTestEngine(t, fs, &Options{FS: fs, DisableBackground: true, BlockRows: 40000,
		IndexMaxValueTerms: 1, HeadMaxRows: 1 << 30, HeadMaxBytes: 1 << 30, HeadMemoryBudget: 1 << 30})
	defer e.Close()
	s, err := e.Shard("src")
	if err != nil {
		t.Fatal(err)
	}
	const n = 40000
	evs := make([]event.Event, n)
	for i := range evs {
		evs[i] = event.Event{ID: fmt.Sprintf("%08x-0000-4000-8000-%012x", i, i), Timestamp: int64(1_700_000_000_000_000 + i),
			Message: fmt.Sprintf("event %d with some words to make the message column wide enough", i), HasMessage: true,
			Fields: event.ObjectValue(
				event.Member("project", event.StringValue(fmt.Sprintf("p%d", i/10000))),
				event.Member("n", event.IntValue(int64(i))),
				event.Member("size", event.IntValue(int64(uint32(i)*2654435761%1000))),
			)}
	}
	if err := s.Append(context.Background(), evs); err != nil {
		t.Fatal(err)
	}
	if err := s.Flush(); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		preds []scan.Predicate
		want  int64
	}{
		{"int equality", []scan.Predicate{{Path: "n", Type: vec.Int64, Op: scan.Eq, Args: []scan.Const{{Type: vec.Int64, Int: 4321}}}}, 1},
		{"int range", []scan.Predicate{{Path: "n", Type: vec.Int64, Op: scan.Ge, Args: []scan.Const{{Type: vec.Int64, Int: 39000}}}}, 1000},
		{"dictionary string and an int", []scan.Predicate{
			{Path: "project", Type: vec.String, Op: scan.Eq, Args: []scan.Const{{Type: vec.String, Str: "p2"}}},
			{Path: "size", Type: vec.Int64, Op: scan.Lt, Args: []scan.Const{{Type: vec.Int64, Int: 10}}}}, sizeBelow10(20000, 30000)},
		{"string absent from the dictionary", []scan.Predicate{{Path: "project", Type: vec.String, Op: scan.In, Args: []scan.Const{{Type: vec.String, Str: "p9"}}}}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			count := func(noIndex bool) (int64, int64) {
				sn := s.Snapshot()
				defer sn.Release()
				before := fs.read.Load()
				req := &scan.Request{TimeMin: scan.MinTime, TimeMax: scan.MaxTime, Filters: tc.preds, NoIndex: noIndex}
				sc, err := sn.Table("src").Open(context.Background(), req)
				if err != nil {
					t.Fatal(err)
				}
				defer sc.Close()
				var total int64
				for _, u := range sc.Units() {
					c, err := u.Count(context.Background())
					if err != nil {
						t.Fatal(err)
					}
					total += c
				}
				return total, fs.read.Load() - before
			}
			defer setCaches(0)()
			full, fullRead := count(true)
			pruned, prunedRead := count(false)
			if full != tc.want || pruned != tc.want {
				t.Fatalf("counts %d (no pruning) and %d (pruning), want %d", full, pruned, tc.want)
			}
			if prunedRead*2 > fullRead {
				t.Fatalf("pruning read %d bytes, a scan without it %d", prunedRead, fullRead)
			}
		})
	}
}

// sizeBelow10 counts the rows of [from, to) whose "size" is below 10.
func sizeBelow10(from, to int) int64 {
	var n int64
	for i := from; i < to; i++ {
		if uint32(i)*2654435761%1000 < 10 {
			n++
		}
	}
	return n
}

// setCaches sets both segment caches' budgets to n bytes and returns a
// function that restores them.
// smallPageSnapshot stores evs in a shard of 1024-row blocks and 16 KiB
// pages, flushes them, sets the page and dictionary caches to budget bytes
// (empty) and returns a snapshot; all of it is undone when the test ends.
func smallPageSnapshot(t *testing.T, evs []event.Event, budget int64) *Snapshot {
	t.Helper()
	fs := vfs.NewMemFS()
	opts := testOptions(fs)
	opts.BlockRows, opts.PageBytes = 1024, 16<<10
	e := openTestEngine(t, fs, opts)
	t.Cleanup(func() { e.Close() })
	s, err := e.Shard("src")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Append(context.Background(), evs); err != nil {
		t.Fatal(err)
	}
	if err := s.Flush(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(setCaches(budget))
	segment.DropCaches()
	sn := s.Snapshot()
	t.Cleanup(sn.Release)
	return sn
}

// scanMessages returns the event_message of the rows of sn's source "src"
// that pass filters, newest first, at most limit (the index not used).
func scanMessages(t *testing.T, sn *Snapshot, filters []scan.Predicate, limit int) []string {
	t.Helper()
	req := &scan.Request{TimeMin: scan.MinTime, TimeMax: scan.MaxTime, Order: scan.Descending, Limit: limit, NoIndex: true,
		Columns: []scan.Column{{Path: "event_message", Type: vec.String}}, Filters: filters}
	sc, err := sn.Table("src").Open(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	defer sc.Close()
	var got []string
	for _, u := range sc.Units() {
		if err := u.Read(context.Background(), func(b *vec.Batch) error {
			b.ForEach(func(i int) { got = append(got, b.Cols[0].StringAt(i)) })
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	return got
}

func setCaches(n int64) func() {
	pages, dicts := segment.SetPageCacheBytes(n), segment.SetDictCacheBytes(n)
	return func() {
		segment.SetPageCacheBytes(pages)
		segment.SetDictCacheBytes(dicts)
	}
}

// TestLongScansLeaveThePageCache: a scan without a limit over more pages
// than a quarter of the page cache holds reads them without keeping them;
// a newest-first query with a limit keeps what it reads, and so does a
// scan of little data.
func TestLongScansLeaveThePageCache(t *testing.T) {
	fs := vfs.NewMemFS()
	opts := testOptions(fs)
	opts.BlockRows = 256
	e := openTestEngine(t, fs, opts)
	defer e.Close()
	s, err := e.Shard("src")
	if err != nil {
		t.Fatal(err)
	}
	var evs []event.Event
	for i := 0; i < 5000; i++ {
		evs = append(evs, testEvent(i, int64(1_700_000_000_000_000+i*1000)))
	}
	if err := s.Append(context.Background(), evs); err != nil {
		t.Fatal(err)
	}
	if err := s.Flush(); err != nil {
		t.Fatal(err)
	}
	defer setCaches(256 << 10)()
	segment.DropCaches()
	read := func(req *scan.Request) int {
		sn := s.Snapshot()
		defer sn.Release()
		sc, err := sn.Table("src").Open(context.Background(), req)
		if err != nil {
			t.Fatal(err)
		}
		defer sc.Close()
		rows := 0
		for _, u := range sc.Units() {
			if err := u.Read(context.Background(), func(b *vec.Batch) error { rows += b.Rows(); return nil }); err != nil {
				t.Fatal(err)
			}
		}
		return rows
	}
	cols := []scan.Column{{Path: "event_message", Type: vec.String}, {Path: "metadata.origin_time", Type: vec.Float64}}
	if got := read(&scan.Request{TimeMin: scan.MinTime, TimeMax: scan.MaxTime, Columns: cols}); got != len(evs) {
		t.Fatalf("scan read %d rows", got)
	}
	if n := segment.PageCacheBytes(); n != 0 {
		t.Fatalf("a scan of every block left %d bytes in the page cache", n)
	}
	if got := read(&scan.Request{TimeMin: scan.MinTime, TimeMax: scan.MaxTime, Columns: cols, Order: scan.Descending, Limit: 10}); got < 10 {
		t.Fatalf("newest 10: %d rows", got)
	}
	if segment.PageCacheBytes() == 0 {
		t.Fatal("a newest-first query kept nothing in the page cache")
	}
	segment.SetPageCacheBytes(64 << 20)
	segment.DropCaches()
	if got := read(&scan.Request{TimeMin: scan.MinTime, TimeMax: scan.MaxTime, Columns: cols}); got != len(evs) {
		t.Fatalf("scan read %d rows", got)
	}
	if segment.PageCacheBytes() == 0 {
		t.Fatal("a scan of data that fits the page cache kept nothing")
	}
}

// TestLongTokensThroughTheEngine: messages with tokens longer than the
// index keeps as short terms (API keys in URLs, long hex blobs) pass the
// consistency check after a flush and a compaction, and a text search
// finds what a scan without the index finds while reading only the rows
// that can hold the needle.
func TestLongTokensThroughTheEngine(t *testing.T) {
	fs := vfs.NewMemFS()
	e := openTestEngine(t, fs, nil)
	defer e.Close()
	s, err := e.Shard("src")
	if err != nil {
		t.Fatal(err)
	}
	key := func(i int) string { return "eyJ" + strings.Repeat("a", 70) + fmt.Sprintf("K%d", i%3) }
	for seg := 0; seg < 3; seg++ {
		var evs []event.Event
		for i := 0; i < 300; i++ {
			k := seg*300 + i
			ev := testEvent(k, int64(1_700_000_000_000_000+k*1000))
			switch {
			case k%10 == 0:
				ev.Message = "GET /realtime/v1/websocket?apikey=" + key(k)
			case k%10 == 1:
				ev.Message = "blob " + strings.Repeat("0123456789abcdef", 5)
			case k == 777:
				ev.Message = "found xq7rareprobe here"
			}
			ev.HasMessage = true
			evs = append(evs, ev)
		}
		if err := s.Append(context.Background(), evs); err != nil {
			t.Fatal(err)
		}
		if err := s.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	checkClean(t, e)
	if _, err := s.Compact(); err != nil {
		t.Fatal(err)
	}
	checkClean(t, e)
	for _, needle := range []string{"xq7rareprobe", "aaaaK1", "websocket"} {
		pred := scan.Predicate{Path: "event_message", Type: vec.String, Op: scan.Contains, Args: []scan.Const{{Type: vec.String, Str: needle}}}
		count := func(noIndex bool) int64 {
			sn := s.Snapshot()
			defer sn.Release()
			sc, err := sn.Table("src").Open(context.Background(), &scan.Request{TimeMin: scan.MinTime, TimeMax: scan.MaxTime, Filters: []scan.Predicate{pred}, NoIndex: noIndex})
			if err != nil {
				t.Fatal(err)
			}
			defer sc.Close()
			var n int64
			for _, u := range sc.Units() {
				c, err := u.Count(context.Background())
				if err != nil {
					t.Fatal(err)
				}
				n += c
			}
			return n
		}
		if got, want := count(false), count(true); got != want || want == 0 {
			t.Fatalf("%q: %d with the index, %d without", needle, got, want)
		}
	}
}

// TestRareMatchScansLeaveThePageCache: a newest-first search with a limit
// that few rows meet reads the whole column; past a share of the page
// cache it keeps no more of its pages (they would push out what
// interactive queries read again), and it still finds every match.
func TestRareMatchScansLeaveThePageCache(t *testing.T) {
	var evs []event.Event
	for i := 0; i < 60000; i++ {
		ev := testEvent(i, int64(1_700_000_000_000_000+i*1000))
		msg := fmt.Sprintf("GET /storage/v1/object/%08x/%d.png ray %016x", uint32(i)*2654435761, i, uint64(i)*0x9e3779b97f4a7c15)
		if i%7919 == 3 {
			msg += " needle-42"
		}
		ev.Message, ev.HasMessage = msg, true
		evs = append(evs, ev)
	}
	const budget = 1 << 20
	sn := smallPageSnapshot(t, evs, budget)
	got := scanMessages(t, sn, []scan.Predicate{{Path: "event_message", Type: vec.String, Op: scan.Regex, Regex: regexp.MustCompile(`needle-4[0-9]`)}}, 10)
	if want := (60000 + 7919 - 4) / 7919; len(got) != want {
		t.Fatalf("found %d rows, want %d", len(got), want)
	}
	for _, m := range got {
		if !strings.HasSuffix(m, " needle-42") {
			t.Fatalf("row %q does not match", m)
		}
	}
	if n := segment.PageCacheBytes(); n > budget/2 {
		t.Fatalf("a search reading every block left %d bytes of a %d-byte page cache", n, budget)
	}
}

// TestScatteredRecordsLeaveThePageCache: whole records of rare matches,
// one in each of many blocks, are built right while their pages, past a
// share of the page cache, are read without being kept.
func TestScatteredRecordsLeaveThePageCache(t *testing.T) {
	fs := vfs.NewMemFS()
	opts := testOptions(fs)
	opts.BlockRows, opts.PageBytes = 512, 16<<10
	e := openTestEngine(t, fs, opts)
	defer e.Close()
	s, err := e.Shard("src")
	if err != nil {
		t.Fatal(err)
	}
	var evs []event.Event
	for i := 0; i < 40000; i++ {
		ev := testEvent(i, int64(1_700_000_000_000_000+i*1000))
		ev.Message, ev.HasMessage = fmt.Sprintf("GET /rest/v1/t%d ray %016x", i, uint64(i)*0x9e3779b97f4a7c15), true
		if i%500 == 7 {
			ev.Message += " needle"
		}
		evs = append(evs, ev)
	}
	if err := s.Append(context.Background(), evs); err != nil {
		t.Fatal(err)
	}
	if err := s.Flush(); err != nil {
		t.Fatal(err)
	}
	const budget = 256 << 10
	defer setCaches(budget)()
	segment.DropCaches()
	sn := s.Snapshot()
	defer sn.Release()
	req := &scan.Request{TimeMin: scan.MinTime, TimeMax: scan.MaxTime, Order: scan.Descending, Limit: 1000,
		Columns: []scan.Column{{Path: "event_message", Type: vec.String}, {Path: "metadata", Kind: scan.Record}},
		Filters: []scan.Predicate{{Path: "event_message", Type: vec.String, Op: scan.Contains, Args: []scan.Const{{Type: vec.String, Str: "needle"}}}}}
	sc, err := sn.Table("src").Open(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	defer sc.Close()
	var msgs []string
	var refs []int64
	for _, u := range sc.Units() {
		if err := u.Read(context.Background(), func(b *vec.Batch) error {
			b.ForEach(func(i int) {
				msgs = append(msgs, b.Cols[0].StringAt(i))
				refs = append(refs, b.Cols[1].Ints[i])
			})
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	if len(refs) != 80 {
		t.Fatalf("%d matches, want 80", len(refs))
	}
	segment.DropCaches()
	recs := make([]string, len(refs))
	if err := sc.Materialize(context.Background(), "metadata", true, refs, recs); err != nil {
		t.Fatal(err)
	}
	for k, m := range msgs {
		var i int
		if _, err := fmt.Sscanf(m, "GET /rest/v1/t%d", &i); err != nil {
			t.Fatal(err)
		}
		status := []int64{200, 200, 200, 201, 404, 500}[i%6]
		if want := fmt.Sprintf(`"status_code":%d`, status); !strings.Contains(recs[k], want) || !strings.Contains(recs[k], fmt.Sprintf(`"path":"/rest/v1/t%d"`, i%7)) {
			t.Fatalf("record of event %d: %s", i, recs[k])
		}
	}
	if n := segment.PageCacheBytes(); n > budget/2 {
		t.Fatalf("records from 80 blocks left %d bytes of a %d-byte page cache", n, budget)
	}
}
