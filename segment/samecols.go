package segment

import (
	"encoding/binary"
	"slices"
	"sync"
)

// Identical columns stored once (format version 4). Platform events carry
// some values twice under two names: the client address as
// headers.cf_connecting_ip and headers.x_real_ip, the host as host and
// headers.host, the country as cf.country and headers.cf_ipcountry. When
// a dictionary-encoded string chunk of a block has the same rows, NULLs
// and dictionary as one written before in the block, the writer lists it
// in the footer with the earlier chunk's units (dictionary pages and data
// pages, and so its statistics) instead of writing them again. The reader
// needs nothing new (units are found by offset); a read of both columns
// of a record reads the units once, through the page cache or the
// record's page memo. On platform events the client address alone took
// 2.3 bytes a row for the second copy (a 45 KB dictionary and 105 KB of
// codes per 65,536 rows).

// sameChunksBudget bounds the bytes a writer keeps per block to compare
// chunks with (codes, NULLs and dictionary entries of the chunks written).
const sameChunksBudget = 4 << 20

// sameChunks is what a writer keeps of the dictionary-encoded string
// chunks written in the current block.
type sameChunks struct {
	list  []sameChunk
	n     int // entries of list in use
	bytes int
}

// sameChunk is one chunk written: its footer entry and its values.
type sameChunk struct {
	meta  chunkMeta
	dict  []string
	text  []byte // the dictionary's bytes, which dict's strings are cut from
	nulls []byte // bit r set: row r has a value
	codes []byte // the codes of the rows with a value, width bytes each
}

// sameChunksPool keeps the buffers of finished writers' sameChunks: every
// flush and compaction writes blocks, each keeping up to
// sameChunksBudget.
var sameChunksPool = sync.Pool{New: func() any { return new(sameChunks) }}

func getSameChunks() *sameChunks { return sameChunksPool.Get().(*sameChunks) }

// putSameChunks gives s back, emptied, for another writer.
func putSameChunks(s *sameChunks) {
	s.reset()
	sameChunksPool.Put(s)
}

// reset forgets the chunks of the previous block (their buffers stay
// for reuse).
func (s *sameChunks) reset() {
	for i := range s.list[:s.n] {
		s.list[i].meta = chunkMeta{}
	}
	s.n, s.bytes = 0, 0
}

// find returns the footer entry of a chunk written in the block whose
// rows, NULLs and dictionary are those of plan p over d (rows rows),
// with its own copy of the unit lists.
func (s *sameChunks) find(p *chunkPlan, d *ColumnData, rows int) (chunkMeta, bool) {
	for i := range s.list[:s.n] {
		c := &s.list[i]
		if c.meta.present != p.present || c.meta.width != p.width || len(c.dict) != len(p.dictStrs) ||
			!slices.Equal(c.dict, p.dictStrs) || !c.sameRows(p, d, rows) {
			continue
		}
		m := c.meta
		m.dict = slices.Clone(m.dict)
		// A directory of its own, as every chunk being written has
		// (addPage): the same pages, units and ranges.
		m.pages = PageList{}
		for i := range c.meta.pages.Len() {
			m.addPage(c.meta.page(i), TypeString)
		}
		return m, true
	}
	return chunkMeta{}, false
}

// sameRows reports whether p's codes over d are c's, row for row.
func (c *sameChunk) sameRows(p *chunkPlan, d *ColumnData, rows int) bool {
	if len(c.nulls) < (rows+7)/8 {
		return false
	}
	w := int(c.meta.width)
	k := 0
	for r := 0; r < rows; r++ {
		has := d.present(r)
		if has != (c.nulls[r>>3]&(1<<(r&7)) != 0) {
			return false
		}
		if !has {
			continue
		}
		if k+w > len(c.codes) || codeAt(c.codes[k:], w) != p.codes[r] {
			return false
		}
		k += w
	}
	return true
}

func codeAt(b []byte, w int) uint32 {
	switch w {
	case 1:
		return uint32(b[0])
	case 2:
		return uint32(binary.LittleEndian.Uint16(b))
	}
	return binary.LittleEndian.Uint32(b)
}

// add keeps chunk cm, written from plan p over d, for the columns after
// it in the block, unless the block's budget is spent.
func (s *sameChunks) add(cm chunkMeta, p *chunkPlan, d *ColumnData, rows int) {
	w := int(p.width)
	text := 0
	for _, e := range p.dictStrs {
		text += len(e)
	}
	cost := (rows+7)/8 + p.present*w + text + 16*len(p.dictStrs)
	if s.bytes+cost > sameChunksBudget {
		return
	}
	s.bytes += cost
	if s.n == len(s.list) {
		s.list = append(s.list, sameChunk{})
	}
	c := &s.list[s.n]
	s.n++
	c.meta = cm
	c.text = c.text[:0]
	for _, e := range p.dictStrs {
		c.text = append(c.text, e...)
	}
	// The strings are cut from c's own copy of the entries (p's may point
	// into d, which the caller reuses for the next column); c.text is
	// written again only once c is reset, when nothing compares with them.
	all := unsafeString(c.text)
	c.dict = c.dict[:0]
	pos := 0
	for _, e := range p.dictStrs {
		c.dict = append(c.dict, all[pos:pos+len(e)])
		pos += len(e)
	}
	c.nulls = slices.Grow(c.nulls[:0], (rows+7)/8)[:(rows+7)/8]
	clear(c.nulls)
	c.codes = c.codes[:0]
	for r := 0; r < rows; r++ {
		if !d.present(r) {
			continue
		}
		c.nulls[r>>3] |= 1 << (r & 7)
		switch code := p.codes[r]; w {
		case 1:
			c.codes = append(c.codes, byte(code))
		case 2:
			c.codes = binary.LittleEndian.AppendUint16(c.codes, uint16(code))
		default:
			c.codes = binary.LittleEndian.AppendUint32(c.codes, code)
		}
	}
}

// FirstUnit returns where the first data page of column col in block b
// lies (ok false: the column has no value in the block). Two columns with
// the same first unit may be one chunk stored once (SameUnits tells). A
// block directory that cannot be read again answers false: the read of
// the column reports the error.
func (r *Reader) FirstUnit(b, col int) (off int64, ok bool) {
	c, err := r.chunk(b, col)
	if c == nil || err != nil || c.pages.Len() == 0 {
		return 0, false
	}
	off, _ = c.pages.unit(0)
	return off, true
}

// SameUnits reports whether columns a and c of block b are one chunk
// stored once: the same type, encoding, dictionary pages and data pages.
// Reading either gives the same values; a record reader reads one. A
// block directory that cannot be read again answers false (the reads of
// the columns report the error).
func (r *Reader) SameUnits(b, a, c int) bool {
	ca, erra := r.chunk(b, a)
	cc, errc := r.chunk(b, c)
	if erra != nil || errc != nil || ca == nil || cc == nil || r.ft.cols[a].Type != r.ft.cols[c].Type || ca.enc != cc.enc || ca.width != cc.width ||
		ca.derived != nil || cc.derived != nil || ca.histOff != cc.histOff || ca.dictEntries != cc.dictEntries {
		return false
	}
	return samePages(ca.pages, cc.pages) && slices.Equal(ca.dict, cc.dict)
}

// samePages reports whether two chunks' pages are the same units with the
// same rows and ranges.
func samePages(a, b PageList) bool {
	if a.Len() != b.Len() {
		return false
	}
	for i := range a.Len() {
		ao, al := a.unit(i)
		bo, bl := b.unit(i)
		if ao != bo || al != bl || a.At(i) != b.At(i) {
			return false
		}
	}
	return true
}
