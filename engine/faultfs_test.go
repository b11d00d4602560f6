package engine

import (
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/sediment/sediment/internal/vfs"
)

// faultFS is a MemFS whose operations a test can fail, panic in or block:
// the hook sees each mutating operation (create, openrw, write, sync,
// truncate, rename, remove, syncdir) with its path before it runs, and
// its error (if any) is returned instead of running it.
type faultFS struct {
	*vfs.MemFS
	mu   sync.Mutex
	hook func(op, path string) error
}

func newFaultFS() *faultFS { return &faultFS{MemFS: vfs.NewMemFS()} }

// set installs the hook (nil: no faults).
func (f *faultFS) set(h func(op, path string) error) {
	f.mu.Lock()
	f.hook = h
	f.mu.Unlock()
}

func (f *faultFS) check(op, path string) error {
	f.mu.Lock()
	h := f.hook
	f.mu.Unlock()
	if h == nil {
		return nil
	}
	return h(op, path)
}

func (f *faultFS) Create(n string) (vfs.File, error) {
	if err := f.check("create", n); err != nil {
		return nil, err
	}
	file, err := f.MemFS.Create(n)
	if err != nil {
		return nil, err
	}
	return &faultFile{File: file, fs: f, path: n}, nil
}

func (f *faultFS) OpenRW(n string) (vfs.File, error) {
	if err := f.check("openrw", n); err != nil {
		return nil, err
	}
	file, err := f.MemFS.OpenRW(n)
	if err != nil {
		return nil, err
	}
	return &faultFile{File: file, fs: f, path: n}, nil
}

func (f *faultFS) Rename(a, b string) error {
	if err := f.check("rename", a); err != nil {
		return err
	}
	return f.MemFS.Rename(a, b)
}

func (f *faultFS) Remove(n string) error {
	if err := f.check("remove", n); err != nil {
		return err
	}
	return f.MemFS.Remove(n)
}

func (f *faultFS) SyncDir(d string) error {
	if err := f.check("syncdir", d); err != nil {
		return err
	}
	return f.MemFS.SyncDir(d)
}

type faultFile struct {
	vfs.File
	fs   *faultFS
	path string
}

func (f *faultFile) Write(p []byte) (int, error) {
	if err := f.fs.check("write", f.path); err != nil {
		return 0, err
	}
	return f.File.Write(p)
}

func (f *faultFile) Sync() error {
	if err := f.fs.check("sync", f.path); err != nil {
		return err
	}
	return f.File.Sync()
}

func (f *faultFile) Truncate(n int64) error {
	if err := f.fs.check("truncate", f.path); err != nil {
		return err
	}
	return f.File.Truncate(n)
}

// isSegmentTemp reports whether path is a segment being written.
func isSegmentTemp(path string) bool {
	return strings.HasSuffix(path, ".seg.tmp")
}

// isWAL reports whether path is a write-ahead log file.
func isWAL(path string) bool { return strings.HasSuffix(path, ".wal") }

// assertNoTempFiles fails if a shard's directories hold anything but
// segments and log files: a failed flush or compaction must clean up.
func assertNoTempFiles(t testing.TB, fs vfs.FS, id string) {
	t.Helper()
	for _, sub := range []string{"segments", "wal"} {
		dir := filepath.Join("/data/sources", id, sub)
		names, _ := fs.List(dir)
		for _, n := range names {
			if !strings.HasSuffix(n, ".seg") && !strings.HasSuffix(n, ".wal") {
				t.Fatalf("%s/%s left behind", sub, n)
			}
		}
	}
}

// segmentIDs returns the ids of the shard's published segments.
func segmentIDs(s *Shard) []uint64 {
	sn := s.Snapshot()
	defer sn.Release()
	var ids []uint64
	for _, sg := range sn.segs {
		ids = append(ids, sg.id)
	}
	return ids
}

// logBuffer collects what a test engine logs; safe for its goroutines.
type logBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func (l *logBuffer) logger() *slog.Logger { return slog.New(slog.NewTextHandler(l, nil)) }
