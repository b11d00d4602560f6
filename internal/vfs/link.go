package vfs

import (
	"errors"
	"io"
	"io/fs"
	"os"
)

// Linker is implemented by file systems that can hard-link a file: a
// second name for the same contents, which costs no space and survives
// the removal of the first name.
type Linker interface {
	// Link makes newname a hard link to oldname; newname must not exist.
	Link(oldname, newname string) error
}

// ErrLinkUnsupported is returned by Link on a file system that cannot
// make hard links.
var ErrLinkUnsupported = errors.New("vfs: hard links not supported")

// Link implements Linker.
func (osFS) Link(oldname, newname string) error { return os.Link(oldname, newname) }

// Link implements Linker: both names share one node.
func (m *MemFS) Link(oldname, newname string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	od, ob, err := m.lookup(oldname)
	if err != nil {
		return err
	}
	n := od.live[ob]
	if n == nil {
		return &fs.PathError{Op: "link", Path: oldname, Err: fs.ErrNotExist}
	}
	nd, nb, err := m.lookup(newname)
	if err != nil {
		return err
	}
	if _, exists := nd.live[nb]; exists {
		return &fs.PathError{Op: "link", Path: newname, Err: fs.ErrExist}
	}
	nd.live[nb] = n
	return nil
}

// Link implements Linker, counted as a mutating operation; it fails with
// ErrLinkUnsupported when the wrapped FS cannot link.
func (e *ErrorFS) Link(oldname, newname string) error {
	if err := e.step(); err != nil {
		return err
	}
	l, ok := e.FS.(Linker)
	if !ok {
		return ErrLinkUnsupported
	}
	return l.Link(oldname, newname)
}

// LinkOrCopy gives the file oldname the second name newname: a hard link
// when fsys can make one, otherwise (no Linker, another device, a file
// system without links) a copy written and synced. It reports whether it
// copied. The directory of newname is the caller's to sync.
func LinkOrCopy(fsys FS, oldname, newname string) (copied bool, err error) {
	if l, ok := fsys.(Linker); ok {
		err := l.Link(oldname, newname)
		if err == nil {
			return false, nil
		}
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrExist) || errors.Is(err, ErrInjected) {
			return false, err
		}
		// EXDEV, EPERM, ENOTSUP...: copy instead.
	}
	src, err := fsys.Open(oldname)
	if err != nil {
		return false, err
	}
	defer src.Close()
	return true, CopyFile(fsys, src, newname)
}

// CopyFile writes the contents of src to a new file name and syncs it.
// The directory of name is the caller's to sync.
func CopyFile(fsys FS, src File, name string) error {
	dst, err := fsys.Create(name)
	if err != nil {
		return err
	}
	buf := make([]byte, 1<<20)
	var off int64
	for {
		n, rerr := src.ReadAt(buf, off)
		if n > 0 {
			if _, err := dst.Write(buf[:n]); err != nil {
				dst.Close()
				return err
			}
			off += int64(n)
		}
		if errors.Is(rerr, io.EOF) {
			break
		}
		if rerr != nil {
			dst.Close()
			return rerr
		}
	}
	if err := dst.Sync(); err != nil {
		dst.Close()
		return err
	}
	return dst.Close()
}
