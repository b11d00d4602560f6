//go:build soak && linux

package soak

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// mountTmpfs mounts a tmpfs of size bytes on a new directory and unmounts
// it when the test ends (after the server, whose cleanup is registered
// later, is gone). It skips the test when it cannot mount (not root, no
// CAP_SYS_ADMIN).
func mountTmpfs(t *testing.T, size int64) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "sediment-soak-tmpfs-")
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, fmt.Sprintf("size=%d", size)); err != nil {
		os.Remove(dir)
		t.Skipf("soak: cannot mount a tmpfs for the data directory (%v): the soak test needs root or CAP_SYS_ADMIN", err)
	}
	t.Cleanup(func() {
		var err error
		for range 50 { // a process that just died may still hold files for a moment
			if err = syscall.Unmount(dir, 0); err == nil || !errors.Is(err, syscall.EBUSY) {
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
		if err != nil {
			t.Errorf("unmount %s: %v", dir, err)
			return
		}
		os.Remove(dir)
	})
	return dir
}

// diskSpace returns the free and total bytes of the file system holding dir.
func diskSpace(dir string) (free, total int64, err error) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return 0, 0, err
	}
	return int64(st.Bavail) * st.Bsize, int64(st.Blocks) * st.Bsize, nil
}

// fillBallast writes zeros to path until the file system has at most leave
// bytes free, or (leave 0) until a write fails with ENOSPC. It returns the
// bytes written.
func fillBallast(path string, leave int64) (int64, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	chunk := make([]byte, 1<<20)
	var written int64
	for {
		free, _, err := diskSpace(filepath.Dir(path))
		if err != nil {
			return written, err
		}
		if leave > 0 && free <= leave {
			return written, nil
		}
		n := int64(len(chunk))
		if leave > 0 {
			n = min(n, free-leave)
		}
		w, err := f.Write(chunk[:n])
		written += int64(w)
		if errors.Is(err, syscall.ENOSPC) {
			return written, nil
		}
		if err != nil {
			return written, err
		}
	}
}

// dirBytes returns the bytes of the files under dir.
func dirBytes(dir string) int64 {
	var n int64
	filepath.WalkDir(dir, func(_ string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if info, err := d.Info(); err == nil {
				n += info.Size()
			}
		}
		return nil
	})
	return n
}

// segmentFiles lists the segment files of a data directory (as
// "<source>/<file>"), and, for each source writing one (a .seg.tmp file: a
// flush or a compaction under way), how many segments it has.
func segmentFiles(dataDir string) (segs map[string]bool, writing map[string]int, err error) {
	segs, writing = map[string]bool{}, map[string]int{}
	srcs, err := os.ReadDir(filepath.Join(dataDir, "sources"))
	if err != nil {
		return nil, nil, err
	}
	for _, s := range srcs {
		ents, err := os.ReadDir(filepath.Join(dataDir, "sources", s.Name(), "segments"))
		if err != nil {
			continue // being created
		}
		n, tmp := 0, false
		for _, e := range ents {
			switch {
			case strings.HasSuffix(e.Name(), ".seg.tmp"):
				tmp = true
			case strings.HasSuffix(e.Name(), ".seg"):
				segs[s.Name()+"/"+e.Name()] = true
				n++
			}
		}
		if tmp {
			writing[s.Name()] = n
		}
	}
	return segs, writing, nil
}

// quarantined counts files in the sources' quarantine directories.
func quarantined(dataDir string) []string {
	var out []string
	srcs, _ := os.ReadDir(filepath.Join(dataDir, "sources"))
	for _, s := range srcs {
		ents, _ := os.ReadDir(filepath.Join(dataDir, "sources", s.Name(), "quarantine"))
		for _, e := range ents {
			out = append(out, s.Name()+"/quarantine/"+e.Name())
		}
	}
	return out
}
