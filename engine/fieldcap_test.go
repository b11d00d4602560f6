package engine

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/sediment/sediment/event"
	"github.com/sediment/sediment/internal/vfs"
	"github.com/sediment/sediment/segment"
)

// wideEvent is an event with n distinct keys under metadata, named
// prefix000…; its id is id.
func wideEvent(id string, ts int64, prefix string, n int) event.Event {
	kids := make([]event.Value, n)
	for i := range kids {
		kids[i] = event.Member(fmt.Sprintf("%s%05d", prefix, i), event.IntValue(int64(i)))
	}
	return event.Event{ID: id, Timestamp: ts, Message: id, HasMessage: true,
		Fields: event.ObjectValue(event.Member("metadata", event.ObjectValue(kids...)))}
}

// onFS returns a copy of opts on another file system (a crash image).
func onFS(opts *Options, fs vfs.FS) *Options {
	o := *opts
	o.FS = fs
	return &o
}

// schemaHas reports whether the shard's schema (what SQL and LQL resolve
// paths against) has path.
func schemaHas(s *Shard, path string) bool {
	sn := s.Snapshot()
	defer sn.Release()
	return sn.Schema().Lookup(path) != nil
}

// TestWideEventDoesNotStarveLaterFields is issue 12's case: an event with
// 10,000 distinct keys, then an ordinary event with a field no event had.
// The ordinary event's field is stored and in the schema from the head,
// after a flush and after a restart (clean and crashed).
func TestWideEventDoesNotStarveLaterFields(t *testing.T) {
	fs := vfs.NewMemFS()
	opts := testOptions(fs)
	e := openTestEngine(t, fs, opts)
	s, _ := e.Shard("src")
	ctx := context.Background()
	if err := s.Append(ctx, []event.Event{wideEvent("wide", 1, "k", 10000)}); err != nil {
		t.Fatal(err)
	}
	ordinary := event.Event{ID: "ordinary", Timestamp: 2, Message: "ordinary", HasMessage: true,
		Fields: event.ObjectValue(event.Member("new_field", event.StringValue("kept")))}
	if err := s.Append(ctx, []event.Event{ordinary}); err != nil {
		t.Fatal(err)
	}
	check := func(when string, s *Shard) {
		t.Helper()
		got := readAll(t, s)
		ord, wide := got["ordinary"], got["wide"]
		if f := ord.Fields.Get("new_field"); f == nil || f.Str != "kept" {
			t.Fatalf("%s: the ordinary event's new field was not stored: %+v", when, ord)
		}
		if !schemaHas(s, "new_field") {
			t.Fatalf("%s: new_field not in the schema", when)
		}
		meta := wide.Fields.Get("metadata")
		if meta == nil || len(meta.Kids) != 999 || meta.Kids[0].Key != "k00000" || meta.Kids[998].Key != "k00998" {
			t.Fatalf("%s: the wide event should keep its first 1000 fields (metadata and 999 under it)", when)
		}
	}
	check("head", s)
	crashed := fs.CrashClone()
	if err := s.Flush(); err != nil {
		t.Fatal(err)
	}
	check("after flush", s)
	if in := s.Info(); in.EventsOverFieldCap != 1 || in.FieldsOverEventCap != 10000-999 || in.DroppedFields != 0 {
		t.Fatalf("counters: %+v", in)
	}
	checkClean(t, e)
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	e = openTestEngine(t, fs, opts)
	s, _ = e.Shard("src")
	check("after restart", s)
	e.Close()

	e = openTestEngine(t, crashed, onFS(opts, crashed))
	defer e.Close()
	s, _ = e.Shard("src")
	check("after a crash (replayed)", s)
	if err := s.Flush(); err != nil {
		t.Fatal(err)
	}
	check("replayed and flushed", s)
	checkClean(t, e)
}

// distinctEvent is event i of a source whose events each bring perEvent
// fields no other event has (keys named after i), plus a common project.
func distinctEvent(i, perEvent int) event.Event {
	kids := make([]event.Value, perEvent)
	for k := range kids {
		kids[k] = event.Member(fmt.Sprintf("f%d_%d", i, k), event.IntValue(int64(i*1000+k)))
	}
	return event.Event{ID: fmt.Sprintf("ev%04d", i), Timestamp: int64(1_700_000_000_000_000 + i), Message: "m", HasMessage: true,
		Fields: event.ObjectValue(event.Member("project", event.StringValue("p")), event.Member("metadata", event.ObjectValue(kids...)))}
}

// maxColumnsOf returns the most columns any segment or head of s has.
func maxColumnsOf(s *Shard) (segs, heads, most int) {
	sn := s.Snapshot()
	defer sn.Release()
	for _, sg := range sn.segs {
		most = max(most, len(sg.r.Columns()))
	}
	for _, h := range sn.heads {
		most = max(most, len(h.cols))
	}
	return len(sn.segs), len(sn.heads), most
}

// TestColumnBudgetStartsNewHead: ordinary events, each well under the
// per-event cap, that together bring far more distinct fields than a head
// may have columns. Every field of every event is stored (the full head is
// frozen and the event goes to a new head with a new log file), no head or
// segment exceeds the budget, and nothing changes after a flush, a
// restart, or a crash that replays the log files.
func TestColumnBudgetStartsNewHead(t *testing.T) {
	const events, perEvent, maxCols = 60, 10, 64 // 600 distinct fields
	for _, mode := range []string{"one event per append", "one batch", "concurrent appends"} {
		t.Run(mode, func(t *testing.T) {
			fs := vfs.NewMemFS()
			opts := testOptions(fs)
			opts.MaxColumns = maxCols
			opts.MaxFrozenHeads = 1 << 20
			e := openTestEngine(t, fs, opts)
			s, _ := e.Shard(shardID)
			want := map[string]event.Event{}
			var all []event.Event
			for i := range events {
				ev := distinctEvent(i, perEvent)
				want[ev.ID] = ev
				all = append(all, ev)
			}
			switch mode {
			case "one event per append":
				for i := range all {
					if err := s.Append(ctx, all[i:i+1]); err != nil {
						t.Fatal(err)
					}
				}
			case "one batch":
				if err := s.Append(ctx, all); err != nil {
					t.Fatal(err)
				}
			case "concurrent appends":
				errs := make(chan error, 6)
				for w := range 6 {
					go func() {
						var err error
						for i := w; i < len(all) && err == nil; i += 6 {
							err = s.Append(ctx, all[i:i+1])
						}
						errs <- err
					}()
				}
				for range 6 {
					if err := <-errs; err != nil {
						t.Fatal(err)
					}
				}
			}
			check := func(when string, s *Shard) {
				t.Helper()
				assertEvents(t, s, want)
				if _, _, most := maxColumnsOf(s); most > maxCols {
					t.Fatalf("%s: a part has %d columns, budget %d", when, most, maxCols)
				}
				for _, p := range []string{"metadata.f0_0", "metadata.f59_9", "metadata.f31_4"} {
					if !schemaHas(s, p) {
						t.Fatalf("%s: %s not in the schema", when, p)
					}
				}
				if fd := s.FieldDrops(); fd != (FieldDrops{}) {
					t.Fatalf("%s: fields dropped: %+v", when, fd)
				}
			}
			check("heads", s)
			if _, heads, _ := maxColumnsOf(s); heads < events*perEvent/maxCols {
				t.Fatalf("only %d heads for %d distinct fields", heads, events*perEvent)
			}
			crashed := fs.CrashClone()
			if err := s.Flush(); err != nil {
				t.Fatal(err)
			}
			check("flushed", s)
			// Compaction merges segments up to the format's column limit,
			// far above the head's budget: the segments merge back.
			if _, err := s.Compact(); err != nil {
				t.Fatal(err)
			}
			assertEvents(t, s, want)
			checkClean(t, e)
			if err := e.Close(); err != nil {
				t.Fatal(err)
			}
			e = openTestEngine(t, fs, opts)
			s, _ = e.Shard(shardID)
			assertEvents(t, s, want)
			e.Close()

			e = openTestEngine(t, crashed, onFS(opts, crashed))
			defer e.Close()
			s, _ = e.Shard(shardID)
			check("replayed after a crash", s)
			if err := s.Flush(); err != nil {
				t.Fatal(err)
			}
			check("replayed and flushed", s)
			checkClean(t, e)
		})
	}
}

// TestCrashAtEveryWriteWithHeadSplits: batches whose events overflow the
// head's column budget, some in the middle of a batch, with a crash image
// before every file-system write. Restarting from each image finds every
// acknowledged batch whole, every event stored with all its fields and at
// most once. (A batch split over two heads is logged as two records in two
// files: an unacknowledged one may come back in part, as any batch whose
// 500 can come after its events were stored.)
func TestCrashAtEveryWriteWithHeadSplits(t *testing.T) {
	cfs := &crashFS{MemFS: vfs.NewMemFS()}
	opts := testOptions(cfs)
	opts.MaxColumns = 40
	opts.MaxFrozenHeads = 1 << 20
	e := openTestEngine(t, cfs, opts)
	s, _ := e.Shard(shardID)
	type batch struct {
		ids   []string
		ackAt int
	}
	var batches []batch
	all := map[string]event.Event{}
	n := 0
	for round := range 6 {
		for _, size := range []int{1, 4, 2} {
			var evs []event.Event
			var ids []string
			for range size {
				ev := distinctEvent(n, 6)
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
		if round%3 == 1 {
			if err := s.Flush(); err != nil {
				t.Fatal(err)
			}
		}
	}
	e.Close()
	t.Logf("%d crash points", len(cfs.clones))
	for k := range cfs.clones {
		img := cfs.clones[k].CrashClone()
		e2, err := Open("/data", onFS(opts, img))
		if err != nil {
			t.Fatalf("crash point %d: reopen: %v", k, err)
		}
		s2, err := e2.Shard(shardID)
		if err != nil {
			t.Fatalf("crash point %d: %v", k, err)
		}
		got := readAll(t, s2) // fails on an event read twice
		for _, b := range batches {
			present := 0
			for _, id := range b.ids {
				if g, ok := got[id]; ok {
					if w := all[id]; !eventsEqual(&g, &w) {
						t.Fatalf("crash point %d: event %s differs:\n got %+v\nwant %+v", k, id, g, w)
					}
					present++
				}
			}
			if b.ackAt <= k && present != len(b.ids) {
				t.Fatalf("crash point %d: acknowledged batch has %d of %d events", k, present, len(b.ids))
			}
		}
		if _, _, most := maxColumnsOf(s2); most > opts.MaxColumns {
			t.Fatalf("crash point %d: a part has %d columns", k, most)
		}
		if err := s2.Flush(); err != nil {
			t.Fatalf("crash point %d: flush after replay: %v", k, err)
		}
		if err := e2.Check(); err != nil {
			t.Fatalf("crash point %d: %v", k, err)
		}
		e2.Close()
	}
}

// TestErrorAtEveryOpWithHeadSplits fails the i-th file-system operation of
// a workload whose batches start new heads, for every i until it
// succeeds: every error surfaces, and the durable state reopens with every
// acknowledged event whole.
func TestErrorAtEveryOpWithHeadSplits(t *testing.T) {
	for failAt := int64(1); ; failAt++ {
		mem := vfs.NewMemFS()
		efs := &vfs.ErrorFS{FS: mem, FailAt: failAt}
		opts := testOptions(efs)
		opts.MaxColumns = 40
		opts.MaxFrozenHeads = 1 << 20
		acked := map[string]event.Event{}
		werr := func() error {
			e, err := Open("/data", opts)
			if err != nil {
				return err
			}
			defer e.Close()
			s, err := e.Shard(shardID)
			if err != nil {
				return err
			}
			for b := range 4 {
				var evs []event.Event
				for k := range 4 {
					evs = append(evs, distinctEvent(b*4+k, 6))
				}
				if err := s.Append(ctx, evs); err != nil {
					return err
				}
				for _, ev := range evs {
					acked[ev.ID] = ev
				}
			}
			return s.Flush()
		}()
		if werr == nil {
			t.Logf("workload needs %d operations", failAt-1)
			return
		}
		if !errors.Is(werr, vfs.ErrInjected) {
			t.Fatalf("fail at %d: error %v is not the injected one", failAt, werr)
		}
		e, err := Open("/data", onFS(opts, mem.CrashClone()))
		if err != nil {
			t.Fatalf("fail at %d: reopen: %v", failAt, err)
		}
		s, err := e.Shard(shardID)
		if err != nil {
			t.Fatal(err)
		}
		got := readAll(t, s)
		for id, w := range acked {
			if g, ok := got[id]; !ok || !eventsEqual(&g, &w) {
				t.Fatalf("fail at %d: acknowledged event %s lost or changed", failAt, id)
			}
		}
		checkClean(t, e)
		e.Close()
		if failAt > 2000 {
			t.Fatal("workload never succeeds")
		}
	}
}

// TestCompactionKeepsWithinFormatColumns: segments whose columns together
// exceed what one segment may hold (segment.MaxColumns) are not merged
// into one; compaction merges the ones that fit and every event reads back.
func TestCompactionKeepsWithinFormatColumns(t *testing.T) {
	fs := vfs.NewMemFS()
	opts := testOptions(fs)
	opts.MaxColumns = segment.MaxColumns / 2
	opts.MaxEventFields = opts.MaxColumns - reservedColumns
	e := openTestEngine(t, fs, opts)
	defer e.Close()
	s, _ := e.Shard(shardID)
	for i := range 3 {
		ev := wideEvent(fmt.Sprintf("w%d", i), int64(i+1), fmt.Sprintf("s%d_", i), opts.MaxEventFields-1)
		if err := s.Append(ctx, []event.Event{ev}); err != nil {
			t.Fatal(err)
		}
		if err := s.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	merged, err := s.Compact()
	if err != nil {
		t.Fatal(err)
	}
	if merged != 2 {
		t.Fatalf("compaction merged %d segments, want 2 (a third would exceed %d columns)", merged, segment.MaxColumns)
	}
	if merged, err = s.Compact(); err != nil || merged != 0 {
		t.Fatalf("second compaction merged %d: %v", merged, err)
	}
	segs, _, most := maxColumnsOf(s)
	if segs != 2 || most > segment.MaxColumns {
		t.Fatalf("%d segments, the widest with %d columns", segs, most)
	}
	// Reading the events back whole costs seconds at this width: check
	// the rows and that every field is still a column.
	if in := s.Info(); in.SegmentRows != 3 {
		t.Fatalf("%d rows", in.SegmentRows)
	}
	sn := s.Snapshot()
	defer sn.Release()
	schema := sn.Schema()
	for i := range 3 {
		for _, k := range []int{0, opts.MaxEventFields / 2, opts.MaxEventFields - 2} {
			if p := fmt.Sprintf("metadata.s%d_%05d", i, k); schema.Lookup(p) == nil {
				t.Fatalf("%s not in the schema", p)
			}
		}
	}
	checkClean(t, e)
}
