package vfs

import (
	"errors"
	"sync/atomic"
)

// ErrInjected is the error ErrorFS returns for the operation it fails.
var ErrInjected = errors.New("vfs: injected error")

// ErrorFS wraps an FS and fails the FailAt-th mutating operation (Create,
// OpenRW, Write, Sync, Truncate, Remove, Rename, MkdirAll, SyncDir; counted
// from 1) and every one after it, so a test can walk an error through every
// point of a workload. FailAt 0 never fails. Reads are not counted.
type ErrorFS struct {
	FS     FS
	FailAt int64
	ops    atomic.Int64
	later  atomic.Int64 // SetFailAt's value, read concurrently
}

// SetFailAt changes FailAt while other goroutines use the FS.
func (e *ErrorFS) SetFailAt(n int64) { e.later.Store(n) }

// Ops returns how many mutating operations have been attempted.
func (e *ErrorFS) Ops() int64 { return e.ops.Load() }

func (e *ErrorFS) step() error {
	n := e.ops.Add(1)
	failAt := e.FailAt
	if l := e.later.Load(); l > 0 {
		failAt = l
	}
	if failAt > 0 && n >= failAt {
		return ErrInjected
	}
	return nil
}

func (e *ErrorFS) Create(name string) (File, error) {
	if err := e.step(); err != nil {
		return nil, err
	}
	f, err := e.FS.Create(name)
	if err != nil {
		return nil, err
	}
	return &errorFile{File: f, fs: e}, nil
}

func (e *ErrorFS) Open(name string) (File, error) {
	f, err := e.FS.Open(name)
	if err != nil {
		return nil, err
	}
	return &errorFile{File: f, fs: e}, nil
}

func (e *ErrorFS) OpenRW(name string) (File, error) {
	if err := e.step(); err != nil {
		return nil, err
	}
	f, err := e.FS.OpenRW(name)
	if err != nil {
		return nil, err
	}
	return &errorFile{File: f, fs: e}, nil
}

func (e *ErrorFS) Remove(name string) error {
	if err := e.step(); err != nil {
		return err
	}
	return e.FS.Remove(name)
}

func (e *ErrorFS) Rename(o, n string) error {
	if err := e.step(); err != nil {
		return err
	}
	return e.FS.Rename(o, n)
}

func (e *ErrorFS) MkdirAll(dir string) error {
	if err := e.step(); err != nil {
		return err
	}
	return e.FS.MkdirAll(dir)
}

func (e *ErrorFS) List(dir string) ([]string, error) { return e.FS.List(dir) }

func (e *ErrorFS) SyncDir(dir string) error {
	if err := e.step(); err != nil {
		return err
	}
	return e.FS.SyncDir(dir)
}

func (e *ErrorFS) Exists(name string) bool { return e.FS.Exists(name) }

func (e *ErrorFS) DiskUsage(dir string) (DiskUsage, error) { return e.FS.DiskUsage(dir) }

type errorFile struct {
	File
	fs *ErrorFS
}

func (f *errorFile) Write(p []byte) (int, error) {
	if err := f.fs.step(); err != nil {
		return 0, err
	}
	return f.File.Write(p)
}

func (f *errorFile) Sync() error {
	if err := f.fs.step(); err != nil {
		return err
	}
	return f.File.Sync()
}

func (f *errorFile) Truncate(size int64) error {
	if err := f.fs.step(); err != nil {
		return err
	}
	return f.File.Truncate(size)
}
