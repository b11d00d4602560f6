package objstore

import (
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/sediment/sediment/internal/vfs"
)

// ErrReadOnly is what File's writing methods return.
var ErrReadOnly = errors.New("objstore: cached object is read-only")

// File is an object read through a Cache, as a read-only vfs.File:
// segment.Open(f, name) reads a segment from the object store as it reads
// one from local disk, fetching only the chunks it touches (the header and
// the footer at the end first, then the index and the pages a query
// needs). Safe for concurrent ReadAt; Read keeps one position.
type File struct {
	c    *Cache
	info ObjectInfo
	obj  string // object directory

	mu  sync.Mutex
	pos int64 // for Read
}

var _ vfs.File = (*File)(nil)

// Info is the object's info as the file was opened with.
func (f *File) Info() ObjectInfo { return f.info }

// ReadAt reads len(p) bytes at off; fewer, with io.EOF, at the end of the
// object. A store failure is returned as it is (matching ErrUnavailable
// when the store could not be reached).
func (f *File) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, fmt.Errorf("objstore: %s: negative offset %d", f.info.Key, off)
	}
	if off >= f.info.Size {
		if len(p) == 0 {
			return 0, nil
		}
		return 0, io.EOF
	}
	end := min(off+int64(len(p)), f.info.Size)
	if end == off {
		return 0, nil
	}
	spans, err := f.c.readRange(f, off, end)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, sp := range spans {
		lo := max(off, sp.off)
		hi := min(end, sp.off+int64(len(sp.data)))
		n += copy(p[lo-off:], sp.data[lo-sp.off:hi-sp.off])
	}
	if int64(n) < int64(len(p)) {
		return n, io.EOF
	}
	return n, nil
}

// Read reads from the file's position and advances it.
func (f *File) Read(p []byte) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	n, err := f.ReadAt(p, f.pos)
	f.pos += int64(n)
	return n, err
}

// Size returns the object's size.
func (f *File) Size() (int64, error) { return f.info.Size, nil }

// Close releases nothing: chunks belong to the cache.
func (f *File) Close() error { return nil }

// Sync has nothing to make durable.
func (f *File) Sync() error { return nil }

// Write fails: objects are immutable.
func (f *File) Write([]byte) (int, error) { return 0, ErrReadOnly }

// Truncate fails: objects are immutable.
func (f *File) Truncate(int64) error { return ErrReadOnly }
