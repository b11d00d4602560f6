package engine

import (
	"errors"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/sediment/sediment/internal/vfs"
	"github.com/sediment/sediment/segment"
	"github.com/sediment/sediment/sql/scan"
)

// eioFS is a MemFS whose segment files fail every read with EIO while
// failing is set, as a disk with a transient fault does.
type eioFS struct {
	*vfs.MemFS
	failing atomic.Bool
}

func (f *eioFS) Open(n string) (vfs.File, error) {
	file, err := f.MemFS.Open(n)
	if err != nil || !strings.HasSuffix(n, ".seg") {
		return file, err
	}
	return &eioFile{File: file, fs: f}, nil
}

type eioFile struct {
	vfs.File
	fs *eioFS
}

func (f *eioFile) ReadAt(p []byte, off int64) (int, error) {
	if f.fs.failing.Load() {
		return 0, syscall.EIO
	}
	return f.File.ReadAt(p, off)
}

// TestLocalReadFailureIsNotDamage: a segment whose reads fail for a while
// (EIO) fails the query with an error that says it could not be read
// (not that it is damaged), sets nothing aside, records nothing, raises
// no condition; once the disk reads again the same data answers in full,
// also after a restart.
func TestLocalReadFailureIsNotDamage(t *testing.T) {
	fs := &eioFS{MemFS: vfs.NewMemFS()}
	e, err := Open("/d", &Options{FS: fs, DisableBackground: true, CompactionMinInputs: 2})
	if err != nil {
		t.Fatal(err)
	}
	sh, _ := e.Shard("src")
	truth := testEvents(0, 600, 1_700_000_000_000_000)
	if err := sh.Append(ctx, truth[:300]); err != nil {
		t.Fatal(err)
	}
	if err := sh.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := sh.Append(ctx, truth[300:]); err != nil {
		t.Fatal(err)
	}
	if err := sh.Flush(); err != nil {
		t.Fatal(err)
	}
	req := scan.Request{TimeMin: scan.MinTime, TimeMax: scan.MaxTime}
	want := expected(truth, req)

	fs.failing.Store(true)
	a := queryShard(sh, req)
	if a.err == nil || !errors.Is(a.err, syscall.EIO) || errors.Is(a.err, segment.ErrCorrupt) {
		t.Fatalf("query with reads failing: %v", a.err)
	}
	var de *DamageError
	if errors.As(a.err, &de) || strings.Contains(a.err.Error(), "damaged") {
		t.Fatalf("a read failure reported as damage: %v", a.err)
	}
	// A check meanwhile (fsck, or Check on a running server) says the
	// segments could not be read, not that they are damaged.
	probs := sh.CheckProblems()
	if len(probs) == 0 {
		t.Fatal("the check found nothing while every read fails")
	}
	for _, p := range probs {
		var re *SegmentReadError
		var de *SegmentDamageError
		if !errors.As(p, &re) || errors.As(p, &de) || !errors.Is(p, syscall.EIO) {
			t.Fatalf("check problem %T: %v", p, p)
		}
	}
	// A compaction meanwhile fails and is retried later: nothing moves.
	if n, err := sh.Compact(); err == nil || n != 0 {
		t.Fatalf("compaction with reads failing: %d, %v", n, err)
	}
	fs.failing.Store(false)

	in := sh.Info()
	if in.QuarantinedBlocks+in.QuarantinedSegments != 0 || hasConditionKind(sh, ConditionQuarantined) {
		t.Fatalf("a read failure set data aside: %+v %v", in, sh.Conditions())
	}
	if names, _ := fs.List("/d/sources/src/segments"); len(names) != 2 {
		t.Fatalf("segments/ holds %v", names)
	}
	if missing := checkHonest(t, "disk back", queryShard(sh, req), want); len(missing) != 0 {
		t.Fatalf("disk back: %d events missing", len(missing))
	}
	e.Close()
	e2, err := Open("/d", &Options{FS: fs, DisableBackground: true})
	if err != nil {
		t.Fatal(err)
	}
	defer e2.Close()
	sh2, _ := e2.Shard("src")
	if a := queryShard(sh2, req); len(checkHonest(t, "restart", a, want)) != 0 || len(a.warnings) != 0 {
		t.Fatalf("after a restart: warnings %v, err %v", a.warnings, a.err)
	}

	// At startup a segment that cannot be read fails the open with the
	// cause, rather than setting the segment aside.
	e2.Close()
	fs.failing.Store(true)
	if e3, err := Open("/d", &Options{FS: fs, DisableBackground: true}); err == nil {
		s3, err := e3.Shard("src")
		e3.Close()
		if err == nil {
			t.Fatalf("shard opened with its segments unreadable: %+v", s3.Info())
		}
	}
	fs.failing.Store(false)
	if names, _ := fs.List("/d/sources/src/quarantine"); len(names) != 0 {
		t.Fatalf("quarantine/ holds %v", names)
	}
}
