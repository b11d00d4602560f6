package segment

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/bits"

	"github.com/sediment/sediment/internal/vec"
)

// rowSel is the rows of a page a read wants, ascending: [lo, hi) when list
// is nil, else list[i] - base for each i.
type rowSel struct {
	lo, hi int
	list   []int32
	base   int
}

func (s *rowSel) n() int {
	if s.list != nil {
		return len(s.list)
	}
	return s.hi - s.lo
}

func (s *rowSel) at(i int) int {
	if s.list != nil {
		return int(s.list[i]) - s.base
	}
	return s.lo + i
}

// pageView is a decompressed data page split into validity and values.
type pageView struct {
	rows    int
	bitmap  []byte // nil: every row has a value
	present int
	vals    []byte
	// packed: the validity byte had validPacked (version 4): vals are
	// bit-packed dictionary codes.
	packed bool
}

// readValuesPage reads and splits data page pm of a chunk whose pages hold
// values, not bit-packed codes (encoding names the chunk's encoding in the
// error when one does). The caller calls release once done with the view
// (it gives a pooled page buffer back).
func (r *Reader) readValuesPage(pm *pageMeta, encoding string, mode cacheMode, hist historyOf) (pv pageView, release func(), err error) {
	body, pooled, err := r.page(pm.off, pm.len, "page", mode, hist)
	if err != nil {
		return pv, nil, err
	}
	release = func() {}
	if pooled {
		release = func() { putBuf(body) }
	}
	if pv, err = parsePage(body, pm.rows, r.version); err == nil && pv.packed {
		err = errors.New("packed values in a page of " + encoding)
	}
	if err != nil {
		release()
		return pv, nil, err
	}
	return pv, release, nil
}

// parsePage splits a data page of a file of the given format version.
func parsePage(body []byte, rows int, version uint8) (pageView, error) {
	pv := pageView{rows: rows, present: rows}
	if len(body) < 1 {
		return pv, errShort
	}
	rest := body[1:]
	kind := body[0]
	if kind&validPacked != 0 && version >= FormatV4 {
		pv.packed = true
		kind &^= validPacked
	}
	switch kind {
	case validAll:
	case validBitmap:
		nb := (rows + 7) / 8
		if len(rest) < nb {
			return pv, errShort
		}
		pv.bitmap, rest = rest[:nb], rest[nb:]
		pv.present = countOnes(pv.bitmap)
	default:
		return pv, fmt.Errorf("bad validity kind %d", body[0])
	}
	pv.vals = rest
	return pv, nil
}

func (p *pageView) has(r int) bool { return p.bitmap == nil || p.bitmap[r>>3]&(1<<(r&7)) != 0 }

// ranker gives the value index of rows asked in increasing order: the
// number of rows with a value before it.
type ranker struct {
	bitmap []byte
	r, k   int
}

func (rk *ranker) rank(r int) int {
	if rk.bitmap == nil {
		return r
	}
	for rk.r < r && rk.r&7 != 0 {
		rk.k += int(rk.bitmap[rk.r>>3]>>(rk.r&7)) & 1
		rk.r++
	}
	for rk.r+8 <= r {
		rk.k += bits.OnesCount8(rk.bitmap[rk.r>>3])
		rk.r += 8
	}
	for rk.r < r {
		rk.k += int(rk.bitmap[rk.r>>3]>>(rk.r&7)) & 1
		rk.r++
	}
	return rk.k
}

// pageOut is where a page's wanted rows go: dst rows off, off+1, ...
// Strings go to dst.Bytes+Offs, or as codes to dst.Codes when a
// dictionary-encoded chunk is read whole (dict); look resolves single
// entries of a dictionary instead.
type pageOut struct {
	dst  *vec.Vector
	off  int
	dict *dictData
	look *dictLookup
	// refs (encDerived) are the referenced columns' values, row for
	// row with dst; derivedEnds is scratch for the page's literals.
	refs        []vec.Vector
	derivedEnds *[]uint32
}

func (o *pageOut) null(j int) {
	d := o.dst
	if d.Nulls == nil {
		d.Nulls = vec.NewBitset(d.Len)
	}
	d.Nulls.Set(j)
	if len(d.Offs) > 0 {
		d.Offs[j+1] = uint32(len(d.Bytes))
	}
}

// errTooBig: the strings of one read do not fit the 32-bit offsets of a
// vector. Not damage: a caller reads a smaller range.
var errTooBig = errors.New("segment: the values read exceed 4 GiB; read fewer rows")

// endStr records the end of row j's string in Bytes+Offs form.
func (o *pageOut) endStr(j int) error {
	if len(o.dst.Bytes) > math.MaxUint32 {
		return errTooBig
	}
	o.dst.Offs[j+1] = uint32(len(o.dst.Bytes))
	return nil
}

// reserve makes room for n more bytes in dst.Bytes, at least doubling
// its capacity when it grows.
func (o *pageOut) reserve(n int) {
	if b := o.dst.Bytes; cap(b)-len(b) < n {
		nb := make([]byte, len(b), max(len(b)+n, 2*cap(b)))
		copy(nb, b)
		o.dst.Bytes = nb
	}
}

// decodePage writes the rows sel wants of a page of chunk c (column type
// t) to out. Only the values up to the last wanted row are looked at,
// except for encodings whose layout needs the page's value count (the
// start of encBytes' bytes, encHex's suffixes, encIP's addresses).
func decodePage(pv *pageView, t ColType, c *chunkMeta, sel rowSel, out *pageOut) error {
	if sel.n() == 0 {
		return nil
	}
	if pv.packed && c.enc != encDict {
		return fmt.Errorf("packed values in a page of encoding %d", c.enc)
	}
	switch c.enc {
	case encNone:
		return decodeNone(pv, sel, out)
	case encBits:
		return decodeBits(pv, sel, out)
	case encPlain64:
		return decodePlain64(pv, t, sel, out)
	case encDelta:
		return decodeDelta(pv, sel, out)
	case encDict:
		return decodeDictCodes(pv, t, c, sel, out)
	case encUUID:
		return decodeUUID(pv, sel, out)
	case encHex:
		return decodeHex(pv, c.width, sel, out)
	case encIP:
		return decodeIP(pv, sel, out)
	case encBytes:
		return decodeBytes(pv, sel, out)
	case encDerived:
		return decodeDerived(pv, c, sel, out)
	}
	return fmt.Errorf("unknown encoding %d", c.enc)
}

// decodeFromStats writes the rows sel wants of page p of chunk c (column
// type t) from the footer's statistics of the page alone, when they decide
// them, and reports whether they did: no row of the page has a value, or
// every row has the same one (the page's smallest and largest are equal):
// an integer, or the code of a dictionary-encoded string. A read of a few
// records then decompresses nothing of such a page (a column absent from
// most events, one constant within a block of one project).
func decodeFromStats(p *pageMeta, t ColType, c *chunkMeta, sel rowSel, out *pageOut) (bool, error) {
	n := sel.n()
	switch {
	case p.present == 0:
		for i := 0; i < n; i++ {
			out.null(out.off + i)
		}
		return true, nil
	case p.present != p.rows || !p.hasRange || p.minI != p.maxI:
		return false, nil
	case t == TypeInt64 || t == TypeTimestamp:
		// Values (of a dictionary-encoded int chunk too: its page
		// statistics are of values, not codes).
		for i := 0; i < n; i++ {
			out.dst.Ints[out.off+i] = p.minI
		}
		return true, nil
	case t == TypeString && c.enc == encDict:
		nd := c.dictEntries
		if out.dict != nil {
			nd = len(out.dict.strs)
		}
		if p.minI < 0 || p.minI >= int64(nd) {
			return true, fmt.Errorf("page statistics: dictionary code %d of %d", p.minI, nd)
		}
		for i := 0; i < n; i++ {
			if err := out.putCode(t, out.off+i, uint32(p.minI)); err != nil {
				return true, err
			}
		}
		return true, nil
	}
	return false, nil
}

// countOnes counts the set bits of b, eight bytes at a time (a page's
// bitmap is a kilobyte: every read of a page with NULLs counts it).
func countOnes(b []byte) int {
	n := 0
	for len(b) >= 8 {
		n += bits.OnesCount64(binary.LittleEndian.Uint64(b))
		b = b[8:]
	}
	for _, x := range b {
		n += bits.OnesCount8(x)
	}
	return n
}

// varintsEnd returns where the first k uvarints of b end (the lengths
// that lead encBytes pages and dictionary pages), and false when b holds
// fewer. A uvarint ends at a byte below 0x80: eight bytes at a time, it
// counts those.
func varintsEnd(b []byte, k int) (int, bool) {
	pos, seen := 0, 0
	for pos+8 <= len(b) {
		ends := bits.OnesCount64(^binary.LittleEndian.Uint64(b[pos:]) & 0x8080808080808080)
		if seen+ends >= k {
			break
		}
		seen += ends
		pos += 8
	}
	for pos < len(b) && seen < k {
		if b[pos] < 0x80 {
			seen++
		}
		pos++
	}
	return pos, seen >= k
}
