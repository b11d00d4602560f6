package segment

import (
	"fmt"
	"math"
)

// The page directory is the in-memory form of the footer's page lists.
// Every open segment keeps its footer decoded for as long as it is open,
// and pages are most of a footer (a block of edge events has ~70 chunks
// and ~400 pages), so a page takes 16 bytes, and 16 more for the value
// range of a chunk with page statistics, instead of the 80 of a PageRange
// and a unit: one directory per block holds the pages of all its chunks
// in one allocation each, and a chunk refers to its run of them
// (PageList). The footer's bytes on disk do not change.
//
//	pageDir of a block                 PageList of a chunk
//	  base  int64                        d ──────────► the block's pageDir
//	  ents  [ chunk 0 pages | chunk 1 pages | ... ]     first, n: its run in ents
//	  bounds[ chunk 0 (stats) | chunk 2 (stats) | ...]  bound: its run in bounds
//	  wide  nil, or every unit as off, len              float: bounds are float64
//
// A page's first row is the previous page's end (0 for a chunk's first),
// its unit offset is base plus a 32-bit offset, and its value range is
// one pair of 64-bit words read as int64 or float64 by the column type.
// A block whose units do not all lie within 4 GiB of its first (never
// written by this package's writer, but valid) keeps every unit at full
// width in wide.
type pageDir struct {
	base   int64 // unit offsets in ents are relative to it
	ents   []pageEntry
	bounds []pageBounds
	// wide, when not nil, holds every page's unit (index as in ents),
	// and the off and len of ents are unused.
	wide []pageUnit
}

// pageEntry is one page: 16 bytes.
type pageEntry struct {
	end     uint32 // block-relative row past the page's last
	off     uint32 // unit offset minus the directory's base
	len     uint32 // unit length, trailer included
	present uint32 // values in the page, presentUnknown when the footer does not say
}

// pageBounds is the value range of one page of a chunk with page
// statistics: int64 (and timestamp, and the codes of a dictionary-encoded
// string chunk) as two's complement, float64 as its IEEE 754 bits; 0, 0
// for a page without values.
type pageBounds struct {
	lo, hi uint64
}

// pageUnit is where a page's unit lies in the file, trailer included.
type pageUnit struct {
	off, len int64
}

const (
	// presentUnknown is a pageEntry's present when the footer does not
	// give the page's value count (version 1, chunks without statPages).
	presentUnknown = math.MaxUint32
	// noBounds is a PageList's bound when its chunk has no page
	// statistics.
	noBounds = math.MaxUint32
)

// PageList is a chunk's data pages, read from the segment's page
// directory: Len of them, At(i) describing page i. The zero PageList is
// empty. It is a view of the open segment's footer and costs nothing to
// copy.
type PageList struct {
	d        *pageDir
	first, n uint32 // the chunk's pages are d.ents[first : first+n]
	bound    uint32 // their ranges are d.bounds[bound : bound+n], or noBounds
	float    bool   // the ranges are float64 (a float64 column)
}

// Len returns the number of pages.
func (l PageList) Len() int { return int(l.n) }

// At describes page i (0 <= i < Len()).
func (l PageList) At(i int) PageRange {
	if uint(i) >= uint(l.n) {
		panic(fmt.Sprintf("segment: page %d of %d", i, l.n))
	}
	k := l.first + uint32(i)
	e := &l.d.ents[k]
	p := PageRange{Rows: int(e.end), Present: -1}
	if i > 0 {
		p.FirstRow = int(l.d.ents[k-1].end)
		p.Rows -= p.FirstRow
	}
	if e.present != presentUnknown {
		p.Present = int(e.present)
	}
	if l.bound != noBounds {
		b := &l.d.bounds[l.bound+uint32(i)]
		if l.float {
			p.MinFloat, p.MaxFloat = math.Float64frombits(b.lo), math.Float64frombits(b.hi)
			p.HasRange = p.Present > 0 && p.MinFloat <= p.MaxFloat // +Inf, -Inf: only NaN values
		} else {
			p.MinInt, p.MaxInt = int64(b.lo), int64(b.hi)
			p.HasRange = p.Present > 0
		}
	}
	return p
}

// Span returns page i's rows, relative to the block: [first, end). It is
// At(i).FirstRow and At(i).FirstRow+At(i).Rows without the rest.
func (l PageList) Span(i int) (first, end int) {
	if uint(i) >= uint(l.n) {
		panic(fmt.Sprintf("segment: page %d of %d", i, l.n))
	}
	k := l.first + uint32(i)
	if i > 0 {
		first = int(l.d.ents[k-1].end)
	}
	return first, int(l.d.ents[k].end)
}

// unit returns where page i's unit lies.
func (l PageList) unit(i int) (off, ln int64) {
	k := l.first + uint32(i)
	if l.d.wide != nil {
		u := l.d.wide[k]
		return u.off, u.len
	}
	e := &l.d.ents[k]
	return l.d.base + int64(e.off), int64(e.len)
}

// page returns page i of the chunk as the read path takes it.
func (c *chunkMeta) page(i int) pageMeta {
	r := c.pages.At(i)
	off, ln := c.pages.unit(i)
	return pageMeta{firstRow: r.FirstRow, rows: r.Rows, off: off, len: ln, present: r.Present,
		hasRange: r.HasRange, minI: r.MinInt, maxI: r.MaxInt, minF: r.MinFloat, maxF: r.MaxFloat}
}

// addPage appends page p to a chunk the writer is building (t is its
// column's type): the chunk gets a directory of its own, whose base is
// its first unit.
func (c *chunkMeta) addPage(p pageMeta, t ColType) {
	if c.pages.d == nil {
		c.pages = PageList{d: &pageDir{base: p.off}, bound: noBounds, float: t == TypeFloat64}
		if c.stats.flags&statPages != 0 {
			c.pages.bound = 0
		}
	}
	d := c.pages.d
	if int(c.pages.first+c.pages.n) != len(d.ents) {
		panic("segment: page added to a chunk whose directory is shared") // a bug, not input
	}
	d.add(p, c.pages.bound != noBounds, c.pages.float)
	c.pages.n++
}

// add appends page p; withBounds says its chunk has page statistics,
// float that they are float64.
func (d *pageDir) add(p pageMeta, withBounds, float bool) {
	e := pageEntry{end: uint32(p.firstRow + p.rows), present: presentUnknown}
	if p.present >= 0 {
		e.present = uint32(p.present)
	}
	if d.wide == nil && !d.fits(p.off, p.len) {
		d.wide = make([]pageUnit, len(d.ents), cap(d.ents))
		for k := range d.ents {
			d.wide[k] = pageUnit{off: d.base + int64(d.ents[k].off), len: int64(d.ents[k].len)}
		}
	}
	if d.wide != nil {
		d.wide = append(d.wide, pageUnit{off: p.off, len: p.len})
	} else {
		e.off, e.len = uint32(p.off-d.base), uint32(p.len)
	}
	d.ents = append(d.ents, e)
	if withBounds {
		b := pageBounds{lo: uint64(p.minI), hi: uint64(p.maxI)}
		if float {
			b = pageBounds{lo: math.Float64bits(p.minF), hi: math.Float64bits(p.maxF)}
		}
		d.bounds = append(d.bounds, b)
	}
}

// fits says a unit can be kept as 32-bit offset and length from base.
func (d *pageDir) fits(off, ln int64) bool {
	return off >= d.base && off-d.base <= math.MaxUint32 && ln >= 0 && ln <= math.MaxUint32
}

// blockPages builds the directory of a block from the pages its chunks'
// footer records list (pages, in chunk order; each chunk's pages.first
// and pages.n already say which are its), sized exactly.
func blockPages(chunks []chunkMeta, pages []pageMeta, cols []ColumnDesc) {
	if len(pages) == 0 {
		return
	}
	d := &pageDir{base: pages[0].off}
	nbounds := 0
	for i := range chunks {
		if chunks[i].stats.flags&statPages != 0 {
			nbounds += int(chunks[i].pages.n)
		}
	}
	for _, p := range pages {
		d.base = min(d.base, p.off)
	}
	d.ents = make([]pageEntry, 0, len(pages))
	d.bounds = make([]pageBounds, 0, nbounds)
	for i := range chunks {
		c := &chunks[i]
		l := &c.pages
		l.d, l.bound, l.float = d, noBounds, cols[c.col].Type == TypeFloat64
		withBounds := c.stats.flags&statPages != 0
		if withBounds {
			l.bound = uint32(len(d.bounds))
		}
		for _, p := range pages[l.first : l.first+l.n] {
			d.add(p, withBounds, l.float)
		}
	}
}
