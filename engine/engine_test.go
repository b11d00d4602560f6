package engine

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/sediment/sediment/event"
	"github.com/sediment/sediment/index"
	"github.com/sediment/sediment/internal/vfs"
)

const shardID = "11111111-2222-4333-8444-555555555555"

var ctx = context.Background()

func appendRange(t testing.TB, s *Shard, from, to int, base int64) map[string]event.Event {
	t.Helper()
	want := map[string]event.Event{}
	var batch []event.Event
	for i := from; i < to; i++ {
		e := testEvent(i, base+int64(i)*1000)
		batch = append(batch, e)
		want[e.ID] = e
		if len(batch) == 37 || i == to-1 {
			if err := s.Append(ctx, batch); err != nil {
				t.Fatal(err)
			}
			batch = nil
		}
	}
	return want
}

func assertEvents(t testing.TB, s *Shard, want map[string]event.Event) {
	t.Helper()
	got := readAll(t, s)
	if len(got) != len(want) {
		t.Fatalf("read %d events, want %d", len(got), len(want))
	}
	for id, w := range want {
		g, ok := got[id]
		if !ok {
			t.Fatalf("event %s missing", id)
		}
		if !eventsEqual(&g, &w) {
			t.Fatalf("event %s differs:\n got %+v\nwant %+v", id, g, w)
		}
	}
}

func TestAppendFlushReopen(t *testing.T) {
	fs := vfs.NewMemFS()
	e := openTestEngine(t, fs, nil)
	s, err := e.Shard(shardID)
	if err != nil {
		t.Fatal(err)
	}
	want := appendRange(t, s, 0, 500, 1_700_000_000_000_000)
	assertEvents(t, s, want) // from the head
	if err := s.Flush(); err != nil {
		t.Fatal(err)
	}
	sn := s.Snapshot()
	if len(sn.segs) != 1 || sn.heads[len(sn.heads)-1].rows != 0 {
		t.Fatalf("after flush: %d segments", len(sn.segs))
	}
	sn.Release()
	for k, v := range appendRange(t, s, 500, 650, 1_700_000_000_000_000) {
		want[k] = v
	}
	assertEvents(t, s, want) // segment + head
	checkClean(t, e)
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	e = openTestEngine(t, fs, nil)
	defer e.Close()
	s, _ = e.Shard(shardID)
	assertEvents(t, s, want)
	checkClean(t, e)
	// The WAL of flushed heads is gone.
	names, _ := fs.List(filepath.Join("/data/sources", shardID, "wal"))
	if len(names) != 1 {
		t.Fatalf("wal files after reopen: %v", names)
	}
}

func TestReplayWithoutFlush(t *testing.T) {
	for _, mode := range []AckMode{AckSync, AckBuffered} {
		t.Run(mode.String(), func(t *testing.T) {
			fs := vfs.NewMemFS()
			opts := testOptions(fs)
			opts.AckMode = mode
			e := openTestEngine(t, fs, opts)
			s, _ := e.Shard(shardID)
			want := appendRange(t, s, 0, 300, 1_700_000_000_000_000)
			if mode == AckBuffered {
				// Power loss may take what was not yet synced; a clean close
				// syncs everything.
				if err := e.Close(); err != nil {
					t.Fatal(err)
				}
			}
			// Simulated power failure: only synced data survives.
			e2 := openTestEngine(t, fs.CrashClone(), opts)
			defer e2.Close()
			s2, _ := e2.Shard(shardID)
			assertEvents(t, s2, want)
			checkClean(t, e2)
			if mode == AckSync {
				e.Close()
			}
		})
	}
}

// crashFS takes a crash clone of the file system before every mutating
// operation, so a test can restart from each point of a workload.
type crashFS struct {
	*vfs.MemFS
	ops    int
	clones []*vfs.MemFS
}

func (c *crashFS) point() { c.ops++; c.clones = append(c.clones, c.MemFS.CrashClone()) }

func (c *crashFS) Create(n string) (vfs.File, error) {
	c.point()
	f, err := c.MemFS.Create(n)
	if err != nil {
		return nil, err
	}
	return &crashFile{f, c}, nil
}
func (c *crashFS) OpenRW(n string) (vfs.File, error) {
	c.point()
	f, err := c.MemFS.OpenRW(n)
	if err != nil {
		return nil, err
	}
	return &crashFile{f, c}, nil
}
func (c *crashFS) Remove(n string) error           { c.point(); return c.MemFS.Remove(n) }
func (c *crashFS) Rename(a, b string) error        { c.point(); return c.MemFS.Rename(a, b) }
func (c *crashFS) SyncDir(d string) error          { c.point(); return c.MemFS.SyncDir(d) }
func (c *crashFS) Open(n string) (vfs.File, error) { return c.MemFS.Open(n) }

type crashFile struct {
	vfs.File
	c *crashFS
}

func (f *crashFile) Write(p []byte) (int, error) { f.c.point(); return f.File.Write(p) }
func (f *crashFile) Sync() error                 { f.c.point(); return f.File.Sync() }

// TestCrashAtEveryWrite runs ingest, flushes and compactions, taking a
// crash image before every file-system write; restarting from each image
// must find every batch acknowledged before that point exactly once, and
// nothing else but whole unacknowledged batches.
func TestCrashAtEveryWrite(t *testing.T) {
	// Random times make segments overlap (compaction merges rows); ordered
	// times make them follow each other (compaction copies blocks).
	for _, ordered := range []bool{false, true} {
		t.Run(fmt.Sprintf("ordered=%v", ordered), func(t *testing.T) { testCrashAtEveryWrite(t, ordered) })
	}
}

func testCrashAtEveryWrite(t *testing.T, ordered bool) {
	cfs := &crashFS{MemFS: vfs.NewMemFS()}
	opts := testOptions(cfs)
	opts.SegmentMaxRows = 400
	e := openTestEngine(t, cfs, opts)
	s, err := e.Shard(shardID)
	if err != nil {
		t.Fatal(err)
	}
	type batch struct {
		ids   []string
		ackAt int // crash images with index >= ackAt were taken after the ack
	}
	var batches []batch
	all := map[string]event.Event{}
	base := int64(1_700_000_000_000_000)
	rng := rand.New(rand.NewPCG(3, 4))
	n := 0
	for round := 0; round < 6; round++ {
		for b := 0; b < 4; b++ {
			var evs []event.Event
			var ids []string
			for k := 0; k < 20+rng.IntN(20); k++ {
				ts := base + int64(rng.IntN(1_000_000_000))
				if ordered {
					ts = base + int64(n)*1000
				}
				ev := testEvent(n, ts)
				n++
				evs = append(evs, ev)
				ids = append(ids, ev.ID)
				all[ev.ID] = ev
			}
			if err := s.Append(ctx, evs); err != nil {
				t.Fatal(err)
			}
			batches = append(batches, batch{ids: ids, ackAt: len(cfs.clones)})
		}
		if err := s.Flush(); err != nil {
			t.Fatal(err)
		}
		if round%2 == 1 {
			if _, err := s.Compact(); err != nil {
				t.Fatal(err)
			}
		}
	}
	e.Close()
	if ordered && s.stats.concatenated.Load() == 0 {
		t.Fatal("ordered segments were not compacted by copying blocks")
	}
	if len(cfs.clones) < 100 {
		t.Fatalf("only %d crash points", len(cfs.clones))
	}
	t.Logf("%d crash points", len(cfs.clones))
	step := 1
	if testing.Short() {
		step = 7
	}
	for k := 0; k < len(cfs.clones); k += step {
		img := cfs.clones[k].CrashClone()
		e2, err := Open("/data", testOptions(img))
		if err != nil {
			t.Fatalf("crash point %d: reopen: %v", k, err)
		}
		s2, err := e2.Shard(shardID)
		if err != nil {
			t.Fatalf("crash point %d: %v", k, err)
		}
		got := readAll(t, s2)
		for _, b := range batches {
			present := 0
			for _, id := range b.ids {
				if g, ok := got[id]; ok {
					w := all[id]
					if !eventsEqual(&g, &w) {
						t.Fatalf("crash point %d: event %s differs", k, id)
					}
					present++
				}
			}
			if b.ackAt <= k && present != len(b.ids) {
				t.Fatalf("crash point %d: acknowledged batch has %d of %d events", k, present, len(b.ids))
			}
			if present != 0 && present != len(b.ids) {
				t.Fatalf("crash point %d: batch partially present (%d of %d)", k, present, len(b.ids))
			}
		}
		if err := e2.Check(); err != nil {
			t.Fatalf("crash point %d: %v", k, err)
		}
		e2.Close()
	}
}

// TestErrorAtEveryOp fails the i-th file-system operation of a workload for
// every i until the workload succeeds: every error must surface (no panic,
// no silent loss), and the durable state must then reopen with every
// acknowledged event.
func TestErrorAtEveryOp(t *testing.T) {
	for failAt := int64(1); ; failAt++ {
		mem := vfs.NewMemFS()
		efs := &vfs.ErrorFS{FS: mem, FailAt: failAt}
		acked := map[string]event.Event{}
		werr := func() error {
			e, err := Open("/data", testOptions(efs))
			if err != nil {
				return err
			}
			defer e.Close()
			s, err := e.Shard(shardID)
			if err != nil {
				return err
			}
			for b := 0; b < 3; b++ {
				var evs []event.Event
				for k := 0; k < 30; k++ {
					evs = append(evs, testEvent(b*30+k, 1_700_000_000_000_000+int64(b*30+k)))
				}
				if err := s.Append(ctx, evs); err != nil {
					return err
				}
				for _, ev := range evs {
					acked[ev.ID] = ev
				}
				if err := s.Flush(); err != nil {
					return err
				}
			}
			if _, err := s.Compact(); err != nil {
				return err
			}
			return nil
		}()
		if werr == nil {
			if failAt < 20 {
				t.Fatalf("workload succeeded with failure at op %d: errors are swallowed", failAt)
			}
			t.Logf("workload needs %d operations", failAt-1)
			return
		}
		if !errors.Is(werr, vfs.ErrInjected) {
			t.Fatalf("fail at %d: error %v is not the injected one", failAt, werr)
		}
		e, err := Open("/data", testOptions(mem.CrashClone()))
		if err != nil {
			t.Fatalf("fail at %d: reopen: %v", failAt, err)
		}
		s, err := e.Shard(shardID)
		if err != nil {
			t.Fatal(err)
		}
		got := readAll(t, s)
		for id := range acked {
			if _, ok := got[id]; !ok {
				t.Fatalf("fail at %d: acknowledged event %s lost", failAt, id)
			}
		}
		checkClean(t, e)
		e.Close()
		if failAt > 2000 {
			t.Fatal("workload never succeeds")
		}
	}
}

func TestCompactionMergesOverlappingSegments(t *testing.T) {
	fs := vfs.NewMemFS()
	e := openTestEngine(t, fs, nil)
	defer e.Close()
	s, _ := e.Shard(shardID)
	want := map[string]event.Event{}
	rng := rand.New(rand.NewPCG(9, 9))
	for seg := 0; seg < 5; seg++ {
		var evs []event.Event
		for k := 0; k < 90; k++ {
			i := seg*90 + k
			// Out of order across segments: ranges overlap.
			ev := testEvent(i, 1_700_000_000_000_000+int64(rng.IntN(10_000_000)))
			evs = append(evs, ev)
			want[ev.ID] = ev
		}
		if err := s.Append(ctx, evs); err != nil {
			t.Fatal(err)
		}
		if err := s.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	sn := s.Snapshot() // a query in flight during compaction
	n, err := s.Compact()
	if err != nil || n != 5 {
		t.Fatalf("compacted %d: %v", n, err)
	}
	// The old files are still there for the snapshot.
	for _, sg := range sn.segs {
		if !fs.Exists(sg.path) {
			t.Fatalf("segment %s deleted under a running query", sg.path)
		}
	}
	if sn.Rows() != 450 {
		t.Fatalf("old snapshot sees %d rows", sn.Rows())
	}
	sn.Release()
	for _, sg := range sn.segs {
		if fs.Exists(sg.path) {
			t.Fatalf("replaced segment %s not deleted after release", sg.path)
		}
	}
	sn = s.Snapshot()
	if len(sn.segs) != 1 || sn.segs[0].r.Rows() != 450 {
		t.Fatalf("after compaction: %d segments", len(sn.segs))
	}
	sn.Release()
	assertEvents(t, s, want)
	checkClean(t, e)
}

func TestRetentionDropsWholeSegments(t *testing.T) {
	fs := vfs.NewMemFS()
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	opts := testOptions(fs)
	opts.Now = func() time.Time { return now }
	e := openTestEngine(t, fs, opts)
	defer e.Close()
	s, _ := e.Shard(shardID)
	s.SetRetentionDays(3)
	old := appendRange(t, s, 0, 50, now.Add(-5*24*time.Hour).UnixMicro())
	s.Flush()
	recent := appendRange(t, s, 50, 100, now.Add(-1*24*time.Hour).UnixMicro())
	s.Flush()
	n, err := s.ApplyRetention()
	if err != nil || n != 1 {
		t.Fatalf("retention dropped %d: %v", n, err)
	}
	got := readAll(t, s)
	for id := range old {
		if _, ok := got[id]; ok {
			t.Fatal("expired event still present")
		}
	}
	if len(got) != len(recent) {
		t.Fatalf("%d events left, want %d", len(got), len(recent))
	}
	checkClean(t, e)
}

func walPath(t *testing.T, fs *vfs.MemFS) string {
	dir := filepath.Join("/data/sources", shardID, "wal")
	names, _ := fs.List(dir)
	if len(names) == 0 {
		t.Fatal("no wal")
	}
	return filepath.Join(dir, names[len(names)-1])
}

func TestWALTornTailIsCut(t *testing.T) {
	fs := vfs.NewMemFS()
	e := openTestEngine(t, fs, nil)
	s, _ := e.Shard(shardID)
	want := appendRange(t, s, 0, 100, 1_700_000_000_000_000)
	img := fs.CrashClone()
	e.Close()
	// A torn last write: half a record at the end.
	p := walPath(t, img)
	data, _ := vfs.ReadFile(img, p)
	rec, _ := encodeWALRecord(nil, nil, []event.Event{testEvent(999, 1)})
	f, _ := img.OpenRW(p)
	f.(interface{ Truncate(int64) error }).Truncate(int64(len(data)))
	f.Close()
	f, _ = img.OpenRW(p)
	buf := append(data, rec[:len(rec)/2]...)
	f.Write(buf)
	f.Sync()
	f.Close()
	e2 := openTestEngine(t, img, nil)
	defer e2.Close()
	s2, _ := e2.Shard(shardID)
	assertEvents(t, s2, want)
	if s2.stats.walBytesCut.Load() != int64(len(rec)/2) {
		t.Fatalf("cut %d bytes, want %d", s2.stats.walBytesCut.Load(), len(rec)/2)
	}
	checkClean(t, e2)
}

// TestWALCorruptionInTheMiddleIsReported: damage in the first of six
// records keeps startup going; the shard serves the five records after it,
// refuses events and says so; a repair drops only the damaged record and
// says how many events it held.
func TestWALCorruptionInTheMiddleIsReported(t *testing.T) {
	fs := vfs.NewMemFS()
	e := openTestEngine(t, fs, nil)
	s, _ := e.Shard(shardID)
	want := appendRange(t, s, 0, 200, 1_700_000_000_000_000) // records of 37 events
	img := fs.CrashClone()
	e.Close()
	p := walPath(t, img)
	data, _ := vfs.ReadFile(img, p)
	data[walHeaderSize+40] ^= 0xff // inside the first record's payload
	f, _ := img.Create(p)
	f.Write(data)
	f.Sync()
	f.Close()
	img.SyncDir(filepath.Dir(p))
	for i := 0; i < 37; i++ {
		delete(want, testEvent(i, 0).ID)
	}
	e1, err := Open("/data", testOptions(img.CrashClone()))
	if err != nil {
		t.Fatalf("startup with a damaged log: %v", err)
	}
	s1, _ := e1.Shard(shardID)
	assertEvents(t, s1, want)
	if err := s1.Append(ctx, []event.Event{testEvent(900, 1)}); !errors.Is(err, ErrWALDamaged) {
		t.Fatalf("append to a shard with a damaged log: %v", err)
	}
	in := s1.Info()
	if len(in.WALDamage) != 1 || in.WALDamage[0].Offset != walHeaderSize || !in.WALDamage[0].FramingIntact || in.WALDamage[0].Events != 37 {
		t.Fatalf("damage %+v", in.WALDamage)
	}
	if !hasConditionKind(s1, ConditionWALDamaged) {
		t.Fatal("no condition raised")
	}
	e1.Close()
	// An explicit repair drops that record only, and starts clean.
	opts := testOptions(img.CrashClone())
	opts.RepairWAL = true
	e2, err := Open("/data", opts)
	if err != nil {
		t.Fatal(err)
	}
	defer e2.Close()
	s2, _ := e2.Shard(shardID)
	assertEvents(t, s2, want)
	if in := s2.Info(); in.WALEventsDropped != 37 || in.WALRecordsDropped != 1 || len(in.WALDamage) != 0 {
		t.Fatalf("after repair: %+v", in)
	}
	if err := s2.Append(ctx, []event.Event{testEvent(900, 1)}); err != nil {
		t.Fatal(err)
	}
	checkClean(t, e2)
}

func TestDamagedSegmentIsQuarantined(t *testing.T) {
	fs := vfs.NewMemFS()
	e := openTestEngine(t, fs, nil)
	s, _ := e.Shard(shardID)
	first := appendRange(t, s, 0, 60, 1_700_000_000_000_000)
	s.Flush()
	second := appendRange(t, s, 60, 120, 1_800_000_000_000_000)
	s.Flush()
	sn := s.Snapshot()
	bad := sn.segs[0].path
	sn.Release()
	e.Close()
	data, _ := vfs.ReadFile(fs, bad)
	data[len(data)-30] ^= 0x55 // in the footer
	f, _ := fs.Create(bad)
	f.Write(data)
	f.Close()
	e2 := openTestEngine(t, fs, nil)
	defer e2.Close()
	s2, _ := e2.Shard(shardID)
	got := readAll(t, s2)
	for id := range first {
		if _, ok := got[id]; ok {
			t.Fatal("events of the damaged segment should be gone from queries")
		}
	}
	if len(got) != len(second) {
		t.Fatalf("healthy segment answers %d events, want %d", len(got), len(second))
	}
	if s2.stats.quarantined.Load() != 1 || !fs.Exists(filepath.Join("/data/sources", shardID, "quarantine", filepath.Base(bad))) {
		t.Fatal("damaged segment not moved to quarantine")
	}
	checkClean(t, e2)
}

func TestAppendAfterCloseFails(t *testing.T) {
	fs := vfs.NewMemFS()
	e := openTestEngine(t, fs, nil)
	s, _ := e.Shard(shardID)
	e.Close()
	if err := s.Append(ctx, []event.Event{testEvent(1, 1)}); !errors.Is(err, ErrClosed) {
		t.Fatalf("append after close: %v", err)
	}
}

func TestConcurrentAppendsAndQueries(t *testing.T) {
	fs := vfs.NewMemFS()
	opts := testOptions(fs)
	opts.HeadMaxRows = 300
	opts.DisableBackground = false
	opts.CompactionInterval = 5 * time.Millisecond
	e := openTestEngine(t, fs, opts)
	s, _ := e.Shard(shardID)
	done := make(chan error)
	const writers, per = 4, 400
	for w := 0; w < writers; w++ {
		go func(w int) {
			for b := 0; b < per; b += 20 {
				var evs []event.Event
				for k := 0; k < 20; k++ {
					evs = append(evs, testEvent(w*per+b+k, 1_700_000_000_000_000+int64(b+k)*1000))
				}
				// A client retries when the shard pushes back (HTTP 429).
				for {
					err := s.Append(ctx, evs)
					if errors.Is(err, ErrBackpressure) {
						time.Sleep(time.Millisecond)
						continue
					}
					if err != nil {
						done <- err
						return
					}
					break
				}
			}
			done <- nil
		}(w)
	}
	stop := make(chan struct{})
	go func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			sn := s.Snapshot()
			seen := map[string]bool{}
			err := sn.ForEachEvent(func(ev *event.Event) error {
				if seen[ev.ID] {
					return fmt.Errorf("duplicate %s", ev.ID)
				}
				seen[ev.ID] = true
				return nil
			})
			sn.Release()
			if err != nil {
				panic(err)
			}
		}
	}()
	for w := 0; w < writers; w++ {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
	close(stop)
	if n := len(readAll(t, s)); n != writers*per {
		t.Fatalf("%d events, want %d", n, writers*per)
	}
	checkClean(t, e)
	e.Close()
}

// TestAppendCopiesKeys overwrites the buffer events were parsed from after
// Append returns, as fasthttp reuses request buffers: nothing stored may
// change.
func TestAppendCopiesKeys(t *testing.T) {
	fs := vfs.NewMemFS()
	e := openTestEngine(t, fs, nil)
	defer e.Close()
	s, _ := e.Shard(shardID)
	body := []byte(`{"id":"k1","message":"hello","timestamp":1700000000000000,"project":"p","metadata":{"request":{"path":"/x"},"context":[{"host":"h"}]}}`)
	raw, err := event.Parse(body)
	if err != nil {
		t.Fatal(err)
	}
	ev, _ := event.Normalize(raw, time.UnixMicro(1700000000000000), event.NormalizeOptions{})
	want := ev.Clone()
	if err := s.Append(ctx, []event.Event{ev}); err != nil {
		t.Fatal(err)
	}
	for i := range body {
		body[i] = 'X'
	}
	got := readAll(t, s)["k1"]
	if !eventsEqual(&got, &want) {
		t.Fatalf("stored event changed with the caller's buffer:\n got %+v\nwant %+v", got, want)
	}
	sn := s.Snapshot()
	defer sn.Release()
	f := sn.Schema().Lookup("metadata.context")
	if f == nil || len(f.ElemFields) != 1 || f.ElemFields[0].Path != "host" {
		t.Fatalf("array element fields changed with the caller's buffer: %+v", f)
	}
}

// TestCompactionCopiesOrderedSegments compacts segments that follow each
// other in time by copying blocks and merging indexes; everything must
// read back and the merged index must agree with the columns (Check).
func TestCompactionCopiesOrderedSegments(t *testing.T) {
	fs := vfs.NewMemFS()
	opts := testOptions(fs)
	opts.IndexMaxValueTerms = 20 // some fields indexed in one part, dropped in another
	e := openTestEngine(t, fs, opts)
	defer e.Close()
	s, _ := e.Shard(shardID)
	want := map[string]event.Event{}
	for seg := 0; seg < 6; seg++ {
		for k, v := range appendRange(t, s, seg*100, seg*100+100, 1_700_000_000_000_000) {
			want[k] = v
		}
		if err := s.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	n, err := s.Compact()
	if err != nil || n != 6 {
		t.Fatalf("compacted %d: %v", n, err)
	}
	if s.stats.concatenated.Load() != 1 {
		t.Fatal("ordered segments were merged row by row, not copied")
	}
	assertEvents(t, s, want)
	checkClean(t, e)
	// Queries over the copied segment use its merged index.
	sn := s.Snapshot()
	defer sn.Release()
	ix, err := sn.segs[0].index()
	if err != nil || ix == nil || !ix.Has("metadata.response.status_code", index.KindInt) || !ix.Has("event_message", index.KindToken) {
		t.Fatalf("merged index lacks fields: %v %v", ix, err)
	}
}

// TestCompactionMixedStringEncodings merges segments where one holds a
// string column dictionary-encoded and another holds it plain.
func TestCompactionMixedStringEncodings(t *testing.T) {
	fs := vfs.NewMemFS()
	e := openTestEngine(t, fs, nil)
	defer e.Close()
	s, _ := e.Shard(shardID)
	mk := func(i int, ts int64, v string) event.Event {
		return event.Event{ID: fmt.Sprintf("id-%d", i), Timestamp: ts, Fields: event.ObjectValue(event.Member("v", event.StringValue(v)))}
	}
	want := map[string]event.Event{}
	var evs []event.Event
	for i := 0; i < 200; i++ { // few distinct: dictionary
		ev := mk(i, 1000+int64(i)*10, []string{"a", "b"}[i%2])
		evs = append(evs, ev)
		want[ev.ID] = ev
	}
	s.Append(ctx, evs)
	s.Flush()
	evs = nil
	for i := 200; i < 400; i++ { // all distinct, overlapping in time: plain
		ev := mk(i, 1005+int64(i-200)*10, fmt.Sprintf("unique-value-%d", i))
		evs = append(evs, ev)
		want[ev.ID] = ev
	}
	s.Append(ctx, evs)
	s.Flush()
	if n, err := s.Compact(); err != nil || n != 2 {
		t.Fatalf("compacted %d: %v", n, err)
	}
	assertEvents(t, s, want)
	checkClean(t, e)
}

func TestSubscribeSeesAppendsAndDropsWhenFull(t *testing.T) {
	fs := vfs.NewMemFS()
	e := openTestEngine(t, fs, nil)
	defer e.Close()
	s, _ := e.Shard(shardID)
	fast := s.Subscribe(8)
	slow := s.Subscribe(1)
	for b := 0; b < 5; b++ {
		if err := s.Append(ctx, []event.Event{testEvent(b*2, 1), testEvent(b*2+1, 2)}); err != nil {
			t.Fatal(err)
		}
	}
	got := 0
	for got < 10 {
		batch := <-fast.C
		got += len(batch)
	}
	if fast.Dropped() != 0 {
		t.Fatalf("fast subscriber dropped %d", fast.Dropped())
	}
	if len(<-slow.C) != 2 || slow.Dropped() != 8 {
		t.Fatalf("slow subscriber: dropped %d, want 8 (one batch kept)", slow.Dropped())
	}
	fast.Close()
	if _, open := <-fast.C; open {
		t.Fatal("closed subscription still delivers")
	}
}

func TestDecodeWAL(t *testing.T) {
	data := EncodeWALRecord([]event.Event{testEvent(1, 5), testEvent(2, 6)}, true)
	data = append(data, EncodeWALRecord([]event.Event{testEvent(3, 7)}, false)...)
	evs, err := DecodeWAL(data)
	if err != nil || len(evs) != 3 || evs[2].ID != testEvent(3, 7).ID {
		t.Fatalf("%d events, %v", len(evs), err)
	}
	if _, err := DecodeWAL(data[:len(data)-3]); !errors.Is(err, ErrWALCorrupt) {
		t.Fatalf("torn record: %v", err)
	}
}

// TestReadOnlyOpen reads a data directory (segments, WAL, a damaged
// segment) without changing a byte of it.
func TestReadOnlyOpen(t *testing.T) {
	fs := vfs.NewMemFS()
	e := openTestEngine(t, fs, nil)
	s, _ := e.Shard(shardID)
	want := appendRange(t, s, 0, 100, 1_700_000_000_000_000)
	s.Flush()
	for k, v := range appendRange(t, s, 100, 150, 1_700_000_000_000_000) {
		want[k] = v // in the WAL only
	}
	img := fs.CrashClone()
	e.Close()
	// A running server may be writing a segment and be mid-way through a
	// group in the newest log: neither is damage, and neither is touched.
	segDir := filepath.Join("/data", "sources", shardID, "segments")
	walDir := filepath.Join("/data", "sources", shardID, "wal")
	f, _ := img.Create(filepath.Join(segDir, segName(99)+".tmp"))
	f.Write([]byte("half a segment"))
	f.Close()
	wals, _ := img.List(walDir)
	slices.Sort(wals)
	last := filepath.Join(walDir, wals[len(wals)-1])
	data, _ := vfs.ReadFile(img, last)
	f, _ = img.Create(last)
	f.Write(append(data, 200, 0, 0, 0, 1, 2, 3)) // a record header, no body
	f.Close()
	before := snapshotFiles(t, img, "/data")
	opts := testOptions(img)
	opts.ReadOnly = true
	ro, err := Open("/data", opts)
	if err != nil {
		t.Fatal(err)
	}
	rs, err := ro.Shard(shardID)
	if err != nil {
		t.Fatal(err)
	}
	assertEvents(t, rs, want)
	if w := rs.Info().Warnings; len(w) != 0 {
		t.Fatalf("warnings for a live server's files: %v", w)
	}
	if err := rs.Append(ctx, []event.Event{testEvent(999, 1)}); !errors.Is(err, ErrReadOnly) {
		t.Fatalf("append on read-only: %v", err)
	}
	if err := ro.Check(); err != nil {
		t.Fatal(err)
	}
	if err := ro.Close(); err != nil {
		t.Fatal(err)
	}
	if after := snapshotFiles(t, img, "/data"); !maps.Equal(before, after) {
		t.Fatalf("read-only open changed files:\nbefore %v\nafter  %v", before, after)
	}
}

// snapshotFiles maps every file under dir to its contents.
func snapshotFiles(t *testing.T, fs *vfs.MemFS, dir string) map[string]string {
	out := map[string]string{}
	var walk func(d string)
	walk = func(d string) {
		names, err := fs.List(d)
		if err != nil {
			b, _ := vfs.ReadFile(fs, d)
			out[d] = string(b)
			return
		}
		for _, n := range names {
			walk(filepath.Join(d, n))
		}
	}
	walk(dir)
	return out
}
