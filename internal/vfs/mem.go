package vfs

import (
	"errors"
	"io"
	"io/fs"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
)

// MemFS is an in-memory FS with crash semantics: file contents become
// durable at File.Sync, directory entries (creations, renames, removals)
// at SyncDir of their directory. CrashClone returns what a machine would
// find after losing power: only durable state.
//
// SetCapacity makes it a small disk: a write past the capacity writes
// what fits and fails with ENOSPC, as a full file system does.
type MemFS struct {
	mu   sync.Mutex
	dirs map[string]*memDir
	// capacity (0: unlimited) bounds used, the bytes of the files that
	// have a name (a removed file's bytes are freed at once).
	capacity atomic.Int64
	used     atomic.Int64
}

// memUnlimited is the size DiskUsage reports for a MemFS without capacity.
const memUnlimited = 1 << 50

var (
	_ FS = (*MemFS)(nil)
	_ FS = (*ErrorFS)(nil)
	_ FS = osFS{}
)

type memDir struct {
	live    map[string]*memNode // current entries
	durable map[string]*memNode // entries as of the last SyncDir
}

type memNode struct {
	mu     sync.Mutex
	data   []byte
	synced []byte
	fs     *MemFS
	// links counts the directory entries naming the node; only named
	// nodes count against the capacity.
	links atomic.Int32
}

// link and unlink account a node's bytes when it gains or loses a name.
// Callers hold MemFS.mu.
func (m *MemFS) link(n *memNode) {
	if n.links.Add(1) == 1 {
		n.mu.Lock()
		m.used.Add(int64(len(n.data)))
		n.mu.Unlock()
	}
}

func (m *MemFS) unlink(n *memNode) {
	if n == nil {
		return
	}
	if n.links.Add(-1) == 0 {
		n.mu.Lock()
		m.used.Add(-int64(len(n.data)))
		n.mu.Unlock()
	}
}

// SetCapacity bounds the bytes of the files (0: unlimited). Lowering it
// below what is stored makes every growing write fail until files are
// removed.
func (m *MemFS) SetCapacity(bytes int64) { m.capacity.Store(bytes) }

// DiskUsage reports the capacity and what is left of it.
func (m *MemFS) DiskUsage(string) (DiskUsage, error) {
	total := m.capacity.Load()
	if total <= 0 {
		total = memUnlimited
	}
	return DiskUsage{Total: total, Free: max(0, total-m.used.Load())}, nil
}

// room returns how many of want more bytes node n may take.
func (m *MemFS) room(n *memNode, want int64) int64 {
	c := m.capacity.Load()
	if c <= 0 || n.links.Load() == 0 || want <= 0 {
		return want
	}
	return max(0, min(want, c-m.used.Load()))
}

// grow accounts delta more (or fewer) bytes of node n.
func (m *MemFS) grow(n *memNode, delta int64) {
	if n.links.Load() > 0 {
		m.used.Add(delta)
	}
}

func noSpace(op, name string) error {
	return &fs.PathError{Op: op, Path: name, Err: syscall.ENOSPC}
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
	n := &memNode{fs: m}
	m.unlink(md.live[base])
	md.live[base] = n
	m.link(n)
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
	n, ok := md.live[base]
	if !ok {
		if _, isDir := m.dirs[clean(name)]; isDir {
			delete(m.dirs, clean(name))
			return nil
		}
		return &fs.PathError{Op: "remove", Path: name, Err: fs.ErrNotExist}
	}
	delete(md.live, base)
	m.unlink(n)
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
	if old := nd.live[nb]; old != n {
		m.unlink(old)
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
	out.capacity.Store(m.capacity.Load())
	for d, md := range m.dirs {
		nd := out.dir(d, true)
		for name, n := range md.durable {
			n.mu.Lock()
			data := append([]byte(nil), n.synced...)
			n.mu.Unlock()
			c := &memNode{data: data, synced: append([]byte(nil), data...), fs: out}
			nd.live[name] = c
			nd.durable[name] = c
			out.link(c)
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
	var err error
	if grow := f.pos + int64(len(p)) - int64(len(f.node.data)); grow > 0 {
		if ok := f.node.fs.room(f.node, grow); ok < grow {
			p = p[:int64(len(p))-(grow-ok)] // what fits is written
			err = noSpace("write", f.name)
		}
	}
	end := f.pos + int64(len(p))
	if grow := end - int64(len(f.node.data)); grow > 0 {
		f.node.fs.grow(f.node, grow)
	}
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
	return len(p), err
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
	delta := size - int64(len(f.node.data))
	if delta > 0 && f.node.fs.room(f.node, delta) < delta {
		return noSpace("truncate", f.name)
	}
	f.node.fs.grow(f.node, delta)
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
