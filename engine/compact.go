package engine

import (
	"container/heap"
	"slices"
	"strings"
	"time"

	"github.com/sediment/sediment/index"
	"github.com/sediment/sediment/internal/vec"
	"github.com/sediment/sediment/segment"
)

// Compact merges runs of small segments (under a quarter of SegmentMaxRows)
// that are adjacent in time into one segment of at most SegmentMaxRows, and
// returns how many segments it merged. Queries keep reading the inputs
// until the merged segment is published; the inputs' files go when the
// last query using them ends.
func (s *Shard) Compact() (int, error) {
	if s.opts.ReadOnly {
		return 0, ErrReadOnly
	}
	s.compactMu.Lock()
	defer s.compactMu.Unlock()
	// A segment with blocks set aside (or a damaged index) is rewritten
	// without them first; it takes part in no other merge until then.
	if n, err := s.rewriteDamaged(); n > 0 || err != nil {
		return n, err
	}
	group := s.pickCompaction()
	if len(group) == 0 {
		return 0, nil
	}
	for _, g := range group {
		g.acquire()
	}
	defer func() {
		for _, g := range group {
			g.release()
		}
	}()
	meta := segMeta{created: s.opts.Now().UnixMicro()}
	for _, g := range group {
		meta.walLast = max(meta.walLast, g.meta.walLast)
		meta.replaces = append(meta.replaces, g.id)
	}
	s.mu.Lock()
	id := s.nextSeg
	s.nextSeg++
	s.mu.Unlock()
	var ref *segRef
	var err error
	if s.canConcatenate(group) {
		ref, err = s.concatSegments(id, group, meta)
		if err == nil {
			s.stats.concatenated.Add(1)
		}
	} else {
		var src *mergeSource
		if src, err = newMergeSource(group); err != nil {
			s.noteReadDamage(group, err)
			return 0, err
		}
		ref, err = s.writeSegment(id, src, meta, s.opts.CompactZstdLevel)
	}
	if err != nil {
		s.noteReadDamage(group, err)
		return 0, err
	}
	s.mu.Lock()
	s.segs = slices.DeleteFunc(s.segs, func(x *segRef) bool { return slices.Contains(group, x) })
	s.segs = append(s.segs, ref)
	s.sortSegs()
	s.mu.Unlock()
	for _, g := range group {
		g.removed.Store(true)
		g.release() // the list's reference
	}
	s.stats.compactions.Add(1)
	return len(group), nil
}

// pickCompaction returns the first run of at least CompactionMinInputs
// small, time-adjacent segments whose rows fit in SegmentMaxRows.
func (s *Shard) pickCompaction() []*segRef {
	s.mu.RLock()
	defer s.mu.RUnlock()
	small := s.opts.SegmentMaxRows / 4
	var run []*segRef
	rows := 0
	// The merged segment holds the union of the inputs' columns, which
	// must stay within what a segment may have.
	type colKey struct {
		path string
		typ  segment.ColType
	}
	union := map[colKey]bool{}
	wouldAdd := func(sg *segRef) int {
		n := 0
		for _, c := range sg.r.Columns() {
			if !union[colKey{c.Path, c.Type}] {
				n++
			}
		}
		return n
	}
	for _, sg := range s.segs {
		n := sg.r.Rows()
		if sg.needsRewrite() {
			n = small // never merged as it is: rewriteDamaged takes it
		}
		if n >= small || rows+n > s.opts.SegmentMaxRows || len(union)+wouldAdd(sg) > segment.MaxColumns {
			if len(run) >= s.opts.CompactionMinInputs {
				return run
			}
			run, rows = nil, 0
			clear(union)
			if n >= small {
				continue
			}
		}
		run = append(run, sg)
		rows += n
		for _, c := range sg.r.Columns() {
			union[colKey{c.Path, c.Type}] = true
		}
	}
	if len(run) >= s.opts.CompactionMinInputs {
		return run
	}
	return nil
}

// mergeSource presents the rows of several segments merged by timestamp
// (ties keep input order), with the union of their columns. Each block of
// each input is a sorted run to merge: a segment's blocks may overlap.
type mergeSource struct {
	// lo, hi: each input's row span in the block [spanFrom, spanTo).
	spanFrom, spanTo int
	lo, hi           []int

	inputs []*segment.Reader
	// skip says which input blocks are left out (set aside as damaged).
	skip  func(in, b int) bool
	cols  []segment.ColumnDesc
	colIn [][]int // [output column][input] → input column index or -1
	order []mergeRow
	tmp   vec.Vector
}

type mergeRow struct {
	in  uint32
	row uint32
}

func newMergeSource(group []*segRef) (*mergeSource, error) {
	ms := &mergeSource{}
	for _, g := range group {
		ms.inputs = append(ms.inputs, g.r)
	}
	ms.skip = func(in, b int) bool { _, ok := group[in].damaged(b); return ok }
	ms.cols, ms.colIn = unionColumns(group)
	// Merge order from each input's timestamps.
	tsIdx := slices.IndexFunc(ms.cols, func(c segment.ColumnDesc) bool {
		return c.Path == "timestamp" && c.Type == segment.TypeTimestamp
	})
	cursors := make(mergeHeap, 0, len(ms.inputs))
	for i, r := range ms.inputs {
		for b := 0; b < r.NumBlocks(); b++ {
			bi := r.Block(b)
			if ms.skip(i, b) {
				continue
			}
			if err := r.ReadColumnOnce(b, ms.colIn[tsIdx][i], 0, bi.Rows, &ms.tmp); err != nil {
				return nil, err
			}
			ts := slices.Clone(ms.tmp.Ints[:bi.Rows])
			cursors = append(cursors, &mergeCursor{in: i, first: bi.FirstRow, ts: ts})
		}
	}
	heap.Init(&cursors)
	for len(cursors) > 0 {
		c := cursors[0]
		ms.order = append(ms.order, mergeRow{in: uint32(c.in), row: uint32(c.first + c.pos)})
		c.pos++
		if c.pos == len(c.ts) {
			heap.Pop(&cursors)
		} else {
			heap.Fix(&cursors, 0)
		}
	}
	return ms, nil
}

type mergeCursor struct {
	in    int
	first int // the block's first row in its segment
	ts    []int64
	pos   int
}

type mergeHeap []*mergeCursor

func (h mergeHeap) Len() int { return len(h) }
func (h mergeHeap) Less(i, j int) bool {
	a, b := h[i].ts[h[i].pos], h[j].ts[h[j].pos]
	if a != b {
		return a < b
	}
	if h[i].in != h[j].in {
		return h[i].in < h[j].in
	}
	return h[i].first < h[j].first
}
func (h mergeHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *mergeHeap) Push(x any)   { *h = append(*h, x.(*mergeCursor)) }
func (h *mergeHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

func (ms *mergeSource) columns() []segment.ColumnDesc { return ms.cols }
func (ms *mergeSource) rows() int                     { return len(ms.order) }

// fill gathers rows [from, to) of the merged order. Each input's rows in
// the range are read as one span from the smallest to the largest row
// used (contiguous when the input's blocks follow each other in time).
func (ms *mergeSource) fillColumn(ci, from, to int, d *segment.ColumnData) (bool, error) {
	n := to - from
	if ms.spanFrom != from || ms.spanTo != to || ms.lo == nil {
		// Each input's rows in the range: computed once per block.
		ms.spanFrom, ms.spanTo = from, to
		ms.lo = make([]int, len(ms.inputs))
		ms.hi = make([]int, len(ms.inputs))
		for i := range ms.lo {
			ms.lo[i], ms.hi[i] = -1, -1
		}
		for _, o := range ms.order[from:to] {
			if ms.lo[o.in] < 0 {
				ms.lo[o.in] = int(o.row)
			}
			ms.hi[o.in] = int(o.row) + 1
		}
	}
	lo, hi := ms.lo, ms.hi
	parts := make([]gathered, len(ms.inputs))
	c := ms.cols[ci]
	{
		any := false
		for i, r := range ms.inputs {
			parts[i] = gathered{}
			col := ms.colIn[ci][i]
			if col < 0 || lo[i] < 0 {
				continue
			}
			if err := ms.gather(i, r, col, c.Type, lo[i], hi[i], &parts[i]); err != nil {
				return false, err
			}
			any = any || parts[i].any
		}
		if !any {
			return false, nil
		}
		resetColumnData(d, c.Type, n)
		// When every input holds the column dictionary-encoded, merge the
		// dictionaries (once per distinct entry) and pass codes on.
		var remap [][]int32
		var mcode map[string]uint32
		if c.Type == segment.TypeString {
			allDict := true
			for i := range parts {
				if parts[i].nulls != nil && parts[i].any && parts[i].dict == nil {
					allDict = false
				}
			}
			if allDict {
				remap = make([][]int32, len(parts))
				mcode = map[string]uint32{}
				d.Strs = d.Strs[:0]
				d.Codes = growSlice(d.Codes, n)
			}
		}
		for r, o := range ms.order[from:to] {
			p := &parts[o.in]
			k := int(o.row) - lo[o.in]
			if p.nulls == nil || p.nulls[k] {
				if d.Nulls == nil {
					d.Nulls = vec.NewBitset(n)
				}
				d.Nulls.Set(r)
				continue
			}
			switch c.Type {
			case segment.TypeBool:
				d.Bools[r] = p.bools[k]
			case segment.TypeInt64, segment.TypeTimestamp:
				d.Ints[r] = p.ints[k]
			case segment.TypeFloat64:
				d.Floats[r] = p.floats[k]
			case segment.TypeString, segment.TypeArray:
				if remap == nil {
					d.Strs[r] = p.str(k)
					break
				}
				rm := remap[o.in]
				if rm == nil {
					rm = make([]int32, len(p.dict))
					for i := range rm {
						rm[i] = -1
					}
					remap[o.in] = rm
				}
				pc := p.codes[k]
				if rm[pc] < 0 {
					s := p.dict[pc]
					mc, ok := mcode[s]
					if !ok {
						mc = uint32(len(d.Dict))
						mcode[s] = mc
						d.Dict = append(d.Dict, s)
					}
					rm[pc] = int32(mc)
				}
				d.Codes[r] = uint32(rm[pc])
			}
		}
		if remap != nil && d.Dict == nil {
			d.Dict = []string{}
		}
		return true, nil
	}
}

// gathered holds one input's values of one column over a row range.
type gathered struct {
	nulls  []bool // nil: column absent (all NULL)
	any    bool
	bools  []bool
	ints   []int64
	floats []float64
	strs   []string
	// Dictionary-encoded strings, when every block read was: codes into
	// dict (the blocks' dictionaries concatenated).
	codes []uint32
	dict  []string
}

func (g *gathered) str(k int) string {
	if g.dict != nil {
		return g.dict[g.codes[k]]
	}
	return g.strs[k]
}

func (ms *mergeSource) gather(in int, r *segment.Reader, col int, t segment.ColType, lo, hi int, g *gathered) error {
	g.nulls = make([]bool, 0, hi-lo)
	dictOnly := t == segment.TypeString
	for b := 0; b < r.NumBlocks(); b++ {
		bi := r.Block(b)
		a, z := max(lo, bi.FirstRow), min(hi, bi.FirstRow+bi.Rows)
		if a >= z {
			continue
		}
		if ms.skip(in, b) {
			// A block set aside: its rows are in no output row, but keep
			// the positions of the rows after it.
			dictOnly = g.placeholders(t, z-a, dictOnly)
			continue
		}
		if err := r.ReadColumnOnce(b, col, a-bi.FirstRow, z-bi.FirstRow, &ms.tmp); err != nil {
			return err
		}
		v := &ms.tmp
		if dictOnly && v.Dict != nil && len(g.strs) == 0 {
			base := uint32(len(g.dict))
			g.dict = append(g.dict, v.Dict...)
			for i := 0; i < z-a; i++ {
				null := v.IsNull(i)
				g.nulls = append(g.nulls, null)
				g.any = g.any || !null
				g.codes = append(g.codes, base+v.Codes[i])
			}
			continue
		}
		if dictOnly && len(g.codes) > 0 {
			// A plain block after dictionary ones: fall back to strings.
			for _, c := range g.codes {
				g.strs = append(g.strs, g.dict[c])
			}
			g.codes, g.dict = nil, nil
		}
		dictOnly = false
		for i := 0; i < z-a; i++ {
			null := v.IsNull(i)
			g.nulls = append(g.nulls, null)
			g.any = g.any || !null
			switch t {
			case segment.TypeBool, segment.TypeObject:
				g.bools = append(g.bools, !null && v.Bools[i])
			case segment.TypeInt64, segment.TypeTimestamp:
				g.ints = append(g.ints, v.Ints[i])
			case segment.TypeFloat64:
				g.floats = append(g.floats, v.Floats[i])
			default:
				if null {
					g.strs = append(g.strs, "")
				} else {
					g.strs = append(g.strs, v.StringAt(i))
				}
			}
		}
	}
	return nil
}

// placeholders appends n NULL rows that no output row reads, leaving the
// dictionary representation (their codes would have no entry).
func (g *gathered) placeholders(t segment.ColType, n int, dictOnly bool) bool {
	if dictOnly && len(g.codes) > 0 {
		for _, c := range g.codes {
			g.strs = append(g.strs, g.dict[c])
		}
		g.codes, g.dict = nil, nil
	}
	for range n {
		g.nulls = append(g.nulls, true)
		switch t {
		case segment.TypeBool, segment.TypeObject:
			g.bools = append(g.bools, false)
		case segment.TypeInt64, segment.TypeTimestamp:
			g.ints = append(g.ints, 0)
		case segment.TypeFloat64:
			g.floats = append(g.floats, 0)
		default:
			g.strs = append(g.strs, "")
		}
	}
	return false
}

// ApplyRetention drops whole segments whose newest event is older than the
// shard's retention, and returns how many it dropped.
func (s *Shard) ApplyRetention() (int, error) {
	if s.opts.ReadOnly {
		return 0, ErrReadOnly
	}
	days := s.retentionDays.Load()
	if days <= 0 {
		return 0, nil
	}
	cutoff := s.opts.Now().Add(-time.Duration(days) * 24 * time.Hour).UnixMicro()
	s.mu.Lock()
	var drop []*segRef
	s.segs = slices.DeleteFunc(s.segs, func(sg *segRef) bool {
		_, maxT := sg.r.TimeRange()
		if maxT < cutoff {
			drop = append(drop, sg)
			return true
		}
		return false
	})
	s.mu.Unlock()
	for _, sg := range drop {
		sg.removed.Store(true)
		sg.release()
	}
	if len(drop) > 0 {
		s.stats.segmentsPurged.Add(int64(len(drop)))
		return len(drop), s.opts.FS.SyncDir(s.segDir)
	}
	return 0, nil
}

// canConcatenate reports whether a group can be compacted by copying its
// blocks: they are not so small that re-cutting them would pay. Segments
// whose times overlap (late events) concatenate too: each block stays
// sorted, only some block ranges overlap.
func (s *Shard) canConcatenate(group []*segRef) bool {
	rows, blocks := 0, 0
	for _, g := range group {
		rows += g.r.Rows()
		blocks += g.r.NumBlocks()
	}
	return rows/blocks >= s.opts.BlockRows/4
}

// concatSegments compacts time-ordered segments by copying their blocks
// (recompressing those written by flushes at the compaction level) and
// merging their indexes, without decoding any column.
func (s *Shard) concatSegments(id uint64, group []*segRef, meta segMeta) (ref *segRef, err error) {
	cols, colIn := unionColumns(group)
	out, err := s.createSegment(id, cols, s.opts.CompactZstdLevel)
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			out.abort()
		}
	}()
	w := out.w
	text := s.textIndexPaths()
	var inputs []index.MergeInput
	offset := uint32(0)
	for gi, g := range group {
		colMap := make([]int, len(g.r.Columns()))
		for i := range colMap {
			colMap[i] = -1
		}
		for oc := range cols {
			if ic := colIn[oc][gi]; ic >= 0 {
				colMap[ic] = oc
			}
		}
		// Segments written by a flush are at the flush level; those written
		// by compaction already at this one.
		recompress := len(g.meta.replaces) == 0 && s.opts.CompactZstdLevel > s.opts.ZstdLevel
		for b := 0; b < g.r.NumBlocks(); b++ {
			if err := w.CopyBlock(g.r, b, colMap, recompress); err != nil {
				return nil, err
			}
		}
		ix, err := g.index()
		if err != nil {
			return nil, err
		}
		r := g.r
		inputs = append(inputs, index.MergeInput{Index: ix, Offset: offset, Rows: uint32(r.Rows()), Has: func(path string, kind index.Kind) bool {
			switch kind {
			case index.KindInt:
				return r.Column(path, segment.TypeInt64) >= 0
			case index.KindBool:
				return r.Column(path, segment.TypeBool) >= 0
			case index.KindToken:
				return text[path] && r.Column(path, segment.TypeString) >= 0
			}
			return path != "id" && r.Column(path, segment.TypeString) >= 0
		}})
		offset += uint32(r.Rows())
	}
	dir, err := index.Merge(inputs, w, &index.BuilderOptions{MaxValueTerms: s.opts.IndexMaxValueTerms})
	if err != nil {
		return nil, err
	}
	return out.commit(dir, meta)
}

// unionColumns is the column directory of several segments, sorted, and
// for each output column the input column index per segment (-1 absent).
func unionColumns(group []*segRef) ([]segment.ColumnDesc, [][]int) {
	type key struct {
		path string
		typ  segment.ColType
	}
	elems := map[key]map[segment.ElemField]bool{}
	var keys []key
	for _, g := range group {
		for _, c := range g.r.Columns() {
			k := key{c.Path, c.Type}
			if elems[k] == nil {
				elems[k] = map[segment.ElemField]bool{}
				keys = append(keys, k)
			}
			for _, e := range c.Elem {
				elems[k][e] = true
			}
		}
	}
	slices.SortFunc(keys, func(a, b key) int {
		if c := strings.Compare(a.path, b.path); c != 0 {
			return c
		}
		return int(a.typ) - int(b.typ)
	})
	var cols []segment.ColumnDesc
	var colIn [][]int
	for _, k := range keys {
		var el []segment.ElemField
		for e := range elems[k] {
			el = append(el, e)
		}
		slices.SortFunc(el, func(a, b segment.ElemField) int {
			if c := strings.Compare(a.Path, b.Path); c != 0 {
				return c
			}
			return int(a.Type) - int(b.Type)
		})
		el = el[:min(len(el), maxElemFields)]
		cols = append(cols, segment.ColumnDesc{Path: k.path, Type: k.typ, Elem: el})
		in := make([]int, len(group))
		for i, g := range group {
			in[i] = g.r.Column(k.path, k.typ)
		}
		colIn = append(colIn, in)
	}
	return cols, colIn
}
