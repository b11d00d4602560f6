package engine

import (
	"container/heap"
	"slices"
	"strings"
	"time"

	"github.com/sediment/sediment/internal/vec"
	"github.com/sediment/sediment/segment"
)

// Compact merges runs of small segments (under a quarter of SegmentMaxRows)
// that are adjacent in time into one segment of at most SegmentMaxRows, and
// returns how many segments it merged. Queries keep reading the inputs
// until the merged segment is published; the inputs' files go when the
// last query using them ends.
func (s *Shard) Compact() (int, error) {
	s.compactMu.Lock()
	defer s.compactMu.Unlock()
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
	src, err := newMergeSource(group)
	if err != nil {
		return 0, err
	}
	meta := segMeta{created: s.opts.Now().UnixMicro()}
	for _, g := range group {
		meta.walLast = max(meta.walLast, g.meta.walLast)
		meta.replaces = append(meta.replaces, g.id)
	}
	s.mu.Lock()
	id := s.nextSeg
	s.nextSeg++
	s.mu.Unlock()
	ref, err := s.writeSegment(id, src, meta, s.opts.CompactZstdLevel)
	if err != nil {
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
	for _, sg := range s.segs {
		n := sg.r.Rows()
		if n >= small || rows+n > s.opts.SegmentMaxRows {
			if len(run) >= s.opts.CompactionMinInputs {
				return run
			}
			run, rows = nil, 0
			if n >= small {
				continue
			}
		}
		run = append(run, sg)
		rows += n
	}
	if len(run) >= s.opts.CompactionMinInputs {
		return run
	}
	return nil
}

// mergeSource presents the rows of several segments merged by timestamp
// (ties keep input order), with the union of their columns.
type mergeSource struct {
	inputs []*segment.Reader
	cols   []segment.ColumnDesc
	colIn  [][]int // [output column][input] → input column index or -1
	order  []mergeRow
	tmp    vec.Vector
}

type mergeRow struct {
	in  uint32
	row uint32
}

func newMergeSource(group []*segRef) (*mergeSource, error) {
	ms := &mergeSource{}
	type key struct {
		path string
		typ  segment.ColType
	}
	elems := map[key]map[segment.ElemField]bool{}
	var keys []key
	for _, g := range group {
		ms.inputs = append(ms.inputs, g.r)
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
		ms.cols = append(ms.cols, segment.ColumnDesc{Path: k.path, Type: k.typ, Elem: el})
		in := make([]int, len(ms.inputs))
		for i, r := range ms.inputs {
			in[i] = r.Column(k.path, k.typ)
		}
		ms.colIn = append(ms.colIn, in)
	}
	// Merge order from each input's timestamps.
	tsIdx := slices.IndexFunc(ms.cols, func(c segment.ColumnDesc) bool {
		return c.Path == "timestamp" && c.Type == segment.TypeTimestamp
	})
	cursors := make(mergeHeap, 0, len(ms.inputs))
	for i, r := range ms.inputs {
		ts := make([]int64, 0, r.Rows())
		for b := 0; b < r.NumBlocks(); b++ {
			if err := r.ReadColumn(b, ms.colIn[tsIdx][i], 0, r.Block(b).Rows, &ms.tmp); err != nil {
				return nil, err
			}
			ts = append(ts, ms.tmp.Ints...)
		}
		if len(ts) > 0 {
			cursors = append(cursors, &mergeCursor{in: i, ts: ts})
		}
	}
	heap.Init(&cursors)
	for len(cursors) > 0 {
		c := cursors[0]
		ms.order = append(ms.order, mergeRow{in: uint32(c.in), row: uint32(c.pos)})
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
	in  int
	ts  []int64
	pos int
}

type mergeHeap []*mergeCursor

func (h mergeHeap) Len() int { return len(h) }
func (h mergeHeap) Less(i, j int) bool {
	a, b := h[i].ts[h[i].pos], h[j].ts[h[j].pos]
	if a != b {
		return a < b
	}
	return h[i].in < h[j].in
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

// fill gathers rows [from, to) of the merged order. Each input contributes
// a contiguous row range to any output range, read block by block.
func (ms *mergeSource) fill(from, to int, data []*segment.ColumnData) error {
	n := to - from
	lo := make([]int, len(ms.inputs))
	hi := make([]int, len(ms.inputs))
	for i := range lo {
		lo[i], hi[i] = -1, -1
	}
	for _, o := range ms.order[from:to] {
		if lo[o.in] < 0 {
			lo[o.in] = int(o.row)
		}
		hi[o.in] = int(o.row) + 1
	}
	parts := make([]gathered, len(ms.inputs))
	for ci, c := range ms.cols {
		any := false
		for i, r := range ms.inputs {
			parts[i] = gathered{}
			col := ms.colIn[ci][i]
			if col < 0 || lo[i] < 0 {
				continue
			}
			if err := ms.gather(r, col, c.Type, lo[i], hi[i], &parts[i]); err != nil {
				return err
			}
			any = any || parts[i].any
		}
		if !any {
			data[ci] = nil
			continue
		}
		d := data[ci]
		if d == nil {
			d = &segment.ColumnData{}
		}
		resetColumnData(d, c.Type, n)
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
				d.Strs[r] = p.strs[k]
			}
		}
		data[ci] = d
	}
	return nil
}

// gathered holds one input's values of one column over a row range.
type gathered struct {
	nulls  []bool // nil: column absent (all NULL)
	any    bool
	bools  []bool
	ints   []int64
	floats []float64
	strs   []string
}

func (ms *mergeSource) gather(r *segment.Reader, col int, t segment.ColType, lo, hi int, g *gathered) error {
	g.nulls = make([]bool, 0, hi-lo)
	for b := 0; b < r.NumBlocks(); b++ {
		bi := r.Block(b)
		a, z := max(lo, bi.FirstRow), min(hi, bi.FirstRow+bi.Rows)
		if a >= z {
			continue
		}
		if err := r.ReadColumn(b, col, a-bi.FirstRow, z-bi.FirstRow, &ms.tmp); err != nil {
			return err
		}
		v := &ms.tmp
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

// ApplyRetention drops whole segments whose newest event is older than the
// shard's retention, and returns how many it dropped.
func (s *Shard) ApplyRetention() (int, error) {
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
