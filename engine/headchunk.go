package engine

import (
	"math"

	"github.com/sediment/sediment/internal/vec"
	"github.com/sediment/sediment/segment"
)

// The head's read side: a head is read as a sequence of chunks of
// Options.HeadChunkRows rows, each with a summary like a segment block's footer
// entry (time range, and per column its value count, value range and the
// dictionary codes it uses), so that a scan prunes chunks and reads the
// newest first, as it does blocks.
//
// Rows of a head never change once visible (appends only add rows, and a
// column switching from dictionary codes to packed bytes keeps every
// value's index), so the summary of a full chunk is computed once, by the
// first reader that sees the chunk full (sealing), and kept by the head
// for every later view. The rows past the last full chunk (the open tail)
// are summarised by each view for itself. None of this touches the write
// path: head.add neither knows nor pays for it.

// defaultHeadChunkRows is the rows of a head chunk (Options.HeadChunkRows):
// a multiple of 64 (the presence bitmaps' word), small enough that a
// newest-first read touches few rows, large enough that a scan's per-chunk
// overhead stays small.
const defaultHeadChunkRows = 8192

// chunkRows returns the rows of the view's chunks.
func (v *headView) chunkRows() int {
	if v.chunkSize > 0 {
		return v.chunkSize
	}
	return defaultHeadChunkRows
}

// headChunk summarises head rows [from, to).
type headChunk struct {
	from, to int
	// minTime and maxTime bound the rows' timestamps; timeSorted says they
	// do not decrease in row order (arrival order usually is time order,
	// but late events are common).
	minTime, maxTime int64
	timeSorted       bool
	// cols[i] is column i of the head; columns created after the chunk
	// was summarised have no entry (they hold no value in its rows).
	cols []headChunkCol
}

// headChunkCol is one column's part of a chunk.
type headChunkCol struct {
	// start is the column's values before the chunk (the rank of its
	// first row), count those in it.
	start, count uint32
	// hasRange: min and max bound the values (ints and timestamps; bools
	// as 0/1).
	hasRange bool
	min, max int64
	// codes is the set of dictionary codes the chunk uses (dictionary
	// coded string columns only; nil otherwise).
	codes *[headDictMax / 64]uint64
}

// col returns column ci's summary (an empty one when the column was
// created after the chunk was summarised: it has no value there).
func (ch *headChunk) col(ci int) headChunkCol {
	if ci < len(ch.cols) {
		return ch.cols[ci]
	}
	return headChunkCol{}
}

// hasCode reports whether the chunk uses dictionary code c of column cc.
func (cc *headChunkCol) hasCode(c uint32) bool {
	return cc.codes != nil && c < headDictMax && cc.codes[c>>6]&(1<<(c&63)) != 0
}

// summarise computes the summary of view rows [from, to), given the
// number of values each column has before from.
func (v *headView) summarise(from, to int, starts []uint32) *headChunk {
	ch := &headChunk{from: from, to: to, minTime: math.MaxInt64, maxTime: math.MinInt64, timeSorted: true,
		cols: make([]headChunkCol, len(v.cols))}
	for ci := range v.cols {
		c := &v.cols[ci]
		cc := &ch.cols[ci]
		cc.start = starts[ci]
		n := int(c.countBits(from, to))
		cc.count = uint32(n)
		if n == 0 {
			continue
		}
		k := int(cc.start)
		switch c.typ {
		case segment.TypeInt64, segment.TypeTimestamp:
			vals := c.ints[k : k+n]
			cc.hasRange, cc.min, cc.max = true, vals[0], vals[0]
			for _, x := range vals {
				cc.min = min(cc.min, x)
				cc.max = max(cc.max, x)
			}
			if c.path == "timestamp" && c.typ == segment.TypeTimestamp {
				ch.minTime, ch.maxTime = cc.min, cc.max
				for i := 1; i < len(vals); i++ {
					if vals[i] < vals[i-1] {
						ch.timeSorted = false
						break
					}
				}
			}
		case segment.TypeBool:
			cc.hasRange, cc.min, cc.max = true, 1, 0
			for _, b := range c.bools[k : k+n] {
				x := b2i(b)
				cc.min = min(cc.min, x)
				cc.max = max(cc.max, x)
			}
		case segment.TypeString:
			if c.dictMap {
				cc.codes = new([headDictMax / 64]uint64)
				for _, code := range c.codes[k : k+n] {
					cc.codes[code>>6] |= 1 << (code & 63)
				}
			}
		}
	}
	return ch
}

// chunks returns the view's chunks in row order: the head's sealed ones,
// sealing those that filled up since, and the open tail's. A frozen head
// never grows, so its tail is sealed too.
func (v *headView) chunks() []*headChunk {
	v.chunksOnce.Do(func() {
		h := v.h
		size := v.chunkRows()
		full := v.rows / size
		h.sealMu.Lock()
		sealed := h.sealed
		if len(sealed) < full {
			starts := v.startsAfter(sealed)
			for len(sealed) < full {
				from := len(sealed) * size
				ch := v.summarise(from, from+size, starts)
				for ci := range starts {
					starts[ci] += ch.cols[ci].count
				}
				sealed = append(sealed, ch)
			}
			h.sealed = sealed
		}
		h.sealMu.Unlock()
		v.chunkList = sealed[:len(sealed):len(sealed)]
		if from := full * size; from < v.rows {
			v.chunkList = append(v.chunkList, v.summarise(from, v.rows, v.startsAfter(sealed)))
		}
	})
	return v.chunkList
}

// startsAfter returns, per column, the values in the rows of the given
// chunks (the rank of the first row after them).
func (v *headView) startsAfter(sealed []*headChunk) []uint32 {
	starts := make([]uint32, len(v.cols))
	if len(sealed) == 0 {
		return starts
	}
	last := sealed[len(sealed)-1]
	for ci := range starts {
		cc := last.col(ci)
		starts[ci] = cc.start + cc.count
	}
	return starts
}

// chunkAt returns the chunk holding row.
func (v *headView) chunkAt(row int) *headChunk {
	cs := v.chunks()
	return cs[min(row/v.chunkRows(), len(cs)-1)]
}

// rankAt returns the index of row's value in column ci (or of the next
// value, when row has none).
func (v *headView) rankAt(ci, row int) int {
	ch := v.chunkAt(row)
	return int(ch.col(ci).start) + int(v.cols[ci].countBits(ch.from, row))
}

// readRange fills dst (of the vector type of column ci) with the values
// of rows [from, to). Runs of present values are copied as they are; a
// column with a value in every row needs no per-row work at all.
func (v *headView) readRange(ci int, dst *vec.Vector, from, to int) {
	c := &v.cols[ci]
	n := to - from
	t := segment.VecType(c.typ)
	dst.Reset(t)
	dst.Len = n
	if n <= 0 {
		return
	}
	k := v.rankAt(ci, from)
	dense := int(c.countBits(from, to)) == n
	switch {
	case c.typ == segment.TypeBool, c.typ == segment.TypeObject:
		dst.Bools = growSlice(dst.Bools, n)
	case t == vec.Int64 || t == vec.Timestamp:
		dst.Ints = growSlice(dst.Ints, n)
		if dense {
			copy(dst.Ints, c.ints[k:k+n])
			return
		}
	case t == vec.Float64:
		dst.Floats = growSlice(dst.Floats, n)
		if dense {
			copy(dst.Floats, c.floats[k:k+n])
			return
		}
	case c.isDict():
		dst.Codes = growSlice(dst.Codes, n)
		dst.Dict = c.dict
		if dense {
			for i, code := range c.codes[k : k+n] {
				dst.Codes[i] = uint32(code)
			}
			return
		}
	default:
		dst.Strs = growSlice(dst.Strs, n)
		if dense {
			for i := range dst.Strs {
				dst.Strs[i] = c.str(k + i)
			}
			return
		}
	}
	if dense && c.typ == segment.TypeBool {
		copy(dst.Bools, c.bools[k:k+n])
		return
	}
	for i := 0; i < n; i++ {
		row := from + i
		if !c.has(row) {
			if dst.Nulls == nil {
				dst.Nulls = vec.NewBitset(n)
			}
			dst.Nulls.Set(i)
			continue
		}
		switch c.typ {
		case segment.TypeBool:
			dst.Bools[i] = c.bools[k]
		case segment.TypeObject:
			dst.Bools[i] = true
		case segment.TypeInt64, segment.TypeTimestamp:
			dst.Ints[i] = c.ints[k]
		case segment.TypeFloat64:
			dst.Floats[i] = c.floats[k]
		default:
			if c.isDict() {
				dst.Codes[i] = uint32(c.codes[k])
			} else {
				dst.Strs[i] = c.str(k)
			}
		}
		k++
	}
}

// readCol fills dst with column ci over rows [from, to), or over the
// listed rows when rows is not nil.
func (v *headView) readCol(ci int, dst *vec.Vector, from, to int, rows []int32) {
	if rows == nil {
		v.readRange(ci, dst, from, to)
		return
	}
	c := &v.cols[ci]
	n := len(rows)
	t := segment.VecType(c.typ)
	dst.Reset(t)
	dst.Len = n
	switch t {
	case vec.Bool:
		dst.Bools = growSlice(dst.Bools, n)
	case vec.Int64, vec.Timestamp:
		dst.Ints = growSlice(dst.Ints, n)
	case vec.Float64:
		dst.Floats = growSlice(dst.Floats, n)
	case vec.String:
		if c.isDict() {
			dst.Codes = growSlice(dst.Codes, n)
			dst.Dict = c.dict
		} else {
			dst.Strs = growSlice(dst.Strs, n)
		}
	}
	// Ranks follow ascending rows incrementally; a row before the last
	// one starts again from its chunk.
	last, rank := -1, 0
	for i, r32 := range rows {
		row := int(r32)
		if !c.has(row) {
			if dst.Nulls == nil {
				dst.Nulls = vec.NewBitset(n)
			}
			dst.Nulls.Set(i)
			continue
		}
		if last >= 0 && row >= last && row-last < defaultHeadChunkRows {
			rank += int(c.countBits(last, row))
		} else {
			rank = v.rankAt(ci, row)
		}
		last = row
		k := rank
		switch c.typ {
		case segment.TypeBool:
			dst.Bools[i] = c.bools[k]
		case segment.TypeObject:
			dst.Bools[i] = true
		case segment.TypeInt64, segment.TypeTimestamp:
			dst.Ints[i] = c.ints[k]
		case segment.TypeFloat64:
			dst.Floats[i] = c.floats[k]
		default:
			if c.isDict() {
				dst.Codes[i] = uint32(c.codes[k])
			} else {
				dst.Strs[i] = c.str(k)
			}
		}
	}
}
