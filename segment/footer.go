package segment

import (
	"errors"
	"fmt"
)

type pageMeta struct {
	firstRow, rows int   // relative to the block
	off, len       int64 // unit position, trailer included
}

type chunkMeta struct {
	col         int
	enc         Encoding
	width       uint8
	present     int
	stats       chunkStats
	dictEntries int
	dictOff     int64
	dictLen     int64
	pages       []pageMeta
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

// Footer layout (all integers uvarint unless noted "varint" (zigzag) or u8):
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
//	              dictEntries, [dictOff, dictLen when dictEntries > 0]
//	              npages, then per page: firstRow, rows, off, len
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
				e.uvarint(uint64(c.dictOff))
				e.uvarint(uint64(c.dictLen))
			}
			e.uvarint(uint64(len(c.pages)))
			for _, p := range c.pages {
				e.uvarint(uint64(p.firstRow))
				e.uvarint(uint64(p.rows))
				e.uvarint(uint64(p.off))
				e.uvarint(uint64(p.len))
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
	_ = version // one version so far; decoders take it to evolve
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
				if err := checkEncoding(f.cols[c.col].Type, c.enc, c.width); err != nil {
					return nil, fmt.Errorf("block %d column %q: %w", bi, f.cols[c.col].Path, err)
				}
				if c.present > b.rows {
					return nil, fmt.Errorf("block %d column %q: %d present of %d rows", bi, f.cols[c.col].Path, c.present, b.rows)
				}
			}
			c.stats.flags = d.byte1()
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
				c.dictOff = int64(min(d.uvarint(), 1<<62))
				c.dictLen = int64(min(d.uvarint(), 1<<62))
				if d.err == nil && !unitInRange(c.dictOff, c.dictLen, dataEnd) {
					return nil, fmt.Errorf("block %d: dictionary unit [%d,+%d) out of range", bi, c.dictOff, c.dictLen)
				}
			}
			if d.err == nil && (c.enc == encDict) != (c.dictEntries > 0) {
				return nil, fmt.Errorf("block %d column %q: dictionary mismatch", bi, f.cols[c.col].Path)
			}
			npages := d.count("pages", maxPagesPerChunk, 4)
			c.pages = make([]pageMeta, npages)
			next := 0
			for pi := range c.pages {
				p := &c.pages[pi]
				p.firstRow = int(min(d.uvarint(), maxBlockRows))
				p.rows = int(min(d.uvarint(), maxBlockRows))
				p.off = int64(min(d.uvarint(), 1<<62))
				p.len = int64(min(d.uvarint(), 1<<62))
				if d.err != nil {
					break
				}
				if p.firstRow != next || p.rows == 0 {
					return nil, fmt.Errorf("block %d column %q: page %d does not continue rows", bi, f.cols[c.col].Path, pi)
				}
				next += p.rows
				if !unitInRange(p.off, p.len, dataEnd) {
					return nil, fmt.Errorf("block %d: page unit [%d,+%d) out of range", bi, p.off, p.len)
				}
			}
			if d.err == nil && next != b.rows {
				return nil, fmt.Errorf("block %d column %q: pages cover %d of %d rows", bi, f.cols[c.col].Path, next, b.rows)
			}
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

func unitInRange(off, ln, dataEnd int64) bool {
	return off >= headerSize && ln >= unitTrailerSize && off <= dataEnd && ln <= dataEnd-off
}

// checkEncoding rejects encodings a column type cannot have.
func checkEncoding(t ColType, e Encoding, width uint8) error {
	ok := false
	switch t {
	case TypeBool:
		ok = e == encBits
	case TypeInt64, TypeTimestamp:
		ok = e == encPlain64 || e == encDelta || e == encDict
	case TypeFloat64:
		ok = e == encPlain64
	case TypeString:
		ok = e == encBytes || e == encDict || e == encUUID
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
	return nil
}
