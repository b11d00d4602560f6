package index

import (
	"encoding/binary"
	"slices"

	"github.com/sediment/sediment/internal/varint"
)

// rowList is a term's rows collected by MergeText, held as varints of the
// zigzagged difference from the row before (the first from 0) until the
// field is written. Rows of one input arrive in the input's order, which a
// merge keeps, so most differences are small and positive: one or two
// bytes a row where a []uint32 takes four (issue 14: the merged token
// field of a compaction was 29 MB of a 3M-event ingest's heap).
//
// It is 32 bytes (a term of a large merge has one; there are hundreds of
// thousands): whether the rows came in order is found when they are
// decoded, not kept.
type rowList struct {
	enc  []byte
	last uint32 // the row added last
	n    uint32 // rows added
}

// add appends row r.
func (l *rowList) add(r uint32) {
	l.enc = binary.AppendUvarint(l.enc, varint.Zigzag(int64(r)-int64(l.last)))
	l.last = r
	l.n++
}

// each calls fn with the rows of l in the order they were added
// (appendSorted decodes them inline: it is on the flush's hot path).
func (l *rowList) each(fn func(r uint32)) {
	b := l.enc
	row := int64(0)
	for len(b) > 0 {
		d, k := binary.Uvarint(b)
		if k <= 0 {
			return // add wrote every varint whole
		}
		b = b[k:]
		row += varint.Unzigzag(d)
		fn(uint32(row))
	}
}

// appendSorted appends the rows to dst in ascending order.
func (l *rowList) appendSorted(dst []uint32) []uint32 {
	start := len(dst)
	b := l.enc
	row := int64(0)
	for len(b) > 0 {
		d, k := binary.Uvarint(b)
		if k <= 0 {
			break // add wrote every varint whole
		}
		b = b[k:]
		row += varint.Unzigzag(d)
		dst = append(dst, uint32(row))
	}
	if rows := dst[start:]; !slices.IsSorted(rows) {
		slices.Sort(rows)
	}
	return dst
}
