package engine

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/sediment/sediment/internal/vfs"
)

// A segment's index found damaged is remembered on disk, not only in
// memory: segments/<id>.ixdmg, a marker beside the segment
// (docs/format/datadir.md). Its presence is what counts; its bytes are the
// cause, as text for operators, never parsed. At open, a segment with a
// marker is known to have a damaged index: queries scan it without the
// index from the first one on (a restart does not read the index again
// and fail again), compaction rewrites it with a fresh index first
// (needsRewrite), and fsck reports it. The marker goes with its segment:
// when the segment is deleted or set aside, and at open when its segment
// is gone.

const indexDamageExt = ".ixdmg"

// maxIndexDamageCause bounds the cause a marker holds (and what is read
// back of it).
const maxIndexDamageCause = 1 << 10

func indexDamageName(id uint64) string { return fmt.Sprintf("%016x%s", id, indexDamageExt) }

// recordIndexDamage writes sg's marker. A failure is logged: the damage
// is then remembered in memory only, as before, and found again after a
// restart.
func (s *Shard) recordIndexDamage(sg *segRef, cause error) {
	if s.opts.ReadOnly {
		return
	}
	text := causeText(cause)
	if len(text) > maxIndexDamageCause {
		text = text[:maxIndexDamageCause]
	}
	if err := writeFileAtomic(s.opts.FS, s.segDir, indexDamageName(sg.id), []byte(text)); err != nil {
		s.opts.Logger.Warn("could not record the damaged index on disk; a restart will find it again", "shard", s.id,
			"file", filepath.Join("segments", indexDamageName(sg.id)), "err", err)
	}
}

// readIndexDamageCause returns the cause a marker holds, as valid UTF-8 of
// at most maxIndexDamageCause bytes; a marker that cannot be read still
// marks the index damaged.
func readIndexDamageCause(fs vfs.FS, path string) string {
	f, err := fs.Open(path)
	if err != nil {
		return "(the marker's cause is unreadable: " + err.Error() + ")"
	}
	defer f.Close()
	buf := make([]byte, maxIndexDamageCause)
	n, err := f.ReadAt(buf, 0)
	if err != nil && !errors.Is(err, io.EOF) {
		return "(the marker's cause is unreadable: " + err.Error() + ")"
	}
	return strings.ToValidUTF8(string(buf[:n]), string(utf8.RuneError))
}

// IndexDamagedError reports a segment whose index a running server found
// damaged and recorded (segments/<id>.ixdmg): nothing is lost, queries
// scan the segment without it, and a compaction rebuilds it.
type IndexDamagedError struct {
	File  string // segments/<id>.seg
	Cause string // what the server recorded
}

func (e *IndexDamagedError) Error() string {
	return fmt.Sprintf("%s: index recorded as damaged by the server (%s)", e.File, e.Cause)
}

// loadIndexDamage applies the markers found at open (ids) to the loaded
// segments, and removes those whose segment is gone.
func (s *Shard) loadIndexDamage(ids []uint64, loaded map[uint64]*segRef) {
	fs := s.opts.FS
	for _, id := range ids {
		path := filepath.Join(s.segDir, indexDamageName(id))
		sg := loaded[id]
		if sg == nil {
			if !s.opts.ReadOnly {
				fs.Remove(path)
			}
			continue
		}
		sg.ixBroken.Store(true)
		e := &IndexDamagedError{File: filepath.Join("segments", segName(id)), Cause: readIndexDamageCause(fs, path)}
		if s.opts.ReadOnly {
			s.openProblems = append(s.openProblems, e)
			continue
		}
		s.opts.Logger.Warn("segment index recorded as damaged; queries scan the segment without it until a compaction rebuilds it (nothing is lost)",
			"shard", s.id, "file", e.File, "cause", e.Cause)
	}
}

// removeIndexDamage removes sg's marker, if it has one (the segment is
// deleted or set aside).
func (s *Shard) removeIndexDamage(id uint64) {
	p := filepath.Join(s.segDir, indexDamageName(id))
	if s.opts.FS.Exists(p) {
		s.opts.FS.Remove(p)
	}
}
