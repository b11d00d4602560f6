package segment

import (
	"encoding/binary"
	"errors"

	"github.com/sediment/sediment/internal/predicate"
	"github.com/sediment/sediment/internal/vec"
)

// A referenced column stored as encBytes (the URLs of a derived message)
// is searched where its values lie in each page, instead of copied into a
// vector first (a read copies every byte of every value, megabytes a
// block, to search them once).

// bytesScratch is what bytesColumnHolding reuses from page to page.
type bytesScratch struct {
	offs  []uint32 // the page's value offsets
	rowOf []int32  // the page's row of each value (pages with NULLs)
	found []int32  // the values holding a literal
}

// bytesColumnHolding returns, for encBytes chunk c of column col in block
// b, the rows of [from, to) (relative to from) whose value holds one of
// the literals s searches for, as a bitset of to-from rows, and the rows
// without a value (nil when every row has one), as a read of the values
// then valuesHolding would.
func (r *Reader) bytesColumnHolding(b, col int, c *chunkMeta, from, to int, s *predicate.Searcher, lits []string, mode cacheMode, sc *bytesScratch) ([]uint64, vec.Bitset, error) {
	n := to - from
	hits := make([]uint64, (n+63)/64)
	var nulls vec.Bitset
	setNull := func(j int) {
		if nulls == nil {
			nulls = vec.NewBitset(n)
		}
		nulls.Set(j)
	}
	hist := r.history(c, mode)
	for pi := pageOf(c.pages, 0, from); pi < c.pages.Len(); pi++ {
		pm := c.page(pi)
		if pm.firstRow >= to {
			break
		}
		lo, hi := max(from, pm.firstRow), min(to, pm.firstRow+pm.rows)
		if lo >= hi {
			continue
		}
		if pm.present == 0 {
			for row := lo; row < hi; row++ {
				setNull(row - from)
			}
			continue
		}
		err := r.bytesPageHolding(&pm, lo-pm.firstRow, hi-pm.firstRow, pm.firstRow-from, s, lits, mode, hist, sc, hits, setNull)
		if err != nil {
			var ce *CorruptError
			if !errors.As(err, &ce) && err != errTooBig {
				err = corruptf(r.path, "page", pm.off, "column %q block %d: %v", r.ft.cols[col].Path, b, err)
			}
			return nil, nil, err
		}
	}
	return hits, nulls, nil
}

// bytesPageHolding marks in hits the rows [lo, hi) of encBytes page pm
// (relative to the page; base turns them into rows of hits) whose value
// holds a literal, and calls setNull for those without a value.
func (r *Reader) bytesPageHolding(pm *pageMeta, lo, hi, base int, s *predicate.Searcher, lits []string, mode cacheMode, hist historyOf, sc *bytesScratch, hits []uint64, setNull func(int)) error {
	pv, release, err := r.readValuesPage(pm, "encoding 5", mode, hist)
	if err != nil {
		return err
	}
	defer release()
	data, offs, err := splitBytesValues(pv.vals, pv.present, sc.offs)
	sc.offs = offs
	if err != nil {
		return err
	}
	// The row of each value: itself when every row has one.
	var rowOf []int32
	if pv.bitmap != nil {
		sc.rowOf = sc.rowOf[:0]
		for row := 0; row < pv.rows; row++ {
			if pv.has(row) {
				sc.rowOf = append(sc.rowOf, int32(row))
			} else if row >= lo && row < hi {
				setNull(base + row)
			}
		}
		rowOf = sc.rowOf
	}
	found, swept := sc.found[:0], false
	if s != nil {
		found, swept = s.AppendRows(found, data, offs)
	}
	if !swept {
		found = found[:0]
		for k := 0; k < pv.present; k++ {
			if holdsAny(unsafeString(data[offs[k]:offs[k+1]]), lits) {
				found = append(found, int32(k))
			}
		}
	}
	sc.found = found
	for _, k := range found {
		row := int(k)
		if rowOf != nil {
			row = int(rowOf[k])
		}
		if row >= lo && row < hi {
			j := base + row
			hits[j>>6] |= 1 << (j & 63)
		}
	}
	return nil
}

// splitBytesValues splits the value area of an encBytes page of present
// values into their bytes and offsets (present+1, into data; offs is
// reused), checking every length against the bytes there are.
func splitBytesValues(vals []byte, present int, offs []uint32) (data []byte, _ []uint32, err error) {
	start, ok := varintsEnd(vals, present)
	if !ok {
		return nil, offs, errShort
	}
	lens, data := vals[:start], vals[start:]
	offs = append(offs[:0], 0)
	off := uint64(0)
	for k := 0; k < present; k++ {
		l, m := binary.Uvarint(lens)
		if m <= 0 || l > uint64(len(data))-off {
			return nil, offs, errShort
		}
		lens = lens[m:]
		off += l
		offs = append(offs, uint32(off))
	}
	return data, offs, nil
}
