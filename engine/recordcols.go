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
// under it; such columns are read last, and only when a row needs them.

// presenceOrder returns the indexes in cols of the object presence
// columns, deepest first (so that an object found present counts as a
// value under its parent), each with the indexes of the columns under it.
func presenceOrder(cols []colRef) []objectCol {
	var objs []objectCol
	for k, c := range cols {
		if c.typ != segment.TypeObject {
			continue
		}
		o := objectCol{at: k}
		prefix := c.path + "."
		for j, d := range cols {
			if strings.HasPrefix(d.path, prefix) {
				o.under = append(o.under, j)
			}
		}
		objs = append(objs, o)
	}
	slices.SortStableFunc(objs, func(a, b objectCol) int {
		return strings.Count(cols[b.at].path, ".") - strings.Count(cols[a.at].path, ".")
	})
	return objs
}

// objectCol is an object presence column of a record read and the
// columns under it.
type objectCol struct {
	at    int
	under []int
}

// readRecordColumns reads the listed rows of every column of cols into
// vecs, but an object presence column only when some row has no value
// under the object (else it is left NULL in every row: the values under
// it make the object).
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
	for _, o := range objects {
		if !someRowBare(vecs, o.under, len(rows)) {
			vecs[o.at] = nullVector(vec.Bool, len(rows))
			continue
		}
		if err := cr.read(cols[o.at], 0, 0, rows, &vecs[o.at]); err != nil {
			return err
		}
	}
	return nil
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

// someRowBare reports whether some row of n has no value in any of the
// vectors under.
func someRowBare(vecs []vec.Vector, under []int, n int) bool {
	for r := 0; r < n; r++ {
		bare := true
		for _, j := range under {
			if !vecs[j].IsNull(r) {
				bare = false
				break
			}
		}
		if bare {
			return true
		}
	}
	return false
}

// nullVector returns a vector of n NULLs of type t.
func nullVector(t vec.Type, n int) vec.Vector {
	v := vec.Vector{Type: t, Len: n, Nulls: vec.NewBitset(n), Bools: make([]bool, n)}
	for i := 0; i < n; i++ {
		v.Nulls.Set(i)
	}
	return v
}
