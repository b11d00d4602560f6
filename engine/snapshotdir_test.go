package engine

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/sediment/sediment/event"
	"github.com/sediment/sediment/internal/vfs"
)

// snapAppend appends events [from, to) to s in one batch.
func snapAppend(t testing.TB, s *Shard, from, to int) {
	t.Helper()
	evs := make([]event.Event, 0, to-from)
	for i := from; i < to; i++ {
		evs = append(evs, testEvent(i, int64(1_700_000_000_000_000+i*1000)))
	}
	if err := s.Append(context.Background(), evs); err != nil {
		t.Fatal(err)
	}
}

// snapOpen opens a snapshot directory as a data directory and returns
// the events of shard id by event id.
func snapOpen(t testing.TB, fs vfs.FS, dir, id string) map[string]event.Event {
	t.Helper()
	opts := testOptions(fs)
	e, err := Open(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	checkClean(t, e)
	sh, err := e.Shard(id)
	if err != nil {
		t.Fatal(err)
	}
	return readAll(t, sh)
}

// snapWantRange fails unless got holds exactly the events [from, to), equal
// to what was appended.
func snapWantRange(t testing.TB, got map[string]event.Event, from, to int) {
	t.Helper()
	if len(got) != to-from {
		t.Fatalf("%d events, want %d", len(got), to-from)
	}
	for i := from; i < to; i++ {
		want := testEvent(i, int64(1_700_000_000_000_000+i*1000))
		e, ok := got[want.ID]
		if !ok {
			t.Fatalf("event %d missing", i)
		}
		if !eventsEqual(&e, &want) {
			t.Fatalf("event %d differs:\n%+v\n%+v", i, e, want)
		}
	}
}

// TestSnapshotToRestores: a snapshot holds every event acknowledged before
// it (in segments, in the head, in heads waiting to be flushed), nothing
// after it, each once; restoring it is opening it as a data directory.
// The live engine goes on flushing and compacting without touching it.
func TestSnapshotToRestores(t *testing.T) {
	fs := vfs.NewMemFS()
	opts := testOptions(fs)
	opts.MaxFrozenHeads = 8 // nothing flushes in the background here
	e := openTestEngine(t, fs, opts)
	defer e.Close()
	s, err := e.Shard("src-a")
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 400; i += 100 { // four segments
		snapAppend(t, s, i, i+100)
		if err := s.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	snapAppend(t, s, 400, 450)
	if err := s.requestRotate(); err != nil { // a head waiting to be flushed
		t.Fatal(err)
	}
	snapAppend(t, s, 450, 500) // in the head

	st, err := e.SnapshotTo("/snap", nil)
	if err != nil {
		t.Fatal(err)
	}
	if st.Shards != 1 || st.Segments != 4 || st.WALFiles != 2 || st.SegmentsCopied != 0 {
		t.Fatalf("stats %+v: want 4 segments linked and 2 log files", st)
	}
	snapAppend(t, s, 500, 550) // after the snapshot
	if err := s.Flush(); err != nil {
		t.Fatal(err)
	}
	if n, err := s.Compact(); err != nil || n == 0 {
		t.Fatalf("compact: %d %v", n, err)
	}
	snapWantRange(t, readAll(t, s), 0, 550)
	snapWantRange(t, snapOpen(t, fs, "/snap", "src-a"), 0, 500)

	// The snapshot does not change when the live engine removes the files
	// it was linked from: a second open reads the same.
	snapWantRange(t, snapOpen(t, fs, "/snap", "src-a"), 0, 500)
	if _, err := e.SnapshotTo("/snap", nil); err == nil {
		t.Fatal("a snapshot over an existing one was written")
	}
}

// noLinkFS hides the hard-link capability of the file system it wraps.
type noLinkFS struct{ vfs.FS }

// TestSnapshotToCopiesWithoutLinks: where links cannot be made, segments
// are copied, and the snapshot is the same.
func TestSnapshotToCopiesWithoutLinks(t *testing.T) {
	mem := vfs.NewMemFS()
	fs := noLinkFS{mem}
	e := openTestEngine(t, fs, nil)
	defer e.Close()
	s, _ := e.Shard("src-b")
	snapAppend(t, s, 0, 100)
	if err := s.Flush(); err != nil {
		t.Fatal(err)
	}
	snapAppend(t, s, 100, 130)
	st, err := e.SnapshotTo("/snap", func(id string) bool { return id == "src-b" })
	if err != nil {
		t.Fatal(err)
	}
	if st.Segments != 1 || st.SegmentsCopied != 1 || st.WALFiles != 1 {
		t.Fatalf("stats %+v", st)
	}
	snapWantRange(t, snapOpen(t, mem, "/snap", "src-b"), 0, 130)
}

// TestSnapshotToIncludes: only the shards include accepts are written.
func TestSnapshotToIncludes(t *testing.T) {
	fs := vfs.NewMemFS()
	e := openTestEngine(t, fs, nil)
	defer e.Close()
	for _, id := range []string{"keep", "skip"} {
		s, _ := e.Shard(id)
		snapAppend(t, s, 0, 10)
	}
	st, err := e.SnapshotTo("/snap", func(id string) bool { return id == "keep" })
	if err != nil || st.Shards != 1 {
		t.Fatalf("%+v %v", st, err)
	}
	if fs.Exists("/snap/sources/skip") || !fs.Exists("/snap/sources/keep/wal") {
		t.Fatal("include not applied")
	}
}

// TestSnapshotToErrorAtEveryOp: a snapshot failing at any file operation
// returns the error and leaves the live shard whole; one that succeeds
// restores every event.
func TestSnapshotToErrorAtEveryOp(t *testing.T) {
	mem := vfs.NewMemFS()
	efs := &vfs.ErrorFS{FS: mem}
	e := openTestEngine(t, efs, nil)
	defer e.Close()
	s, _ := e.Shard("src-c")
	snapAppend(t, s, 0, 100)
	if err := s.Flush(); err != nil {
		t.Fatal(err)
	}
	snapAppend(t, s, 100, 200)
	if err := s.Flush(); err != nil {
		t.Fatal(err)
	}
	// A frozen head with its log file and an empty head: the snapshot does
	// not freeze anything, so only its own operations are failed (a failed
	// log sync while freezing stops the shard, as it must, whoever asks).
	snapAppend(t, s, 200, 210)
	if err := s.requestRotate(); err != nil {
		t.Fatal(err)
	}
	next := 210
	for i := int64(1); ; i++ {
		dir := fmt.Sprintf("/snap%d", i)
		efs.SetFailAt(efs.Ops() + i)
		_, err := e.SnapshotTo(dir, nil)
		efs.SetFailAt(1 << 62)
		if err == nil {
			snapWantRange(t, snapOpen(t, mem, dir, "src-c"), 0, next)
			break
		}
		if !errors.Is(err, vfs.ErrInjected) {
			t.Fatalf("op %d: %v", i, err)
		}
		if i > 200 {
			t.Fatalf("no snapshot succeeded: %v", err)
		}
	}
	snapAppend(t, s, 210, 220)
	next = 220
	snapWantRange(t, readAll(t, s), 0, next)
	checkClean(t, e)
}

// TestSnapshotToWhileBusy takes snapshots on a real file system while
// events are appended, flushed and compacted; each snapshot holds every
// event acknowledged before it started, once.
func TestSnapshotToWhileBusy(t *testing.T) {
	dir := t.TempDir()
	opts := testOptions(nil)
	opts.DisableBackground = false
	opts.CompactionInterval = 5 * time.Millisecond
	opts.HeadMaxRows = 50
	e, err := Open(filepath.Join(dir, "live"), opts)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	s, _ := e.Shard("busy")
	var mu sync.Mutex
	acked := 0
	stop := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		for i := 0; ; {
			select {
			case <-stop:
				done <- nil
				return
			default:
			}
			evs := make([]event.Event, 0, 20)
			for j := i; j < i+20; j++ {
				evs = append(evs, testEvent(j, int64(1_700_000_000_000_000+j*1000)))
			}
			err := s.Append(context.Background(), evs)
			if errors.Is(err, ErrBackpressure) {
				time.Sleep(time.Millisecond) // the flusher catches up
				continue
			}
			if err != nil {
				done <- err
				return
			}
			i += 20
			mu.Lock()
			acked = i
			mu.Unlock()
		}
	}()
	for k := range 5 {
		mu.Lock()
		before := acked
		mu.Unlock()
		snap := filepath.Join(dir, fmt.Sprintf("snap%d", k))
		if _, err := e.SnapshotTo(snap, nil); err != nil {
			t.Fatal(err)
		}
		got := snapOpen(t, vfs.OS, snap, "busy")
		if len(got) < before {
			t.Fatalf("snapshot %d: %d events, %d acknowledged before it", k, len(got), before)
		}
		n := len(got)
		snapWantRange(t, got, 0, n) // a prefix of the appends, each event once
		time.Sleep(20 * time.Millisecond)
	}
	close(stop)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "snap0", "sources", "busy", "segments")); err != nil {
		t.Fatal(err)
	}
}
