package engine

import (
	"strconv"
	"sync/atomic"

	"github.com/sediment/sediment/internal/vec"
	"github.com/sediment/sediment/segment"
)

// reader abstracts reading physical columns of a segment block or a head.
type colReader interface {
	// read fills dst with column c over [a, z) (rows nil) or the listed
	// rows (compacted).
	read(c colRef, a, z int, rows []int32, dst *vec.Vector) error
}

// blockReader reads the columns of one block of a segment. once reads
// without adding pages to the page cache (a scan of much data, whose pages
// would push out those interactive queries read again); pass, when set,
// counts what the scan reads and turns its reads into such reads once it
// has read much (see passReads); reuse reads into vectors that are the
// reader's own scratch (a predicate's column, never handed on), reusing
// the buffer their strings are copied into; memo, when set, keeps the
// pages read for a few rows for the query's later reads (see
// newScanMemo).
type blockReader struct {
	r     *segment.Reader
	b     int
	once  bool
	pass  *passReads
	reuse bool
	memo  *segment.UnitMemo
}

func (br *blockReader) read(c colRef, a, z int, rows []int32, dst *vec.Vector) error {
	once := br.once
	if !once && br.pass != nil {
		once = br.pass.add(br.r, br.b, c.idx, a, z, rows)
	}
	return br.r.Read(br.b, c.idx, a, z, rows, dst, segment.ReadOptions{Once: once, Reuse: br.reuse, Memo: br.memo})
}

// passReads counts the page bytes one scan (or one materialisation of
// records) has read, estimated from the stored bytes of the pages read,
// onceExpansion times. A scan with a limit may stop after a few pages, so
// it starts reading through the page cache; but one whose limit is never
// met (a rare match in a big column) reads the whole column, and records
// of rare matches are scattered over many blocks: their pages would only
// push out those interactive queries read again, and each page the cache
// keeps is a fresh allocation where a read that keeps nothing decodes into
// a pooled buffer. Past limit bytes, the reads keep nothing.
// minCachedPage is the least a page kept by the page cache takes.
const minCachedPage = 4 << 10

type passReads struct {
	bytes atomic.Int64
	limit int64
}

func newPassReads() *passReads {
	return &passReads{limit: segment.PageCacheBudget() / onceCacheShare}
}

// add counts a read of column col in block b (rows [a, z), or the listed
// rows, ascending) and reports whether the reads have gone past the limit
// (this one included).
func (p *passReads) add(r *segment.Reader, b, col, a, z int, rows []int32) bool {
	if p.bytes.Load() > p.limit {
		return true
	}
	ci, ok := r.Chunk(b, col)
	if !ok {
		return false
	}
	pl, err := r.Pages(b, col)
	if err != nil || pl.Len() == 0 {
		return false // the read reports the error
	}
	// The pages the read touches, at the chunk's mean stored page size.
	pages := 0
	if rows == nil {
		for pi := range pl.Len() {
			if first, end := pl.Span(pi); first < z && end > a {
				pages++
			}
		}
	} else {
		pi := 0
		for i, row := range rows {
			if i > 0 && row < rows[i-1] {
				pages = pl.Len() // not ascending: count them all
				break
			}
			last := pi
			for pi < pl.Len()-1 && pageEnd(pl, pi) <= int(row) {
				pi++
			}
			if i == 0 || pi != last {
				pages++
			}
		}
	}
	// A page the cache keeps takes at least a pooled buffer's 4 KiB.
	perPage := max(ci.StoredBytes*onceExpansion/int64(pl.Len()), minCachedPage)
	return p.bytes.Add(perPage*int64(pages)) > p.limit
}

// scratchReader returns cr reading into scratch vectors (see blockReader).
func scratchReader(cr colReader) colReader {
	if br, ok := cr.(*blockReader); ok && !br.reuse {
		c := *br
		c.reuse = true
		return &c
	}
	return cr
}

// handedOnReader returns cr reading into vectors that may be kept.
func handedOnReader(cr colReader) colReader {
	if br, ok := cr.(*blockReader); ok && br.reuse {
		c := *br
		c.reuse = false
		return &c
	}
	return cr
}

type headReader struct{ hv *headView }

func (hr headReader) read(c colRef, a, z int, rows []int32, dst *vec.Vector) error {
	hr.hv.readCol(c.idx, dst, a, z, rows)
	return nil
}

// readLogical reads a field as type t from its physical columns, widening
// values of other types (see Snapshot.Schema), over [a, z) or rows.
func readLogical(cr colReader, cols []colRef, t vec.Type, a, z int, rows []int32, dst *vec.Vector) error {
	n := z - a
	if rows != nil {
		n = len(rows)
	}
	if len(cols) == 1 && (segment.VecType(cols[0].typ) == t || t == vec.RowRef || t == vec.List) {
		return cr.read(cols[0], a, z, rows, dst)
	}
	// The values converted below keep pointing into what each column
	// read: those reads must not reuse a buffer.
	cr = handedOnReader(cr)
	out := &vec.Vector{Type: t, Len: n, Nulls: vec.NewBitset(n)}
	for i := 0; i < n; i++ {
		out.Nulls.Set(i)
	}
	switch t {
	case vec.Bool:
		out.Bools = make([]bool, n)
	case vec.Float64:
		out.Floats = make([]float64, n)
	case vec.String, vec.JSON:
		out.Strs = make([]string, n)
	default:
		out.Ints = make([]int64, n)
	}
	var tmp vec.Vector
	for _, c := range cols {
		if err := cr.read(c, a, z, rows, &tmp); err != nil {
			return err
		}
		for i := 0; i < n; i++ {
			if tmp.IsNull(i) || !out.Nulls.Get(i) {
				continue
			}
			if convertValue(&tmp, i, c.typ, out, t) {
				out.Nulls.Clear(i)
			}
		}
	}
	if !out.Nulls.Any() {
		out.Nulls = nil
	}
	*dst = *out
	return nil
}

// convertValue widens row i of src (physical type ct) into dst as t.
func convertValue(src *vec.Vector, i int, ct segment.ColType, dst *vec.Vector, t vec.Type) bool {
	switch t {
	case vec.String, vec.JSON:
		switch ct {
		case segment.TypeString:
			dst.Strs[i] = src.StringAt(i)
		case segment.TypeInt64, segment.TypeTimestamp:
			dst.Strs[i] = strconv.FormatInt(src.Ints[i], 10)
		case segment.TypeFloat64:
			dst.Strs[i] = strconv.FormatFloat(src.Floats[i], 'g', -1, 64)
		case segment.TypeBool:
			dst.Strs[i] = strconv.FormatBool(src.Bools[i])
		default:
			return false
		}
	case vec.Float64:
		switch ct {
		case segment.TypeFloat64:
			dst.Floats[i] = src.Floats[i]
		case segment.TypeInt64:
			dst.Floats[i] = float64(src.Ints[i])
		default:
			return false
		}
	case vec.Int64, vec.Timestamp:
		switch ct {
		case segment.TypeInt64, segment.TypeTimestamp:
			dst.Ints[i] = src.Ints[i]
		default:
			return false
		}
	case vec.Bool:
		if ct != segment.TypeBool {
			return false
		}
		dst.Bools[i] = src.Bools[i]
	default:
		return false
	}
	return true
}
