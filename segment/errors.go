package segment

import (
	"errors"
	"fmt"
	"io"
	iofs "io/fs"
)

// ErrCorrupt is matched (errors.Is) by every error that reports damaged or
// unreadable segment data.
var ErrCorrupt = errors.New("segment: corrupt")

// CorruptError says where a segment is damaged. Messages carry file names,
// sections and offsets, never event contents.
type CorruptError struct {
	// Path is the name the reader was opened with (the engine opens
	// segments by their path relative to the source's directory, so that
	// no error carries the server's directories).
	Path    string
	Offset  int64  // byte offset of the damaged unit, -1 if unknown
	Section string // "trailer", "footer", "page", "dictionary", "section index", ...
	Err     error
}

func (e *CorruptError) Error() string {
	if e.Offset >= 0 {
		return fmt.Sprintf("segment %s: %s at offset %d: %v", e.Path, e.Section, e.Offset, e.Err)
	}
	return fmt.Sprintf("segment %s: %s: %v", e.Path, e.Section, e.Err)
}

func (e *CorruptError) Unwrap() error { return e.Err }

// Is makes errors.Is(err, ErrCorrupt) true for every CorruptError.
func (e *CorruptError) Is(target error) bool { return target == ErrCorrupt }

func corruptf(path, section string, off int64, format string, args ...any) error {
	return &CorruptError{Path: path, Offset: off, Section: section, Err: fmt.Errorf(format, args...)}
}

// VersionError reports a segment written in a format version this build
// does not read (a newer Sediment wrote it, or support for an old version
// was dropped). It is not corruption: the engine refuses to start rather
// than quarantine data it merely cannot read yet.
type VersionError struct {
	Path    string
	Version uint8
}

func (e *VersionError) Error() string {
	return fmt.Sprintf("segment %s: format version %d is not supported by this build (it reads %d..%d); run the Sediment version that wrote it",
		e.Path, e.Version, FormatMinSupported, FormatLatest)
}

// ErrRead is matched (errors.Is) by every error that reports segment bytes
// that could not be read at all: the file system or the object store
// failed (EIO, a store that does not answer, an object gone). It is not
// damage: the same read may succeed later, so nothing is set aside for it.
// A short read (the file ends before a unit its footer places) is damage,
// not a read failure: it matches ErrCorrupt.
var ErrRead = errors.New("segment: read failed")

// ReadError says which read of a segment failed. It unwraps to the cause,
// so errors.Is matches the cause's kinds too (an object store's
// unavailability, fs.ErrNotExist, ...).
type ReadError struct {
	// Path is the name the reader was opened with (as CorruptError's).
	Path    string
	Offset  int64  // byte offset of the unit being read, -1 if unknown
	Section string // "header", "trailer", "page", "section index", ...
	Err     error
}

func (e *ReadError) Error() string {
	if e.Offset >= 0 {
		return fmt.Sprintf("segment %s: reading %s at offset %d: %v", e.Path, e.Section, e.Offset, ioCause(e.Err))
	}
	return fmt.Sprintf("segment %s: reading %s: %v", e.Path, e.Section, ioCause(e.Err))
}

func (e *ReadError) Unwrap() error { return e.Err }

// Is makes errors.Is(err, ErrRead) true for every ReadError.
func (e *ReadError) Is(target error) bool { return target == ErrRead }

// readFailed classifies a failed ReadAt of the unit at off: a short read
// (io.EOF, io.ErrUnexpectedEOF: the file is shorter than the segment's own
// offsets say) is damage; any other error is a ReadError.
func readFailed(path, section string, off int64, err error) error {
	if err == nil || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		if err == nil {
			err = io.ErrUnexpectedEOF
		}
		return corruptf(path, section, off, "read: %v", ioCause(err))
	}
	return &ReadError{Path: path, Offset: off, Section: section, Err: err}
}

// ioCause is a read error without the file path an *fs.PathError carries:
// the CorruptError that wraps it names the file already, by the name the
// reader was given.
func ioCause(err error) error {
	var pe *iofs.PathError
	if errors.As(err, &pe) {
		return fmt.Errorf("%s: %w", pe.Op, pe.Err)
	}
	return err
}
