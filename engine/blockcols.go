package engine

import (
	"github.com/sediment/sediment/segment"
)

// heldColumnBytes bounds what blockColumns keeps of one block's columns
// (the values' headers, codes and the string bytes they point at). The
// columns a derived text column refers to are short fields (a method, a
// status, a host, a path): a few MiB for a block of 65,536 rows. In the
// first block of a segment the writer fetches every string and integer
// column to find them (segment.Writer's sampleBlock), and what the bound
// keeps of those is not decoded again when written: merging 700,000
// platform edge events in heads of 35,000 ordered by project decoded 65.2
// values per event without blockColumns, 60.8 with 8 MiB, 58.1 with 16,
// 55.6 with 32 and 53.9 unbounded (each column of each block once).
const heldColumnBytes = 16 << 20

// blockColumns fills the columns of one output block from a rowSource for
// writeSegment and for the segment writer's fetches (segment.ColumnFetcher),
// decoding each column once per block where it can: a text column stored
// as templates over other columns (format v3) fetches those columns while
// it is written, and writeSegment then writes them too. Before, each such
// column was filled twice per block, and in a compaction a fill decodes
// the inputs' pages.
//
// A fetched column is kept until writeSegment writes it; a column written
// before the writer fetches it (it comes first in column order) is kept
// after it is written when the writer fetched it in the previous block
// (the writer remembers, per text column, which columns it refers to, so
// the same ones come back block after block). What is kept is bounded by
// heldColumnBytes; past that a column is filled again as before. All of
// it is let go when the next block begins.
type blockColumns struct {
	src rowSource
	// keep is false for a source whose fills cost little (a head's
	// values are in memory): keeping its columns would only add copies.
	keep     bool
	from, to int
	held     []*heldColumn // per column: its values this block, or nil
	heldSize int
	free     []*heldColumn // let go, their slices kept for reuse
	// fetchedNow and fetchedBefore mark the columns the writer fetched
	// in this block and in the previous one.
	fetchedNow, fetchedBefore []bool
	scratch                   segment.ColumnData // a column not kept
}

// heldColumn is one column's values over the current block.
type heldColumn struct {
	data    segment.ColumnData
	present bool // some row has a value
	bytes   int  // what keeping it costs (see heldSizeOf)
}

func newBlockColumns(src rowSource) *blockColumns {
	n := len(src.columns())
	return &blockColumns{src: src, keep: src.fillsDecode(), held: make([]*heldColumn, n), fetchedNow: make([]bool, n), fetchedBefore: make([]bool, n)}
}

// begin moves to the block of rows [from, to), letting go of what the
// previous block kept.
func (bc *blockColumns) begin(from, to int) {
	bc.from, bc.to = from, to
	bc.releaseAll()
	bc.fetchedNow, bc.fetchedBefore = bc.fetchedBefore, bc.fetchedNow
	clear(bc.fetchedNow)
}

// fetch is the segment writer's ColumnFetcher: column ci's values copied
// into d (the writer reuses d's slices for its next fetch, so it never
// gets the kept ones themselves).
func (bc *blockColumns) fetch(ci int, d *segment.ColumnData) (bool, error) {
	bc.fetchedNow[ci] = true
	h := bc.held[ci]
	if h == nil {
		var err error
		if h, err = bc.fill(ci); err != nil {
			return false, err
		}
		if h == nil { // not kept: filled straight into d
			return bc.src.fillColumn(ci, bc.from, bc.to, d)
		}
	}
	d.CopyFrom(&h.data)
	return h.present, nil
}

// column returns column ci's values for writeSegment to write, and
// whether any row has one. The data is valid until done(ci) and must not
// be changed.
func (bc *blockColumns) column(ci int) (*segment.ColumnData, bool, error) {
	if h := bc.held[ci]; h != nil {
		return &h.data, h.present, nil
	}
	if bc.fetchedBefore[ci] {
		h, err := bc.fill(ci)
		if err != nil {
			return nil, false, err
		}
		if h != nil {
			return &h.data, h.present, nil
		}
	}
	present, err := bc.src.fillColumn(ci, bc.from, bc.to, &bc.scratch)
	return &bc.scratch, present, err
}

// done is called once column ci is written: it is kept for a fetch later
// in the block only when the writer fetched it in the previous block.
func (bc *blockColumns) done(ci int) {
	if bc.held[ci] != nil && !bc.fetchedBefore[ci] {
		bc.release(ci)
	}
}

// fill fills column ci into a column kept for the block, or returns nil
// (without filling) when what is kept already reaches the bound. A
// column's size is known only once it is filled, so the last column kept
// may take what is kept past the bound by its own size.
func (bc *blockColumns) fill(ci int) (*heldColumn, error) {
	if !bc.keep || bc.heldSize >= heldColumnBytes {
		return nil, nil
	}
	var h *heldColumn
	if n := len(bc.free); n > 0 {
		h, bc.free = bc.free[n-1], bc.free[:n-1]
	} else {
		h = new(heldColumn)
	}
	present, err := bc.src.fillColumn(ci, bc.from, bc.to, &h.data)
	if err != nil {
		bc.free = append(bc.free, h)
		return nil, err
	}
	h.present, h.bytes = present, heldSizeOf(&h.data)
	bc.held[ci] = h
	bc.heldSize += h.bytes
	return h, nil
}

// releaseAll lets go of every column kept.
func (bc *blockColumns) releaseAll() {
	for ci, h := range bc.held {
		if h != nil {
			bc.release(ci)
		}
	}
}

// release lets go of column ci, keeping its slices for another column
// (their elements are overwritten before use; the strings they point at
// are cleared with them so as not to keep the pages they alias).
func (bc *blockColumns) release(ci int) {
	h := bc.held[ci]
	bc.held[ci] = nil
	bc.heldSize -= h.bytes
	clear(h.data.Strs)
	h.data.Dict = nil
	bc.free = append(bc.free, h)
}

// heldSizeOf estimates the memory column data keeps alive.
func heldSizeOf(d *segment.ColumnData) int {
	n := 8*(len(d.Nulls)+len(d.Ints)+len(d.Floats)) + len(d.Bools) + 4*len(d.Codes) + 16*(len(d.Strs)+len(d.Dict))
	for _, s := range d.Strs {
		n += len(s)
	}
	for _, s := range d.Dict {
		n += len(s)
	}
	return n
}
