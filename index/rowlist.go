package index

import (
	"encoding/binary"
	"slices"
)

// rowList is a term's rows collected by MergeText, held as varints of the
// zigzagged difference from the row before (the first from 0) until the
// field is written. Rows of one input arrive in the input's order, which a
// merge keeps, so most differences are small and positive: one or two
// bytes a row where a []uint32 takes four (issue 14: the merged token
// field of a compaction was 29 MB of a 3M-event ingest's heap).
type rowList struct {
	enc  []byte
	last uint32 // the row added last
	n    uint32 // rows added
	// unsorted says some row was added after a larger one.
	unsorted bool
}

// add appends row r.
func (l *rowList) add(r uint32) {
	if l.n > 0 && r < l.last {
		l.unsorted = true
	}
	l.enc = binary.AppendUvarint(l.enc, zigzag(int64(r)-int64(l.last)))
	l.last = r
	l.n++
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
		row += unzigzag(d)
		dst = append(dst, uint32(row))
	}
	if l.unsorted {
		slices.Sort(dst[start:])
	}
	return dst
}
