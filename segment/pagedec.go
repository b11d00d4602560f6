package segment

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"sync"

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
}

func parsePage(body []byte, rows int) (pageView, error) {
	pv := pageView{rows: rows, present: rows}
	if len(body) < 1 {
		return pv, errShort
	}
	rest := body[1:]
	switch body[0] {
	case validAll:
	case validBitmap:
		nb := (rows + 7) / 8
		if len(rest) < nb {
			return pv, errShort
		}
		pv.bitmap, rest = rest[:nb], rest[nb:]
		pv.present = 0
		for _, x := range pv.bitmap {
			pv.present += bits.OnesCount8(x)
		}
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

var scratchPool = sync.Pool{New: func() any { return new([]uint32) }}

// decodePage writes the rows sel wants of a page of chunk c (column type
// t) to out. Only the values up to the last wanted row are looked at,
// except for encodings whose layout needs the page's value count (the
// start of encBytes' bytes, encHex's suffixes, encIP's addresses).
func decodePage(pv *pageView, t ColType, c *chunkMeta, sel rowSel, out *pageOut) error {
	n := sel.n()
	if n == 0 {
		return nil
	}
	dst := out.dst
	rk := ranker{bitmap: pv.bitmap}
	vals := pv.vals
	switch c.enc {
	case encNone:
		for i := 0; i < n; i++ {
			if pv.has(sel.at(i)) {
				dst.Bools[out.off+i] = true
			} else {
				out.null(out.off + i)
			}
		}
		return nil
	case encBits:
		if len(vals) < (pv.present+7)/8 {
			return errShort
		}
		for i := 0; i < n; i++ {
			r := sel.at(i)
			if !pv.has(r) {
				out.null(out.off + i)
				continue
			}
			k := rk.rank(r)
			dst.Bools[out.off+i] = vals[k>>3]&(1<<(k&7)) != 0
		}
		return nil
	case encPlain64:
		if len(vals) < 8*pv.present {
			return errShort
		}
		for i := 0; i < n; i++ {
			r := sel.at(i)
			if !pv.has(r) {
				out.null(out.off + i)
				continue
			}
			u := binary.LittleEndian.Uint64(vals[8*rk.rank(r):])
			if t == TypeFloat64 {
				dst.Floats[out.off+i] = math.Float64frombits(u)
			} else {
				dst.Ints[out.off+i] = int64(u)
			}
		}
		return nil
	case encDelta:
		return decodeDelta(pv, sel, out)
	case encDict:
		return decodeDictCodes(pv, t, c, sel, out)
	case encUUID:
		if len(vals) < 16*pv.present {
			return errShort
		}
		out.reserve(36 * n)
		for i := 0; i < n; i++ {
			r := sel.at(i)
			if !pv.has(r) {
				out.null(out.off + i)
				continue
			}
			k := rk.rank(r)
			dst.Bytes = appendUUIDText(dst.Bytes, vals[16*k:16*k+16])
			if err := out.endStr(out.off + i); err != nil {
				return err
			}
		}
		return nil
	case encHex:
		scratch := scratchPool.Get().(*[]uint32)
		defer scratchPool.Put(scratch)
		hv, err := parseHex(vals, c.width, pv.present, *scratch)
		*scratch = hv.ends
		if err != nil {
			return err
		}
		out.reserve((2*hv.w + 4) * n)
		for i := 0; i < n; i++ {
			r := sel.at(i)
			if !pv.has(r) {
				out.null(out.off + i)
				continue
			}
			dst.Bytes = hv.appendValue(dst.Bytes, rk.rank(r))
			if err := out.endStr(out.off + i); err != nil {
				return err
			}
		}
		return nil
	case encIP:
		scratch := scratchPool.Get().(*[]uint32)
		defer scratchPool.Put(scratch)
		iv, err := parseIP(vals, pv.present, *scratch)
		*scratch = iv.start
		if err != nil {
			return err
		}
		out.reserve(16 * n)
		for i := 0; i < n; i++ {
			r := sel.at(i)
			if !pv.has(r) {
				out.null(out.off + i)
				continue
			}
			dst.Bytes = iv.appendValue(dst.Bytes, rk.rank(r))
			if err := out.endStr(out.off + i); err != nil {
				return err
			}
		}
		return nil
	case encBytes:
		return decodeBytes(pv, sel, out)
	}
	return fmt.Errorf("unknown encoding %d", c.enc)
}

// decodeDelta decodes sequentially from the page start to the last wanted
// row. The loop reads varints by index into a local slice: a decbuf's
// reslicing through a pointer costs a GC write barrier per value while
// GC runs.
func decodeDelta(pv *pageView, sel rowSel, out *pageOut) error {
	n := sel.n()
	last := sel.at(n - 1)
	prev := int64(0)
	vi, pos, i := 0, 0, 0
	next := sel.at(0)
	vals, ints := pv.vals, out.dst.Ints
	for r := 0; r <= last; r++ {
		if !pv.has(r) {
			if r == next {
				out.null(out.off + i)
				if i++; i < n {
					next = sel.at(i)
				}
			}
			continue
		}
		x, m := binary.Uvarint(vals[pos:])
		if m <= 0 {
			return errShort
		}
		pos += m
		prev += unzigzag(x)
		vi++
		if r == next {
			ints[out.off+i] = prev
			if i++; i < n {
				next = sel.at(i)
			}
		}
	}
	if vi > pv.present {
		return errors.New("delta values exceed present count")
	}
	return nil
}

// decodeBytes decodes encBytes values: the uvarint lengths of all the
// page's values, then their bytes.
func decodeBytes(pv *pageView, sel rowSel, out *pageOut) error {
	vals := pv.vals
	// Where the bytes start: after present varints.
	start, seen := 0, 0
	for start < len(vals) && seen < pv.present {
		if vals[start] < 0x80 {
			seen++
		}
		start++
	}
	if seen < pv.present {
		return errShort
	}
	data := vals[start:]
	n := sel.n()
	last := sel.at(n - 1)
	if pv.present > 0 {
		out.reserve(int(int64(len(data)) * int64(n) / int64(pv.rows)))
	}
	dst := out.dst
	pos, off, i := 0, uint64(0), 0
	next := sel.at(0)
	for r := 0; r <= last; r++ {
		if !pv.has(r) {
			if r == next {
				out.null(out.off + i)
				if i++; i < n {
					next = sel.at(i)
				}
			}
			continue
		}
		l, m := binary.Uvarint(vals[pos:start])
		if m <= 0 || l > uint64(len(data))-off {
			return errShort
		}
		pos += m
		if r == next {
			dst.Bytes = append(dst.Bytes, data[off:off+l]...)
			if err := out.endStr(out.off + i); err != nil {
				return err
			}
			if i++; i < n {
				next = sel.at(i)
			}
		}
		off += l
	}
	return nil
}

// decodeDictCodes decodes dictionary codes: as codes (whole dictionary),
// as the entries' values (ints from the whole dictionary, or single
// entries through out.look).
func decodeDictCodes(pv *pageView, t ColType, c *chunkMeta, sel rowSel, out *pageOut) error {
	w := int(c.width)
	vals := pv.vals
	if len(vals) < w*pv.present {
		return errShort
	}
	nd := c.dictEntries
	if out.dict != nil {
		nd = len(out.dict.strs) + len(out.dict.ints)
	}
	n := sel.n()
	dst := out.dst
	rk := ranker{bitmap: pv.bitmap}
	for i := 0; i < n; i++ {
		r := sel.at(i)
		j := out.off + i
		if !pv.has(r) {
			out.null(j)
			continue
		}
		k := rk.rank(r)
		var code uint32
		switch w {
		case 1:
			code = uint32(vals[k])
		case 2:
			code = uint32(binary.LittleEndian.Uint16(vals[2*k:]))
		default:
			code = binary.LittleEndian.Uint32(vals[4*k:])
		}
		if int(code) >= nd {
			return fmt.Errorf("dictionary code %d of %d", code, nd)
		}
		switch {
		case out.look != nil && t == TypeString:
			e, err := out.look.str(code)
			if err != nil {
				return err
			}
			dst.Bytes = append(dst.Bytes, e...)
			if err := out.endStr(j); err != nil {
				return err
			}
		case out.look != nil:
			x, err := out.look.int(code)
			if err != nil {
				return err
			}
			dst.Ints[j] = x
		case t == TypeString:
			dst.Codes[j] = code
		default:
			dst.Ints[j] = out.dict.ints[code]
		}
	}
	return nil
}
