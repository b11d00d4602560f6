package engine

import (
	"container/heap"
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/sediment/sediment/internal/vec"
	"github.com/sediment/sediment/segment"
)

// noCutoff keeps every row of a merge.
const noCutoff = math.MinInt64

// mergeSource presents the rows of several segments merged by timestamp,
// with the union of their columns, leaving out rows older than a cutoff
// (retention; noCutoff keeps all). With a sort key, the rows of input
// blocks that hold one key value each are merged by (key, time) into
// blocks of their own, and the others by time into mixed blocks (see
// sortkey.go).
//
// The unit of the merge is a run: one block of one input, whose rows are
// sorted by time. The runs of one segment may overlap in time (compaction
// concatenates segments that overlap, and a segment written with other
// block sizes is cut elsewhere), so nothing assumes that an input's rows
// are used in row order: each output block gathers, for every run it
// takes rows from, exactly the rows it takes. Memory is the merge order
// of one output block, one column of one output block, and the
// timestamps of the runs being merged (a run's are loaded when the merge
// reaches it and dropped when it is used up).
//
// Rows are produced block by block: fillColumn must be asked for
// [0, n), then [n, 2n), ..., each for any columns in any order (as
// writeSegment does).
type mergeSource struct {
	inputs []*segment.Reader
	cols   []segment.ColumnDesc
	colIn  [][]int // [output column][input] → input column index or -1
	tsIn   []int   // per input: its timestamp column
	total  int
	runs   []mergeRun
	heap   runHeap
	key    string
	specs  []blockSpec

	// The output block being filled: rows [from, to), where each row
	// comes from (order), and per run the rows it gives (pieces), whose
	// output positions are consecutive slices of pos.
	from, to int
	order    []runRow
	pieces   []runPiece
	pos      []int32
	tmp      vec.Vector
	// piece is the scratch vector every piece is read into; kept holds
	// the current piece's plain strings copied out of it (keepStrings).
	piece vec.Vector
	kept  []string
	remap []int32
	// mcode is a string column's output dictionary codes by value, reused
	// column after column (cleared for each) while it stays small.
	mcode map[string]uint32

	// rowsRead counts the values decoded by the last fillColumn calls,
	// for tests of the merge's memory bound.
	rowsRead int

	// group is the merged segments; rowMaps, when tracked (see
	// mergeTextPaths), gives for each input row the output row it became.
	group   []*segRef
	rowMaps [][]uint32
	// textScans are the merged text fields' recoveries, by output column.
	textScans map[int]*textScan
}

// mergeRun is one block of one input.
type mergeRun struct {
	in, b int
	first int // the block's first row in its segment
	// slabs gives the output class of the run's rows by slab: those of its
	// key value's, or of the mixed rows (nil without a sort key); the heap
	// merges class by class (see sortkey.go).
	slabs   *[numSlabs]int32
	start   int   // first row kept (rows before it are older than the cutoff)
	minTime int64 // a lower bound of the run's timestamps, until loaded
	ts      []int64
	pos     int // next row of the run to merge
	loaded  bool
	// The run's piece in the current output block (valid when pieceOf
	// equals the block's first row + 1).
	piece, pieceOf int
}

type runRow struct{ run, row uint32 }

// runPiece is the rows [lo, hi) of a run that go into the output block,
// at output positions pos[at:at+hi-lo] (ascending).
type runPiece struct {
	run    int
	lo, hi int
	at     int
}

// newMergeSource prepares the merge of group, dropping rows older than
// cutoff and the blocks set aside as damaged, ordered by sortKey ("":
// time only) and cut into blocks of at most blockRows. Blocks entirely
// older than cutoff are skipped without being read; blocks that straddle
// it have their timestamps read once to count what is kept.
func newMergeSource(group []*segRef, cutoff int64, sortKey string, blockRows int) (*mergeSource, error) {
	ms := &mergeSource{key: sortKey, group: group}
	for _, g := range group {
		ms.inputs = append(ms.inputs, g.r)
		ms.tsIn = append(ms.tsIn, g.r.Column("timestamp", segment.TypeTimestamp))
	}
	ms.cols, ms.colIn = unionColumns(group)
	for i, r := range ms.inputs {
		if ms.tsIn[i] < 0 {
			return nil, fmt.Errorf("merge: segment %d has no timestamp column", group[i].id)
		}
		for b := 0; b < r.NumBlocks(); b++ {
			bi := r.Block(b)
			if bi.Rows == 0 || bi.MaxTime < cutoff {
				continue
			}
			if _, damaged := group[i].damaged(b); damaged {
				continue // set aside: its rows are in no output row
			}
			run := mergeRun{in: i, b: b, first: bi.FirstRow, minTime: bi.MinTime}
			if bi.MinTime < cutoff {
				if err := r.ReadColumnOnce(b, ms.tsIn[i], 0, bi.Rows, &ms.tmp); err != nil {
					return nil, err
				}
				ts := ms.tmp.Ints[:bi.Rows]
				run.start = sort.Search(len(ts), func(k int) bool { return ts[k] >= cutoff })
				run.minTime = cutoff
			}
			run.pos = run.start
			if run.start == bi.Rows {
				continue
			}
			ms.total += bi.Rows - run.start
			ms.runs = append(ms.runs, run)
		}
	}
	if err := ms.classify(group, blockRows); err != nil {
		return nil, err
	}
	ms.heap.runs, ms.heap.idx = ms.runs, make([]int, len(ms.runs))
	for i := range ms.heap.idx {
		ms.heap.idx[i] = i
	}
	heap.Init(&ms.heap)
	return ms, nil
}

func (ms *mergeSource) columns() []segment.ColumnDesc { return ms.cols }
func (ms *mergeSource) rows() int                     { return ms.total }
func (ms *mergeSource) sortKey() string               { return ms.key }
func (ms *mergeSource) blocks() []blockSpec           { return ms.specs }
func (ms *mergeSource) fillsDecode() bool             { return true }

// classify gives each run its class and plans the output blocks. A run
// is of a key value when its input segment is ordered by the same key and
// says the block holds that value alone; every other run is mixed.
func (ms *mergeSource) classify(group []*segRef, blockRows int) error {
	if ms.key == "" {
		ms.specs = timeBlocks(ms.total, blockRows)
		return nil
	}
	runKey := func(r *mergeRun) (string, bool) {
		m := &group[r.in].meta
		if m.sortKey != ms.key || r.b >= len(m.blocks) || !m.blocks[r.b].single {
			return "", false
		}
		return m.blocks[r.b].key, true
	}
	// The output's newest row: slabs count back from it.
	maxTime := int64(math.MinInt64)
	for i := range ms.runs {
		maxTime = max(maxTime, ms.inputs[ms.runs[i].in].Block(ms.runs[i].b).MaxTime)
	}
	counts := map[string]*slabCounts{}
	var mixed slabCounts
	for i := range ms.runs {
		r := &ms.runs[i]
		bi := ms.inputs[r.in].Block(r.b)
		c := &mixed
		if k, ok := runKey(r); ok {
			if c = counts[k]; c == nil {
				c = new(slabCounts)
				counts[k] = c
			}
		}
		if lo, hi := slabOf(r.minTime, maxTime), slabOf(bi.MaxTime, maxTime); lo == hi {
			c[lo] += bi.Rows - r.start
			continue
		}
		// The block straddles slab edges: count its rows on each side.
		if err := ms.inputs[r.in].ReadColumnOnce(r.b, ms.tsIn[r.in], 0, bi.Rows, &ms.tmp); err != nil {
			return err
		}
		ts := ms.tmp.Ints[r.start:bi.Rows]
		from := 0
		for s := 0; s < numSlabs && from < len(ts); s++ {
			to := len(ts)
			if s < numSlabs-1 {
				edge := slabStart(s+1, maxTime)
				to = from + sort.Search(len(ts)-from, func(i int) bool { return ts[from+i] >= edge })
			}
			c[s] += to - from
			from = to
		}
	}
	plan := planKeys(counts, mixed, 0)
	for i := range ms.runs {
		r := &ms.runs[i]
		r.slabs = plan.mixed
		if k, ok := runKey(r); ok {
			if t := plan.slabs[k]; t != nil {
				r.slabs = t
			}
		}
	}
	ms.heap.maxTime = maxTime
	ms.specs = planBlocks(plan.classes, blockRows)
	return nil
}

// errMergeOrder reports a caller that asked for rows out of sequence.
var errMergeOrder = errors.New("merge: rows must be asked for block after block")

// advance computes the merge order of output rows [from, to), which must
// follow the previous block.
func (ms *mergeSource) advance(from, to int) error {
	if from != ms.to || to < from || to > ms.total {
		return errMergeOrder
	}
	ms.from, ms.to = from, to
	ms.order = ms.order[:0]
	h := &ms.heap
	for len(ms.order) < to-from {
		if h.Len() == 0 {
			return errors.New("merge: inputs ran out before the rows counted")
		}
		ri := h.idx[0]
		run := &ms.runs[ri]
		if !run.loaded {
			if err := ms.load(run); err != nil {
				return err
			}
			heap.Fix(h, 0)
			continue
		}
		if ms.rowMaps != nil {
			ms.rowMaps[run.in][run.first+run.pos] = uint32(from + len(ms.order))
		}
		ms.order = append(ms.order, runRow{run: uint32(ri), row: uint32(run.pos)})
		run.pos++
		if run.pos == len(run.ts) {
			run.ts = nil // used up
			heap.Pop(h)
		} else {
			heap.Fix(h, 0)
		}
	}
	return ms.cutPieces()
}

// load reads a run's timestamps.
func (ms *mergeSource) load(run *mergeRun) error {
	r := ms.inputs[run.in]
	rows := r.Block(run.b).Rows
	if err := r.ReadColumnOnce(run.b, ms.tsIn[run.in], 0, rows, &ms.tmp); err != nil {
		return err
	}
	run.ts = slices.Clone(ms.tmp.Ints[:rows])
	run.loaded = true
	if !slices.IsSorted(run.ts[run.start:]) {
		return &segment.CorruptError{Path: r.Path(), Offset: -1, Section: "check", Err: fmt.Errorf("block %d: timestamps out of order", run.b)}
	}
	return nil
}

// cutPieces groups the current block's rows by run. The heap hands out
// a run's rows one after another, so each run's rows in the block are
// one range, in output order.
func (ms *mergeSource) cutPieces() error {
	ms.pieces = ms.pieces[:0]
	tag := ms.from + 1
	for _, o := range ms.order {
		run := &ms.runs[o.run]
		if run.pieceOf != tag {
			run.pieceOf, run.piece = tag, len(ms.pieces)
			ms.pieces = append(ms.pieces, runPiece{run: int(o.run), lo: int(o.row), hi: int(o.row)})
		}
		p := &ms.pieces[run.piece]
		if int(o.row) != p.hi {
			return fmt.Errorf("merge: run %d of input %d gives row %d after %d", run.b, run.in, o.row, p.hi)
		}
		p.hi++
	}
	at := 0
	for i := range ms.pieces {
		ms.pieces[i].at = at
		at += ms.pieces[i].hi - ms.pieces[i].lo
	}
	ms.pos = growSlice(ms.pos, len(ms.order))
	next := make([]int, len(ms.pieces))
	for i := range ms.pieces {
		next[i] = ms.pieces[i].at
	}
	for r, o := range ms.order {
		pi := ms.runs[o.run].piece
		ms.pos[next[pi]] = int32(r)
		next[pi]++
	}
	return nil
}

// fillColumn gathers column ci over output rows [from, to): for each run
// the block takes rows from, it decodes exactly those rows and scatters
// them to their output positions. String columns stay dictionary-coded
// while every piece read is (the dictionaries are merged once per entry
// used), and fall back to plain strings otherwise.
func (ms *mergeSource) fillColumn(ci, from, to int, d *segment.ColumnData) (bool, error) {
	if from != ms.from || to != ms.to {
		if err := ms.advance(from, to); err != nil {
			return false, err
		}
	}
	n := to - from
	c := ms.cols[ci]
	resetColumnData(d, c.Type, n)
	setNull := func(r int32) {
		if d.Nulls == nil {
			d.Nulls = vec.NewBitset(n)
		}
		d.Nulls.Set(int(r))
	}
	dict := c.Type == segment.TypeString
	var mcode map[string]uint32
	if dict {
		// Clearing a map takes time in proportion to the most it held:
		// one that held many values is replaced instead.
		if len(ms.mcode) > 4096 {
			ms.mcode = nil
		}
		if ms.mcode == nil {
			ms.mcode = map[string]uint32{}
		}
		mcode = ms.mcode
		clear(mcode)
		d.Strs = d.Strs[:0]
		d.Codes = growSlice(d.Codes, n)
	}
	// The text field whose tokens' rows are looked for in its values,
	// when this block of it has not been scanned yet.
	scan := ms.textScans[ci]
	if scan != nil {
		if from != scan.next {
			scan.missed = scan.missed || from > scan.next
			scan = nil
		} else {
			scan.next = to
		}
	}
	any := false
	for _, p := range ms.pieces {
		run := &ms.runs[p.run]
		pos := ms.pos[p.at : p.at+p.hi-p.lo]
		col := ms.colIn[ci][run.in]
		if col < 0 {
			for _, r := range pos {
				setNull(r)
			}
			continue
		}
		// Every piece is read into the same scratch vector (its arrays
		// reused block after block and input after input); values are
		// copied out of it, and plain strings into one string per piece
		// (see keepStrings): nothing of the column aliases it.
		v := &ms.piece
		if err := ms.inputs[run.in].Read(run.b, col, p.lo, p.hi, nil, v, segment.ReadOptions{Once: true, Reuse: true}); err != nil {
			return false, err
		}
		ms.rowsRead += p.hi - p.lo
		if dict && v.Dict == nil && !allNullRows(v, len(pos)) {
			// A plain piece: the column goes out as strings.
			dict = false
			d.Strs = growSlice(d.Strs, n)
			if len(d.Dict) > 0 {
				for r := 0; r < n; r++ {
					d.Strs[r] = d.Dict[d.Codes[r]]
				}
			}
			d.Codes, d.Dict = d.Codes[:0], nil
		}
		if dict {
			ms.remap = growSlice(ms.remap, len(v.Dict))
			for i := range ms.remap {
				ms.remap[i] = -1
			}
		}
		if scan != nil {
			scan.scanPiece(run.in, v, from, pos)
		}
		plain := !dict && (c.Type == segment.TypeString || c.Type == segment.TypeArray)
		if plain {
			ms.keepStrings(v, len(pos))
		}
		for k, r := range pos {
			if v.IsNull(k) {
				setNull(r)
				continue
			}
			any = true
			switch c.Type {
			case segment.TypeBool:
				d.Bools[r] = v.Bools[k]
			case segment.TypeInt64, segment.TypeTimestamp:
				d.Ints[r] = v.Ints[k]
			case segment.TypeFloat64:
				d.Floats[r] = v.Floats[k]
			case segment.TypeString, segment.TypeArray:
				if plain {
					d.Strs[r] = ms.kept[k]
					break
				}
				pc := v.Codes[k]
				if ms.remap[pc] < 0 {
					s := v.Dict[pc]
					mc, ok := mcode[s]
					if !ok {
						mc = uint32(len(d.Dict))
						mcode[s] = mc
						d.Dict = append(d.Dict, s)
					}
					ms.remap[pc] = int32(mc)
				}
				d.Codes[r] = uint32(ms.remap[pc])
			}
		}
	}
	if dict && d.Dict == nil {
		d.Dict = []string{}
	}
	clear(ms.kept) // pin no piece's strings until the next column
	if cap(ms.piece.Bytes) > maxPieceBytesKept {
		ms.piece.Bytes = nil
	}
	return any, nil
}

// maxPieceBytesKept bounds the string bytes the piece scratch vector keeps
// between reads: a piece of long texts (a whole input block of messages)
// is not held for the rest of the merge.
const maxPieceBytesKept = 4 << 20

// keepStrings copies the first n rows' strings of the piece just read
// (plain, not dictionary codes) into one string of their own, exactly as
// long as their bytes and not zeroed first, and sets ms.kept[k] to row
// k's (the piece's vector is overwritten by the next read, while the
// column's strings must last until it is written).
func (ms *mergeSource) keepStrings(v *vec.Vector, n int) {
	ms.kept = growSlice(ms.kept, n)
	if v.Dict == nil && !v.Const && len(v.Offs) > n {
		// Bytes and offsets (what decoding gives): the rows' bytes are
		// one range, copied at once.
		base := v.Offs[0]
		all := string(v.Bytes[base:v.Offs[n]])
		for k := 0; k < n; k++ {
			ms.kept[k] = all[v.Offs[k]-base : v.Offs[k+1]-base]
		}
		return
	}
	total := 0
	for k := 0; k < n; k++ {
		if !v.IsNull(k) {
			total += len(v.StringAt(k))
		}
	}
	var sb strings.Builder
	sb.Grow(total)
	for k := 0; k < n; k++ {
		if !v.IsNull(k) {
			sb.WriteString(v.StringAt(k))
		}
	}
	all, at := sb.String(), 0
	for k := 0; k < n; k++ {
		if !v.IsNull(k) {
			l := len(v.StringAt(k))
			ms.kept[k] = all[at : at+l]
			at += l
		}
	}
}

// allNullRows reports whether the first n rows of v are all NULL.
func allNullRows(v *vec.Vector, n int) bool {
	for k := 0; k < n; k++ {
		if !v.IsNull(k) {
			return false
		}
	}
	return true
}

// runHeap orders runs by class, then their next timestamp (a lower bound
// for runs not loaded yet), ties by input then block, so that equal
// timestamps keep input order.
type runHeap struct {
	runs []mergeRun
	idx  []int
	// maxTime is the output's newest row (slabs count back from it).
	maxTime int64
}

// class returns the output class of run i's next row (a lower bound for
// a run not loaded yet: classes grow with time within a key).
func (h *runHeap) class(i int, ts int64) int32 {
	r := &h.runs[h.idx[i]]
	if r.slabs == nil {
		return 0 // no sort key: one class
	}
	return r.slabs[slabOf(ts, h.maxTime)]
}

func (h *runHeap) key(i int) int64 {
	r := &h.runs[h.idx[i]]
	if r.loaded {
		return r.ts[r.pos]
	}
	return r.minTime
}

func (h *runHeap) Len() int { return len(h.idx) }
func (h *runHeap) Less(i, j int) bool {
	a, b := h.key(i), h.key(j)
	if ca, cb := h.class(i, a), h.class(j, b); ca != cb {
		return ca < cb
	}
	if a != b {
		return a < b
	}
	ra, rb := &h.runs[h.idx[i]], &h.runs[h.idx[j]]
	if ra.in != rb.in {
		return ra.in < rb.in
	}
	return ra.b < rb.b
}
func (h *runHeap) Swap(i, j int) { h.idx[i], h.idx[j] = h.idx[j], h.idx[i] }
func (h *runHeap) Push(x any)    { h.idx = append(h.idx, x.(int)) }
func (h *runHeap) Pop() any {
	x := h.idx[len(h.idx)-1]
	h.idx = h.idx[:len(h.idx)-1]
	return x
}
