package engine

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/sediment/sediment/event"
	"github.com/sediment/sediment/internal/vfs"
	"github.com/sediment/sediment/sql/scan"
)

// panicOnOpenFS panics when a file under dir is opened for reading: a bug
// in the replay path of that one source, as an event that makes staging
// panic would be.
type panicOnOpenFS struct {
	vfs.FS
	dir string
}

func (p *panicOnOpenFS) Open(name string) (vfs.File, error) {
	if strings.HasPrefix(name, p.dir) {
		panic("injected: replay panics")
	}
	return p.FS.Open(name)
}

// TestReplayPanicIsIsolated panics while one source's log is replayed at
// startup: the engine opens; the other source serves everything and takes
// events; the failing one serves its segments, refuses events, says on its
// conditions and in answers that its log's events are missing, counts and
// logs the panic with its stack, and leaves its log files unchanged, so
// that the next start (the bug fixed) replays them whole.
func TestReplayPanicIsIsolated(t *testing.T) {
	fs := vfs.NewMemFS()
	e := openTestEngine(t, fs, nil)
	s, _ := e.Shard(shardID)
	want := appendRange(t, s, 0, 100, 1_700_000_000_000_000)
	if err := s.Flush(); err != nil {
		t.Fatal(err)
	}
	flushed := len(want)
	for k, v := range appendRange(t, s, 100, 160, 1_700_000_000_000_000) { // only in the log
		want[k] = v
	}
	o, _ := e.Shard(otherShard)
	wantOther := appendRange(t, o, 1000, 1050, 1_700_000_000_000_000)
	img := fs.CrashClone() // kill -9
	e.Close()

	walDir := filepath.Join("/data/sources", shardID, "wal")
	logsBefore := readDir(t, img, walDir)

	opts := testOptions(&panicOnOpenFS{FS: img, dir: walDir})
	var logs logBuffer
	opts.Logger = logs.logger()
	e2, err := Open("/data", opts)
	if err != nil {
		t.Fatalf("a panic replaying one source stopped the engine: %v", err)
	}
	o2, _ := e2.Shard(otherShard)
	assertEvents(t, o2, wantOther)
	if err := o2.Append(ctx, []event.Event{testEvent(2000, 1_700_000_000_000_000)}); err != nil {
		t.Fatalf("the healthy source refuses events: %v", err)
	}

	s2, _ := e2.Shard(shardID)
	c, ok := hasCondition(s2, ConditionReplayFailed)
	if !ok || !c.RefusesIngest || !strings.Contains(c.Detail, "injected: replay panics") {
		t.Fatalf("condition of the source whose replay panicked: %+v, %v (all: %+v)", c, ok, s2.Conditions())
	}
	if _, ok := hasCondition(o2, ConditionReplayFailed); ok {
		t.Fatal("the healthy source is degraded too")
	}
	err = s2.Append(ctx, []event.Event{testEvent(3000, 1_700_000_000_000_000)})
	if !errors.Is(err, ErrReplayFailed) {
		t.Fatalf("append on the read-only source: %v", err)
	}
	if st := taskStatsOf(s2, "replay"); st.Panics != 1 || st.Failures != 1 {
		t.Fatalf("replay stats: %+v", st)
	}
	if l := logs.String(); !strings.Contains(l, "injected: replay panics") || !strings.Contains(l, "engine.(*Shard).replayWAL") {
		t.Fatalf("the panic is not logged with its stack:\n%s", l)
	}
	if got := readAll(t, s2); len(got) != flushed {
		t.Fatalf("the source serves %d events, want its %d flushed ones", len(got), flushed)
	}
	a := queryShard(s2, scan.Request{TimeMin: math.MinInt64, TimeMax: math.MaxInt64})
	if a.err != nil || len(a.rows) != flushed || len(a.warnings) != 1 || !strings.Contains(a.warnings[0], "write-ahead log") {
		t.Fatalf("answer over the source: %d rows, warnings %q, err %v", len(a.rows), a.warnings, a.err)
	}
	if err := s2.Flush(); !errors.Is(err, ErrReplayFailed) {
		t.Fatalf("flush of the read-only source: %v", err)
	}
	if _, err := s2.Compact(); !errors.Is(err, ErrReplayFailed) {
		t.Fatalf("compaction of the read-only source: %v", err)
	}
	if err := e2.Close(); err != nil {
		t.Fatal(err)
	}
	if after := readDir(t, img, walDir); !equalFiles(logsBefore, after) {
		t.Fatal("the log files of the source whose replay panicked were changed")
	}

	// The bug fixed: the next start replays the kept log whole.
	e3 := openTestEngine(t, img, nil)
	defer e3.Close()
	s3, _ := e3.Shard(shardID)
	assertEvents(t, s3, want)
	if len(s3.Conditions()) != 0 {
		t.Fatalf("conditions after a clean replay: %+v", s3.Conditions())
	}
	checkClean(t, e3)
}

// readDir returns the contents of every file of dir.
func readDir(t *testing.T, fs vfs.FS, dir string) map[string][]byte {
	t.Helper()
	names, err := fs.List(dir)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]byte{}
	for _, n := range names {
		b, err := vfs.ReadFile(fs, filepath.Join(dir, n))
		if err != nil {
			t.Fatal(err)
		}
		out[n] = b
	}
	return out
}

func equalFiles(a, b map[string][]byte) bool {
	if len(a) != len(b) {
		return false
	}
	for n, x := range a {
		if y, ok := b[n]; !ok || !bytes.Equal(x, y) {
			return false
		}
	}
	return true
}

// TestReadOnlyOpenPanicIsIsolated: fsck and `sediment query` open the data
// directory read-only; a panic while one source opens is reported as that
// source's problem and the others open as usual, with nothing changed.
func TestReadOnlyOpenPanicIsIsolated(t *testing.T) {
	fs := vfs.NewMemFS()
	e := openTestEngine(t, fs, nil)
	s, _ := e.Shard(shardID)
	appendRange(t, s, 0, 50, 1_700_000_000_000_000)
	o, _ := e.Shard(otherShard)
	wantOther := appendRange(t, o, 1000, 1050, 1_700_000_000_000_000)
	img := fs.CrashClone()
	e.Close()

	walDir := filepath.Join("/data/sources", shardID, "wal")
	logsBefore := readDir(t, img, walDir)
	opts := testOptions(&panicOnOpenFS{FS: img, dir: walDir})
	opts.ReadOnly = true
	e2, err := Open("/data", opts)
	if err != nil {
		t.Fatalf("a panic opening one source read-only stopped the open: %v", err)
	}
	defer e2.Close()
	o2, _ := e2.Shard(otherShard)
	assertEvents(t, o2, wantOther)
	s2, _ := e2.Shard(shardID)
	probs := s2.CheckProblems()
	if len(probs) == 0 || !strings.Contains(fmt.Sprint(probs), "injected: replay panics") {
		t.Fatalf("the panic is not one of the source's problems: %v", probs)
	}
	if err := s2.Append(ctx, []event.Event{testEvent(3000, 1_700_000_000_000_000)}); err == nil {
		t.Fatal("a read-only source took an event")
	}
	if after := readDir(t, img, walDir); !reflect.DeepEqual(after, logsBefore) {
		t.Fatalf("a read-only open changed the log files: %v -> %v", logsBefore, after)
	}
}
