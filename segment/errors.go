package segment

import (
	"errors"
	"fmt"
)

// ErrCorrupt is matched (errors.Is) by every error that reports damaged or
// unreadable segment data.
var ErrCorrupt = errors.New("segment: corrupt")

// CorruptError says where a segment is damaged. Messages carry file names,
// sections and offsets, never event contents.
type CorruptError struct {
	Path    string // file path, for the operator
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
