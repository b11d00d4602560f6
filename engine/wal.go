package engine

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/klauspost/compress/s2"

	"github.com/sediment/sediment/event"
	"github.com/sediment/sediment/internal/vfs"
)

// Write-ahead log files, one per head generation, named <seq>.wal with seq
// a 16-digit hex number that only grows.
//
//	+-----------------------------------------------------------+
//	| header: magic "SDWL" | version u8 | reserved (3)          |  8 B
//	+-----------------------------------------------------------+
//	| record: length u32 LE | crc32c u32 LE | type u8 | payload |  repeated
//	+-----------------------------------------------------------+
//
// length counts the payload bytes; the CRC covers the type byte and the
// payload. Record type 1 is a batch of events: the payload is an S2 block
// of (uvarint count, then each event in the event package's binary codec).
//
// These constants are part of the on-disk format and must not change.
const (
	walMagic          = "SDWL"
	walVersion        = 1
	walHeaderSize     = 8
	walRecHeaderSize  = 9
	walRecEvents      = 1
	walMaxRecord      = 64 << 20  // compressed payload bound
	walMaxDecoded     = 256 << 20 // decompressed payload bound
	walMaxBatchEvents = 1 << 22
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// ErrWALCorrupt is matched by errors reporting a damaged write-ahead log.
var ErrWALCorrupt = errors.New("engine: write-ahead log corrupt")

// WALCorruptError locates damage in a WAL file that replay must not cut
// silently: a bad header, a damaged record followed by valid ones (cutting
// there would lose acknowledged data), or a torn tail in a sealed file
// (which was synced whole, so the tail is damage too). Startup refuses to
// go on unless Options.RepairWAL is set; a read-only open reports it as a
// warning.
type WALCorruptError struct {
	Path   string
	Offset int64
	Err    error
}

func (e *WALCorruptError) Error() string {
	return fmt.Sprintf("wal %s: record at offset %d: %v", e.Path, e.Offset, e.Err)
}
func (e *WALCorruptError) Unwrap() error        { return e.Err }
func (e *WALCorruptError) Is(target error) bool { return target == ErrWALCorrupt }

func walName(seq uint64) string { return fmt.Sprintf("%016x.wal", seq) }

func parseSeqName(name, ext string) (uint64, bool) {
	if !strings.HasSuffix(name, ext) || len(name) != 16+len(ext) {
		return 0, false
	}
	seq, err := strconv.ParseUint(name[:16], 16, 64)
	return seq, err == nil
}

// walBufs recycles the buffers records are encoded in; a batch of 500
// edge events is ~600 KB raw, and growing it from empty cost more than the
// encoding itself.
var walBufs = sync.Pool{New: func() any { return new(walBuf) }}

type walBuf struct{ rec, raw []byte }

// encodeWALRecord appends an events record to dst. raw is scratch for the
// uncompressed payload; both buffers are returned for reuse.
func encodeWALRecord(dst, raw []byte, events []event.Event) ([]byte, []byte) {
	if cap(raw) == 0 {
		raw = make([]byte, 0, 1024*len(events)+16)
	}
	raw = binary.AppendUvarint(raw[:0], uint64(len(events)))
	for i := range events {
		raw = event.AppendEvent(raw, events[i])
	}
	start := len(dst)
	payloadStart := start + walRecHeaderSize
	maxLen := s2.MaxEncodedLen(len(raw))
	dst = slices.Grow(dst, walRecHeaderSize+maxLen)[:payloadStart+maxLen]
	// s2.Encode writes into its dst when len(dst) suffices.
	n := len(s2.Encode(dst[payloadStart:], raw))
	dst = dst[:payloadStart+n]
	binary.LittleEndian.PutUint32(dst[start:], uint32(n))
	dst[start+8] = walRecEvents
	binary.LittleEndian.PutUint32(dst[start+4:], crc32.Checksum(dst[start+8:], castagnoli))
	return dst, raw
}

// walWriter appends records to one WAL file.
type walWriter struct {
	f    vfs.File
	path string
	seq  uint64
	size int64
}

func createWAL(fs vfs.FS, dir string, seq uint64) (*walWriter, error) {
	path := filepath.Join(dir, walName(seq))
	f, err := fs.Create(path)
	if err != nil {
		return nil, err
	}
	hdr := []byte{walMagic[0], walMagic[1], walMagic[2], walMagic[3], walVersion, 0, 0, 0}
	if _, err := f.Write(hdr); err != nil {
		f.Close()
		return nil, err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return nil, err
	}
	if err := fs.SyncDir(dir); err != nil {
		f.Close()
		return nil, err
	}
	return &walWriter{f: f, path: path, seq: seq, size: walHeaderSize}, nil
}

func (w *walWriter) write(p []byte) error {
	n, err := w.f.Write(p)
	w.size += int64(n)
	return err
}

func (w *walWriter) close() error { return w.f.Close() }

// walReplay reads the records of one WAL file, calling fn with each batch.
// A damaged record with nothing valid after it is a torn tail: the file is
// cut there (if it is the last file and cut is set) and the number of bytes
// dropped returned. A damaged record followed by valid ones is corruption.
func walReplay(fs vfs.FS, path string, tail tailMode, fn func([]event.Event) error) (dropped int64, err error) {
	data, err := vfs.ReadFile(fs, path)
	if err != nil {
		return 0, err
	}
	if len(data) < walHeaderSize {
		// A crash between create and the header sync leaves a short file.
		switch tail {
		case tailCut:
			return int64(len(data)), truncateFile(fs, path, 0, true)
		case tailKeep:
			return int64(len(data)), nil
		}
		return 0, &WALCorruptError{Path: path, Offset: 0, Err: errors.New("short header")}
	}
	if string(data[:4]) != walMagic || data[4] != walVersion {
		return 0, &WALCorruptError{Path: path, Offset: 0, Err: fmt.Errorf("bad header %q v%d", data[:4], data[4])}
	}
	off := int64(walHeaderSize)
	for off < int64(len(data)) {
		events, n, rerr := decodeWALRecord(data[off:])
		if rerr != nil {
			if validRecordAfter(data, off+1) {
				return 0, &WALCorruptError{Path: path, Offset: off, Err: rerr}
			}
			dropped = int64(len(data)) - off
			switch tail {
			case tailCut:
				return dropped, truncateFile(fs, path, off, false)
			case tailKeep:
				return dropped, nil
			}
			return dropped, &WALCorruptError{Path: path, Offset: off, Err: fmt.Errorf("torn record in a sealed file: %w", rerr)}
		}
		if err := fn(events); err != nil {
			return 0, err
		}
		off += int64(n)
	}
	return 0, nil
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

// validRecordAfter reports whether a well-formed record starts at any
// offset at or after from. Used only on the error path. Garbage whose
// length fields look plausible could make the search quadratic; past a
// budget of checksummed bytes it answers true, the safe side (report
// damage, cut nothing).
func validRecordAfter(data []byte, from int64) bool {
	budget := 4*int64(len(data)) + 1<<20
	for off := from; off+walRecHeaderSize <= int64(len(data)); off++ {
		n := int64(binary.LittleEndian.Uint32(data[off:]))
		if n > walMaxRecord || n > int64(len(data))-off-walRecHeaderSize {
			continue
		}
		if budget -= n; budget < 0 {
			return true
		}
		if _, _, err := decodeWALRecord(data[off:]); err == nil {
			return true
		}
	}
	return false
}

func truncateFile(fs vfs.FS, path string, size int64, writeHeader bool) error {
	f, err := fs.OpenRW(path)
	if err != nil {
		return err
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

// decodeWALRecord decodes the record at the front of b and returns its
// events and total length. Strings of the events alias a fresh buffer.
func decodeWALRecord(b []byte) ([]event.Event, int, error) {
	if len(b) < walRecHeaderSize {
		return nil, 0, io.ErrUnexpectedEOF
	}
	n := binary.LittleEndian.Uint32(b)
	if n > walMaxRecord {
		return nil, 0, fmt.Errorf("record length %d exceeds %d", n, walMaxRecord)
	}
	if int(n) > len(b)-walRecHeaderSize {
		return nil, 0, io.ErrUnexpectedEOF
	}
	want := binary.LittleEndian.Uint32(b[4:])
	body := b[8 : walRecHeaderSize+int(n)]
	if crc32.Checksum(body, castagnoli) != want {
		return nil, 0, errors.New("crc mismatch")
	}
	if body[0] != walRecEvents {
		return nil, 0, fmt.Errorf("unknown record type %d", body[0])
	}
	payload := body[1:]
	dl, err := s2.DecodedLen(payload)
	if err != nil || dl > walMaxDecoded {
		return nil, 0, fmt.Errorf("bad compressed payload (%d bytes decoded): %v", dl, err)
	}
	raw, err := s2.Decode(make([]byte, dl), payload)
	if err != nil {
		return nil, 0, err
	}
	count, k := binary.Uvarint(raw)
	if k <= 0 || count > walMaxBatchEvents || count > uint64(len(raw)) {
		return nil, 0, errors.New("bad event count")
	}
	raw = raw[k:]
	events := make([]event.Event, 0, count)
	for i := uint64(0); i < count; i++ {
		e, rest, err := event.DecodeEvent(raw)
		if err != nil {
			return nil, 0, err
		}
		events = append(events, e)
		raw = rest
	}
	if len(raw) != 0 {
		return nil, 0, errors.New("trailing bytes in record")
	}
	return events, walRecHeaderSize + int(n), nil
}

// DecodeWAL reads a write-ahead log file's bytes as startup would, without
// cutting anything, and returns the events it holds: the entry point for
// fuzzing the log decoder. A damaged file returns a *WALCorruptError.
func DecodeWAL(data []byte) ([]event.Event, error) {
	fs := vfs.NewMemFS()
	fs.MkdirAll("/w")
	f, err := fs.Create("/w/f.wal")
	if err != nil {
		return nil, err
	}
	f.Write(data)
	f.Close()
	var out []event.Event
	_, err = walReplay(fs, "/w/f.wal", tailError, func(evs []event.Event) error {
		out = append(out, evs...)
		return nil
	})
	return out, err
}

// EncodeWALRecord returns one WAL record holding events, with the file
// header when first is set: for building fuzz seeds and tests.
func EncodeWALRecord(events []event.Event, first bool) []byte {
	var out []byte
	if first {
		out = []byte{walMagic[0], walMagic[1], walMagic[2], walMagic[3], walVersion, 0, 0, 0}
	}
	out, _ = encodeWALRecord(out, nil, events)
	return out
}
