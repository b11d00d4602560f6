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

func walName(seq uint64) string { return fmt.Sprintf("%016x.wal", seq) }

func parseSeqName(name, ext string) (uint64, bool) {
	if !strings.HasSuffix(name, ext) || len(name) != 16+len(ext) {
		return 0, false
	}
	seq, err := strconv.ParseUint(name[:16], 16, 64)
	return seq, err == nil
}

// encodeWALRecord appends an events record of events to dst. raw is
// scratch for the uncompressed payload; both buffers are returned for
// reuse.
func encodeWALRecord(dst, raw []byte, events []event.Event) ([]byte, []byte) {
	raw = binary.AppendUvarint(raw[:0], uint64(len(events)))
	for i := range events {
		raw = event.AppendEvent(raw, events[i])
	}
	return appendWALRecord(dst, raw), raw
}

// appendWALRecord appends an events record to dst whose uncompressed
// payload is payload (the event count, then the events).
func appendWALRecord(dst, payload []byte) []byte {
	start := len(dst)
	payloadStart := start + walRecHeaderSize
	maxLen := s2.MaxEncodedLen(len(payload))
	dst = slices.Grow(dst, walRecHeaderSize+maxLen)[:payloadStart+maxLen]
	// s2.Encode writes into its dst when len(dst) suffices.
	n := len(s2.Encode(dst[payloadStart:], payload))
	dst = dst[:payloadStart+n]
	binary.LittleEndian.PutUint32(dst[start:], uint32(n))
	dst[start+8] = walRecEvents
	binary.LittleEndian.PutUint32(dst[start+4:], crc32.Checksum(dst[start+8:], castagnoli))
	return dst
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
	events, err := decodeWALBody(b[8:walRecHeaderSize+int(n)], binary.LittleEndian.Uint32(b[4:]))
	if err != nil {
		return nil, 0, err
	}
	return events, walRecHeaderSize + int(n), nil
}

// decodeWALBody checks a record's type byte and payload (body) against
// the checksum want and decodes its events.
func decodeWALBody(body []byte, want uint32) ([]event.Event, error) {
	if crc32.Checksum(body, castagnoli) != want {
		return nil, errors.New("crc mismatch")
	}
	if body[0] != walRecEvents {
		return nil, fmt.Errorf("unknown record type %d", body[0])
	}
	payload := body[1:]
	dl, err := s2.DecodedLen(payload)
	if err != nil || dl > walMaxDecoded {
		return nil, fmt.Errorf("bad compressed payload (%d bytes decoded): %v", dl, err)
	}
	raw, err := s2.Decode(make([]byte, dl), payload)
	if err != nil {
		return nil, err
	}
	count, k := binary.Uvarint(raw)
	if k <= 0 || count > walMaxBatchEvents || count > uint64(len(raw)) {
		return nil, errors.New("bad event count")
	}
	raw = raw[k:]
	events := make([]event.Event, 0, count)
	for i := uint64(0); i < count; i++ {
		e, rest, err := event.DecodeEvent(raw)
		if err != nil {
			return nil, err
		}
		events = append(events, e)
		raw = rest
	}
	if len(raw) != 0 {
		return nil, errors.New("trailing bytes in record")
	}
	return events, nil
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
