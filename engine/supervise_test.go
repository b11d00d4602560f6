package engine

import (
	"errors"
	"maps"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/sediment/sediment/event"
	"github.com/sediment/sediment/internal/vfs"
)

// waitFor polls cond until it holds. The deadline only keeps a broken
// build from hanging: it is far beyond what any condition here needs.
func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("still waiting for %s", what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

func taskStatsOf(s *Shard, task string) TaskStats {
	for _, ts := range s.Info().Background {
		if ts.Task == task {
			return ts
		}
	}
	return TaskStats{}
}

func hasCondition(s *Shard, k ConditionKind) (Condition, bool) {
	for _, c := range s.Conditions() {
		if c.Kind == k {
			return c, true
		}
	}
	return Condition{}, false
}

// backgroundOptions runs the background loops with short retries.
func backgroundOptions(fs vfs.FS) *Options {
	opts := testOptions(fs)
	opts.DisableBackground = false
	opts.BackgroundRetryMin = time.Millisecond
	opts.BackgroundRetryMax = 20 * time.Millisecond
	opts.CompactionInterval = time.Hour
	opts.RetentionInterval = time.Hour
	opts.MaxFrozenHeads = 8
	return opts
}

// TestBackgroundFlushPanicIsRecovered panics in the background flush's
// segment write: the process goes on, the frozen head stays readable,
// nothing is left in the segments directory, the failure is counted and
// shown as a condition, and once the fault is gone the retry writes the
// segment and clears the condition.
func TestBackgroundFlushPanicIsRecovered(t *testing.T) {
	fs := newFaultFS()
	var armed atomic.Bool
	armed.Store(true)
	fs.set(func(op, path string) error {
		if armed.Load() && op == "write" && isSegmentTemp(path) {
			panic("injected: segment write panics")
		}
		return nil
	})
	opts := backgroundOptions(fs)
	opts.HeadMaxRows = 100 // the head freezes once: the flusher writes it
	var logs logBuffer
	opts.Logger = logs.logger()
	e := openTestEngine(t, fs, opts)
	defer e.Close()
	s, _ := e.Shard(shardID)
	want := appendRange(t, s, 0, 200, 1_700_000_000_000_000)

	waitFor(t, "a flush panic", func() bool { return taskStatsOf(s, "flush").Panics >= 2 })
	c, ok := hasCondition(s, ConditionBackgroundFailing)
	if !ok || !strings.Contains(c.Detail, "flush") || c.RefusesIngest {
		t.Fatalf("condition while the flush fails: %+v, %v", c, ok)
	}
	if len(segmentIDs(s)) != 0 {
		t.Fatal("a segment was published by a flush that panicked")
	}
	// Between retries (a retry in progress has its temporary file).
	s.flushMu.Lock()
	assertNoTempFiles(t, fs, shardID)
	s.flushMu.Unlock()
	assertEvents(t, s, want)
	if l := logs.String(); !strings.Contains(l, "background task panicked") || !strings.Contains(l, "injected: segment write panics") ||
		!strings.Contains(l, "engine.(*Shard).writeSegment") {
		t.Fatalf("the panic is not logged with its stack:\n%s", l)
	}
	// Ingest goes on meanwhile.
	maps.Copy(want, appendRange(t, s, 200, 230, 1_700_000_000_000_000))

	armed.Store(false)
	waitFor(t, "the flush retry", func() bool {
		_, failing := hasCondition(s, ConditionBackgroundFailing)
		return !failing && len(segmentIDs(s)) > 0
	})
	st := taskStatsOf(s, "flush")
	if st.Consecutive != 0 || st.Failures < st.Panics || st.Panics < 2 {
		t.Fatalf("flush stats after recovery: %+v", st)
	}
	assertNoTempFiles(t, fs, shardID)
	assertEvents(t, s, want)
	checkClean(t, e)
}

// TestBackgroundCompactionFaults panics in, then fails, the background
// compaction: the inputs stay as they were, every event reads back, the
// failures are counted and retried with backoff, and the compaction goes
// through once the fault is removed.
func TestBackgroundCompactionFaults(t *testing.T) {
	fs := newFaultFS()
	e := openTestEngine(t, fs, nil)
	s, _ := e.Shard(shardID)
	want := map[string]event.Event{}
	for k := 0; k < 4; k++ {
		maps.Copy(want, appendRange(t, s, k*60, k*60+60, 1_700_000_000_000_000))
		if err := s.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}

	var mode atomic.Int32 // 0 none, 1 panic, 2 error
	mode.Store(1)
	fs.set(func(op, path string) error {
		switch {
		case mode.Load() == 1 && op == "write" && isSegmentTemp(path):
			panic("injected: compaction panics")
		case mode.Load() == 2 && op == "rename" && isSegmentTemp(path):
			return &vfsError{op, path, syscall.EIO}
		}
		return nil
	})
	opts := backgroundOptions(fs)
	opts.CompactionInterval = 2 * time.Millisecond
	e = openTestEngine(t, fs, opts)
	defer e.Close()
	s, _ = e.Shard(shardID)
	before := segmentIDs(s)
	if len(before) != 4 {
		t.Fatalf("%d segments to compact", len(before))
	}

	waitFor(t, "compaction panics", func() bool { return taskStatsOf(s, "compaction").Panics >= 2 })
	if _, ok := hasCondition(s, ConditionBackgroundFailing); !ok {
		t.Fatal("no background_failing condition while compaction panics")
	}
	if got := segmentIDs(s); !slices.Equal(got, before) {
		t.Fatalf("segments changed by a compaction that panicked: %v, were %v", got, before)
	}
	s.compactMu.Lock() // between retries
	assertNoTempFiles(t, fs, shardID)
	s.compactMu.Unlock()
	assertEvents(t, s, want)

	panics := taskStatsOf(s, "compaction").Panics
	failures := taskStatsOf(s, "compaction").Failures
	mode.Store(2)
	waitFor(t, "compaction errors", func() bool { return taskStatsOf(s, "compaction").Failures >= failures+2 })
	st := taskStatsOf(s, "compaction")
	if !strings.Contains(st.LastError, "input/output error") || strings.Contains(st.LastError, "/data/") {
		t.Fatalf("last error %q: want the cause, with paths relative to the source", st.LastError)
	}
	if got := segmentIDs(s); !slices.Equal(got, before) {
		t.Fatalf("segments changed by a failed compaction: %v", got)
	}
	s.compactMu.Lock()
	assertNoTempFiles(t, fs, shardID)
	s.compactMu.Unlock()
	assertEvents(t, s, want)

	mode.Store(0)
	waitFor(t, "the compaction retry", func() bool { return len(segmentIDs(s)) == 1 })
	waitFor(t, "the condition to clear", func() bool {
		_, failing := hasCondition(s, ConditionBackgroundFailing)
		return !failing
	})
	if taskStatsOf(s, "compaction").Panics < panics {
		t.Fatal("panic count went down")
	}
	assertNoTempFiles(t, fs, shardID)
	assertEvents(t, s, want)
	checkClean(t, e)
}

// vfsError is an error as the OS reports it, for injection.
type vfsError struct {
	op, path string
	err      syscall.Errno
}

func (e *vfsError) Error() string { return e.op + " " + e.path + ": " + e.err.Error() }
func (e *vfsError) Unwrap() error { return e.err }

// TestPanicInCompactCallReturnsError checks that a direct call recovers
// too: Compact returns a *PanicError with the stack.
func TestPanicInCompactCallReturnsError(t *testing.T) {
	fs := newFaultFS()
	e := openTestEngine(t, fs, nil)
	defer e.Close()
	s, _ := e.Shard(shardID)
	for k := 0; k < 2; k++ {
		appendRange(t, s, k*50, k*50+50, 1_700_000_000_000_000)
		s.Flush()
	}
	fs.set(func(op, path string) error {
		if op == "create" && isSegmentTemp(path) {
			panic("injected")
		}
		return nil
	})
	_, err := s.Compact()
	var pe *PanicError
	if !errors.As(err, &pe) || pe.Task != "compaction" || !strings.Contains(string(pe.Stack), "engine.(*Shard).compact") {
		t.Fatalf("Compact after a panic: %v", err)
	}
}

// TestFailedSegmentCommitIsNotPublished fails the directory sync right
// after a flush renamed its segment into place: the segment must be
// removed again (it was never published), so that the retried flush's
// segment is the only copy of those events after a restart.
func TestFailedSegmentCommitIsNotPublished(t *testing.T) {
	fs := newFaultFS()
	var armed atomic.Bool
	fs.set(func(op, path string) error {
		if op == "syncdir" && strings.HasSuffix(path, "segments") && armed.CompareAndSwap(true, false) {
			return &vfsError{op, path, syscall.EIO}
		}
		return nil
	})
	e := openTestEngine(t, fs, nil)
	s, _ := e.Shard(shardID)
	want := appendRange(t, s, 0, 100, 1_700_000_000_000_000)
	armed.Store(true)
	if err := s.Flush(); err == nil {
		t.Fatal("flush succeeded with its directory sync failing")
	}
	assertNoTempFiles(t, fs, shardID)
	if names, _ := fs.List("/data/sources/" + shardID + "/segments"); len(names) != 0 {
		t.Fatalf("segments left by a failed flush: %v", names)
	}
	if err := s.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	e = openTestEngine(t, fs, nil)
	defer e.Close()
	s, _ = e.Shard(shardID)
	assertEvents(t, s, want)
	checkClean(t, e)
}
