package segment

import (
	"errors"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/sediment/sediment/internal/vfs"
)

// failingFile fails every ReadAt with cause while failing is set, as a
// disk returning EIO or an object store that stopped answering would.
type failingFile struct {
	vfs.File
	failing atomic.Bool
	cause   error
}

func (f *failingFile) ReadAt(p []byte, off int64) (int, error) {
	if f.failing.Load() {
		return 0, f.cause
	}
	return f.File.ReadAt(p, off)
}

// TestReadFailureIsNotCorruption: a read that fails (not a short read) is
// reported as ErrRead with its cause, never as ErrCorrupt, at open and at
// every later read; once reads work again the same reader reads
// everything. A file shorter than its footer says is still damage.
func TestReadFailureIsNotCorruption(t *testing.T) {
	fs := vfs.NewMemFS()
	fs.MkdirAll("/d")
	cols := makeColumns(3000, 7)
	writeSegment(t, fs, "/d/s.seg", cols, 1000, &WriterOptions{PageBytes: 4096, HistoryBytes: 2048})
	open := func() *failingFile {
		f, err := fs.Open("/d/s.seg")
		if err != nil {
			t.Fatal(err)
		}
		return &failingFile{File: f, cause: syscall.EIO}
	}
	check := func(what string, err error) {
		t.Helper()
		if err == nil {
			t.Fatalf("%s: the read failure was not reported", what)
		}
		var re *ReadError
		if !errors.Is(err, ErrRead) || errors.Is(err, ErrCorrupt) || !errors.Is(err, syscall.EIO) || !errors.As(err, &re) || re.Path != "s.seg" {
			t.Fatalf("%s: error %v (%T) is not a read failure of s.seg caused by EIO", what, err, err)
		}
	}

	f := open()
	f.failing.Store(true)
	_, err := Open(f, "s.seg")
	check("open", err)

	f = open()
	r, err := Open(f, "s.seg")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	f.failing.Store(true)
	check("check", r.Check())
	_, err = r.Section("extra")
	check("section", err)
	f.failing.Store(false)
	if err := r.Check(); err != nil {
		t.Fatalf("after the failure passed: %v", err)
	}
	for c := range cols {
		if got := readAll(t, r, c); len(got) != len(cols[c].vals) {
			t.Fatalf("column %d: %d values, want %d", c, len(got), len(cols[c].vals))
		}
	}

	// A truncated file is damage, not a read failure.
	good, err := vfs.ReadFile(fs, "/d/s.seg")
	if err != nil {
		t.Fatal(err)
	}
	cut, _ := fs.Create("/d/cut.seg")
	cut.Write(good[:len(good)/2])
	cut.Write(good[len(good)-trailerSize:]) // the trailer intact, the data short
	cut.Close()
	cf, _ := fs.Open("/d/cut.seg")
	cr, err := Open(cf, "cut.seg")
	if err == nil {
		err = cr.Check()
		cr.Close()
	}
	if !errors.Is(err, ErrCorrupt) || errors.Is(err, ErrRead) {
		t.Fatalf("truncated segment: %v, want ErrCorrupt only", err)
	}
}
