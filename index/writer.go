package index

import (
	"encoding/binary"
	"fmt"
	"slices"

	"github.com/RoaringBitmap/roaring/v2"

	"github.com/sediment/sediment/internal/varint"
)

// unitBuf collects serialized bitmaps into posting units.
type unitBuf struct {
	w     UnitWriter
	buf   []byte
	units [][2]int64
	err   error
	enc   roaringEncoder
}

// add appends a bitmap and returns (unit index, offset, length).
func (u *unitBuf) add(bm *roaring.Bitmap) (int, int, int) {
	bm.RunOptimize()
	start := len(u.buf)
	// Serialised straight into the unit (ToBytes would give each bitmap
	// a buffer of its own, grown step by step, to be copied and dropped).
	if _, err := bm.WriteTo(appendWriter{&u.buf}); err != nil && u.err == nil {
		u.err = err
	}
	return u.added(start)
}

// addRows appends the bitmap of rows (strictly ascending, at least one)
// and returns (unit index, offset, length): the bytes add writes for the
// same rows, without building the bitmap.
func (u *unitBuf) addRows(rows []uint32) (int, int, int) {
	start := len(u.buf)
	u.buf = u.enc.appendRows(u.buf, rows)
	return u.added(start)
}

// added ends the bitmap appended from start: it closes the unit once it
// is large enough.
func (u *unitBuf) added(start int) (int, int, int) {
	idx, off, ln := len(u.units), start, len(u.buf)-start
	if len(u.buf) >= postingUnitTarget {
		u.flush()
	}
	return idx, off, ln
}

// appendWriter is an io.Writer appending to a byte slice.
type appendWriter struct{ b *[]byte }

func (w appendWriter) Write(p []byte) (int, error) {
	*w.b = append(*w.b, p...)
	return len(p), nil
}

func (u *unitBuf) flush() {
	if len(u.buf) == 0 || u.err != nil {
		return
	}
	off, ln, err := u.w.WriteUnit(u.buf)
	if err != nil {
		u.err = err
		return
	}
	u.units = append(u.units, [2]int64{off, ln})
	u.buf = u.buf[:0]
}

// fieldWriter serialises fields, one after another: postings into units
// through w, terms into a terms unit, and the directory. A field is
// written by begin, term for each of its terms in ascending order, and
// end. Its memory is reused field after field.
type fieldWriter struct {
	w   UnitWriter
	dir []byte
	n   int
	// rows is the memory terms' rowLists are decoded into, one at a time.
	rows []uint32

	// The field being written: its posting units, its terms unit, the
	// previous term (int fields), its terms so far, its kind, and the
	// count past which a token is frequent.
	ub       unitBuf
	tb       []byte
	prev     int64
	nterms   int
	kind     Kind
	frequent uint64
}

func newFieldWriter(w UnitWriter) *fieldWriter { return &fieldWriter{w: w, ub: unitBuf{w: w}} }

// field writes a field of terms in any order.
func (fw *fieldWriter) field(path string, kind Kind, terms []termOut, long *roaring.Bitmap, frequent uint64) error {
	slices.SortFunc(terms, func(a, b termOut) int { return compareTerms(kind, a.key, b.key) })
	return fw.sortedField(path, kind, len(terms), func(i int) termOut { return terms[i] }, long, frequent)
}

// sortedField writes a field of n terms, term(i) being the i-th in
// ascending order; term is called once for each, in order.
func (fw *fieldWriter) sortedField(path string, kind Kind, n int, term func(i int) termOut, long *roaring.Bitmap, frequent uint64) error {
	fw.begin(kind, frequent)
	for i := range n {
		fw.term(term(i))
	}
	return fw.end(path, long, nil)
}

// begin starts a field of kind, whose tokens past frequent rows keep no
// postings.
func (fw *fieldWriter) begin(kind Kind, frequent uint64) {
	fw.ub.buf, fw.ub.units, fw.ub.err = fw.ub.buf[:0], fw.ub.units[:0], nil
	fw.tb, fw.prev, fw.nterms = fw.tb[:0], 0, 0
	fw.kind, fw.frequent = kind, frequent
}

// term writes the next term of the field, above the one before.
func (fw *fieldWriter) term(t termOut) {
	if t.list.n > 0 {
		fw.rows = t.list.appendSorted(fw.rows[:0])
		t.rows = fw.rows
	}
	tb := fw.tb
	switch fw.kind {
	case kindInt:
		tb = binary.AppendUvarint(tb, varint.Zigzag(t.key.num-fw.prev))
		fw.prev = t.key.num
	case kindString, kindToken:
		tb = binary.AppendUvarint(tb, uint64(len(t.key.str)))
		tb = append(tb, t.key.str...)
	case kindBool:
		tb = append(tb, byte(t.key.num))
	}
	switch {
	case t.frequent || t.card > fw.frequent:
		tb = append(tb, postFrequent)
		tb = binary.AppendUvarint(tb, t.card)
	case t.card == 1:
		row := t.one
		switch {
		case t.bm != nil:
			row = t.bm.Minimum()
		case len(t.rows) > 0:
			row = t.rows[0]
		}
		tb = append(tb, postSingle)
		tb = binary.AppendUvarint(tb, uint64(row))
	default:
		var ui, off, ln int
		switch {
		case t.bm != nil:
			ui, off, ln = fw.ub.add(t.bm)
		case len(t.rows) == 0:
			ui, off, ln = fw.ub.add(roaring.New())
		default:
			rows := t.rows
			if !isStrictlyAscending(rows) {
				// Callers give rows ascending; a set all the same.
				rows = slices.Compact(slices.Sorted(slices.Values(rows)))
			}
			ui, off, ln = fw.ub.addRows(rows)
		}
		tb = append(tb, postBitmap)
		tb = binary.AppendUvarint(tb, uint64(ui))
		tb = binary.AppendUvarint(tb, uint64(off))
		tb = binary.AppendUvarint(tb, uint64(ln))
		tb = binary.AppendUvarint(tb, t.card)
	}
	fw.tb = tb
	fw.nterms++
}

// end writes the field's last posting unit, its long rows (a bitmap, or
// rows strictly ascending; none if both are empty), its terms unit and
// its directory entry.
func (fw *fieldWriter) end(path string, long *roaring.Bitmap, longRows []uint32) error {
	ub := &fw.ub
	longUnit, longOff, longLen := 0, 0, 0
	switch {
	case long != nil && !long.IsEmpty():
		ui, off, ln := ub.add(long)
		longUnit, longOff, longLen = ui+1, off, ln
	case len(longRows) > 0:
		ui, off, ln := ub.addRows(longRows)
		longUnit, longOff, longLen = ui+1, off, ln
	}
	ub.flush()
	if ub.err != nil {
		return fmt.Errorf("index %s: %w", path, ub.err)
	}
	termsOff, termsLen, err := fw.w.WriteUnit(fw.tb)
	if err != nil {
		return fmt.Errorf("index %s terms: %w", path, err)
	}
	d := fw.dir
	d = binary.AppendUvarint(d, uint64(len(path)))
	d = append(d, path...)
	d = append(d, byte(fw.kind))
	d = binary.AppendUvarint(d, uint64(fw.nterms))
	d = binary.AppendUvarint(d, uint64(termsOff))
	d = binary.AppendUvarint(d, uint64(termsLen))
	d = binary.AppendUvarint(d, uint64(len(ub.units)))
	for _, u := range ub.units {
		d = binary.AppendUvarint(d, uint64(u[0]))
		d = binary.AppendUvarint(d, uint64(u[1]))
	}
	d = binary.AppendUvarint(d, uint64(longUnit))
	d = binary.AppendUvarint(d, uint64(longOff))
	d = binary.AppendUvarint(d, uint64(longLen))
	fw.dir = d
	fw.n++
	return nil
}

func (fw *fieldWriter) finish() []byte {
	out := []byte{FormatLatest}
	out = binary.AppendUvarint(out, uint64(fw.n))
	return append(out, fw.dir...)
}
