package engine

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/sediment/sediment/segment"
)

// Segment sections written by the engine.
const (
	sectionIndex = "index"
	sectionMeta  = "meta"
)

// Versions of the "meta" section (docs/format/segment.md §7). Version 1
// is written for segments in time order only, version 2 for segments whose
// rows are ordered by a sort key (it adds the key and each block's key);
// both are read.
const (
	metaV1 = 1
	metaV2 = 2
)

// maxMetaKeyLen bounds a block's key value in the meta section; a block
// of one longer key value is recorded as mixed.
const maxMetaKeyLen = 1024

// segMeta is the engine's record in each segment: which WAL generations it
// covers, which segments it replaces (for compaction crash recovery), and
// how its rows are ordered.
type segMeta struct {
	walLast  uint64
	created  int64
	replaces []uint64
	// sortKey is the field the segment's rows are ordered by before time
	// ("" for time order only); blocks[b] says what block b holds (one
	// entry per block when sortKey is set, none otherwise).
	sortKey string
	blocks  []blockKey
}

// blockKey says whether every row of a block has one value of the sort
// key (single, with that value) or not (a mixed block: rows of several
// values, or without one, in time order).
type blockKey struct {
	single bool
	key    string
}

// Kinds of a block in meta version 2.
const (
	blockMixed  = 0
	blockSingle = 1
)

func (m segMeta) encode() []byte {
	v := byte(metaV1)
	if m.sortKey != "" {
		v = metaV2
	}
	b := []byte{v}
	b = binary.AppendUvarint(b, m.walLast)
	b = binary.AppendVarint(b, m.created)
	b = binary.AppendUvarint(b, uint64(len(m.replaces)))
	for _, id := range m.replaces {
		b = binary.AppendUvarint(b, id)
	}
	if v == metaV1 {
		return b
	}
	b = appendMetaStr(b, m.sortKey)
	b = binary.AppendUvarint(b, uint64(len(m.blocks)))
	for _, bk := range m.blocks {
		if !bk.single || len(bk.key) > maxMetaKeyLen {
			b = append(b, blockMixed)
			continue
		}
		b = append(b, blockSingle)
		b = appendMetaStr(b, bk.key)
	}
	return b
}

func appendMetaStr(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

var errBadMeta = errors.New("bad segment meta")

// metaReader decodes the meta section; the first error sticks.
type metaReader struct {
	b   []byte
	err error
}

func (r *metaReader) uvarint() uint64 {
	if r.err != nil {
		return 0
	}
	x, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.err = errBadMeta
		return 0
	}
	r.b = r.b[n:]
	return x
}

func (r *metaReader) varint() int64 {
	if r.err != nil {
		return 0
	}
	x, n := binary.Varint(r.b)
	if n <= 0 {
		r.err = errBadMeta
		return 0
	}
	r.b = r.b[n:]
	return x
}

func (r *metaReader) byte() byte {
	if r.err != nil || len(r.b) == 0 {
		r.err = errBadMeta
		return 0
	}
	c := r.b[0]
	r.b = r.b[1:]
	return c
}

// str reads a length-prefixed string of at most limit bytes.
func (r *metaReader) str(limit int) string {
	n := r.uvarint()
	if r.err != nil {
		return ""
	}
	if n > uint64(limit) || n > uint64(len(r.b)) {
		r.err = errBadMeta
		return ""
	}
	s := string(r.b[:n])
	r.b = r.b[n:]
	return s
}

// count reads a count of items that take at least one byte each.
func (r *metaReader) count() int {
	n := r.uvarint()
	if r.err == nil && n > uint64(len(r.b)) {
		r.err = errBadMeta
	}
	return int(n)
}

// decodeSegMeta decodes a meta section of version 1 or 2. Bytes after
// what the version defines are ignored.
func decodeSegMeta(b []byte) (segMeta, error) {
	var m segMeta
	if len(b) < 1 || (b[0] != metaV1 && b[0] != metaV2) {
		return m, errors.New("bad segment meta version")
	}
	r := &metaReader{b: b[1:]}
	m.walLast = r.uvarint()
	m.created = r.varint()
	for n := r.count(); r.err == nil && len(m.replaces) < n; {
		m.replaces = append(m.replaces, r.uvarint())
	}
	if b[0] == metaV2 {
		m.sortKey = r.str(segment.MaxPathLen)
		if r.err == nil && m.sortKey == "" {
			r.err = fmt.Errorf("%w: version 2 without a sort key", errBadMeta)
		}
		n := r.count()
		if r.err == nil {
			m.blocks = make([]blockKey, 0, n)
		}
		for r.err == nil && len(m.blocks) < n {
			switch kind := r.byte(); kind {
			case blockMixed:
				m.blocks = append(m.blocks, blockKey{})
			case blockSingle:
				m.blocks = append(m.blocks, blockKey{single: true, key: r.str(maxMetaKeyLen)})
			default:
				if r.err == nil {
					r.err = fmt.Errorf("%w: block kind %d", errBadMeta, kind)
				}
			}
		}
	}
	if r.err != nil {
		return segMeta{}, r.err
	}
	return m, nil
}
