package catalog

import (
	"errors"
	"fmt"
	"path/filepath"

	"github.com/sediment/sediment/internal/vfs"
)

// FileCheck is what CheckFiles found about one catalog file.
type FileCheck struct {
	Path   string
	Exists bool
	// Format is the file's format version when it decodes.
	Format int
	// Err is nil when the file decodes (or does not exist); damage wraps
	// ErrCorrupt, anything else is the read error.
	Err error
}

// OK reports whether the file exists and decodes.
func (f FileCheck) OK() bool { return f.Exists && f.Err == nil }

// CheckFiles checks the catalog file of data directory dir and its
// previous version (PrevFileName), changing nothing. opts.FS is used; nil
// means the OS.
func CheckFiles(dir string, opts *Options) (cur, prev FileCheck) {
	o := opts.withDefaults()
	check := func(name string) FileCheck {
		fc := FileCheck{Path: filepath.Join(dir, name)}
		if fc.Exists = o.FS.Exists(fc.Path); !fc.Exists {
			return fc
		}
		data, err := vfs.ReadFile(o.FS, fc.Path)
		if err != nil {
			fc.Err = err
			return fc
		}
		_, fc.Format, fc.Err = decodeFile(data)
		return fc
	}
	return check(FileName), check(PrevFileName)
}

// ErrNothingToRestore is returned by RestorePrevious when the catalog file
// is intact.
var ErrNothingToRestore = errors.New("catalog: the catalog file is intact; nothing to restore")

// RestorePrevious puts the previous version of the catalog (PrevFileName:
// the catalog as it was before its last change) in place of a damaged or
// missing catalog file. The damaged file is first copied to
// catalog.json.damaged-<UTC time> (returned; "" when it could not be read).
// It refuses when the catalog file is intact (ErrNothingToRestore) or the
// previous version is missing or damaged too. The caller makes sure no
// server uses the directory. The last change to sources, endpoints or
// access tokens is lost; sources it created keep their data directory,
// which the server then reports as not in the catalog.
func RestorePrevious(dir string, opts *Options) (damagedCopy string, err error) {
	o := opts.withDefaults()
	cur, prev := CheckFiles(dir, &o)
	switch {
	case cur.OK():
		return "", ErrNothingToRestore
	case !prev.Exists:
		return "", fmt.Errorf("catalog: no previous version (%s) to restore: restore %s from a backup", prev.Path, FileName)
	case prev.Err != nil:
		return "", fmt.Errorf("catalog: the previous version %s is damaged too (%v): restore %s from a backup", prev.Path, prev.Err, FileName)
	}
	good, err := vfs.ReadFile(o.FS, prev.Path)
	if err != nil {
		return "", err
	}
	if cur.Exists {
		if bad, rerr := vfs.ReadFile(o.FS, cur.Path); rerr == nil {
			damagedCopy = cur.Path + ".damaged-" + o.Now().UTC().Format("20060102T150405Z")
			if err := vfs.WriteFileAtomic(o.FS, damagedCopy, bad); err != nil {
				return "", fmt.Errorf("catalog: keep the damaged file: %w", err)
			}
		}
	}
	if err := vfs.WriteFileAtomic(o.FS, cur.Path, good); err != nil {
		return damagedCopy, fmt.Errorf("catalog: restore: %w", err)
	}
	return damagedCopy, nil
}
