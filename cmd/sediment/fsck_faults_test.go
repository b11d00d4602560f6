package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/sediment/sediment/engine"
	"github.com/sediment/sediment/event"
	"github.com/sediment/sediment/internal/vfs"
)

// enospcFS is the OS file system whose log writes run out of space when
// full is set: half of the write lands, then ENOSPC, as on a full disk.
type enospcFS struct {
	vfs.FS
	full atomic.Bool
}

func (f *enospcFS) Create(name string) (vfs.File, error) {
	file, err := f.FS.Create(name)
	if err != nil {
		return nil, err
	}
	return &enospcFile{File: file, fs: f, wal: strings.HasSuffix(name, ".wal")}, nil
}

type enospcFile struct {
	vfs.File
	fs  *enospcFS
	wal bool
}

func (f *enospcFile) Write(p []byte) (int, error) {
	if f.wal && f.fs.full.Load() && len(p) > 1 {
		n, _ := f.File.Write(p[:len(p)/2])
		return n, &vfsPathError{syscall.ENOSPC}
	}
	return f.File.Write(p)
}

type vfsPathError struct{ err syscall.Errno }

func (e *vfsPathError) Error() string { return "write: " + e.err.Error() }
func (e *vfsPathError) Unwrap() error { return e.err }

// TestFsckAfterFaults: the data directories that the fault handling
// leaves must pass `sediment fsck`: segments merged from inputs cut with
// other block sizes, a segment rewritten by retention, and a log that ran
// out of space mid-write and went on in a new file, left by a kill.
func TestFsckAfterFaults(t *testing.T) {
	dir := t.TempDir()
	now := time.Now()
	const token = "11111111-2222-4333-8444-555555555555"
	mk := func(i int, age time.Duration) event.Event {
		return event.Event{ID: fmt.Sprintf("e-%d", i), Timestamp: now.Add(-age).UnixMicro() + int64(i),
			Message: fmt.Sprintf("event %d", i), HasMessage: true,
			Fields: event.ObjectValue(event.Member("metadata", event.ObjectValue(event.Member("n", event.IntValue(int64(i))))))}
	}
	appendFlush := func(s *engine.Shard, from, n int, age func(i int) time.Duration) {
		var evs []event.Event
		for i := from; i < from+n; i++ {
			evs = append(evs, mk(i, age(i)))
		}
		if err := s.Append(context.Background(), evs); err != nil {
			t.Fatal(err)
		}
		if err := s.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	spread := func(i int) time.Duration { return time.Duration(i*7919%3600) * time.Second }
	// Small blocks; overlapping segments concatenated.
	e, err := engine.Open(dir, &engine.Options{DisableBackground: true, BlockRows: 64, SegmentMaxRows: 2048, CompactionMinInputs: 4})
	if err != nil {
		t.Fatal(err)
	}
	s, _ := e.Shard(token)
	for k := 0; k < 4; k++ {
		appendFlush(s, k*200, 200, spread)
	}
	if _, err := s.Compact(); err != nil {
		t.Fatal(err)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	// Default blocks: merged row by row; half of one segment expired.
	fs := &enospcFS{FS: vfs.OS}
	e, err = engine.Open(dir, &engine.Options{FS: fs, DisableBackground: true, CompactionMinInputs: 2})
	if err != nil {
		t.Fatal(err)
	}
	s, _ = e.Shard(token)
	appendFlush(s, 800, 300, spread)
	if _, err := s.Compact(); err != nil {
		t.Fatal(err)
	}
	appendFlush(s, 1100, 200, func(i int) time.Duration {
		if i%2 == 0 {
			return 72 * time.Hour
		}
		return time.Minute
	})
	s.SetRetentionDays(1)
	if n, err := s.ApplyRetention(); err != nil || n != 1 {
		t.Fatalf("retention rewrote %d: %v", n, err)
	}
	// The log runs out of space mid-write, then space is back.
	var batch []event.Event
	for i := 1300; i < 1350; i++ {
		batch = append(batch, mk(i, time.Minute))
	}
	if err := s.Append(context.Background(), batch[:25]); err != nil {
		t.Fatal(err)
	}
	fs.full.Store(true)
	if err := s.Append(context.Background(), batch[25:]); err == nil {
		t.Fatal("append succeeded on a full disk")
	}
	fs.full.Store(false)
	if err := e.CheckDisk(); err != nil {
		t.Fatal(err)
	}
	if err := s.Append(context.Background(), batch[25:]); err != nil {
		t.Fatal(err)
	}
	if wals, _ := os.ReadDir(filepath.Join(dir, "sources", token, "wal")); len(wals) != 2 {
		t.Fatalf("%d log files; want the one cut back after the failed write and its successor", len(wals))
	}
	// Left as a kill leaves it: e is not closed.
	var out, errb bytes.Buffer
	if code := runFsck([]string{"--data-dir", dir}, &out, &errb); code != 0 {
		t.Fatalf("fsck: %d\n%s%s", code, out.String(), errb.String())
	}
	if !strings.Contains(out.String(), "rows in the write-ahead log") {
		t.Fatalf("fsck output: %s", out.String())
	}
	e.Close()
}
