package segment

import (
	"crypto/sha256"
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

// sameChunksMax bounds the chunks a writer keeps per block to compare
// with.
const sameChunksMax = 1024

// sameChunks is what a writer keeps of the dictionary-encoded string
// chunks written in the current block: each one's footer entry and a
// SHA-256 digest of its values. Copies of the values (codes, NULLs and
// dictionary entries) took up to 4 MiB per writer (issue 14: 7 MB of the
// heap at 10M events, a flush and a compaction writing at once); a digest
// takes 32 bytes, and two different chunks with the same digest are a
// SHA-256 collision. Hashing a chunk's values (SHA-NI: about 2 GB/s) costs
// less than copying them did.
type sameChunks struct {
	list []sameChunk
	n    int // entries of list in use
	// buf holds the bytes a digest is taken of, chunk after chunk.
	buf []byte
}

// sameChunk is one chunk written: its footer entry and its digest.
type sameChunk struct {
	meta chunkMeta
	sum  [sha256.Size]byte
}

// sameChunksPool keeps the buffers of finished writers' sameChunks.
var sameChunksPool = sync.Pool{New: func() any { return new(sameChunks) }}

func getSameChunks() *sameChunks { return sameChunksPool.Get().(*sameChunks) }

// sameChunksBufMax is the largest digest buffer the pool keeps.
const sameChunksBufMax = 1 << 20

// putSameChunks gives s back, emptied, for another writer.
func putSameChunks(s *sameChunks) {
	s.reset()
	if cap(s.buf) > sameChunksBufMax {
		s.buf = nil
	}
	sameChunksPool.Put(s)
}

// reset forgets the chunks of the previous block.
func (s *sameChunks) reset() {
	for i := range s.list[:s.n] {
		s.list[i].meta = chunkMeta{}
	}
	s.n = 0
}

// digest returns the digest of the values of plan p over d (rows rows):
// its row count, present count, code width, dictionary entries (each
// length-prefixed), which rows have a value, and their codes. Two chunks
// with the same digest have the same rows, NULLs and dictionary.
func (s *sameChunks) digest(p *chunkPlan, d *ColumnData, rows int) [sha256.Size]byte {
	b := s.buf[:0]
	b = binary.AppendUvarint(b, uint64(rows))
	b = binary.AppendUvarint(b, uint64(p.present))
	b = append(b, p.width)
	b = binary.AppendUvarint(b, uint64(len(p.dictStrs)))
	for _, e := range p.dictStrs {
		b = binary.AppendUvarint(b, uint64(len(e)))
		b = append(b, e...)
	}
	b = d.appendValidity(b, 0, rows)
	b = appendDictCodes(b, p.width, p.codes, d, 0, rows)
	s.buf = b
	return sha256.Sum256(b)
}

// find returns the footer entry of a chunk written in the block whose
// values have digest sum (see digest) and whose plan is p's, with its own
// copy of the unit lists.
func (s *sameChunks) find(p *chunkPlan, sum [sha256.Size]byte) (chunkMeta, bool) {
	for i := range s.list[:s.n] {
		c := &s.list[i]
		if c.sum != sum || c.meta.present != p.present || c.meta.width != p.width || c.meta.dictEntries != len(p.dictStrs) {
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

// add keeps chunk cm, whose values have digest sum, for the columns after
// it in the block.
func (s *sameChunks) add(cm chunkMeta, sum [sha256.Size]byte) {
	if s.n == sameChunksMax {
		return
	}
	if s.n == len(s.list) {
		s.list = append(s.list, sameChunk{})
	}
	s.list[s.n] = sameChunk{meta: cm, sum: sum}
	s.n++
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
