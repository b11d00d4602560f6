package segment

import (
	"errors"
	"fmt"
	"slices"
)

// pageMeta is one page of a chunk, as the writer records it and the
// reader passes it around; a chunk keeps its pages in its block's page
// directory (pagedir.go) and gives one back with page(i).
type pageMeta struct {
	firstRow, rows int   // relative to the block
	off, len       int64 // unit position, trailer included
	// present is the number of values in the page, -1 when the footer
	// does not say (version 1, and chunks without statPages).
	present int
	// hasRange says min/max hold the smallest and largest value of the
	// page (minI/maxI for int64, timestamp; minF/maxF, NaN left out, for
	// float64). Only chunks with statPages have it.
	hasRange   bool
	minI, maxI int64
	minF, maxF float64
}

// dictPageMeta is one unit of a chunk's dictionary: entries [first,
// first+entries). A version 1 dictionary is one unit in the version 1
// layout.
type dictPageMeta struct {
	first, entries int
	off, len       int64
}

type chunkMeta struct {
	col         int
	present     int
	dictEntries int
	// histOff, histLen locate the chunk's history unit (0, 0: none).
	histOff, histLen int64
	stored           int64 // bytes of the chunk's units, built on load
	stats            chunkStats
	dict             []dictPageMeta
	// derived is an encDerived chunk's templates (v3).
	derived *derivedTable
	// pages are the chunk's pages in its block's page directory
	// (pagedir.go): what Chunk returns, and through page(i), where each
	// lies.
	pages PageList
	enc   Encoding
	width uint8
}

type blockMeta struct {
	rows             int
	firstRow         int // segment-wide row number of the block's first row
	minTime, maxTime int64
	chunks           []chunkMeta
	byCol            []int32 // column index → position in chunks, -1 if absent (built on load)
}

type sectionMeta struct {
	name     string
	off, len int64
}

// Footer layout (all integers uvarint unless noted "varint" (zigzag), u8
// or f64; "v2" fields only in version 2):
//
//	rows
//	minTime varint, maxTime varint
//	ncols, then per column: path (len+bytes), type u8,
//	       nelem, then per elem: path, type u8
//	nblocks, then per block:
//	       rows, minTime varint, maxTime varint,
//	       nchunks, then per chunk:
//	              col, enc u8, width u8, present,
//	              statFlags u8,
//	              [statNum: int types: min varint, max varint; float: min f64, max f64]
//	              [statMinStr: min string] [statMaxStr: max string]
//	              dictEntries, when dictEntries > 0:
//	                  v1: dictOff, dictLen
//	                  v2: ndict, then per dictionary page: entries, off, len
//	              v2: histOff (0: no history), [histLen when histOff > 0]
//	              v3, encDerived only: ntemplates, then per template:
//	                  npieces, then per piece: kind u8, then
//	                  0 literal: length + bytes; 1 column: col
//	              npages, then per page: firstRow, rows, off, len,
//	                  v2 with statPages: present, and when present > 0
//	                      min, max (varint: value, or code of a dictionary-
//	                      encoded string; f64 for float64)
//	nsections, then per section: name, off, len
func (w *Writer) encodeFooter() []byte {
	var e encbuf
	e.uvarint(uint64(w.rows))
	e.varint(w.minTime)
	e.varint(w.maxTime)
	e.uvarint(uint64(len(w.cols)))
	for _, c := range w.cols {
		e.str(c.Path)
		e.byte1(byte(c.Type))
		e.uvarint(uint64(len(c.Elem)))
		for _, el := range c.Elem {
			e.str(el.Path)
			e.byte1(byte(el.Type))
		}
	}
	e.uvarint(uint64(len(w.blocks)))
	for _, b := range w.blocks {
		e.uvarint(uint64(b.rows))
		e.varint(b.minTime)
		e.varint(b.maxTime)
		e.uvarint(uint64(len(b.chunks)))
		for _, c := range b.chunks {
			e.uvarint(uint64(c.col))
			e.byte1(byte(c.enc))
			e.byte1(c.width)
			e.uvarint(uint64(c.present))
			e.byte1(c.stats.flags)
			if c.stats.flags&statNum != 0 {
				if w.cols[c.col].Type == TypeFloat64 {
					e.f64(c.stats.minF)
					e.f64(c.stats.maxF)
				} else {
					e.varint(c.stats.minI)
					e.varint(c.stats.maxI)
				}
			}
			if c.stats.flags&statMinStr != 0 {
				e.str(c.stats.minS)
			}
			if c.stats.flags&statMaxStr != 0 {
				e.str(c.stats.maxS)
			}
			e.uvarint(uint64(c.dictEntries))
			if c.dictEntries > 0 {
				if w.version == FormatV1 {
					e.uvarint(uint64(c.dict[0].off))
					e.uvarint(uint64(c.dict[0].len))
				} else {
					e.uvarint(uint64(len(c.dict)))
					for _, d := range c.dict {
						e.uvarint(uint64(d.entries))
						e.uvarint(uint64(d.off))
						e.uvarint(uint64(d.len))
					}
				}
			}
			if w.version >= FormatV2 {
				e.uvarint(uint64(c.histOff))
				if c.histOff > 0 {
					e.uvarint(uint64(c.histLen))
				}
			}
			if c.enc == encDerived {
				c.derived.appendFooter(&e)
			}
			e.uvarint(uint64(c.pages.Len()))
			for pi := range c.pages.Len() {
				p := c.page(pi)
				e.uvarint(uint64(p.firstRow))
				e.uvarint(uint64(p.rows))
				e.uvarint(uint64(p.off))
				e.uvarint(uint64(p.len))
				if c.stats.flags&statPages != 0 {
					e.uvarint(uint64(p.present))
					if p.present > 0 {
						if w.cols[c.col].Type == TypeFloat64 {
							e.f64(p.minF)
							e.f64(p.maxF)
						} else {
							e.varint(p.minI)
							e.varint(p.maxI)
						}
					}
				}
			}
		}
	}
	e.uvarint(uint64(len(w.sections)))
	for _, s := range w.sections {
		e.str(s.name)
		e.uvarint(uint64(s.off))
		e.uvarint(uint64(s.len))
	}
	return e.b
}

type footer struct {
	rows             int
	minTime, maxTime int64
	cols             []ColumnDesc
	blocks           []blockMeta
	sections         []sectionMeta
}

// decodeFooter parses and validates a footer against the file size: every
// unit must lie between the header and the footer, counts must add up.
func decodeFooter(b []byte, dataEnd int64, version uint8) (*footer, error) {
	d := decbuf{b: b}
	f := &footer{}
	rows := d.uvarint()
	f.minTime = d.varint()
	f.maxTime = d.varint()
	ncols := d.count("columns", MaxColumns, 2)
	f.cols = make([]ColumnDesc, ncols)
	for i := range f.cols {
		f.cols[i].Path = d.str(MaxPathLen)
		f.cols[i].Type = ColType(d.byte1())
		if d.err == nil && !f.cols[i].Type.valid() {
			return nil, fmt.Errorf("column %d: invalid type %d", i, f.cols[i].Type)
		}
		nelem := d.count("array element fields", MaxColumns, 2)
		for j := 0; j < nelem; j++ {
			p := d.str(MaxPathLen)
			t := ColType(d.byte1())
			if d.err == nil && !t.valid() {
				return nil, fmt.Errorf("column %d: array element field %d: invalid type %d", i, j, t)
			}
			f.cols[i].Elem = append(f.cols[i].Elem, ElemField{Path: p, Type: t})
		}
	}
	nblocks := d.count("blocks", maxBlocks, 4)
	if d.err == nil && nblocks == 0 {
		return nil, errors.New("no blocks (the writer never writes an empty segment)")
	}
	f.blocks = make([]blockMeta, nblocks)
	total := 0
	// pages collects a block's page records, chunk after chunk, for
	// blockPages to lay out in the block's directory.
	var pages []pageMeta
	for bi := range f.blocks {
		b := &f.blocks[bi]
		r := d.uvarint()
		if r == 0 || r > maxBlockRows {
			d.fail(fmt.Errorf("block %d: too big value for rowsCount: %d; mustn't exceed %d", bi, r, maxBlockRows))
		}
		b.rows = int(r)
		b.firstRow = total
		total += b.rows
		b.minTime = d.varint()
		b.maxTime = d.varint()
		nchunks := d.count("chunks", ncols, 6)
		b.chunks = make([]chunkMeta, nchunks)
		b.byCol = make([]int32, ncols)
		pages = pages[:0]
		for i := range b.byCol {
			b.byCol[i] = -1
		}
		for ci := range b.chunks {
			c := &b.chunks[ci]
			col := d.uvarint()
			if d.err == nil && col >= uint64(ncols) {
				return nil, fmt.Errorf("block %d: chunk column %d out of range", bi, col)
			}
			c.col = int(col)
			if d.err == nil && b.byCol[c.col] >= 0 {
				return nil, fmt.Errorf("block %d: column %d twice", bi, col)
			}
			if d.err == nil {
				b.byCol[c.col] = int32(ci)
			}
			c.enc = Encoding(d.byte1())
			c.width = d.byte1()
			c.present = int(min(d.uvarint(), uint64(maxBlockRows)+1))
			if d.err == nil {
				if err := checkEncoding(f.cols[c.col].Type, c.enc, c.width, version); err != nil {
					return nil, fmt.Errorf("block %d column %q: %w", bi, f.cols[c.col].Path, err)
				}
				if c.present > b.rows {
					return nil, fmt.Errorf("block %d column %q: %d present of %d rows", bi, f.cols[c.col].Path, c.present, b.rows)
				}
			}
			c.stats.flags = d.byte1()
			if d.err == nil {
				if err := checkStatFlags(f.cols[c.col].Type, c.enc, c.stats.flags, version); err != nil {
					return nil, fmt.Errorf("block %d column %q: %w", bi, f.cols[c.col].Path, err)
				}
			}
			if c.stats.flags&statNum != 0 {
				if d.err == nil && f.cols[c.col].Type == TypeFloat64 {
					c.stats.minF = d.f64()
					c.stats.maxF = d.f64()
				} else {
					c.stats.minI = d.varint()
					c.stats.maxI = d.varint()
				}
			}
			if c.stats.flags&statMinStr != 0 {
				c.stats.minS = d.str(maxStatLen)
			}
			if c.stats.flags&statMaxStr != 0 {
				c.stats.maxS = d.str(maxStatLen)
			}
			c.dictEntries = int(min(d.uvarint(), uint64(maxBlockRows)+1))
			if c.dictEntries > 0 {
				if err := decodeDictPages(&d, c, dataEnd, version); err != nil {
					return nil, fmt.Errorf("block %d column %q: %w", bi, f.cols[c.col].Path, err)
				}
			}
			if d.err == nil && (c.enc == encDict) != (c.dictEntries > 0) {
				return nil, fmt.Errorf("block %d column %q: dictionary mismatch", bi, f.cols[c.col].Path)
			}
			if version >= FormatV2 {
				c.histOff = int64(min(d.uvarint(), 1<<62))
				if c.histOff > 0 {
					c.histLen = int64(min(d.uvarint(), 1<<62))
					if d.err == nil && !unitInRange(c.histOff, c.histLen, dataEnd) {
						return nil, fmt.Errorf("block %d: history unit [%d,+%d) out of range", bi, c.histOff, c.histLen)
					}
					if d.err == nil && c.enc != encBytes {
						return nil, fmt.Errorf("block %d column %q: history for encoding %d", bi, f.cols[c.col].Path, c.enc)
					}
				}
			}
			if c.enc == encDerived && d.err == nil {
				t, err := decodeDerivedTable(&d, c.col, f.cols)
				if err != nil {
					return nil, fmt.Errorf("block %d column %q: %w", bi, f.cols[c.col].Path, err)
				}
				c.derived = t
			}
			var err error
			if pages, err = decodePages(&d, c, f.cols[c.col].Type, b.rows, dataEnd, pages); err != nil {
				return nil, fmt.Errorf("block %d column %q: %w", bi, f.cols[c.col].Path, err)
			}
		}
		if d.err == nil {
			if err := checkDerivedRefs(b); err != nil {
				return nil, fmt.Errorf("block %d: %w", bi, err)
			}
			blockPages(b.chunks, pages, f.cols)
		}
	}
	nsec := d.count("sections", maxSections, 3)
	for i := 0; i < nsec; i++ {
		s := sectionMeta{name: d.str(MaxPathLen)}
		s.off = int64(min(d.uvarint(), 1<<62))
		s.len = int64(min(d.uvarint(), 1<<62))
		if d.err == nil && !unitInRange(s.off, s.len, dataEnd) {
			return nil, fmt.Errorf("section %q out of range", s.name)
		}
		f.sections = append(f.sections, s)
	}
	if d.err != nil {
		return nil, d.err
	}
	if len(d.b) != 0 {
		return nil, fmt.Errorf("%d trailing footer bytes", len(d.b))
	}
	if uint64(total) != rows {
		return nil, fmt.Errorf("blocks hold %d rows, footer says %d", total, rows)
	}
	f.rows = total
	return f, nil
}

// decodeDictPages reads where a chunk's dictionary lies: one unit
// (version 1) or a list of dictionary pages whose entries add up to the
// chunk's dictEntries (version 2).
func decodeDictPages(d *decbuf, c *chunkMeta, dataEnd int64, version uint8) error {
	if version == FormatV1 {
		u := dictPageMeta{entries: c.dictEntries}
		u.off = int64(min(d.uvarint(), 1<<62))
		u.len = int64(min(d.uvarint(), 1<<62))
		if d.err == nil && !unitInRange(u.off, u.len, dataEnd) {
			return fmt.Errorf("dictionary unit [%d,+%d) out of range", u.off, u.len)
		}
		c.dict = []dictPageMeta{u}
		return nil
	}
	n := d.count("dictionary pages", maxDictPages, 3)
	if d.err != nil {
		return nil
	}
	if n == 0 || n > c.dictEntries {
		return fmt.Errorf("%d dictionary pages for %d entries", n, c.dictEntries)
	}
	c.dict = make([]dictPageMeta, n)
	next := 0
	for i := range c.dict {
		p := &c.dict[i]
		p.first = next
		p.entries = int(min(d.uvarint(), uint64(maxBlockRows)+1))
		p.off = int64(min(d.uvarint(), 1<<62))
		p.len = int64(min(d.uvarint(), 1<<62))
		if d.err != nil {
			return nil
		}
		if p.entries == 0 || p.entries > c.dictEntries-next {
			return fmt.Errorf("dictionary page %d: %d entries past the %d of the chunk", i, p.entries, c.dictEntries)
		}
		next += p.entries
		if !unitInRange(p.off, p.len, dataEnd) {
			return fmt.Errorf("dictionary page unit [%d,+%d) out of range", p.off, p.len)
		}
	}
	if next != c.dictEntries {
		return fmt.Errorf("dictionary pages hold %d of %d entries", next, c.dictEntries)
	}
	return nil
}

// decodePages reads a chunk's page list: row ranges that continue each
// other from row 0 to the block's end, and (statPages) the value count and
// range of each page. It appends the pages to the block's (pages) and
// notes in c.pages which of them are the chunk's; blockPages then lays
// them out in the block's directory.
func decodePages(d *decbuf, c *chunkMeta, t ColType, blockRows int, dataEnd int64, pages []pageMeta) ([]pageMeta, error) {
	minBytes := 4
	withStats := c.stats.flags&statPages != 0
	if withStats {
		minBytes = 5
	}
	npages := d.count("pages", maxPagesPerChunk, minBytes)
	c.pages = PageList{first: uint32(len(pages)), n: uint32(npages)}
	pages = slices.Grow(pages, npages)
	c.stored = c.histLen
	next, present := 0, 0
	for pi := 0; pi < npages; pi++ {
		var pm pageMeta
		p := &pm
		p.firstRow = int(min(d.uvarint(), maxBlockRows))
		p.rows = int(min(d.uvarint(), maxBlockRows))
		p.off = int64(min(d.uvarint(), 1<<62))
		p.len = int64(min(d.uvarint(), 1<<62))
		p.present = -1
		if withStats {
			p.present = int(min(d.uvarint(), maxBlockRows+1))
			if p.present > 0 {
				if t == TypeFloat64 {
					p.minF, p.maxF = d.f64(), d.f64()
					p.hasRange = p.minF <= p.maxF // +Inf, -Inf: only NaN values
				} else {
					p.minI, p.maxI = d.varint(), d.varint()
					p.hasRange = true
					if d.err == nil && p.minI > p.maxI {
						return pages, fmt.Errorf("page %d: min %d above max %d", pi, p.minI, p.maxI)
					}
					if d.err == nil && t == TypeString && (p.minI < 0 || p.maxI >= int64(c.dictEntries)) {
						return pages, fmt.Errorf("page %d: codes [%d, %d] outside a dictionary of %d", pi, p.minI, p.maxI, c.dictEntries)
					}
				}
			}
		}
		if d.err != nil {
			return pages, nil
		}
		if p.firstRow != next || p.rows == 0 {
			return pages, fmt.Errorf("page %d does not continue rows", pi)
		}
		if p.present > p.rows {
			return pages, fmt.Errorf("page %d: %d values in %d rows", pi, p.present, p.rows)
		}
		next += p.rows
		present += max(p.present, 0)
		if !unitInRange(p.off, p.len, dataEnd) {
			return pages, fmt.Errorf("page unit [%d,+%d) out of range", p.off, p.len)
		}
		c.stored += p.len
		pages = append(pages, pm)
	}
	if d.err == nil && next != blockRows {
		return pages, fmt.Errorf("pages cover %d of %d rows", next, blockRows)
	}
	if d.err == nil && withStats && present != c.present {
		return pages, fmt.Errorf("pages hold %d values, chunk %d", present, c.present)
	}
	for _, d := range c.dict {
		c.stored += d.len
	}
	return pages, nil
}

// checkStatFlags rejects statistics flags a version, type or encoding
// cannot have.
func checkStatFlags(t ColType, e Encoding, flags uint8, version uint8) error {
	known := uint8(statNum | statMinStr | statMaxStr)
	if version >= FormatV2 {
		known |= statPages
	}
	if flags&^known != 0 {
		return fmt.Errorf("unknown statistics flags %#x", flags&^known)
	}
	if flags&statPages != 0 && t != TypeInt64 && t != TypeTimestamp && t != TypeFloat64 && !(t == TypeString && e == encDict) {
		return fmt.Errorf("page statistics on a %s column of encoding %d", t, e)
	}
	return nil
}

func unitInRange(off, ln, dataEnd int64) bool {
	return off >= headerSize && ln >= unitTrailerSize && off <= dataEnd && ln <= dataEnd-off
}

// checkEncoding rejects encodings a column type (or the format version)
// cannot have.
func checkEncoding(t ColType, e Encoding, width uint8, version uint8) error {
	if (e == encHex || e == encIP) && version < FormatV2 || e == encDerived && version < FormatV3 {
		return fmt.Errorf("encoding %d not valid in format version %d", e, version)
	}
	ok := false
	switch t {
	case TypeBool:
		ok = e == encBits
	case TypeInt64, TypeTimestamp:
		ok = e == encPlain64 || e == encDelta || e == encDict
	case TypeFloat64:
		ok = e == encPlain64
	case TypeString:
		ok = e == encBytes || e == encDict || e == encUUID || e == encHex || e == encIP || e == encDerived
	case TypeArray:
		ok = e == encBytes
	case TypeObject:
		ok = e == encNone
	}
	if !ok {
		return fmt.Errorf("encoding %d not valid for %s", e, t)
	}
	if e == encDict && width != 1 && width != 2 && width != 4 {
		return fmt.Errorf("dictionary code width %d", width)
	}
	if e == encDerived && width != 0 {
		return fmt.Errorf("derived width %d", width)
	}
	if e == encHex && (width&hexWidthMask == 0 || width&hexWidthMask > maxHexBytes || width&^(hexWidthMask|hexUpper) != 0) {
		return fmt.Errorf("hex width %#x", width)
	}
	return nil
}
