package segment

import (
	"encoding/binary"
	"fmt"

	"github.com/sediment/sediment/internal/varint"
)

// encDict: a chunk's distinct values in a sorted dictionary (a version 1
// unit, or version 2 dictionary pages), and each present row's code in
// the data pages, 1, 2 or 4 bytes little-endian. Writers and the data
// page reader are here; dict.go reads and caches dictionaries.

// appendDictCodes writes the codes of the present rows of [from, to),
// width bytes each.
func appendDictCodes(dst []byte, width uint8, codes []uint32, d *ColumnData, from, to int) []byte {
	for i := from; i < to; i++ {
		if !d.present(i) {
			continue
		}
		c := codes[i]
		switch width {
		case 1:
			dst = append(dst, byte(c))
		case 2:
			dst = binary.LittleEndian.AppendUint16(dst, uint16(c))
		default:
			dst = binary.LittleEndian.AppendUint32(dst, c)
		}
	}
	return dst
}

// appendDictPage encodes entries [from, to) of the chunk's dictionary as a
// version 2 dictionary page: string entries' uvarint lengths, then their
// bytes; int entries as 8 bytes LE each.
func (p *chunkPlan) appendDictPage(dst []byte, from, to int) []byte {
	if p.dictStrs != nil {
		for _, s := range p.dictStrs[from:to] {
			dst = binary.AppendUvarint(dst, uint64(len(s)))
		}
		for _, s := range p.dictStrs[from:to] {
			dst = append(dst, s...)
		}
		return dst
	}
	for _, x := range p.dictInts[from:to] {
		dst = binary.LittleEndian.AppendUint64(dst, uint64(x))
	}
	return dst
}

// dictEntryBytes is the size of entry i in a version 2 dictionary page.
func (p *chunkPlan) dictEntryBytes(i int) int {
	if p.dictStrs != nil {
		return len(p.dictStrs[i]) + 1
	}
	return 8
}

// appendDict encodes the chunk's dictionary as a version 1 unit.
func (p *chunkPlan) appendDict(dst []byte) []byte {
	if p.dictStrs != nil {
		dst = binary.AppendUvarint(dst, uint64(len(p.dictStrs)))
		for _, s := range p.dictStrs {
			dst = binary.AppendUvarint(dst, uint64(len(s)))
			dst = append(dst, s...)
		}
		return dst
	}
	dst = binary.AppendUvarint(dst, uint64(len(p.dictInts)))
	prev := int64(0)
	for _, x := range p.dictInts {
		dst = binary.AppendUvarint(dst, varint.Zigzag(x-prev))
		prev = x
	}
	return dst
}

// decodeDictCodes decodes dictionary codes: as codes (whole dictionary),
// as the entries' values (ints from the whole dictionary, or single
// entries through out.look).
func decodeDictCodes(pv *pageView, t ColType, c *chunkMeta, sel rowSel, out *pageOut) error {
	if pv.packed {
		return decodePackedCodes(pv, t, c, sel, out)
	}
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
		if err := out.putCode(t, j, code); err != nil {
			return err
		}
	}
	return nil
}

// putCode writes dictionary code (checked against the dictionary's size)
// as row j: as a code, or the entry's value (ints from the whole
// dictionary, or single entries through out.look).
func (out *pageOut) putCode(t ColType, j int, code uint32) error {
	dst := out.dst
	switch {
	case out.look != nil && t == TypeString:
		e, err := out.look.str(code)
		if err != nil {
			return err
		}
		dst.Bytes = append(dst.Bytes, e...)
		return out.endStr(j)
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
	return nil
}
