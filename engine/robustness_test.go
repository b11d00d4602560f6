package engine

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sediment/sediment/event"
	"github.com/sediment/sediment/internal/vfs"
	"github.com/sediment/sediment/segment"
)

// TestColumnAndPathLimits: an event with more fields than a source may
// have columns (so more than the per-event cap, clamped to the columns),
// or nested deeper than a segment path allows, is stored without the
// fields that do not fit; those are counted, and the head still flushes to
// a segment that reads back.
func TestColumnAndPathLimits(t *testing.T) {
	fs := vfs.NewMemFS()
	opts := testOptions(fs)
	opts.MaxColumns = 300
	e := openTestEngine(t, fs, opts)
	defer e.Close()
	s, _ := e.Shard("src")

	wide := make([]event.Value, 400)
	for i := range wide {
		wide[i] = event.Member(fmt.Sprintf("f%03d", i), event.IntValue(int64(i)))
	}
	// A path longer than a segment allows: 200 levels of 100-byte keys.
	deep := event.IntValue(7)
	key := strings.Repeat("k", 100)
	for range 200 {
		deep = event.ObjectValue(event.Member(key, deep))
	}
	deepShard, _ := e.Shard("deep")
	for _, tc := range []struct {
		s  *Shard
		ev event.Event
	}{
		{s, event.Event{ID: "wide", Timestamp: 1, Message: "wide", HasMessage: true, Fields: event.ObjectValue(event.Member("metadata", event.ObjectValue(wide...)))}},
		{deepShard, event.Event{ID: "deep", Timestamp: 2, Message: "deep", HasMessage: true, Fields: event.ObjectValue(event.Member("d", deep), event.Member("ok", event.StringValue("yes")))}},
	} {
		if err := tc.s.Append(context.Background(), []event.Event{tc.ev}); err != nil {
			t.Fatal(err)
		}
		if err := tc.s.Flush(); err != nil {
			t.Fatalf("flush: %v", err)
		}
		if in := tc.s.Info(); in.Segments != 1 || in.SegmentRows != 1 || in.DroppedFields+in.FieldsOverEventCap == 0 {
			t.Fatalf("after flush: %+v", in)
		}
	}
	got := readAll(t, s)
	w := got["wide"]
	meta := w.Fields.Get("metadata")
	if meta != nil && len(meta.Kids) != opts.MaxColumns-4 {
		t.Fatalf("wide event kept %d fields, want %d", len(meta.Kids), opts.MaxColumns-4)
	}
	if meta == nil || len(meta.Kids) == 0 || len(meta.Kids) >= 400 {
		t.Fatalf("wide event kept %v", meta)
	}
	if f0 := meta.Get("f000"); f0 == nil || f0.Int() != 0 {
		t.Fatalf("first fields of the wide event lost: %v", meta)
	}
	d := readAll(t, deepShard)["deep"]
	if ok := d.Fields.Get("ok"); ok == nil || ok.Str != "yes" || d.Message != "deep" {
		t.Fatalf("deep event lost its other fields: %q %v", d.Message, d.Fields.Get("ok"))
	}
	// The columns of the segment are within both limits.
	sn := s.Snapshot()
	defer sn.Release()
	for _, sg := range sn.segs {
		if n := len(sg.r.Columns()); n > opts.MaxColumns {
			t.Fatalf("%d columns", n)
		}
		for _, c := range sg.r.Columns() {
			if len(c.Path) > segment.MaxPathLen {
				t.Fatalf("path of %d bytes", len(c.Path))
			}
		}
	}
	checkClean(t, e)
}

// TestBufferedSyncFailureStopsAcks: in buffered mode a failed periodic
// fsync means acknowledged events may not be on disk, so the shard stops
// acknowledging more instead of only logging it.
func TestBufferedSyncFailureStopsAcks(t *testing.T) {
	efs := &vfs.ErrorFS{FS: vfs.NewMemFS()}
	opts := testOptions(efs)
	opts.DisableBackground = false
	opts.AckMode = AckBuffered
	opts.BufferedSyncInterval = 5 * time.Millisecond
	opts.CompactionInterval = time.Hour
	e := openTestEngine(t, efs, opts)
	defer e.Close()
	s, _ := e.Shard("src")
	if err := s.Append(context.Background(), []event.Event{testEvent(1, 1)}); err != nil {
		t.Fatal(err)
	}
	efs.SetFailAt(efs.Ops() + 1)
	deadline := time.Now().Add(5 * time.Second)
	for {
		s.mu.RLock()
		failed := s.failed
		s.mu.RUnlock()
		if failed != nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("a failed sync did not stop the shard")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if err := s.Append(context.Background(), []event.Event{testEvent(2, 2)}); err == nil || !errors.Is(err, vfs.ErrInjected) {
		t.Fatalf("append after a failed sync: %v", err)
	}
}

// TestTornSealedLogIsDamage: only the newest log file can end torn (a
// sealed one was synced whole before the next was created), so a torn
// sealed file is damage: fsck's check reports it and the shard starts
// read-only, while the same tear in the newest file is cut at startup.
func TestTornSealedLogIsDamage(t *testing.T) {
	fs := vfs.NewMemFS()
	e := openTestEngine(t, fs, nil)
	s, _ := e.Shard("src")
	if err := s.Append(context.Background(), []event.Event{testEvent(1, 1)}); err != nil {
		t.Fatal(err)
	}
	if err := s.requestRotate(); err != nil { // frozen, not flushed
		t.Fatal(err)
	}
	if err := s.Append(context.Background(), []event.Event{testEvent(2, 2)}); err != nil {
		t.Fatal(err)
	}
	img := fs.CrashClone()
	e.Close()
	walDir := "/data/sources/src/wal"
	wals, _ := img.List(walDir)
	slices.Sort(wals)
	if len(wals) != 2 {
		t.Fatalf("log files %v", wals)
	}
	tear := func(fs *vfs.MemFS, name string) {
		p := walDir + "/" + name
		data, _ := vfs.ReadFile(fs, p)
		f, _ := fs.Create(p)
		f.Write(append(data, 200, 0, 0, 0, 1, 2, 3))
		f.Close()
	}
	newest := img.CrashClone()
	tear(newest, wals[1])
	e2 := openTestEngine(t, newest, nil)
	s2, _ := e2.Shard("src")
	if n := len(readAll(t, s2)); n != 2 {
		t.Fatalf("%d events after cutting the newest file's tail", n)
	}
	e2.Close()

	tear(img, wals[0])
	ro := testOptions(img)
	ro.ReadOnly = true
	e3 := openTestEngine(t, img, ro)
	if err := e3.Check(); err == nil || !errors.Is(err, ErrWALCorrupt) {
		t.Fatalf("check of a torn sealed file: %v", err)
	}
	e3.Close()
	// Startup goes on with the shard read-only, serving both events.
	e4, err := Open("/data", testOptions(img))
	if err != nil {
		t.Fatalf("startup with a torn sealed file: %v", err)
	}
	defer e4.Close()
	s4, _ := e4.Shard("src")
	if n := len(readAll(t, s4)); n != 2 || !hasConditionKind(s4, ConditionWALDamaged) {
		t.Fatalf("%d events, conditions %v", n, s4.Conditions())
	}
	if err := s4.Append(context.Background(), []event.Event{testEvent(3, 3)}); !errors.Is(err, ErrWALDamaged) {
		t.Fatalf("append: %v", err)
	}
}

// TestHeadMemoryBudget: heads across shards share one budget. Past it the
// biggest heads are frozen early; past twice it, counting heads waiting to
// be written, appends are pushed back; writing them out and dropping a
// shard give the memory back.
func TestHeadMemoryBudget(t *testing.T) {
	fs := vfs.NewMemFS()
	opts := testOptions(fs)
	opts.HeadMemoryBudget = 64 << 10
	opts.HeadIdleMinBytes = 1 << 10
	opts.MaxFrozenHeads = 1 << 20 // only the engine-wide bound applies
	e := openTestEngine(t, fs, opts)
	defer e.Close()
	a, _ := e.Shard("a")
	b, _ := e.Shard("b")
	batch := func(from int) []event.Event {
		var evs []event.Event
		for i := range 50 {
			evs = append(evs, testEvent(from+i, int64(from+i)))
		}
		return evs
	}
	var pushedBack bool
	for i := 0; i < 200 && !pushedBack; i++ {
		for _, s := range []*Shard{a, b} {
			err := s.Append(context.Background(), batch(i*50))
			if errors.Is(err, ErrBackpressure) {
				pushedBack = true
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			if active, _ := e.HeadMemory(); active > opts.HeadMemoryBudget+32<<10 {
				t.Fatalf("active heads hold %d bytes, budget %d", active, opts.HeadMemoryBudget)
			}
		}
	}
	if !pushedBack {
		t.Fatal("never pushed back with nothing being written out")
	}
	a.mu.RLock()
	frozen := len(a.frozen)
	a.mu.RUnlock()
	if frozen == 0 {
		t.Fatal("no head was frozen early")
	}
	if _, total := e.HeadMemory(); total <= 2*opts.HeadMemoryBudget {
		t.Fatalf("pushed back at %d bytes", total)
	}
	if err := a.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := b.Append(context.Background(), batch(1<<20)); err != nil {
		t.Fatalf("after writing heads out: %v", err)
	}
	if err := e.DropShard("b"); err != nil {
		t.Fatal(err)
	}
	if active, total := e.HeadMemory(); active != 0 || total != 0 {
		t.Fatalf("after flushing a and dropping b: active %d total %d", active, total)
	}
	checkClean(t, e)
}

// TestColumnCapKeepsRequiredFields: id, timestamp and event_message are
// stored whatever the column cap, even when the head filled up with other
// fields before the first event with a message arrived.
func TestColumnCapKeepsRequiredFields(t *testing.T) {
	fs := vfs.NewMemFS()
	opts := testOptions(fs)
	opts.MaxColumns = 3
	e := openTestEngine(t, fs, opts)
	defer e.Close()
	s, _ := e.Shard("src")
	evs := []event.Event{
		{ID: "a", Timestamp: 1, Fields: event.ObjectValue(event.Member("x", event.IntValue(1)), event.Member("y", event.IntValue(2)))},
		{ID: "b", Timestamp: 2, Message: "hello", HasMessage: true},
	}
	if err := s.Append(context.Background(), evs); err != nil {
		t.Fatal(err)
	}
	got := readAll(t, s)
	if got["b"].Message != "hello" || got["a"].Timestamp != 1 {
		t.Fatalf("got %+v", got)
	}
	if err := s.Flush(); err != nil {
		t.Fatal(err)
	}
	checkClean(t, e)
}
