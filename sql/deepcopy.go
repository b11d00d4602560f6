package sql

import "github.com/sediment/sediment/internal/vec"

// cell names one value: row row of vector v. A nil v or a negative row is
// NULL.
type cell struct {
	v   *vec.Vector
	row int32
}

// gatherCells builds a vector of type t whose row i is a deep copy of
// cells[i]. Unlike copyValue it handles every type, arrays and records at
// any depth: list elements and record fields are gathered recursively, so
// an ARRAY<STRUCT<..., ARRAY<...>>> assembled from rows of different
// batches (a sort, a join's build side, a CASE) keeps its whole structure.
//
// Every cell of one call comes from vectors produced for the same column
// by the same operator, so records have their fields in the same order and
// are matched by position; a record vector with fewer fields reads the
// missing ones as NULL.
func gatherCells(t vec.Type, cells []cell) *vec.Vector {
	n := len(cells)
	switch t {
	case vec.List:
		return gatherListCells(cells, vec.Unknown)
	case vec.Struct:
		return gatherStructCells(cells)
	case vec.Unknown:
		return allNullVector(ColType{V: vec.Unknown}, n)
	}
	out := newVector(ColType{V: t}, n)
	for i, c := range cells {
		if c.v == nil || c.row < 0 || c.v.Type == vec.Unknown {
			setNull(out, i)
			continue
		}
		copyValue(out, i, c.v, int(c.row))
	}
	return out
}

// slot is the payload index of row r of v (constant vectors have one).
func slot(v *vec.Vector, r int32) int32 {
	if v.Const {
		return 0
	}
	return r
}

// gatherListCells gathers arrays; elemType is the element type to use when
// no cell has an element vector to take it from.
func gatherListCells(cells []cell, elemType vec.Type) *vec.Vector {
	n := len(cells)
	out := &vec.Vector{Type: vec.List, Len: n, Offsets: make([]int32, n+1)}
	var elems []cell
	typed := false
	for i, c := range cells {
		if c.v == nil || c.row < 0 || c.v.IsNull(int(c.row)) || c.v.Type != vec.List {
			setNull(out, i)
		} else if c.v.Elem != nil {
			r := slot(c.v, c.row)
			if !typed {
				elemType, typed = c.v.Elem.Type, true
			}
			for j := c.v.Offsets[r]; j < c.v.Offsets[r+1]; j++ {
				elems = append(elems, cell{c.v.Elem, j})
			}
		}
		out.Offsets[i+1] = int32(len(elems))
	}
	out.Elem = gatherCells(elemType, elems)
	return out
}

func gatherStructCells(cells []cell) *vec.Vector {
	n := len(cells)
	out := &vec.Vector{Type: vec.Struct, Len: n}
	var proto *vec.Vector
	for _, c := range cells {
		if c.v != nil && c.v.Type == vec.Struct {
			proto = c.v
			break
		}
	}
	for i, c := range cells {
		if c.v == nil || c.row < 0 || c.v.IsNull(int(c.row)) || c.v.Type != vec.Struct {
			setNull(out, i)
		}
	}
	if proto == nil {
		return out
	}
	out.Names = proto.Names
	kids := make([]cell, n)
	for k, pc := range proto.Children {
		for i, c := range cells {
			kids[i] = cell{row: -1}
			if c.v != nil && c.row >= 0 && c.v.Type == vec.Struct && k < len(c.v.Children) {
				kids[i] = cell{c.v.Children[k], slot(c.v, c.row)}
			}
		}
		out.Children = append(out.Children, gatherCells(pc.Type, kids))
	}
	return out
}
