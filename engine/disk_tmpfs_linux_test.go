package engine

import (
	"errors"
	"maps"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/sediment/sediment/internal/vfs"
)

// TestDiskFullOnTmpfs fills a real 8 MiB tmpfs through the engine on the
// OS file system: ingest is refused with ErrDiskFull, space freed outside
// the engine brings it back without a restart, and every acknowledged
// event is there before and after a restart. It needs to mount a tmpfs
// (root or CAP_SYS_ADMIN, as in CI) and skips otherwise.
func TestDiskFullOnTmpfs(t *testing.T) {
	dir := t.TempDir()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size=8m"); err != nil {
		t.Skipf("cannot mount a tmpfs here (%v): needs root or CAP_SYS_ADMIN", err)
	}
	// Registered after TempDir's cleanup, so it runs before the removal.
	t.Cleanup(func() {
		if err := syscall.Unmount(dir, 0); err != nil {
			t.Errorf("unmount %s: %v", dir, err)
		}
	})
	filler := filepath.Join(dir, "filler")
	if err := os.WriteFile(filler, make([]byte, 7<<20+512<<10), 0o644); err != nil {
		t.Fatal(err)
	}
	opts := &Options{DisableBackground: true, HeadMaxRows: 1 << 30}
	data := filepath.Join(dir, "data")
	e, err := Open(data, opts)
	if err != nil {
		t.Fatal(err)
	}
	s, _ := e.Shard(shardID)
	acked, next, err := fillUntilFull(t, s, 0)
	if !errors.Is(err, ErrDiskFull) || !vfs.IsNoSpace(err) {
		t.Fatalf("ingest on a full tmpfs: %v, want ErrDiskFull from ENOSPC", err)
	}
	t.Logf("%d events acknowledged before the disk was full", len(acked))
	if len(acked) == 0 {
		t.Fatal("nothing fitted before the disk was full")
	}
	if _, ok := hasCondition(s, ConditionDiskFull); !ok {
		t.Fatal("no disk_full condition")
	}
	assertEvents(t, s, acked)
	if err := e.CheckDisk(); !errors.Is(err, ErrDiskFull) {
		t.Fatalf("probe on a full tmpfs: %v", err)
	}

	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	if err := e.CheckDisk(); err != nil {
		t.Fatalf("probe after space was freed: %v", err)
	}
	maps.Copy(acked, appendRange(t, s, next, next+100, 1_700_000_000_000_000))
	if err := s.Flush(); err != nil {
		t.Fatal(err)
	}
	assertEvents(t, s, acked)
	checkClean(t, e)
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	e, err = Open(data, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	s, _ = e.Shard(shardID)
	assertEvents(t, s, acked)
	checkClean(t, e)
}
