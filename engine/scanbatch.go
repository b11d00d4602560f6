package engine

import (
	"context"
	"strconv"

	"github.com/sediment/sediment/event"
	"github.com/sediment/sediment/internal/vec"
	"github.com/sediment/sediment/segment"
	"github.com/sediment/sediment/sql/scan"
)

// fewRows: a selection of at most this many rows is read as a list (see
// buildBatch).
const fewRows = 8

// emitRows builds batches of the requested columns for the selected rows
// (part-relative row numbers offset by base for RowRefs).
func (sc *shardScan) emitRows(ctx context.Context, p *part, cr colReader, base int, sel []int32, emit func(*vec.Batch) error) error {
	for len(sel) > 0 {
		if err := ctx.Err(); err != nil {
			return err
		}
		chunk := sel[:min(len(sel), maxBatchRows)]
		sel = sel[len(chunk):]
		b, err := sc.buildBatch(p, cr, base, chunk)
		if err != nil {
			return err
		}
		if err := emit(b); err != nil {
			return err
		}
	}
	return nil
}

func (sc *shardScan) buildBatch(p *part, cr colReader, base int, sel []int32) (*vec.Batch, error) {
	a, z := int(sel[0]), int(sel[len(sel)-1])+1
	ascending := true
	for i := 1; i < len(sel); i++ {
		if sel[i] <= sel[i-1] {
			ascending = false
			break
		}
	}
	b := &vec.Batch{}
	var rows []int32
	// A range when the rows are dense, but a few rows (the hits of a rare
	// word) are read as a list: a range read of a dictionary column reads
	// the whole dictionary, a list of a few rows only the entries they use.
	if ascending && len(sel)*2 >= z-a && len(sel) > fewRows {
		b.Len = z - a
		if len(sel) != z-a {
			b.Sel = make([]int32, len(sel))
			for i, r := range sel {
				b.Sel[i] = r - int32(a)
			}
		}
	} else {
		rows = sel
		b.Len = len(sel)
	}
	rowAt := func(i int) int {
		if rows != nil {
			return int(rows[i])
		}
		return a + i
	}
	for _, col := range sc.req.Columns {
		v := &vec.Vector{}
		switch col.Kind {
		case scan.Value:
			cols := scalarCols(p, col.Path)
			if len(cols) == 0 {
				v = allNull(col.Type, b.Len)
			} else if err := readLogical(cr, cols, col.Type, a, z, rows, v); err != nil {
				return nil, err
			}
		case scan.Record:
			var pres vec.Vector
			cols := typedCols(p, col.Path, segment.TypeObject)
			v.Type, v.Len, v.Ints = vec.RowRef, b.Len, make([]int64, b.Len)
			if len(cols) == 0 {
				v = allNull(vec.RowRef, b.Len)
				break
			}
			if err := cr.read(cols[0], a, z, rows, &pres); err != nil {
				return nil, err
			}
			for i := 0; i < b.Len; i++ {
				if pres.IsNull(i) {
					if v.Nulls == nil {
						v.Nulls = vec.NewBitset(b.Len)
					}
					v.Nulls.Set(i)
					continue
				}
				v.Ints[i] = int64(p.id)<<32 | int64(base+rowAt(i))
			}
		case scan.ArrayOf:
			cols := typedCols(p, col.Path, segment.TypeArray)
			var blobs vec.Vector
			if len(cols) == 0 {
				blobs = *allNull(vec.String, b.Len)
			} else if err := cr.read(cols[0], a, z, rows, &blobs); err != nil {
				return nil, err
			}
			lv, err := buildList(&blobs, col)
			if err != nil {
				return nil, err
			}
			v = lv
		}
		b.Cols = append(b.Cols, v)
	}
	return b, nil
}

func allNull(t vec.Type, n int) *vec.Vector {
	v := &vec.Vector{Type: t, Len: n, Nulls: vec.NewBitset(n)}
	for i := 0; i < n; i++ {
		v.Nulls.Set(i)
	}
	switch t {
	case vec.Bool:
		v.Bools = make([]bool, n)
	case vec.Float64:
		v.Floats = make([]float64, n)
	case vec.String, vec.JSON:
		v.Strs = make([]string, n)
	case vec.List:
		v.Offsets = make([]int32, n+1)
		v.Elem = &vec.Vector{Type: vec.Unknown}
	default:
		v.Ints = make([]int64, n)
	}
	return v
}

// buildList decodes array values into a List vector shaped as col asks.
func buildList(blobs *vec.Vector, col scan.Column) (*vec.Vector, error) {
	n := blobs.Len
	out := &vec.Vector{Type: vec.List, Len: n, Offsets: make([]int32, n+1)}
	var elems []event.Value
	for i := 0; i < n; i++ {
		if blobs.IsNull(i) {
			if out.Nulls == nil {
				out.Nulls = vec.NewBitset(n)
			}
			out.Nulls.Set(i)
		} else {
			v, _, err := event.DecodeValue([]byte(blobs.StringAt(i)))
			if err != nil {
				return nil, &segment.CorruptError{Path: "array value", Offset: -1, Section: "column " + col.Path, Err: err}
			}
			elems = append(elems, v.Kids...)
		}
		out.Offsets[i+1] = int32(len(elems))
	}
	if len(col.Elem) == 0 {
		out.Elem = valuesVector(elems, nil, col.Type, false)
		return out, nil
	}
	st := &vec.Vector{Type: vec.Struct, Len: len(elems)}
	for _, ec := range col.Elem {
		var path []string
		if ec.Path != "" {
			path = splitPath(ec.Path)
		}
		st.Names = append(st.Names, ec.Path)
		st.Children = append(st.Children, valuesVector(elems, path, ec.Type, ec.Kind == scan.Record))
	}
	out.Elem = st
	return out, nil
}

func splitPath(p string) []string {
	var out []string
	start := 0
	for i := 0; i < len(p); i++ {
		if p[i] == '.' {
			out = append(out, p[start:i])
			start = i + 1
		}
	}
	return append(out, p[start:])
}

// valuesVector extracts path from each value as type t (records as
// BigQuery-shaped JSON text when record is set).
func valuesVector(vals []event.Value, path []string, t vec.Type, record bool) *vec.Vector {
	n := len(vals)
	if record {
		t = vec.JSON
	}
	out := allNull(t, n)
	for i := range vals {
		v := &vals[i]
		if len(path) > 0 {
			v = v.Path(path...)
			if v == nil {
				continue
			}
		}
		if record {
			if v.Kind == event.Object || v.Kind == event.Array {
				out.Strs[i] = string(appendBQJSON(nil, v, false))
				out.Nulls.Clear(i)
			}
			continue
		}
		if setScalar(out, i, v, t) {
			out.Nulls.Clear(i)
		}
	}
	if !out.Nulls.Any() {
		out.Nulls = nil
	}
	return out
}

func setScalar(out *vec.Vector, i int, v *event.Value, t vec.Type) bool {
	switch t {
	case vec.String, vec.JSON:
		switch v.Kind {
		case event.String:
			out.Strs[i] = v.Str
		case event.Int:
			out.Strs[i] = strconv.FormatInt(v.Int(), 10)
		case event.Float:
			out.Strs[i] = strconv.FormatFloat(v.Float(), 'g', -1, 64)
		case event.Bool:
			out.Strs[i] = strconv.FormatBool(v.Bool())
		case event.Object, event.Array:
			out.Strs[i] = string(appendBQJSON(nil, v, false))
		default:
			return false
		}
	case vec.Int64:
		if v.Kind != event.Int {
			return false
		}
		out.Ints[i] = v.Int()
	case vec.Float64:
		switch v.Kind {
		case event.Int:
			out.Floats[i] = float64(v.Int())
		case event.Float:
			out.Floats[i] = v.Float()
		default:
			return false
		}
	case vec.Bool:
		if v.Kind != event.Bool {
			return false
		}
		out.Bools[i] = v.Bool()
	default:
		return false
	}
	return true
}
