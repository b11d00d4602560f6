package engine

import (
	"errors"
	"slices"
	"strings"

	"github.com/sediment/sediment/index"
	"github.com/sediment/sediment/internal/vec"
	"github.com/sediment/sediment/segment"
)

// rowSource supplies time-sorted rows to writeSegment.
type rowSource interface {
	columns() []segment.ColumnDesc
	rows() int
	// fillColumn writes sorted rows [from, to) of column ci into d
	// (reusing its slices) and reports whether any row has a value. One
	// column at a time keeps a block's worth of one column in memory, not
	// of every column.
	fillColumn(ci, from, to int, d *segment.ColumnData) (bool, error)
}

// headSource presents a frozen head's rows sorted by timestamp.
type headSource struct {
	v    *headView
	cols []segment.ColumnDesc
	perm []int32
}

func newHeadSource(v *headView) *headSource {
	hs := &headSource{v: v}
	var ts []int64
	for i := range v.cols {
		c := &v.cols[i]
		if c.path == "timestamp" && c.typ == segment.TypeTimestamp {
			ts = c.ints
		}
		elem := slices.Clone(c.elem)
		slices.SortFunc(elem, func(a, b segment.ElemField) int {
			if c := strings.Compare(a.Path, b.Path); c != 0 {
				return c
			}
			return int(a.Type) - int(b.Type)
		})
		hs.cols = append(hs.cols, segment.ColumnDesc{Path: c.path, Type: c.typ, Elem: elem})
	}
	hs.perm = make([]int32, v.rows)
	for i := range hs.perm {
		hs.perm[i] = int32(i)
	}
	// Every row has a timestamp, so value k of the column is row k.
	slices.SortStableFunc(hs.perm, func(a, b int32) int {
		x, y := ts[a], ts[b]
		switch {
		case x < y:
			return -1
		case x > y:
			return 1
		}
		return 0
	})
	return hs
}

func (hs *headSource) columns() []segment.ColumnDesc { return hs.cols }
func (hs *headSource) rows() int                     { return hs.v.rows }

func (hs *headSource) fillColumn(ci, from, to int, d *segment.ColumnData) (bool, error) {
	n := to - from
	{
		c := &hs.v.cols[ci]
		c.buildRank()
		resetColumnData(d, c.typ, n)
		if c.typ == segment.TypeString && c.dictMap {
			// Hand the head's dictionary codes through.
			d.Strs = d.Strs[:0]
			d.Codes = growSlice(d.Codes, n)
			d.Dict = c.dict
		}
		any := false
		for r := 0; r < n; r++ {
			k := c.valueIndex(int(hs.perm[from+r]))
			if k < 0 {
				if d.Nulls == nil {
					d.Nulls = vec.NewBitset(n)
				}
				d.Nulls.Set(r)
				continue
			}
			any = true
			switch c.typ {
			case segment.TypeBool:
				d.Bools[r] = c.bools[k]
			case segment.TypeInt64, segment.TypeTimestamp:
				d.Ints[r] = c.ints[k]
			case segment.TypeFloat64:
				d.Floats[r] = c.floats[k]
			case segment.TypeString, segment.TypeArray:
				if d.Dict != nil {
					d.Codes[r] = c.codes[k]
				} else {
					d.Strs[r] = c.str(k)
				}
			}
		}
		return any, nil
	}
}

func resetColumnData(d *segment.ColumnData, t segment.ColType, n int) {
	d.Nulls = nil
	d.Bools, d.Ints, d.Floats, d.Strs = d.Bools[:0], d.Ints[:0], d.Floats[:0], d.Strs[:0]
	d.Codes, d.Dict = d.Codes[:0], nil
	switch t {
	case segment.TypeBool:
		d.Bools = growSlice(d.Bools, n)
	case segment.TypeInt64, segment.TypeTimestamp:
		d.Ints = growSlice(d.Ints, n)
	case segment.TypeFloat64:
		d.Floats = growSlice(d.Floats, n)
	case segment.TypeString, segment.TypeArray:
		d.Strs = growSlice(d.Strs, n)
	}
}

// columnVector views ColumnData as a vector without copying.
func columnVector(t segment.ColType, d *segment.ColumnData, n int) *vec.Vector {
	v := &vec.Vector{Type: segment.VecType(t), Len: n, Nulls: d.Nulls}
	switch t {
	case segment.TypeBool:
		v.Bools = d.Bools
	case segment.TypeInt64, segment.TypeTimestamp:
		v.Ints = d.Ints
	case segment.TypeFloat64:
		v.Floats = d.Floats
	default:
		if d.Dict != nil {
			v.Codes, v.Dict = d.Codes, d.Dict
		} else {
			v.Strs = d.Strs
		}
	}
	return v
}

// writeSegment writes src as segment id (temp file, fsync, rename, fsync
// directory), with its index and meta, and opens it.
func (s *Shard) writeSegment(id uint64, src rowSource, meta segMeta, zstdLevel int) (*segRef, error) {
	cols := src.columns()
	out, err := s.createSegment(id, cols, zstdLevel)
	if err != nil {
		return nil, err
	}
	defer out.abortUnlessCommitted()
	w := out.w
	ib := index.NewBuilder(&index.BuilderOptions{MaxValueTerms: s.opts.IndexMaxValueTerms})
	text := s.textIndexPaths()
	tsCol := slices.IndexFunc(cols, func(c segment.ColumnDesc) bool {
		return c.Path == "timestamp" && c.Type == segment.TypeTimestamp
	})
	if tsCol < 0 {
		return nil, errors.New("no timestamp column")
	}
	var tsData, colData segment.ColumnData
	total := src.rows()
	for from := 0; from < total; from += s.opts.BlockRows {
		to := min(from+s.opts.BlockRows, total)
		if _, err := src.fillColumn(tsCol, from, to, &tsData); err != nil {
			return nil, err
		}
		if err := w.BeginBlock(to-from, &tsData); err != nil {
			return nil, err
		}
		for ci, c := range cols {
			d := &tsData
			if ci != tsCol {
				d = &colData
				present, err := src.fillColumn(ci, from, to, d)
				if err != nil {
					return nil, err
				}
				if !present {
					d = nil
				}
			}
			if err := w.WriteColumn(ci, d); err != nil {
				return nil, err
			}
			if d == nil {
				continue
			}
			v := columnVector(c.Type, d, to-from)
			switch c.Type {
			case segment.TypeString:
				if c.Path != "id" {
					ib.AddStrings(c.Path, uint32(from), v)
				}
				if text[c.Path] {
					ib.AddText(c.Path, uint32(from), v)
				}
			case segment.TypeInt64:
				ib.AddInts(c.Path, uint32(from), v)
			case segment.TypeBool:
				ib.AddBools(c.Path, uint32(from), v)
			}
		}
		if err := w.EndBlock(); err != nil {
			return nil, err
		}
	}
	var dir []byte
	if !ib.Empty() {
		var err error
		if dir, err = ib.Write(w); err != nil {
			return nil, err
		}
	}
	return out.commit(dir, meta)
}
