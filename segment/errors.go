package segment

import (
	"errors"
	"fmt"
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
