package engine

import (
	"slices"
	"strings"

	"github.com/sediment/sediment/internal/vec"
	"github.com/sediment/sediment/segment"
)

// Reading the columns of whole records. An object's presence column
// (TypeObject) matters to a record only where nothing under the object
// has a value: a value below it makes the record builder create the
// object anyway, at the same place among its siblings (the builder orders
// columns by path, and an object's path sorts just before those under
// it). Records of platform events hold about a dozen objects, each of
// whose presence pages would be decompressed for a row that has values
// under it; such columns are read last, and only for rows that need them.
//
// They are read shallowest first: where an enclosing object is absent,
// nothing under it is present, so the objects under it need no read for
// that row. A platform event without a JWT has no metadata.request.sb:
// reading that one presence column answers for the five objects under it
// (sb.jwt, its apikey and authorization, their payloads), which would
// each cost a page decompression per record otherwise.

// presenceOrder returns the object presence columns of cols, shallowest
// first, each with the indexes in cols of the other columns under it and
// its nearest enclosing object among them.
func presenceOrder(cols []colRef) []objectCol {
	var objs []objectCol
	for k, c := range cols {
		if c.typ != segment.TypeObject {
			continue
		}
		o := objectCol{at: k, parent: -1}
		prefix := c.path + "."
		for j, d := range cols {
			if d.typ != segment.TypeObject && strings.HasPrefix(d.path, prefix) {
				o.under = append(o.under, j)
			}
		}
		objs = append(objs, o)
	}
	slices.SortStableFunc(objs, func(a, b objectCol) int {
		return strings.Count(cols[a.at].path, ".") - strings.Count(cols[b.at].path, ".")
	})
	for i := range objs {
		// The deepest of the shallower objects whose path encloses this
		// one's (objects of one depth cannot enclose each other).
		path := cols[objs[i].at].path
		for j := i - 1; j >= 0; j-- {
			if strings.HasPrefix(path, cols[objs[j].at].path+".") {
				objs[i].parent = j
				break
			}
		}
	}
	return objs
}

// objectCol is an object presence column of a record read: its index in
// the read's columns, those of the non-object columns under it, and the
// index in presenceOrder's list of its nearest enclosing object (-1:
// none).
type objectCol struct {
	at     int
	under  []int
	parent int
}

// readRecordColumns reads the listed rows of every column of cols into
// vecs, but an object presence column only when some row has no value
// under the object while no enclosing object is known to be absent there
// (else it is left NULL in every row: the values under it make the
// object, and an absent parent has nothing under it).
func readRecordColumns(cr colReader, cols []colRef, objects []objectCol, rows []int32, vecs []vec.Vector) error {
	isObject := make([]bool, len(cols))
	for _, o := range objects {
		isObject[o.at] = true
	}
	copyOf := sameColumns(cr, cols, isObject)
	for k, c := range cols {
		if isObject[k] {
			continue
		}
		if copyOf != nil && copyOf[k] >= 0 {
			// The same chunk as an earlier column's: its values, which
			// nothing writes to once read.
			vecs[k] = vecs[copyOf[k]]
			continue
		}
		if err := cr.read(c, 0, 0, rows, &vecs[k]); err != nil {
			return err
		}
	}
	read := make([]bool, len(objects))
	for i, o := range objects {
		if !presenceNeeded(vecs, objects, read, i, len(rows)) {
			vecs[o.at] = nullVector(vec.Bool, len(rows))
			continue
		}
		if err := cr.read(cols[o.at], 0, 0, rows, &vecs[o.at]); err != nil {
			return err
		}
		read[i] = true
	}
	return nil
}

// presenceNeeded reports whether some row of n has no value under
// objects[i] while none of the enclosing objects read so far (read) is
// absent in it: only such a row needs the object's presence column.
func presenceNeeded(vecs []vec.Vector, objects []objectCol, read []bool, i, n int) bool {
	for r := 0; r < n; r++ {
		if bareRow(vecs, objects[i].under, r) && !absentAbove(vecs, objects, read, objects[i].parent, r) {
			return true
		}
	}
	return false
}

// bareRow reports whether row r has no value in any of the vectors under.
func bareRow(vecs []vec.Vector, under []int, r int) bool {
	for _, j := range under {
		if !vecs[j].IsNull(r) {
			return false
		}
	}
	return true
}

// absentAbove reports whether object p or one enclosing it was read and
// is absent in row r.
func absentAbove(vecs []vec.Vector, objects []objectCol, read []bool, p, r int) bool {
	for ; p >= 0; p = objects[p].parent {
		if read[p] && vecs[objects[p].at].IsNull(r) {
			return true
		}
	}
	return false
}

// sameColumns returns, for a segment block whose chunks of some columns
// are one chunk stored once (segment.Reader.SameUnits: the client address
// as cf_connecting_ip and x_real_ip), the index in cols of the earlier
// column each such column copies (-1 for the others), or nil when there
// is none: reading the chunk once saves its pages' decoding, its
// dictionary entries' lookups and its vector.
func sameColumns(cr colReader, cols []colRef, isObject []bool) []int {
	br, ok := cr.(*blockReader)
	if !ok {
		return nil
	}
	var copyOf []int
	first := make(map[int64]int, len(cols))
	for k, c := range cols {
		if isObject[k] {
			continue
		}
		off, ok := br.r.FirstUnit(br.b, c.idx)
		if !ok {
			continue
		}
		j, seen := first[off]
		if !seen {
			first[off] = k
			continue
		}
		if !br.r.SameUnits(br.b, cols[j].idx, c.idx) {
			continue
		}
		if copyOf == nil {
			copyOf = make([]int, len(cols))
			for i := range copyOf {
				copyOf[i] = -1
			}
		}
		copyOf[k] = j
	}
	return copyOf
}

// nullVector returns a vector of n NULLs of type t.
func nullVector(t vec.Type, n int) vec.Vector {
	v := vec.Vector{Type: t, Len: n, Nulls: vec.NewBitset(n), Bools: make([]bool, n)}
	for i := 0; i < n; i++ {
		v.Nulls.Set(i)
	}
	return v
}
