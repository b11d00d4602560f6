package engine

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"

	"github.com/sediment/sediment/internal/vfs"
)

// A remote stub stands for a segment whose local file was evicted because
// object storage lists a copy of it (see remoteseg.go): segments/<id>.remote
// replaces segments/<id>.seg, so that a restart knows the segment is the
// shard's, reads it through Options.Remote, and never takes it for lost.
// It repeats what the engine needs of the segment while the store cannot
// be reached (its time range and events, for the answers' warnings, and
// the log generations it covers, for replay):
//
//	+--------+---------+---------------------------------------------+-----------+
//	| "SDRS" | u8 = 1  | size uvarint, rows uvarint, min_time varint, | crc32c    |
//	|        | version | max_time varint, wal_last uvarint            | u32 LE    |
//	+--------+---------+---------------------------------------------+-----------+
//	                                     CRC-32C of every byte before it
//
// size is the segment file's bytes, min_time and max_time its events'
// times (µs), wal_last the last write-ahead log generation it covers.
//
// These constants are part of the on-disk format and must not change.
const (
	remoteStubMagic   = "SDRS"
	remoteStubVersion = 1
	remoteStubExt     = ".remote"
	// maxRemoteStub bounds a stub: five varints of at most 10 bytes, the
	// magic, the version and the CRC.
	maxRemoteStub = 4 + 1 + 5*binary.MaxVarintLen64 + 4
)

// remoteStub is the content of a segments/<id>.remote file.
type remoteStub struct {
	size             int64
	rows             int64
	minTime, maxTime int64
	walLast          uint64
}

func remoteStubName(id uint64) string { return fmt.Sprintf("%016x%s", id, remoteStubExt) }

// encode returns the stub's file bytes.
func (st remoteStub) encode() []byte {
	b := make([]byte, 0, maxRemoteStub)
	b = append(b, remoteStubMagic...)
	b = append(b, remoteStubVersion)
	b = binary.AppendUvarint(b, uint64(st.size))
	b = binary.AppendUvarint(b, uint64(st.rows))
	b = binary.AppendVarint(b, st.minTime)
	b = binary.AppendVarint(b, st.maxTime)
	b = binary.AppendUvarint(b, st.walLast)
	return binary.LittleEndian.AppendUint32(b, crc32.Checksum(b, castagnoli))
}

// ErrRemoteStubCorrupt is matched by every error decoding a stub returns.
var ErrRemoteStubCorrupt = errors.New("engine: damaged remote segment stub")

// decodeRemoteStub reads a stub's bytes; it never panics, whatever b is.
func decodeRemoteStub(b []byte) (remoteStub, error) {
	var st remoteStub
	if len(b) < 4+1+5+4 || len(b) > maxRemoteStub {
		return st, fmt.Errorf("%w: %d bytes", ErrRemoteStubCorrupt, len(b))
	}
	body, sum := b[:len(b)-4], binary.LittleEndian.Uint32(b[len(b)-4:])
	if crc32.Checksum(body, castagnoli) != sum {
		return st, fmt.Errorf("%w: crc mismatch", ErrRemoteStubCorrupt)
	}
	if string(body[:4]) != remoteStubMagic {
		return st, fmt.Errorf("%w: bad magic %q", ErrRemoteStubCorrupt, body[:4])
	}
	if body[4] != remoteStubVersion {
		return st, fmt.Errorf("%w: unknown version %d", ErrRemoteStubCorrupt, body[4])
	}
	rest := body[5:]
	var vals [5]uint64
	for i := range vals {
		var n int
		if i == 2 || i == 3 {
			var v int64
			v, n = binary.Varint(rest)
			vals[i] = uint64(v)
		} else {
			vals[i], n = binary.Uvarint(rest)
		}
		if n <= 0 {
			return st, fmt.Errorf("%w: field %d does not decode", ErrRemoteStubCorrupt, i)
		}
		rest = rest[n:]
	}
	if len(rest) != 0 {
		return st, fmt.Errorf("%w: %d bytes after the fields", ErrRemoteStubCorrupt, len(rest))
	}
	st = remoteStub{size: int64(vals[0]), rows: int64(vals[1]), minTime: int64(vals[2]), maxTime: int64(vals[3]), walLast: vals[4]}
	if st.size < 0 || st.rows < 0 || st.minTime > st.maxTime {
		return remoteStub{}, fmt.Errorf("%w: size %d, rows %d, times %d..%d", ErrRemoteStubCorrupt, st.size, st.rows, st.minTime, st.maxTime)
	}
	if !bytes.Equal(st.encode(), b) { // a varint with redundant bytes: not ours
		return remoteStub{}, fmt.Errorf("%w: not in canonical form", ErrRemoteStubCorrupt)
	}
	return st, nil
}

// readRemoteStub reads segments/<id>.remote.
func readRemoteStub(fs vfs.FS, path string) (remoteStub, error) {
	f, err := fs.Open(path)
	if err != nil {
		return remoteStub{}, err
	}
	defer f.Close()
	size, err := f.Size()
	if err != nil {
		return remoteStub{}, err
	}
	if size > maxRemoteStub {
		return remoteStub{}, fmt.Errorf("%w: %d bytes", ErrRemoteStubCorrupt, size)
	}
	b := make([]byte, size)
	if n, err := f.ReadAt(b, 0); n != len(b) {
		return remoteStub{}, fmt.Errorf("read %s: %w", path, err)
	}
	return decodeRemoteStub(b)
}

// RemoteStub is what a stub file segments/<id>.remote says of an evicted
// segment (docs/format/datadir.md §5): its file's bytes, its events,
// their time range (µs) and the last log generation it covers.
type RemoteStub struct {
	Size, Rows       int64
	MinTime, MaxTime int64
	WALLast          uint64
}

// DecodeRemoteStub decodes a stub file's bytes (for tools and fuzzing);
// errors match ErrRemoteStubCorrupt.
func DecodeRemoteStub(b []byte) (RemoteStub, error) {
	st, err := decodeRemoteStub(b)
	return RemoteStub{Size: st.size, Rows: st.rows, MinTime: st.minTime, MaxTime: st.maxTime, WALLast: st.walLast}, err
}

// Encode returns the stub file's bytes.
func (st RemoteStub) Encode() []byte {
	return remoteStub{size: st.Size, rows: st.Rows, minTime: st.MinTime, maxTime: st.MaxTime, walLast: st.WALLast}.encode()
}
