package segment

import (
	"errors"
	"fmt"
	"math"
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
//	                  0 literal: length + bytes; 1 column: col;
//	                  v5: 2 residual: nothing more
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

// footer is what an open segment keeps of its footer for its whole life:
// the column directory, the sections and, per block and per chunk, what
// pruning reads (blockSum, chunkSum). A block's full record (blockMeta:
// pages, dictionary pages, history, derived templates) is decoded again
// from the footer unit when a read needs it (footcache.go).
type footer struct {
	rows             int
	minTime, maxTime int64
	cols             []ColumnDesc
	blocks           []blockSum
	// chunks holds every block's chunks, block after block (a block's are
	// chunks[blocks[b].firstChunk:][:blocks[b].nchunks]), in column order
	// within a block: a lookup is a binary search (chunkSumOf).
	chunks []chunkSum
	// strs holds the chunks' min/max strings, one after the other
	// (chunkSum.strOff): one allocation instead of two per chunk.
	strs     []byte
	sections []sectionMeta
}

// blockSum is the resident part of a block's footer record.
type blockSum struct {
	rows             int
	firstRow         int // segment-wide row number of the block's first row
	minTime, maxTime int64
	// rec, recEnd locate the block's record in the decompressed footer.
	rec, recEnd int
	firstChunk  int32
	nchunks     int32
	// span is the first and past-last byte of the block's units
	// (dictionaries and pages; -1, -1 for none), for BlockAt.
	span [2]int64
}

// chunkSum is the resident part of a chunk's footer record: what
// ChunkInfo gives. 48 bytes.
type chunkSum struct {
	stored int64 // bytes of the chunk's units
	// lo, hi are the chunk's statNum range: int64 as two's complement,
	// float64 as its IEEE 754 bits.
	lo, hi uint64
	// The min string is footer.strs[strOff:][:minLen], the max string
	// follows it (maxLen bytes); maxStatLen bounds both.
	strOff         uint32
	col            int32
	present        uint32
	dictEntries    uint32
	enc            Encoding
	width          uint8
	flags          uint8 // chunkStats.flags
	minLen, maxLen uint8
}

// minStr and maxStr return the chunk's string bounds, read from the
// footer's string arena (not copied: the arena never changes).
func (s *chunkSum) minStr(f *footer) string {
	return unsafeString(f.strs[s.strOff : s.strOff+uint32(s.minLen)])
}

func (s *chunkSum) maxStr(f *footer) string {
	off := s.strOff + uint32(s.minLen)
	return unsafeString(f.strs[off : off+uint32(s.maxLen)])
}

// decodeFooter parses and validates a footer against the file size: every
// unit must lie between the header and the footer, counts must add up.
// Every block's record is decoded (and so validated) once; what stays is
// the resident part.
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
	if d.err != nil {
		return nil, d.err
	}
	f.blocks = make([]blockSum, nblocks)
	total := 0
	var sc blockScratch
	for bi := range f.blocks {
		s := &f.blocks[bi]
		s.rec = len(b) - len(d.b)
		bm, err := decodeBlock(&d, bi, f.cols, dataEnd, version, &sc)
		if err != nil {
			return nil, err
		}
		if d.err != nil {
			break
		}
		s.recEnd = len(b) - len(d.b)
		s.rows, s.firstRow = bm.rows, total
		s.minTime, s.maxTime = bm.minTime, bm.maxTime
		total += bm.rows
		s.firstChunk, s.nchunks = int32(len(f.chunks)), int32(len(bm.chunks))
		s.span = unitSpan(&bm)
		if bi == 0 {
			// Blocks of a segment mostly have the same columns: room for
			// as many chunks in each (trimmed below if too much), no more
			// than the footer's bytes can hold (6 or more per chunk).
			f.chunks = make([]chunkSum, 0, min(len(bm.chunks)*nblocks, len(b)/6))
		}
		for i := range bm.chunks {
			c := &bm.chunks[i]
			f.chunks = append(f.chunks, f.summarize(c))
		}
		cmp := func(x, y chunkSum) int { return int(x.col) - int(y.col) }
		if sums := f.chunks[s.firstChunk:]; !slices.IsSortedFunc(sums, cmp) {
			slices.SortFunc(sums, cmp) // the writer writes them in column order
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
	if cap(f.chunks)-len(f.chunks) > len(f.chunks)/8 {
		f.chunks = slices.Clone(f.chunks)
	}
	if cap(f.strs)-len(f.strs) > len(f.strs)/8 {
		f.strs = slices.Clone(f.strs)
	}
	return f, nil
}

// chunkSumOf returns the resident part of column col's chunk in block b,
// nil when the block has none.
func (f *footer) chunkSumOf(b, col int) *chunkSum {
	s := &f.blocks[b]
	sums := f.chunks[s.firstChunk : s.firstChunk+s.nchunks]
	i, ok := slices.BinarySearchFunc(sums, col, func(c chunkSum, col int) int { return int(c.col) - col })
	if !ok {
		return nil
	}
	return &sums[i]
}

// summarize returns the resident part of chunk c, its strings added to
// f.strs.
func (f *footer) summarize(c *chunkMeta) chunkSum {
	s := chunkSum{stored: c.stored, strOff: uint32(len(f.strs)), minLen: uint8(len(c.stats.minS)), maxLen: uint8(len(c.stats.maxS)),
		col: int32(c.col), present: uint32(c.present), dictEntries: uint32(c.dictEntries), enc: c.enc, width: c.width, flags: c.stats.flags}
	f.strs = append(f.strs, c.stats.minS...)
	f.strs = append(f.strs, c.stats.maxS...)
	if f.cols[c.col].Type == TypeFloat64 {
		s.lo, s.hi = math.Float64bits(c.stats.minF), math.Float64bits(c.stats.maxF)
	} else {
		s.lo, s.hi = uint64(c.stats.minI), uint64(c.stats.maxI)
	}
	return s
}

// unitSpan returns the first and past-last byte of a block's
// dictionary and page units (-1, -1 when it has none).
func unitSpan(bm *blockMeta) [2]int64 {
	lo, hi := int64(-1), int64(-1)
	note := func(o, l int64) {
		if lo < 0 || o < lo {
			lo = o
		}
		hi = max(hi, o+l)
	}
	for _, c := range bm.chunks {
		for _, d := range c.dict {
			note(d.off, d.len)
		}
		for i := range c.pages.Len() {
			note(c.pages.unit(i))
		}
	}
	return [2]int64{lo, hi}
}

// blockScratch is what decoding one block record after another reuses.
type blockScratch struct {
	pages []pageMeta
}

// errFooterChanged says a block record decoded again differs from what
// the segment's open found in it.
var errFooterChanged = errors.New("record differs from the one decoded at open")

// decodeBlockRecord decodes one block's footer record (rec: its bytes,
// nothing after them) of a footer whose column directory is cols; the
// block's firstRow is left 0. Its fuzz target is FuzzDecodeBlockRecord.
func decodeBlockRecord(rec []byte, bi int, cols []ColumnDesc, dataEnd int64, version uint8) (blockMeta, error) {
	d := decbuf{b: rec}
	var sc blockScratch
	bm, err := decodeBlock(&d, bi, cols, dataEnd, version, &sc)
	if err != nil {
		return blockMeta{}, err
	}
	if d.err != nil {
		return blockMeta{}, d.err
	}
	if len(d.b) != 0 {
		return blockMeta{}, fmt.Errorf("%d bytes after the block record", len(d.b))
	}
	return bm, nil
}

// decodeBlock reads block bi's record: rows, time range, chunks. A short
// or malformed read leaves d.err set (the caller checks it); other
// inconsistencies come back as the error.
func decodeBlock(d *decbuf, bi int, cols []ColumnDesc, dataEnd int64, version uint8, sc *blockScratch) (blockMeta, error) {
	ncols := len(cols)
	var b blockMeta
	r := d.uvarint()
	if r == 0 || r > maxBlockRows {
		d.fail(fmt.Errorf("block %d: too big value for rowsCount: %d; mustn't exceed %d", bi, r, maxBlockRows))
	}
	b.rows = int(min(r, maxBlockRows))
	b.minTime = d.varint()
	b.maxTime = d.varint()
	nchunks := d.count("chunks", ncols, 6)
	if d.err != nil {
		return b, nil
	}
	b.chunks = make([]chunkMeta, nchunks)
	b.byCol = make([]int32, ncols)
	pages := sc.pages[:0]
	defer func() { sc.pages = pages[:0] }()
	for i := range b.byCol {
		b.byCol[i] = -1
	}
	for ci := range b.chunks {
		c := &b.chunks[ci]
		col := d.uvarint()
		if d.err == nil && col >= uint64(ncols) {
			return b, fmt.Errorf("block %d: chunk column %d out of range", bi, col)
		}
		c.col = int(min(col, uint64(max(ncols-1, 0))))
		if d.err == nil && b.byCol[c.col] >= 0 {
			return b, fmt.Errorf("block %d: column %d twice", bi, col)
		}
		if d.err == nil {
			b.byCol[c.col] = int32(ci)
		}
		c.enc = Encoding(d.byte1())
		c.width = d.byte1()
		c.present = int(min(d.uvarint(), uint64(maxBlockRows)+1))
		if d.err == nil {
			if err := checkEncoding(cols[c.col].Type, c.enc, c.width, version); err != nil {
				return b, fmt.Errorf("block %d column %q: %w", bi, cols[c.col].Path, err)
			}
			if c.present > b.rows {
				return b, fmt.Errorf("block %d column %q: %d present of %d rows", bi, cols[c.col].Path, c.present, b.rows)
			}
		}
		c.stats.flags = d.byte1()
		if d.err == nil {
			if err := checkStatFlags(cols[c.col].Type, c.enc, c.stats.flags, version); err != nil {
				return b, fmt.Errorf("block %d column %q: %w", bi, cols[c.col].Path, err)
			}
		}
		if c.stats.flags&statNum != 0 {
			if d.err == nil && cols[c.col].Type == TypeFloat64 {
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
			if err := decodeDictPages(d, c, dataEnd, version); err != nil {
				return b, fmt.Errorf("block %d column %q: %w", bi, cols[c.col].Path, err)
			}
		}
		if d.err == nil && (c.enc == encDict) != (c.dictEntries > 0) {
			return b, fmt.Errorf("block %d column %q: dictionary mismatch", bi, cols[c.col].Path)
		}
		if version >= FormatV2 {
			c.histOff = int64(min(d.uvarint(), 1<<62))
			if c.histOff > 0 {
				c.histLen = int64(min(d.uvarint(), 1<<62))
				if d.err == nil && !unitInRange(c.histOff, c.histLen, dataEnd) {
					return b, fmt.Errorf("block %d: history unit [%d,+%d) out of range", bi, c.histOff, c.histLen)
				}
				if d.err == nil && c.enc != encBytes {
					return b, fmt.Errorf("block %d column %q: history for encoding %d", bi, cols[c.col].Path, c.enc)
				}
			}
		}
		if c.enc == encDerived && d.err == nil {
			t, err := decodeDerivedTable(d, c.col, cols, version)
			if err != nil {
				return b, fmt.Errorf("block %d column %q: %w", bi, cols[c.col].Path, err)
			}
			c.derived = t
		}
		var err error
		if pages, err = decodePages(d, c, cols[c.col].Type, b.rows, dataEnd, pages); err != nil {
			return b, fmt.Errorf("block %d column %q: %w", bi, cols[c.col].Path, err)
		}
		if d.err != nil {
			return b, nil
		}
	}
	if err := checkDerivedRefs(&b); err != nil {
		return b, fmt.Errorf("block %d: %w", bi, err)
	}
	blockPages(b.chunks, pages, cols)
	return b, nil
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
