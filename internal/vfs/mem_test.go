package vfs

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"syscall"
	"testing"
)

// TestMemFSCapacity checks that a MemFS with a capacity behaves as a full
// disk: a write past it writes what fits and fails with ENOSPC, removing
// or truncating a file frees its bytes, and DiskUsage tracks it.
func TestMemFSCapacity(t *testing.T) {
	m := NewMemFS()
	m.MkdirAll("/d")
	m.SetCapacity(100)
	f, err := m.Create("/d/a")
	if err != nil {
		t.Fatal(err)
	}
	if n, err := f.Write(bytes.Repeat([]byte{1}, 60)); n != 60 || err != nil {
		t.Fatalf("write within capacity: %d, %v", n, err)
	}
	if u, _ := m.DiskUsage("/d"); u.Total != 100 || u.Free != 40 {
		t.Fatalf("usage %+v, want 100 total, 40 free", u)
	}
	n, err := f.Write(bytes.Repeat([]byte{2}, 50))
	if n != 40 || !IsNoSpace(err) {
		t.Fatalf("write past capacity: %d, %v; want 40 bytes and ENOSPC", n, err)
	}
	if sz, _ := f.Size(); sz != 100 {
		t.Fatalf("size %d after a partial write", sz)
	}
	g, _ := m.Create("/d/b")
	if n, err := g.Write([]byte{3}); n != 0 || !IsNoSpace(err) {
		t.Fatalf("write on a full disk: %d, %v", n, err)
	}
	if err := f.Truncate(60); err != nil {
		t.Fatal(err)
	}
	if n, err := g.Write(bytes.Repeat([]byte{3}, 40)); n != 40 || err != nil {
		t.Fatalf("write after truncation freed space: %d, %v", n, err)
	}
	if err := m.Remove("/d/a"); err != nil {
		t.Fatal(err)
	}
	if u, _ := m.DiskUsage("/d"); u.Free != 60 {
		t.Fatalf("free %d after removing a 60-byte file, want 60", u.Free)
	}
	// Renaming over a file frees the replaced one.
	h, _ := m.Create("/d/c")
	h.Write(bytes.Repeat([]byte{4}, 10))
	if err := m.Rename("/d/c", "/d/b"); err != nil {
		t.Fatal(err)
	}
	if u, _ := m.DiskUsage("/d"); u.Free != 90 {
		t.Fatalf("free %d after renaming over a file, want 90", u.Free)
	}
	if err := h.Truncate(200); !IsNoSpace(err) {
		t.Fatalf("extending a file past the capacity: %v", err)
	}
	// A removed file's bytes no longer count: writing to it still works.
	if n, err := f.Write(bytes.Repeat([]byte{5}, 500)); n != 500 || err != nil {
		t.Fatalf("write to a removed file: %d, %v", n, err)
	}
}

func TestIsNoSpace(t *testing.T) {
	for _, c := range []struct {
		err  error
		want bool
	}{
		{&os.PathError{Op: "write", Path: "x", Err: syscall.ENOSPC}, true},
		{fmt.Errorf("flush: %w", &os.PathError{Op: "write", Path: "x", Err: syscall.EDQUOT}), true},
		{&os.PathError{Op: "write", Path: "x", Err: syscall.EIO}, false},
		{errors.New("no space left on device"), false},
		{nil, false},
	} {
		if got := IsNoSpace(c.err); got != c.want {
			t.Errorf("IsNoSpace(%v) = %v", c.err, got)
		}
	}
}

func TestOSDiskUsage(t *testing.T) {
	u, err := OS.DiskUsage(t.TempDir())
	if errors.Is(err, errors.ErrUnsupported) {
		t.Skip("no statfs on this platform")
	}
	if err != nil || u.Total <= 0 || u.Free < 0 || u.Free > u.Total {
		t.Fatalf("DiskUsage: %+v, %v", u, err)
	}
}
