package engine

import (
	"cmp"
	"errors"
	"math"
	"slices"
	"strings"

	"github.com/sediment/sediment/index"
	"github.com/sediment/sediment/internal/vec"
	"github.com/sediment/sediment/segment"
)

// rowSource supplies the rows of a segment to writeSegment, block by
// block, each block's rows sorted by time.
type rowSource interface {
	columns() []segment.ColumnDesc
	rows() int
	// sortKey is the field the rows are ordered by before time ("": time
	// only), and blocks how they are cut into blocks, in order.
	sortKey() string
	blocks() []blockSpec
	// fillColumn writes rows [from, to) of column ci into d (reusing its
	// slices) and reports whether any row has a value. One column at a
	// time keeps a block's worth of one column in memory, not of every
	// column. [from, to) is always one whole block of blocks().
	fillColumn(ci, from, to int, d *segment.ColumnData) (bool, error)
	// fillsDecode reports whether fillColumn decodes stored pages (a
	// merge) rather than gathering values held in memory (a head).
	fillsDecode() bool
}

// headSource presents a frozen head's rows ordered by its sort key, then
// time (see sortkey.go), or by time alone.
type headSource struct {
	v     *headView
	cols  []segment.ColumnDesc
	perm  []int32
	key   string
	specs []blockSpec
	dense []int8  // per column: 0 not known yet, 1 a value in every row, 2 not
	ks    []int32 // valueIndexes' buffer
}

func newHeadSource(v *headView, sortKey string, blockRows int) *headSource {
	hs := &headSource{v: v, key: sortKey}
	var ts []int64
	for i := range v.cols {
		c := &v.cols[i]
		if c.path == "timestamp" && c.typ == segment.TypeTimestamp {
			ts = c.ints
		}
		hs.cols = append(hs.cols, segment.ColumnDesc{Path: c.path, Type: c.typ, Elem: sortedElems(c.elem)})
	}
	hs.perm = make([]int32, v.rows)
	for i := range hs.perm {
		hs.perm[i] = int32(i)
	}
	if sortKey == "" {
		// Every row has a timestamp, so value k of the column is row k.
		slices.SortStableFunc(hs.perm, func(a, b int32) int { return cmp.Compare(ts[a], ts[b]) })
		hs.specs = timeBlocks(v.rows, blockRows)
		return hs
	}
	class := hs.keyClasses(sortKey, blockRows)
	slices.SortStableFunc(hs.perm, func(a, b int32) int {
		if c := cmp.Compare(class[a], class[b]); c != 0 {
			return c
		}
		return cmp.Compare(ts[a], ts[b])
	})
	return hs
}

// sortedElems returns a copy of an array column's element fields in the
// order a segment lists them.
func sortedElems(elem []segment.ElemField) []segment.ElemField {
	out := slices.Clone(elem)
	slices.SortFunc(out, func(a, b segment.ElemField) int {
		if c := strings.Compare(a.Path, b.Path); c != 0 {
			return c
		}
		return int(a.Type) - int(b.Type)
	})
	return out
}

// keyClasses groups the head's rows by their value of the sort key,
// plans the blocks, and returns each row's class (its place in the order).
func (hs *headSource) keyClasses(sortKey string, blockRows int) []int32 {
	v := hs.v
	class := make([]int32, v.rows)
	keyOf := func(int) (string, bool) { return "", false } // no row has the key
	if ki := slices.IndexFunc(v.cols, func(c headColView) bool { return c.path == sortKey && c.typ == segment.TypeString }); ki >= 0 {
		kc := &v.cols[ki]
		kc.buildRank()
		keyOf = func(row int) (string, bool) {
			k := kc.valueIndex(row)
			if k < 0 {
				return "", false
			}
			return kc.str(k), true
		}
	}
	var maxTime int64 = math.MinInt64
	ts := v.cols[slices.IndexFunc(v.cols, func(c headColView) bool { return c.path == "timestamp" && c.typ == segment.TypeTimestamp })].ints
	for _, t := range ts[:v.rows] {
		maxTime = max(maxTime, t)
	}
	counts := map[string]*slabCounts{}
	var absent slabCounts
	for r := 0; r < v.rows; r++ {
		key, ok := keyOf(r)
		if !ok {
			absent[slabOf(ts[r], maxTime)]++
			continue
		}
		c := counts[key]
		if c == nil {
			c = new(slabCounts)
			counts[strings.Clone(key)] = c // key may alias the head
		}
		c[slabOf(ts[r], maxTime)]++
	}
	plan := planKeys(counts, absent, v.rows/flushKeyShare)
	for r := range class {
		key, ok := keyOf(r)
		class[r] = plan.classOf(key, ok, slabOf(ts[r], maxTime))
	}
	hs.specs = planBlocks(plan.classes, blockRows)
	return class
}

func (hs *headSource) columns() []segment.ColumnDesc { return hs.cols }
func (hs *headSource) rows() int                     { return len(hs.perm) }
func (hs *headSource) sortKey() string               { return hs.key }
func (hs *headSource) blocks() []blockSpec           { return hs.specs }
func (hs *headSource) fillsDecode() bool             { return false }

func (hs *headSource) fillColumn(ci, from, to int, d *segment.ColumnData) (bool, error) {
	n := to - from
	c := &hs.v.cols[ci]
	resetColumnData(d, c.typ, n)
	if c.typ == segment.TypeString && c.dictMap {
		// Hand the head's dictionary codes through.
		d.Strs = d.Strs[:0]
		d.Codes = growSlice(d.Codes, n)
		d.Dict = c.dict
	}
	ks := hs.valueIndexes(ci, hs.perm[from:to])
	any := false
	for r, k := range ks {
		if k < 0 {
			if d.Nulls == nil {
				d.Nulls = vec.NewBitset(n)
			}
			d.Nulls.Set(r)
		} else {
			any = true
		}
	}
	// One loop per type: rows come in sort order, scattered over the head.
	switch {
	case c.typ == segment.TypeBool:
		for r, k := range ks {
			if k >= 0 {
				d.Bools[r] = c.bools[k]
			}
		}
	case c.typ == segment.TypeInt64 || c.typ == segment.TypeTimestamp:
		for r, k := range ks {
			if k >= 0 {
				d.Ints[r] = c.ints[k]
			}
		}
	case c.typ == segment.TypeFloat64:
		for r, k := range ks {
			if k >= 0 {
				d.Floats[r] = c.floats[k]
			}
		}
	case d.Dict != nil:
		for r, k := range ks {
			if k >= 0 {
				d.Codes[r] = uint32(c.codes[k])
			}
		}
	case c.typ == segment.TypeString || c.typ == segment.TypeArray:
		for r, k := range ks {
			if k >= 0 {
				d.Strs[r] = c.str(int(k))
			}
		}
	}
	return any, nil
}

// valueIndexes returns the value index of column ci for each of rows (-1
// where the row has no value), in a buffer reused by the next call. A
// column with a value in every row (most are) needs no lookup: value k is
// row k.
func (hs *headSource) valueIndexes(ci int, rows []int32) []int32 {
	if hs.dense == nil {
		hs.dense = make([]int8, len(hs.v.cols))
	}
	c := &hs.v.cols[ci]
	if hs.dense[ci] == 0 {
		hs.dense[ci] = 2
		if int(c.countBits(0, hs.v.rows)) == hs.v.rows {
			hs.dense[ci] = 1
		}
	}
	if hs.dense[ci] == 1 {
		return rows
	}
	c.buildRank()
	hs.ks = growSlice(hs.ks, len(rows))
	for i, r := range rows {
		hs.ks[i] = int32(c.valueIndex(int(r)))
	}
	return hs.ks
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
	ib := index.NewBuilder(&index.BuilderOptions{MaxValueTerms: s.opts.IndexMaxValueTerms, RowsHint: uint32(min(src.rows(), math.MaxUint32))})
	text := s.textIndexPaths()
	tsCol := slices.IndexFunc(cols, func(c segment.ColumnDesc) bool {
		return c.Path == "timestamp" && c.Type == segment.TypeTimestamp
	})
	if tsCol < 0 {
		return nil, errors.New("no timestamp column")
	}
	var merged map[string]bool // text fields whose tokens come from the inputs' indexes
	tm, _ := src.(textMerger)
	if tm != nil {
		merged = tm.mergeTextPaths(text, ib)
	}
	var tsData segment.ColumnData
	bc := newBlockColumns(src)
	specs := src.blocks()
	if meta.sortKey = src.sortKey(); meta.sortKey != "" {
		meta.blocks = make([]blockKey, len(specs))
	}
	to := 0
	for b, spec := range specs {
		from := to
		to += spec.rows
		if meta.sortKey != "" {
			meta.blocks[b] = spec.key
		}
		if _, err := src.fillColumn(tsCol, from, to, &tsData); err != nil {
			return nil, err
		}
		// The writer may fetch other columns of the block to store a text
		// column as templates over them (segment.ColumnFetcher); bc fills
		// such a column once for both.
		bc.begin(from, to)
		if err := w.BeginBlockFrom(to-from, &tsData, bc.fetch); err != nil {
			return nil, err
		}
		for ci, c := range cols {
			d := &tsData
			if ci != tsCol {
				var present bool
				var err error
				if d, present, err = bc.column(ci); err != nil {
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
				bc.done(ci)
				continue
			}
			v := columnVector(c.Type, d, to-from)
			switch c.Type {
			case segment.TypeString:
				if c.Path != "id" {
					ib.AddStrings(c.Path, uint32(from), v)
				}
				if text[c.Path] && !merged[c.Path] {
					ib.AddText(c.Path, uint32(from), v)
				}
			case segment.TypeInt64:
				ib.AddInts(c.Path, uint32(from), v)
			case segment.TypeBool:
				ib.AddBools(c.Path, uint32(from), v)
			}
			bc.done(ci)
		}
		if err := w.EndBlock(); err != nil {
			return nil, err
		}
	}
	bc.releaseAll()
	if len(merged) > 0 {
		if err := tm.mergeText(ib, merged); err != nil {
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
