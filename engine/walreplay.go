package engine

import (
	"encoding/binary"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/sediment/sediment/event"
	"github.com/sediment/sediment/internal/vfs"
)

// ErrWALCorrupt is matched by errors reporting a damaged write-ahead log.
var ErrWALCorrupt = errors.New("engine: write-ahead log corrupt")

// WALCorruptError locates damage in a WAL file: a bad header, a record that
// fails its checksum or does not decode while its whole length is on disk
// (corruption, not a torn write), a damaged record followed by valid ones,
// or a torn tail in a sealed file (which was synced whole, so the tail is
// damage too). Replay goes on past it wherever the framing lets it find
// the next record; what it could not read is lost only once an operator
// repairs the file.
type WALCorruptError struct {
	// File is the log file relative to the source's directory
	// (wal/<seq>.wal): the error may reach people who must not learn the
	// server's paths.
	File   string
	Offset int64 // where the damaged record (or the header, 0) starts
	// Length is the bytes the damage spans: the record, or up to the next
	// record that checks out when the length field itself is damaged.
	Length int64
	// Header: the file header is damaged; its records read.
	Header bool
	// FramingIntact: the damaged record's length field leads to the next
	// record (or the end of the file), so only this record is lost.
	FramingIntact bool
	// Recovered: only the length field was wrong; the record framed by its
	// neighbours checks out, and its events are kept.
	Recovered bool
	// Tail: nothing valid follows the damage.
	Tail bool
	// Events is the number of events the damaged record says it holds,
	// read from its payload although its checksum failed; -1 when that
	// cannot be read.
	Events int64
	Err    error
}

func (e *WALCorruptError) Error() string {
	switch {
	case e.Header:
		return fmt.Sprintf("%s: header damaged (%v); its records read", e.File, e.Err)
	case e.Recovered:
		return fmt.Sprintf("%s: record at offset %d: length field damaged (%v); the record checks out with the length the next record gives, nothing is lost", e.File, e.Offset, e.Err)
	}
	return fmt.Sprintf("%s: record at offset %d: %v; unreadable: %s", e.File, e.Offset, e.Err, e.Lost())
}

// Lost says what dropping the damage loses, for people.
func (e *WALCorruptError) Lost() string {
	switch {
	case e.Header, e.Recovered:
		return "nothing"
	case e.FramingIntact && e.Events >= 0:
		return fmt.Sprintf("one record of %d bytes, which says it holds %s events (unverified: its checksum failed)", e.Length, thousands(e.Events))
	case e.FramingIntact:
		return fmt.Sprintf("one record of %d bytes (its event count is unreadable)", e.Length)
	case e.Tail:
		return fmt.Sprintf("the last %d bytes of the file (how many events is unknown)", e.Length)
	}
	return fmt.Sprintf("%d bytes up to the next record that checks out (how many events is unknown)", e.Length)
}

func (e *WALCorruptError) Unwrap() error        { return e.Err }
func (e *WALCorruptError) Is(target error) bool { return target == ErrWALCorrupt }

// WALVersionError reports a log file whose header is intact but names a
// format version this build does not read, and whose bytes do not read as
// this version's records: a newer Sediment wrote it. It is not damage:
// startup stops rather than set the file aside, as for segments.
type WALVersionError struct {
	File    string
	Version uint8
}

func (e *WALVersionError) Error() string {
	return fmt.Sprintf("%s: format version %d is not supported by this build (it reads %d); run the Sediment version that wrote it", e.File, e.Version, walVersion)
}

// tailMode says what replay does with a torn last record (an incomplete
// group write: the crash came mid-write).
type tailMode int

const (
	// tailError reports it: a sealed file was synced before the next one
	// was created, so it cannot end torn.
	tailError tailMode = iota
	// tailCut truncates the file there (startup, the newest file).
	tailCut
	// tailKeep ignores it without changing the file (a read-only view of
	// the file a running server is appending to).
	tailKeep
)

// walSpan is a record of a file that checks out.
type walSpan struct {
	off, n int64
	// fixLen: the record's length field is damaged; n is the length its
	// neighbours give, and a repair writes that.
	fixLen bool
}

// walParse is what reading one log file found.
type walParse struct {
	records []walSpan
	events  int
	damage  []*WALCorruptError
	// tornAt is where a torn tail starts, -1 without one.
	tornAt int64
	size   int64
}

// parseWAL reads a log file's bytes, calling fn with the events of every
// record that checks out, in order, including those after damage that the
// framing (or a search for the next record) leads to. A failing record is
// a torn tail only when it is the last thing in the file and is incomplete
// or zero-filled (looksTorn); anything else is damage. file names the file
// in errors.
func parseWAL(data []byte, file string, tail tailMode, fn func([]event.Event) error) (*walParse, error) {
	p := &walParse{tornAt: -1, size: int64(len(data))}
	if len(data) < walHeaderSize {
		// A crash between create and the header sync leaves a short file.
		if tail != tailError {
			p.tornAt = 0
			return p, nil
		}
		p.damage = append(p.damage, &WALCorruptError{File: file, Length: int64(len(data)), Tail: true, Events: -1, Err: errors.New("short header")})
		return p, nil
	}
	end := int64(len(data))
	off := int64(walHeaderSize)
	for off < end {
		evs, n, err := decodeWALRecord(data[off:])
		if err == nil {
			if err := fn(evs); err != nil {
				return nil, err
			}
			p.records = append(p.records, walSpan{off: off, n: int64(n)})
			p.events += len(evs)
			off += int64(n)
			continue
		}
		d := &WALCorruptError{File: file, Offset: off, Events: -1, Err: err}
		next, gaveUp := nextValidRecord(data, off+1)
		if gaveUp {
			// Past the search budget: report the rest as damage, cut nothing.
			d.Length, d.Tail = end-off, true
			p.damage = append(p.damage, d)
			break
		}
		stop := next
		if next < 0 {
			stop = end
		}
		d.Length = stop - off
		if evs, ok := recordFramedBy(data, off, stop); ok {
			// Only the length field is wrong: the record checks out.
			if err := fn(evs); err != nil {
				return nil, err
			}
			p.records = append(p.records, walSpan{off: off, n: stop - off, fixLen: true})
			p.events += len(evs)
			d.Recovered, d.Tail = true, next < 0
			p.damage = append(p.damage, d)
			off = stop
			continue
		}
		if next < 0 && looksTorn(data, off) {
			if tail != tailError {
				p.tornAt = off
				break
			}
			d.Tail = true
			d.Err = fmt.Errorf("torn record in a sealed file: %w", err)
			p.damage = append(p.damage, d)
			break
		}
		d.Tail = next < 0
		if e := recordEnd(data, off); e == stop || (e > off && e < stop && chainReaches(data, e, stop)) {
			// The length fields still lead to the next good record: only
			// this record is lost (the ones up to it are damage of their
			// own, reported in turn).
			d.FramingIntact, d.Length, d.Tail = true, e-off, d.Tail && e == stop
			d.Events = eventCountHint(data[off:e])
			stop = e
		}
		p.damage = append(p.damage, d)
		off = stop
	}
	if string(data[:4]) != walMagic || data[4] != walVersion {
		if string(data[:4]) == walMagic && data[4] > walVersion && len(p.records) == 0 && end > walHeaderSize {
			return nil, &WALVersionError{File: file, Version: data[4]}
		}
		h := &WALCorruptError{File: file, Offset: 0, Length: walHeaderSize, Header: true, Events: -1,
			Err: fmt.Errorf("bad header %q v%d", data[:4], data[4])}
		p.damage = append([]*WALCorruptError{h}, p.damage...)
	}
	return p, nil
}

// recordEnd is where the record at off ends by its length field, -1 when
// its header is not all there.
func recordEnd(data []byte, off int64) int64 {
	if int64(len(data))-off < walRecHeaderSize {
		return -1
	}
	return off + walRecHeaderSize + int64(binary.LittleEndian.Uint32(data[off:]))
}

// chainReaches reports whether following length fields from the record
// at off lands exactly on stop.
func chainReaches(data []byte, off, stop int64) bool {
	for off < stop {
		e := recordEnd(data, off)
		if e <= off {
			return false
		}
		off = e
	}
	return off == stop
}

// recordFramedBy decodes the record at off as if its length field said
// it ends at end: a record whose length field alone is damaged (a flipped
// bit) checks out that way, its checksum covering everything else.
func recordFramedBy(data []byte, off, end int64) ([]event.Event, bool) {
	n := end - off - walRecHeaderSize
	if n < 0 || n > walMaxRecord || recordEnd(data, off) == end {
		return nil, false
	}
	evs, err := decodeWALBody(data[off+8:end], binary.LittleEndian.Uint32(data[off+4:]))
	return evs, err == nil
}

// sectorSize is the unit in which a write can be lost on power failure.
const sectorSize = 512

// looksTorn reports whether the failing record at off, with nothing valid
// after it, is what an interrupted write leaves rather than damage:
//
//   - its header or its payload runs past the end of the file (the file
//     was cut mid-write), with a length a writer could have written;
//   - or its whole length is on disk but the file holds nothing but zero
//     bytes from inside the record's header (a length prefix, perhaps the
//     checksum, then zeros), or from a sector boundary inside the record,
//     to its end: the file's size reached the disk before its data.
//
// A record whose full length is on disk and whose bytes are not zero-filled
// but fail the checksum is corruption: a bit flip in the last record must
// not pass for a torn write.
func looksTorn(data []byte, off int64) bool {
	end := int64(len(data))
	if end-off < walRecHeaderSize {
		return true
	}
	n := int64(binary.LittleEndian.Uint32(data[off:]))
	if n > walMaxRecord {
		return false // no writer wrote that length
	}
	if n > end-off-walRecHeaderSize {
		return true
	}
	z := end
	for z > off && data[z-1] == 0 {
		z--
	}
	return z < end && (z <= off+walRecHeaderSize || z%sectorSize == 0)
}

// eventCountHint reads how many events a record says it holds without
// trusting it (its checksum failed): the count is the first value of the
// decompressed payload, which an S2 block starts with a literal of. It
// returns -1 when that cannot be read. It allocates nothing.
func eventCountHint(rec []byte) int64 {
	if len(rec) < walRecHeaderSize+2 {
		return -1
	}
	b := rec[walRecHeaderSize:]
	if _, k := binary.Uvarint(b); k <= 0 {
		return -1
	} else {
		b = b[k:]
	}
	if len(b) == 0 || b[0]&3 != 0 {
		return -1 // not a literal
	}
	x := int(b[0] >> 2)
	b = b[1:]
	if x >= 60 {
		k := x - 59 // bytes of length
		if len(b) < k {
			return -1
		}
		b = b[k:]
	}
	c, k := binary.Uvarint(b)
	if k <= 0 || c > walMaxBatchEvents {
		return -1
	}
	return int64(c)
}

// nextValidRecord returns the first offset at or after from where a
// well-formed record starts, -1 if none. Garbage whose length fields look
// plausible could make the search quadratic; past a budget of checksummed
// bytes it gives up (gaveUp), and callers take the safe side.
func nextValidRecord(data []byte, from int64) (next int64, gaveUp bool) {
	budget := 4*int64(len(data)) + 1<<20
	for off := from; off+walRecHeaderSize <= int64(len(data)); off++ {
		n := int64(binary.LittleEndian.Uint32(data[off:]))
		if n > walMaxRecord || n > int64(len(data))-off-walRecHeaderSize {
			continue
		}
		if budget -= n; budget < 0 {
			return -1, true
		}
		if _, _, err := decodeWALRecord(data[off:]); err == nil {
			return off, false
		}
	}
	return -1, false
}

// walReplay reads one log file (parseWAL) and, in tailCut, truncates a torn
// tail. It returns what it found; damage does not stop it.
func walReplay(fs vfs.FS, path string, tail tailMode, fn func([]event.Event) error) (*walParse, error) {
	data, err := vfs.ReadFile(fs, path)
	if err != nil {
		return nil, err
	}
	p, err := parseWAL(data, walRel(path), tail, fn)
	if err != nil {
		return nil, err
	}
	if p.tornAt >= 0 && tail == tailCut {
		if err := truncateFile(fs, path, p.tornAt, p.tornAt < walHeaderSize); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// tornBytes is the size of the torn tail parseWAL found (0 without one).
func (p *walParse) tornBytes() int64 {
	if p.tornAt < 0 {
		return 0
	}
	return p.size - p.tornAt
}

// walRel names a log file relative to its source's directory.
func walRel(path string) string { return filepath.Join("wal", filepath.Base(path)) }

func truncateFile(fs vfs.FS, path string, size int64, writeHeader bool) error {
	f, err := fs.OpenRW(path)
	if err != nil {
		return err
	}
	if writeHeader {
		size = 0
	}
	if err := f.Truncate(size); err != nil {
		f.Close()
		return err
	}
	if writeHeader {
		hdr := []byte{walMagic[0], walMagic[1], walMagic[2], walMagic[3], walVersion, 0, 0, 0}
		if _, err := f.Write(hdr); err != nil {
			f.Close()
			return err
		}
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// DecodeWAL reads a write-ahead log file's bytes as startup reads a sealed
// file, without cutting anything, and returns the events of every record
// that checks out: the entry point for fuzzing the log decoder. A damaged
// file also returns its first damage, a *WALCorruptError (or a
// *WALVersionError and no events).
func DecodeWAL(data []byte) ([]event.Event, error) {
	var out []event.Event
	p, err := parseWAL(data, "f.wal", tailError, func(evs []event.Event) error {
		out = append(out, evs...)
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(p.damage) > 0 {
		return out, p.damage[0]
	}
	return out, nil
}
