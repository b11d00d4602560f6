package index

import "encoding/binary"

// The postings are roaring bitmaps in roaring's portable serialization
// (github.com/RoaringBitmap/RoaringFormatSpec), which a reader decodes
// with the roaring package. Writers used to build a roaring.Bitmap of each
// term's rows, RunOptimize it and serialize it: an allocation of every
// container and a copy of every row (issue 14: a fifth of a compaction's
// index merge). appendRoaring writes the same bytes straight from the
// sorted rows.
//
//	cookie:  no run container: u32 12346, u32 ncontainers
//	         else:             u16 12347, u16 ncontainers-1,
//	                           is-run bitset ((ncontainers+7)/8 bytes)
//	header:  per container: u16 key (rows >> 16), u16 cardinality-1
//	offsets: per container: u32 byte offset from the start
//	         (left out when there are run containers and fewer than 4)
//	containers, in key order:
//	  array:  u16 per row (low 16 bits), ascending       (cardinality <= 4096)
//	  bitset: 1024 u64 words                             (cardinality > 4096)
//	  run:    u16 nruns, then per run u16 start, u16 length-1
//
// All little endian. The kind of each container is the one RunOptimize
// picks: runs when they take fewer bytes than both an array (2 per row)
// and roaring's in-memory size of a bitset container (bitsetCost); else
// an array up to 4096 rows, else a bitset.

// Roaring's portable format constants.
const (
	roaringCookieRuns   = 12347
	roaringCookieNoRuns = 12346
	// roaringNoOffsets: a bitmap with run containers and fewer
	// containers than this has no offsets header.
	roaringNoOffsets = 4
	// roaringMaxArray is the largest cardinality of an array container.
	roaringMaxArray = 4096
	// roaringBitsetCost is the size RunOptimize compares runs and arrays
	// with for a bitset container: its 8 KiB of words plus the 32 bytes of
	// roaring's in-memory struct (what roaring v2 counts; the byte-identity
	// test against roaring checks it still does).
	roaringBitsetCost = 8192 + 32
)

// roaringContainer describes one container of rows being encoded:
// rows[start:end] share the high 16 bits key; runs counts runs of
// consecutive rows.
type roaringContainer struct {
	key        uint16
	start, end int
	runs       int
}

func (c *roaringContainer) card() int { return c.end - c.start }

// kind returns how the container is stored: 'r' runs, 'a' array, 'b'
// bitset.
func (c *roaringContainer) kind() byte {
	card := c.card()
	if 2+4*c.runs < min(roaringBitsetCost, 2*card) {
		return 'r'
	}
	if card <= roaringMaxArray {
		return 'a'
	}
	return 'b'
}

// size is the bytes the container's data takes.
func (c *roaringContainer) size() int {
	switch c.kind() {
	case 'r':
		return 2 + 4*c.runs
	case 'a':
		return 2 * c.card()
	}
	return 8192
}

// roaringEncoder appends strictly ascending rows to a buffer in roaring's
// portable format. Its memory is reused term after term.
type roaringEncoder struct {
	cs []roaringContainer
}

// appendRows appends the serialized bitmap of rows (strictly ascending,
// at least one) to dst.
func (e *roaringEncoder) appendRows(dst []byte, rows []uint32) []byte {
	cs := e.cs[:0]
	for i := 0; i < len(rows); {
		key := uint16(rows[i] >> 16)
		c := roaringContainer{key: key, start: i, runs: 1}
		prev := rows[i]
		for i++; i < len(rows) && uint16(rows[i]>>16) == key; i++ {
			if rows[i] != prev+1 {
				c.runs++
			}
			prev = rows[i]
		}
		c.end = i
		cs = append(cs, c)
	}
	e.cs = cs
	hasRuns := false
	for i := range cs {
		if cs[i].kind() == 'r' {
			hasRuns = true
			break
		}
	}
	n := len(cs)
	header := 8 + 4*n
	offsets := true
	if hasRuns {
		header = 4 + (n+7)/8 + 4*n
		offsets = n >= roaringNoOffsets
		dst = binary.LittleEndian.AppendUint16(dst, roaringCookieRuns)
		dst = binary.LittleEndian.AppendUint16(dst, uint16(n-1))
		at := len(dst)
		dst = append(dst, make([]byte, (n+7)/8)...)
		for i := range cs {
			if cs[i].kind() == 'r' {
				dst[at+i/8] |= 1 << (i % 8)
			}
		}
	} else {
		dst = binary.LittleEndian.AppendUint32(dst, roaringCookieNoRuns)
		dst = binary.LittleEndian.AppendUint32(dst, uint32(n))
	}
	for i := range cs {
		dst = binary.LittleEndian.AppendUint16(dst, cs[i].key)
		dst = binary.LittleEndian.AppendUint16(dst, uint16(cs[i].card()-1))
	}
	if offsets {
		off := header + 4*n
		for i := range cs {
			dst = binary.LittleEndian.AppendUint32(dst, uint32(off))
			off += cs[i].size()
		}
	}
	for i := range cs {
		c := &cs[i]
		part := rows[c.start:c.end]
		switch c.kind() {
		case 'r':
			dst = binary.LittleEndian.AppendUint16(dst, uint16(c.runs))
			runStart := part[0]
			for j := 1; j <= len(part); j++ {
				if j < len(part) && part[j] == part[j-1]+1 {
					continue
				}
				dst = binary.LittleEndian.AppendUint16(dst, uint16(runStart))
				dst = binary.LittleEndian.AppendUint16(dst, uint16(part[j-1]-runStart))
				if j < len(part) {
					runStart = part[j]
				}
			}
		case 'a':
			for _, r := range part {
				dst = binary.LittleEndian.AppendUint16(dst, uint16(r))
			}
		default:
			at := len(dst)
			dst = append(dst, make([]byte, 8192)...)
			words := dst[at:]
			for _, r := range part {
				lo := uint16(r)
				words[lo/8] |= 1 << (lo % 8)
			}
		}
	}
	return dst
}
