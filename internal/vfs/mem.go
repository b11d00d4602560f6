package vfs

import (
	"errors"
	"io"
	"io/fs"
	"path/filepath"
	"sort"
	"strings"
	"sync"
)

// MemFS is an in-memory FS with crash semantics: file contents become
// durable at File.Sync, directory entries (creations, renames, removals)
// at SyncDir of their directory. CrashClone returns what a machine would
// find after losing power: only durable state.
type MemFS struct {
	mu   sync.Mutex
	dirs map[string]*memDir
}

type memDir struct {
	live    map[string]*memNode // current entries
	durable map[string]*memNode // entries as of the last SyncDir
}

type memNode struct {
	mu     sync.Mutex
	data   []byte
	synced []byte
}

// NewMemFS returns an empty in-memory file system.
func NewMemFS() *MemFS {
	return &MemFS{dirs: map[string]*memDir{}}
}

func clean(name string) string { return filepath.Clean(name) }

func (m *MemFS) dir(d string, create bool) *memDir {
	d = clean(d)
	md := m.dirs[d]
	if md == nil && create {
		md = &memDir{live: map[string]*memNode{}, durable: map[string]*memNode{}}
		m.dirs[d] = md
	}
	return md
}

func (m *MemFS) lookup(name string) (*memDir, string, error) {
	name = clean(name)
	md := m.dir(filepath.Dir(name), false)
	if md == nil {
		return nil, "", &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
	}
	return md, filepath.Base(name), nil
}

func (m *MemFS) Create(name string) (File, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	md, base, err := m.lookup(name)
	if err != nil {
		return nil, err
	}
	n := &memNode{}
	md.live[base] = n
	return &memFile{node: n, writable: true, name: name}, nil
}

func (m *MemFS) open(name string, writable bool) (File, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	md, base, err := m.lookup(name)
	if err != nil {
		return nil, err
	}
	n := md.live[base]
	if n == nil {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
	}
	return &memFile{node: n, writable: writable, name: name}, nil
}

func (m *MemFS) Open(name string) (File, error)   { return m.open(name, false) }
func (m *MemFS) OpenRW(name string) (File, error) { return m.open(name, true) }

func (m *MemFS) Remove(name string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	md, base, err := m.lookup(name)
	if err != nil {
		return err
	}
	if _, ok := md.live[base]; !ok {
		if _, isDir := m.dirs[clean(name)]; isDir {
			delete(m.dirs, clean(name))
			return nil
		}
		return &fs.PathError{Op: "remove", Path: name, Err: fs.ErrNotExist}
	}
	delete(md.live, base)
	return nil
}

func (m *MemFS) Rename(oldname, newname string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	od, ob, err := m.lookup(oldname)
	if err != nil {
		return err
	}
	n := od.live[ob]
	if n == nil {
		return &fs.PathError{Op: "rename", Path: oldname, Err: fs.ErrNotExist}
	}
	nd, nb, err := m.lookup(newname)
	if err != nil {
		return err
	}
	delete(od.live, ob)
	nd.live[nb] = n
	return nil
}

func (m *MemFS) MkdirAll(dir string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	// Directories are made durable at once: the engine creates its
	// directories at startup and syncs their parents; modelling lost
	// directories adds nothing to the tests.
	for d := clean(dir); ; d = filepath.Dir(d) {
		m.dir(d, true)
		if d == filepath.Dir(d) {
			break
		}
	}
	return nil
}

func (m *MemFS) List(dir string) ([]string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	dir = clean(dir)
	md := m.dirs[dir]
	if md == nil {
		return nil, &fs.PathError{Op: "readdir", Path: dir, Err: fs.ErrNotExist}
	}
	var names []string
	for n := range md.live {
		names = append(names, n)
	}
	prefix := dir + string(filepath.Separator)
	for d := range m.dirs {
		if strings.HasPrefix(d, prefix) && !strings.Contains(d[len(prefix):], string(filepath.Separator)) {
			names = append(names, d[len(prefix):])
		}
	}
	sort.Strings(names)
	return names, nil
}

func (m *MemFS) SyncDir(dir string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	md := m.dir(dir, false)
	if md == nil {
		return &fs.PathError{Op: "sync", Path: dir, Err: fs.ErrNotExist}
	}
	md.durable = make(map[string]*memNode, len(md.live))
	for k, v := range md.live {
		md.durable[k] = v
	}
	return nil
}

func (m *MemFS) Exists(name string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	name = clean(name)
	if _, ok := m.dirs[name]; ok {
		return true
	}
	md, base, err := m.lookup(name)
	if err != nil {
		return false
	}
	_, ok := md.live[base]
	return ok
}

// CrashClone returns a new MemFS holding only what was durable: entries
// present at their directory's last SyncDir, each with the contents of its
// last Sync.
func (m *MemFS) CrashClone() *MemFS {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := NewMemFS()
	for d, md := range m.dirs {
		nd := out.dir(d, true)
		for name, n := range md.durable {
			n.mu.Lock()
			data := append([]byte(nil), n.synced...)
			n.mu.Unlock()
			c := &memNode{data: data, synced: append([]byte(nil), data...)}
			nd.live[name] = c
			nd.durable[name] = c
		}
	}
	return out
}

type memFile struct {
	node     *memNode
	name     string
	pos      int64
	writable bool
	closed   bool
}

var errClosed = errors.New("vfs: file closed")

func (f *memFile) Read(p []byte) (int, error) {
	if f.closed {
		return 0, errClosed
	}
	n, err := f.ReadAt(p, f.pos)
	f.pos += int64(n)
	return n, err
}

func (f *memFile) ReadAt(p []byte, off int64) (int, error) {
	if f.closed {
		return 0, errClosed
	}
	f.node.mu.Lock()
	defer f.node.mu.Unlock()
	if off < 0 {
		return 0, errors.New("vfs: negative offset")
	}
	if off >= int64(len(f.node.data)) {
		return 0, io.EOF
	}
	n := copy(p, f.node.data[off:])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

func (f *memFile) Write(p []byte) (int, error) {
	if f.closed {
		return 0, errClosed
	}
	if !f.writable {
		return 0, &fs.PathError{Op: "write", Path: f.name, Err: fs.ErrPermission}
	}
	f.node.mu.Lock()
	defer f.node.mu.Unlock()
	end := f.pos + int64(len(p))
	switch {
	case end <= int64(len(f.node.data)):
	case end <= int64(cap(f.node.data)):
		n := len(f.node.data)
		f.node.data = f.node.data[:end]
		clear(f.node.data[n:]) // a gap before pos reads as zeros, as on a disk
	default:
		// Grow by doubling; doubling the capacity on every write past the
		// length instead would grow it exponentially with the writes.
		nd := make([]byte, end, max(end, int64(cap(f.node.data))*2))
		copy(nd, f.node.data)
		f.node.data = nd
	}
	copy(f.node.data[f.pos:], p)
	f.pos = end
	return len(p), nil
}

func (f *memFile) Sync() error {
	if f.closed {
		return errClosed
	}
	f.node.mu.Lock()
	defer f.node.mu.Unlock()
	f.node.synced = append(f.node.synced[:0], f.node.data...)
	return nil
}

func (f *memFile) Size() (int64, error) {
	f.node.mu.Lock()
	defer f.node.mu.Unlock()
	return int64(len(f.node.data)), nil
}

func (f *memFile) Truncate(size int64) error {
	if !f.writable {
		return &fs.PathError{Op: "truncate", Path: f.name, Err: fs.ErrPermission}
	}
	f.node.mu.Lock()
	defer f.node.mu.Unlock()
	if size <= int64(len(f.node.data)) {
		f.node.data = f.node.data[:size]
	} else {
		f.node.data = append(f.node.data, make([]byte, size-int64(len(f.node.data)))...)
	}
	return nil
}

func (f *memFile) Close() error {
	if f.closed {
		return errClosed
	}
	f.closed = true
	return nil
}
