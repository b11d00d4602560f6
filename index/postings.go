package index

import (
	"encoding/binary"

	"github.com/RoaringBitmap/roaring/v2"

	"github.com/sediment/sediment/internal/varint"
)

// postings are the rows of one token of a token field, ascending, each
// once: the newest in enc, and, once enc has grown past postingSpill
// bytes, the older ones in bm; a term of one row keeps it in last alone.
// n counts them; once gone (a token sure to be frequent), only n is kept.
//
// enc holds rows as rowList does (zigzag varints of the difference from
// the row before, the first from 0): the rows of a token that is not
// frequent are more than a hundred apart on average, two bytes each
// where a []uint32 took four, and more with the slack of its doubling
// (issue 14).
type postings struct {
	enc  []byte
	bm   *roaring.Bitmap
	n    uint32
	last uint32 // the last row added, when n > 0
	gone bool
}

// postingSpill is how many bytes of rows a token holds in enc before they
// move into its bitmap (about 4096 rows). The tokens of a field of a few
// million rows without a RowsHint would otherwise hold 2 bytes per row
// until Write.
var postingSpill = 8192

// postingRefill is how many bytes of rows a token that has a bitmap
// collects before adding them to it. Smaller than postingSpill: the list
// of a token that spilled is not worth 8 KB held to the end, and a batch
// of this many rows still costs one container lookup per run of rows, as
// a long one does.
var postingRefill = 512

func (p *postings) add(r uint32) {
	if p.n > 0 && p.last == r {
		return
	}
	first := p.last
	p.n++
	p.last = r
	switch {
	case p.gone:
		return
	case p.n == 1:
		// A term's only row is last: most tokens of a large segment are
		// seen once, and need no list.
		return
	case p.n == 2:
		p.enc = binary.AppendUvarint(p.enc, varint.Zigzag(int64(first)))
		p.enc = binary.AppendUvarint(p.enc, varint.Zigzag(int64(r)-int64(first)))
	case len(p.enc) == 0:
		// Refilled into the bitmap: the list starts again from 0.
		p.enc = binary.AppendUvarint(p.enc, varint.Zigzag(int64(r)))
	default:
		p.enc = binary.AppendUvarint(p.enc, varint.Zigzag(int64(r)-int64(first)))
	}
	switch {
	case p.bm == nil && len(p.enc) >= postingSpill:
		p.bm = roaring.New()
		p.refill()
		p.enc = make([]byte, 0, min(postingRefill, postingSpill)+binary.MaxVarintLen64)
	case p.bm != nil && len(p.enc) >= min(postingRefill, postingSpill):
		p.refill()
		p.enc = p.enc[:0]
	}
}

// refill adds the rows of enc to bm.
func (p *postings) refill() {
	var buf [256]uint32
	n, row := 0, int64(0)
	for b := p.enc; len(b) > 0; {
		d, k := binary.Uvarint(b)
		if k <= 0 {
			break // add wrote every varint whole
		}
		b = b[k:]
		row += varint.Unzigzag(d)
		buf[n] = uint32(row)
		if n++; n == len(buf) {
			p.bm.AddMany(buf[:n])
			n = 0
		}
	}
	p.bm.AddMany(buf[:n])
}

// out returns the term to write: its rows (a list or a bitmap), and its
// count.
func (p *postings) out(key termKey) termOut {
	switch {
	case p.gone:
		return termOut{key: key, card: uint64(p.n), frequent: true}
	case p.n == 1:
		return termOut{key: key, one: p.last, card: 1}
	case p.bm != nil:
		p.refill()
		p.enc = nil
		return termOut{key: key, bm: p.bm, card: uint64(p.n)}
	}
	return termOut{key: key, list: rowList{enc: p.enc, n: p.n}, card: uint64(p.n)}
}
