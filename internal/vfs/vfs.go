// Package vfs is the small file-system interface the storage engine does all
// its I/O through, so that tests can swap in an in-memory file system that
// forgets unsynced data on a simulated crash (MemFS.CrashClone) or fails the
// n-th operation (ErrorFS).
package vfs

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"sort"
	"syscall"
)

// File is an open file.
type File interface {
	io.Reader
	io.ReaderAt
	io.Writer
	io.Closer
	// Sync makes the file's written contents durable.
	Sync() error
	// Size returns the current length of the file.
	Size() (int64, error)
	// Truncate cuts or extends the file to size bytes.
	Truncate(size int64) error
}

// FS is a file system. Paths use the OS separator.
type FS interface {
	// Create creates or truncates name for reading and writing.
	Create(name string) (File, error)
	// Open opens name read-only.
	Open(name string) (File, error)
	// OpenRW opens an existing file for reading and writing, positioned at 0.
	OpenRW(name string) (File, error)
	Remove(name string) error
	// Rename atomically replaces newname with oldname.
	Rename(oldname, newname string) error
	MkdirAll(dir string) error
	// List returns the names (not paths) of the entries of dir, sorted.
	List(dir string) ([]string, error)
	// SyncDir makes the directory's entries (creations, renames, removals)
	// durable.
	SyncDir(dir string) error
	// Exists reports whether name exists.
	Exists(name string) bool
	// DiskUsage reports the size of the file system holding dir and the
	// bytes still free for this process; errors.ErrUnsupported where the
	// platform cannot tell.
	DiskUsage(dir string) (DiskUsage, error)
}

// DiskUsage is the size and free space of a file system, in bytes.
type DiskUsage struct {
	Total int64
	// Free is what an unprivileged process may still write (the blocks
	// reserved for root are not counted).
	Free int64
}

// IsNoSpace reports whether err says the file system is full or the
// user's quota is used up (ENOSPC, EDQUOT): a condition that passes when
// space is freed, unlike other I/O errors.
func IsNoSpace(err error) bool {
	return errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT)
}

// OS is the real file system.
var OS FS = osFS{}

type osFS struct{}

type osFile struct{ *os.File }

func (f osFile) Size() (int64, error) {
	st, err := f.Stat()
	if err != nil {
		return 0, err
	}
	return st.Size(), nil
}

func (osFS) Create(name string) (File, error) {
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return nil, err
	}
	return osFile{f}, nil
}

func (osFS) Open(name string) (File, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	return osFile{f}, nil
}

func (osFS) OpenRW(name string) (File, error) {
	f, err := os.OpenFile(name, os.O_RDWR, 0)
	if err != nil {
		return nil, err
	}
	return osFile{f}, nil
}

func (osFS) Remove(name string) error             { return os.Remove(name) }
func (osFS) Rename(oldname, newname string) error { return os.Rename(oldname, newname) }
func (osFS) MkdirAll(dir string) error            { return os.MkdirAll(dir, 0o755) }

func (osFS) List(dir string) ([]string, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	names := make([]string, 0, len(ents))
	for _, e := range ents {
		names = append(names, e.Name())
	}
	sort.Strings(names)
	return names, nil
}

func (osFS) SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	serr := d.Sync()
	cerr := d.Close()
	return errors.Join(serr, cerr)
}

func (osFS) Exists(name string) bool {
	_, err := os.Stat(name)
	return err == nil
}

// WriteFileAtomic writes data to name durably and atomically: a temporary
// file is written and synced, renamed over name, and the directory synced.
// When a step before the rename fails, the temporary file is removed (on a
// full disk it would hold space) and name is as it was.
func WriteFileAtomic(fs FS, name string, data []byte) error {
	tmp := name + ".tmp"
	if err := WriteFileSynced(fs, tmp, data); err != nil {
		fs.Remove(tmp)
		return err
	}
	if err := fs.Rename(tmp, name); err != nil {
		fs.Remove(tmp)
		return err
	}
	return fs.SyncDir(filepath.Dir(name))
}

// WriteFileSynced creates (or truncates) name, writes data to it and syncs
// it. It does not sync the directory: the caller renames the file into
// place, or syncs the directory, to make it durable.
func WriteFileSynced(fs FS, name string, data []byte) error {
	f, err := fs.Create(name)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// ReadFile reads the whole of name.
func ReadFile(fs FS, name string) ([]byte, error) {
	f, err := fs.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	size, err := f.Size()
	if err != nil {
		return nil, err
	}
	buf := make([]byte, size)
	if _, err := f.ReadAt(buf, 0); err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	return buf, nil
}
