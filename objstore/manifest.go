package objstore

// A manifest lists the live segments of one source in the object store
// (docs/format/manifest.md has the layout, which this file must match):
//
//	+--------+---------+------------------------------------------+-----------+
//	| magic  | version | body                                     | crc32c    |
//	| "SDMF" | 1 byte  | uvarints, varints and strings, see below | 4 bytes LE|
//	+--------+---------+------------------------------------------+-----------+
//	                                          CRC-32C of every byte before it
//
//	body (version 1):
//	  source       string          the source id (must match the key)
//	  generation   uvarint         1 for the first manifest, +1 per update
//	  updated_at   varint          µs since the Unix epoch, writer's clock
//	  updated_by   string          node id of the writer of this version
//	  live         uvarint count, then per segment, sorted by name:
//	    name       string          "<node>/<seq:%016x>.seg" (SegmentName)
//	    size       uvarint         bytes
//	    crc32c     4 bytes LE      of the segment object
//	    sha256     32 bytes        of the segment object
//	    etag       string          the object's ETag when uploaded
//	    min_time   varint          µs, the segment's oldest event
//	    max_time   varint          µs, its newest
//	    rows       uvarint         events
//	    created_at varint          µs, when it was listed
//	  removed      uvarint count, then per segment, sorted by name:
//	    name       string          a segment delisted (compaction, retention)
//	    removed_at varint          µs, when; its object is deleted a grace
//	                               period later (CollectGarbage)
//
//	string: uvarint length, then that many bytes.

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"slices"
	"strings"
)

// These constants are part of the manifest format.
const (
	manifestMagic = "SDMF"
	// ManifestV1 is the first format; ManifestLatest is what Marshal
	// writes and ManifestMinSupported the oldest DecodeManifest reads.
	ManifestV1           = 1
	ManifestLatest       = ManifestV1
	ManifestMinSupported = ManifestV1

	// maxManifestEntries bounds live plus removed entries: a source with
	// a million segments is far past what compaction lets happen, and the
	// bound keeps a damaged count from driving an allocation.
	maxManifestEntries = 1 << 20
	// maxNameLen bounds names, ETags and ids in a manifest (a segment name
	// is at most 128+1+16+4 bytes).
	maxNameLen = 256
	// minLiveBytes and minRemovedBytes are the smallest encodings of a
	// live entry (one-byte strings and numbers, the 36 bytes of sums) and
	// of a removed one: a count is bounded by the bytes left to hold it.
	minLiveBytes    = 2 + 1 + 4 + 32 + 1 + 1 + 1 + 1 + 1
	minRemovedBytes = 2 + 1
)

// Manifest is one version of a source's manifest.
type Manifest struct {
	Source     string
	Generation uint64
	UpdatedAt  int64 // µs
	UpdatedBy  string
	// Segments are the live segments, sorted by Name; Removed the
	// delisted ones whose objects are not yet deleted, sorted by Name.
	Segments []SegmentEntry
	Removed  []RemovedEntry
}

// SegmentEntry is one live segment.
type SegmentEntry struct {
	Name string // SegmentName(node, seq)
	Size int64
	// Sum holds the object's CRC-32C and SHA-256 (both always set).
	Sum  Checksum
	ETag string
	// MinTime and MaxTime are the event times (µs) the segment covers.
	MinTime, MaxTime int64
	Rows             int64
	Created          int64 // µs, when it was listed
}

// Node is the id of the node that wrote the segment.
func (e SegmentEntry) Node() string {
	node, _, _ := ParseSegmentName(e.Name)
	return node
}

// Seq is the segment's sequence number on its node.
func (e SegmentEntry) Seq() uint64 {
	_, seq, _ := ParseSegmentName(e.Name)
	return seq
}

// RemovedEntry is a segment delisted at RemovedAt (µs).
type RemovedEntry struct {
	Name      string
	RemovedAt int64
}

// ManifestVersionError reports a manifest in a format version this build
// does not read: a newer Sediment wrote it. It is not corruption, and the
// manifest must not be rewritten by this build.
type ManifestVersionError struct {
	Source  string
	Version uint8
}

func (e *ManifestVersionError) Error() string {
	return fmt.Sprintf("manifest of source %s: format version %d is not supported by this build (it reads %d..%d)",
		e.Source, e.Version, ManifestMinSupported, ManifestLatest)
}

// Find returns the live entry named name, or nil.
func (m *Manifest) Find(name string) *SegmentEntry {
	i, ok := slices.BinarySearchFunc(m.Segments, name, func(e SegmentEntry, n string) int { return strings.Compare(e.Name, n) })
	if !ok {
		return nil
	}
	return &m.Segments[i]
}

// Add lists e. It is idempotent: adding an entry already listed with the
// same checksum changes nothing and returns false. A different segment
// under the same name, or one removed already, is an error.
func (m *Manifest) Add(e SegmentEntry) (bool, error) {
	if _, _, ok := ParseSegmentName(e.Name); !ok {
		return false, fmt.Errorf("manifest: bad segment name %q", e.Name)
	}
	if !e.Sum.HasCRC || !e.Sum.HasSHA || e.Size < 0 || e.Rows < 0 || e.MinTime > e.MaxTime || len(e.ETag) > maxNameLen {
		return false, fmt.Errorf("manifest: incomplete entry for %s", e.Name)
	}
	if cur := m.Find(e.Name); cur != nil {
		if cur.Sum.Matches(e.Sum) && cur.Size == e.Size {
			return false, nil
		}
		return false, fmt.Errorf("manifest: segment %s is listed already with %s, not %s", e.Name, cur.Sum, e.Sum)
	}
	if slices.ContainsFunc(m.Removed, func(r RemovedEntry) bool { return r.Name == e.Name }) {
		return false, fmt.Errorf("manifest: segment %s was removed already", e.Name)
	}
	if len(m.Segments)+len(m.Removed) >= maxManifestEntries {
		return false, fmt.Errorf("manifest: %d entries already", maxManifestEntries)
	}
	i, _ := slices.BinarySearchFunc(m.Segments, e.Name, func(x SegmentEntry, n string) int { return strings.Compare(x.Name, n) })
	m.Segments = slices.Insert(m.Segments, i, e)
	return true, nil
}

// Remove delists the live segment name at time at (µs), keeping it in
// Removed until its object is deleted. It returns false when name is not
// live (removed already, or never listed): removing is idempotent.
func (m *Manifest) Remove(name string, at int64) bool {
	i := slices.IndexFunc(m.Segments, func(e SegmentEntry) bool { return e.Name == name })
	if i < 0 {
		return false
	}
	m.Segments = slices.Delete(m.Segments, i, i+1)
	j, _ := slices.BinarySearchFunc(m.Removed, name, func(r RemovedEntry, n string) int { return strings.Compare(r.Name, n) })
	m.Removed = slices.Insert(m.Removed, j, RemovedEntry{Name: name, RemovedAt: at})
	return true
}

// Forget drops name from Removed (its object is deleted); false if absent.
func (m *Manifest) Forget(name string) bool {
	i := slices.IndexFunc(m.Removed, func(r RemovedEntry) bool { return r.Name == name })
	if i < 0 {
		return false
	}
	m.Removed = slices.Delete(m.Removed, i, i+1)
	return true
}

// Marshal encodes m in the latest format.
func (m *Manifest) Marshal() []byte {
	b := make([]byte, 0, 64+len(m.Segments)*96+len(m.Removed)*48)
	b = append(b, manifestMagic...)
	b = append(b, ManifestLatest)
	b = appendString(b, m.Source)
	b = binary.AppendUvarint(b, m.Generation)
	b = binary.AppendVarint(b, m.UpdatedAt)
	b = appendString(b, m.UpdatedBy)
	b = binary.AppendUvarint(b, uint64(len(m.Segments)))
	for _, e := range m.Segments {
		b = appendString(b, e.Name)
		b = binary.AppendUvarint(b, uint64(e.Size))
		b = binary.LittleEndian.AppendUint32(b, e.Sum.CRC32C)
		b = append(b, e.Sum.SHA256[:]...)
		b = appendString(b, e.ETag)
		b = binary.AppendVarint(b, e.MinTime)
		b = binary.AppendVarint(b, e.MaxTime)
		b = binary.AppendUvarint(b, uint64(e.Rows))
		b = binary.AppendVarint(b, e.Created)
	}
	b = binary.AppendUvarint(b, uint64(len(m.Removed)))
	for _, r := range m.Removed {
		b = appendString(b, r.Name)
		b = binary.AppendVarint(b, r.RemovedAt)
	}
	return binary.LittleEndian.AppendUint32(b, crc32.Checksum(b, castagnoli))
}

func appendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

// DecodeManifest decodes a manifest object. Damage is an error matching
// ErrCorrupt (and ErrChecksum when the checksum fails); a format version
// this build does not read is a *ManifestVersionError. It never panics,
// and allocates in proportion to len(b).
func DecodeManifest(b []byte) (*Manifest, error) {
	if len(b) < len(manifestMagic)+1+4 {
		return nil, corruptManifest("%d bytes is too short", len(b))
	}
	if !bytes.Equal(b[:4], []byte(manifestMagic)) {
		return nil, corruptManifest("bad magic %q", b[:4])
	}
	body, tail := b[:len(b)-4], b[len(b)-4:]
	if got, want := crc32.Checksum(body, castagnoli), binary.LittleEndian.Uint32(tail); got != want {
		if v := b[4]; v > ManifestLatest {
			// A version this build does not know may checksum differently.
			return nil, &ManifestVersionError{Version: v}
		}
		return nil, fmt.Errorf("%w: %w: manifest crc32c:%08x, computed crc32c:%08x", ErrCorrupt, ErrChecksum, want, got)
	}
	if v := b[4]; v < ManifestMinSupported || v > ManifestLatest {
		return nil, &ManifestVersionError{Version: v}
	}
	d := decbuf{b: body[5:]}
	m := &Manifest{}
	m.Source = d.str(maxIDLen)
	m.Generation = d.uvarint()
	m.UpdatedAt = d.varint()
	m.UpdatedBy = d.str(maxIDLen)
	n := d.count(minLiveBytes)
	if n > 0 {
		m.Segments = make([]SegmentEntry, 0, n)
	}
	for i := 0; i < n && d.err == nil; i++ {
		var e SegmentEntry
		e.Name = d.str(maxNameLen)
		e.Size = d.int63()
		e.Sum.CRC32C = d.u32()
		copy(e.Sum.SHA256[:], d.bytes(32))
		e.Sum.HasCRC, e.Sum.HasSHA = true, true
		e.ETag = d.str(maxNameLen)
		e.MinTime = d.varint()
		e.MaxTime = d.varint()
		e.Rows = d.int63()
		e.Created = d.varint()
		m.Segments = append(m.Segments, e)
	}
	n = d.count(minRemovedBytes)
	if n > 0 {
		m.Removed = make([]RemovedEntry, 0, n)
	}
	for i := 0; i < n && d.err == nil; i++ {
		m.Removed = append(m.Removed, RemovedEntry{Name: d.str(maxNameLen), RemovedAt: d.varint()})
	}
	if d.err != nil {
		return nil, corruptManifest("%v", d.err)
	}
	if len(d.b) != 0 {
		return nil, corruptManifest("%d bytes after the last entry", len(d.b))
	}
	if err := m.validate(); err != nil {
		return nil, corruptManifest("%v", err)
	}
	return m, nil
}

// validate checks what the checksum cannot: the writer's invariants.
func (m *Manifest) validate() error {
	if !ValidID(m.Source) {
		return fmt.Errorf("bad source id %q", m.Source)
	}
	if len(m.Segments)+len(m.Removed) > maxManifestEntries {
		return fmt.Errorf("%d entries, more than %d", len(m.Segments)+len(m.Removed), maxManifestEntries)
	}
	for i, e := range m.Segments {
		if _, _, ok := ParseSegmentName(e.Name); !ok {
			return fmt.Errorf("bad segment name %q", e.Name)
		}
		if i > 0 && m.Segments[i-1].Name >= e.Name {
			return fmt.Errorf("segments not sorted at %q", e.Name)
		}
		if e.MinTime > e.MaxTime {
			return fmt.Errorf("segment %s: time range %d..%d", e.Name, e.MinTime, e.MaxTime)
		}
	}
	for i, r := range m.Removed {
		if _, _, ok := ParseSegmentName(r.Name); !ok {
			return fmt.Errorf("bad removed segment name %q", r.Name)
		}
		if i > 0 && m.Removed[i-1].Name >= r.Name {
			return fmt.Errorf("removed segments not sorted at %q", r.Name)
		}
		if m.Find(r.Name) != nil {
			return fmt.Errorf("segment %s both live and removed", r.Name)
		}
	}
	return nil
}

func corruptManifest(format string, args ...any) error {
	return fmt.Errorf("%w: manifest: %s", ErrCorrupt, fmt.Sprintf(format, args...))
}

// decbuf decodes with a sticky error: once a read fails every later one
// returns zero, and err says what failed first.
type decbuf struct {
	b   []byte
	err error
}

func (d *decbuf) fail(what string) {
	if d.err == nil {
		d.err = errors.New(what)
	}
	d.b = nil
}

func (d *decbuf) uvarint() uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.fail("truncated or overlong uvarint")
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decbuf) varint() int64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Varint(d.b)
	if n <= 0 {
		d.fail("truncated or overlong varint")
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decbuf) int63() int64 {
	v := d.uvarint()
	if v > 1<<62 {
		d.fail("value out of range")
		return 0
	}
	return int64(v)
}

// count reads an entry count, bounded by maxManifestEntries and by what
// the remaining bytes can hold.
func (d *decbuf) count(minBytes int) int {
	v := d.uvarint()
	if v > maxManifestEntries || v > uint64(len(d.b)/minBytes) {
		d.fail(fmt.Sprintf("entry count %d too big for %d bytes (at most %d)", v, len(d.b), maxManifestEntries))
		return 0
	}
	return int(v)
}

func (d *decbuf) bytes(n int) []byte {
	if d.err != nil {
		return nil
	}
	if len(d.b) < n {
		d.fail("truncated")
		return nil
	}
	out := d.b[:n]
	d.b = d.b[n:]
	return out
}

func (d *decbuf) u32() uint32 {
	b := d.bytes(4)
	if b == nil {
		return 0
	}
	return binary.LittleEndian.Uint32(b)
}

func (d *decbuf) str(max int) string {
	n := d.uvarint()
	if d.err != nil {
		return ""
	}
	if n > uint64(max) {
		d.fail(fmt.Sprintf("string of %d bytes, at most %d", n, max))
		return ""
	}
	return string(d.bytes(int(n)))
}
