package index

import (
	"encoding/binary"
	"math/bits"
)

// appendRoaringRows decodes a bitmap in roaring's portable format (see
// roaringenc.go) and appends each of its rows plus add to dst, ascending.
// Every row must be below below: the rows are then at most below many
// (they are strictly ascending, which is checked), so what dst grows by is
// bounded by the caller, not by the bytes. It reads the rows without
// building a roaring.Bitmap: merging indexes decodes every posting of
// every input (issue 14).
func appendRoaringRows(dst []uint32, b []byte, add, below uint32) ([]uint32, error) {
	if len(b) < 4 {
		return dst, corrupt("bitmap of %d bytes", len(b))
	}
	var n int
	var isRun []byte
	var p int
	cookie := binary.LittleEndian.Uint32(b)
	switch {
	case cookie == roaringCookieNoRuns:
		if len(b) < 8 {
			return dst, corrupt("bitmap of %d bytes", len(b))
		}
		n = int(binary.LittleEndian.Uint32(b[4:]))
		p = 8
	case cookie&0xFFFF == roaringCookieRuns:
		n = int(cookie>>16) + 1
		p = 4
		if (n+7)/8 > len(b)-p {
			return dst, corrupt("bitmap run flags past its %d bytes", len(b))
		}
		isRun = b[p : p+(n+7)/8]
		p += (n + 7) / 8
	default:
		return dst, corrupt("bitmap cookie %#x", cookie)
	}
	if n > 1<<16 || 4*n > len(b)-p {
		return dst, corrupt("bitmap of %d containers in %d bytes", n, len(b))
	}
	header := b[p : p+4*n]
	p += 4 * n
	if isRun == nil || n >= roaringNoOffsets {
		if 4*n > len(b)-p {
			return dst, corrupt("bitmap offsets past its %d bytes", len(b))
		}
		p += 4 * n // the containers follow one another: offsets are not needed
	}
	next := int64(0) // the lowest row the next one may be
	put := func(r uint32) bool {
		if int64(r) < next || r >= below {
			return false
		}
		next = int64(r) + 1
		dst = append(dst, r+add)
		return true
	}
	for i := range n {
		key := uint32(binary.LittleEndian.Uint16(header[4*i:])) << 16
		card := int(binary.LittleEndian.Uint16(header[4*i+2:])) + 1
		switch {
		case isRun != nil && isRun[i/8]&(1<<(i%8)) != 0:
			if len(b)-p < 2 {
				return dst, corrupt("bitmap run container past its %d bytes", len(b))
			}
			runs := int(binary.LittleEndian.Uint16(b[p:]))
			p += 2
			if 4*runs > len(b)-p {
				return dst, corrupt("bitmap runs past its %d bytes", len(b))
			}
			for j := range runs {
				start := uint32(binary.LittleEndian.Uint16(b[p+4*j:]))
				length := uint32(binary.LittleEndian.Uint16(b[p+4*j+2:]))
				if start+length > 0xFFFF {
					return dst, corrupt("bitmap run past its container")
				}
				if int64(key|start) < next || key|(start+length) >= below {
					return dst, corrupt("bitmap rows not ascending or past %d", below)
				}
				for r := key | start; r <= key|(start+length); r++ {
					dst = append(dst, r+add)
				}
				next = int64(key|(start+length)) + 1
			}
			p += 4 * runs
		case card <= roaringMaxArray:
			if 2*card > len(b)-p {
				return dst, corrupt("bitmap array past its %d bytes", len(b))
			}
			for j := range card {
				if !put(key | uint32(binary.LittleEndian.Uint16(b[p+2*j:]))) {
					return dst, corrupt("bitmap rows not ascending or past %d", below)
				}
			}
			p += 2 * card
		default:
			if 8192 > len(b)-p {
				return dst, corrupt("bitmap bitset past its %d bytes", len(b))
			}
			for w := range 1024 {
				word := binary.LittleEndian.Uint64(b[p+8*w:])
				for word != 0 {
					lo := uint32(w*64 + bits.TrailingZeros64(word))
					word &= word - 1
					if !put(key | lo) {
						return dst, corrupt("bitmap rows not ascending or past %d", below)
					}
				}
			}
			p += 8192
		}
	}
	return dst, nil
}
