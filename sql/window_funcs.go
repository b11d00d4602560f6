package sql

import (
	"cmp"
	"fmt"
	"math"
	"math/bits"
	"slices"
	"sort"

	"github.com/sediment/sediment/internal/vec"
)

// winRunner computes one window call, partition by partition.
type winRunner interface {
	// segment computes the call for the rows of one partition, in window
	// order.
	segment(s *winSegCtx) error
	result() *winResult
}

// Markers in winResult.src for values that come from no row.
const (
	srcNull    = -1 // NULL
	srcDefault = -2 // LAG's or LEAD's default
	srcNaN     = -3 // NaN (MIN or MAX over a frame holding a NaN)
)

// winResult is a call's result over the global row numbers: numbers in
// ints, flts or bools (with nulls), or for functions returning a row's
// value (LAG, FIRST_VALUE, MIN, ...) the row it comes from in src, read
// from vals at output time so that any type, records included, is copied
// as it is. part holds per-partition results (indexed by pid).
type winResult struct {
	t     ColType
	n     int
	ints  []int64
	flts  []float64
	bools []bool
	nulls vec.Bitset

	src  []int32
	vals []*vec.Vector // per batch
	def  *vec.Vector

	part *vec.Vector
	pid  []int32
}

func (r *winResult) setNull(g int32) {
	if r.nulls == nil {
		r.nulls = vec.NewBitset(r.n)
	}
	r.nulls.Set(int(g))
}

// vector builds the result for the global rows [s, e), one input batch.
func (r *winResult) vector(o *windowOp, s, e int) *vec.Vector {
	l := e - s
	var v *vec.Vector
	switch {
	case r.src != nil || r.part != nil:
		return r.gather(o, s, e)
	case r.ints != nil:
		v = &vec.Vector{Type: r.t.V, Len: l, Ints: r.ints[s:e:e]}
	case r.flts != nil:
		v = &vec.Vector{Type: r.t.V, Len: l, Floats: r.flts[s:e:e]}
	case r.bools != nil:
		v = &vec.Vector{Type: r.t.V, Len: l, Bools: r.bools[s:e:e]}
	default:
		return allNullVector(r.t, l)
	}
	if r.nulls != nil {
		for i := 0; i < l; i++ {
			if r.nulls.Get(s + i) {
				setNull(v, i)
			}
		}
	}
	return v
}

// gather copies each row's value from the row (or partition) it comes
// from.
func (r *winResult) gather(o *windowOp, s, e int) *vec.Vector {
	l := e - s
	lb := newListBuilder(r.t, l)
	var dst *vec.Vector
	if lb == nil {
		dst = newVector(r.t, l)
	}
	put := func(i int, src *vec.Vector, j int) {
		if lb != nil {
			lb.copyFrom(i, src, j)
		} else {
			copyValue(dst, i, src, j)
		}
	}
	for i := 0; i < l; i++ {
		g := s + i
		if r.part != nil {
			p := 0
			if r.pid != nil {
				p = int(r.pid[g])
			}
			put(i, r.part, p)
			continue
		}
		switch src := r.src[g]; src {
		case srcNull:
			if lb != nil {
				lb.null(i)
			} else {
				setNull(dst, i)
			}
		case srcDefault:
			put(i, r.def, 0)
		case srcNaN:
			dst.Floats[i] = math.NaN()
		default:
			bi := o.rowBatch[src]
			put(i, r.vals[bi], int(src)-o.starts[bi])
		}
	}
	if lb != nil {
		return lb.finish()
	}
	return dst
}

// newRunner prepares a call: evaluates its arguments over the buffered
// input and allocates its result.
func (o *windowOp) newRunner(ec *evalCtx, fo *winFuncOp, pid []int32, nparts int) (winRunner, error) {
	f := fo.f
	res := &winResult{t: f.T, n: o.n}
	// The result: 8 bytes a row (values, or source rows and NULLs).
	if err := o.mem.grow(int64(o.n) * 8); err != nil {
		return nil, err
	}
	if fo.acc != nil {
		return o.partitionAggregate(ec, fo, res, pid, nparts)
	}
	var vals []*vec.Vector
	if len(fo.args) > 0 {
		var err error
		if vals, err = o.eval(ec, fo.args[0]); err != nil {
			return nil, err
		}
		// Arguments that are not input columns are new vectors, kept
		// with the result.
		var size int64
		for bi, v := range vals {
			if !slices.Contains(o.batches[bi].Cols, v) {
				size += vectorBytes(v, o.dicts)
			}
		}
		if err := o.mem.grow(size); err != nil {
			return nil, err
		}
	}
	switch f.Name {
	case "row_number", "rank", "dense_rank", "ntile":
		res.ints = make([]int64, o.n)
		return &numberRunner{f: f, res: res}, nil
	case "percent_rank", "cume_dist":
		res.flts = make([]float64, o.n)
		return &numberRunner{f: f, res: res}, nil
	case "lag", "lead":
		if err := o.buildRowBatch(); err != nil {
			return nil, err
		}
		res.src, res.vals = make([]int32, o.n), vals
		if fo.def != nil {
			d, err := fo.def(ec, &vec.Batch{Len: 1}, nil)
			if err != nil {
				return nil, err
			}
			res.def = d
		}
		return &offsetRunner{f: f, res: res}, nil
	case "first_value", "last_value", "nth_value", "any_value", "min", "max":
		if err := o.buildRowBatch(); err != nil {
			return nil, err
		}
		res.src, res.vals = make([]int32, o.n), vals
		r := &valueRunner{f: f, res: res, nulls: o.nullsOf(vals)}
		if f.Name == "min" || f.Name == "max" {
			flat, err := o.flatten(vals, f.Args[0].Type())
			if err != nil {
				return nil, err
			}
			r.flat = flat
		}
		return r, nil
	case "percentile_cont", "percentile_disc":
		r := &percentileRunner{f: f, res: res, nulls: o.nullsOf(vals)}
		flat, err := o.flatten(vals, f.Args[0].Type())
		if err != nil {
			return nil, err
		}
		r.flat = flat
		if f.Name == "percentile_cont" {
			res.flts = make([]float64, o.n)
		} else {
			if err := o.buildRowBatch(); err != nil {
				return nil, err
			}
			res.src, res.vals = make([]int32, o.n), vals
		}
		return r, nil
	}
	// count, countif, sum, avg, logical_and, logical_or.
	r := &aggRunner{f: f, res: res}
	switch f.T.V {
	case vec.Int64:
		res.ints = make([]int64, o.n)
	case vec.Float64:
		res.flts = make([]float64, o.n)
	case vec.Bool:
		res.bools = make([]bool, o.n)
	}
	if f.Star {
		return r, nil
	}
	r.nulls = o.nullsOf(vals)
	if f.Name != "count" {
		flat, err := o.flatten(vals, f.Args[0].Type())
		if err != nil {
			return nil, err
		}
		r.flat = flat
	}
	return r, nil
}

// partitionAggregate computes an aggregate over whole partitions with the
// aggregate library (DISTINCT, STRING_AGG, ARRAY_AGG, APPROX_*).
func (o *windowOp) partitionAggregate(ec *evalCtx, fo *winFuncOp, res *winResult, pid []int32, nparts int) (winRunner, error) {
	acc := fo.acc
	acc.grow(nparts)
	// What the aggregate collects is charged while it collects it.
	accMem := o.q.account()
	defer accMem.clear()
	zeros := []int32(nil)
	for bi, b := range o.batches {
		if bi&15 == 0 {
			if err := ec.ctx.Err(); err != nil {
				return nil, err
			}
		}
		var gids []int32
		if pid != nil {
			gids = pid[o.starts[bi]:o.starts[bi+1]]
		} else {
			if len(zeros) < b.Len {
				zeros = make([]int32, b.Len)
			}
			gids = zeros[:b.Len]
		}
		if err := acc.update(ec, b, gids); err != nil {
			return nil, err
		}
		if err := accMem.resize(acc.bytes()); err != nil {
			return nil, err
		}
	}
	v, err := acc.finish(nparts)
	// The collected values are in v now: let them go with their charge.
	*acc = aggAcc{call: acc.call, arg: acc.arg, t: acc.t, keyEvs: acc.keyEvs}
	if err != nil {
		return nil, err
	}
	if err := o.mem.grow(vectorBytes(v, nil)); err != nil {
		return nil, err
	}
	res.part, res.pid = v, pid
	return doneRunner{res}, nil
}

// doneRunner is a call computed up front.
type doneRunner struct{ res *winResult }

func (r doneRunner) segment(*winSegCtx) error { return nil }
func (r doneRunner) result() *winResult       { return r.res }

// ---------------------------------------------------------------------------
// Numbering functions

type numberRunner struct {
	f   *WindowFunc
	res *winResult
}

func (r *numberRunner) result() *winResult { return r.res }

func (r *numberRunner) segment(s *winSegCtx) error {
	rows := s.rows
	m := len(rows)
	out := r.res
	switch r.f.Name {
	case "row_number":
		for j, g := range rows {
			out.ints[g] = int64(j + 1)
		}
	case "rank":
		for j, g := range rows {
			out.ints[g] = int64(s.peerStart[j]) + 1
		}
	case "dense_rank":
		d := int64(0)
		for j, g := range rows {
			if int(s.peerStart[j]) == j {
				d++
			}
			out.ints[g] = d
		}
	case "percent_rank":
		for j, g := range rows {
			if m > 1 {
				out.flts[g] = float64(s.peerStart[j]) / float64(m-1)
			}
		}
	case "cume_dist":
		for j, g := range rows {
			out.flts[g] = float64(s.peerEnd[j]) / float64(m)
		}
	case "ntile":
		// m rows into k buckets: the first m%k buckets hold one row more.
		k := r.f.N
		q, rem := int64(m)/k, int64(m)%k
		big := rem * (q + 1) // rows in the larger buckets
		for j, g := range rows {
			i := int64(j)
			if i < big {
				out.ints[g] = i/(q+1) + 1
			} else {
				out.ints[g] = (i-big)/q + rem + 1
			}
		}
	}
	return nil
}

// ---------------------------------------------------------------------------
// LAG and LEAD

type offsetRunner struct {
	f   *WindowFunc
	res *winResult
}

func (r *offsetRunner) result() *winResult { return r.res }

func (r *offsetRunner) segment(s *winSegCtx) error {
	rows := s.rows
	m := int64(len(rows))
	miss := int32(srcNull)
	if r.res.def != nil {
		miss = srcDefault
	}
	n := r.f.N
	for j, g := range rows {
		k := int64(-1)
		if r.f.Name == "lag" {
			if n <= int64(j) {
				k = int64(j) - n
			}
		} else if n < m-int64(j) {
			k = int64(j) + n
		}
		if k >= 0 {
			r.res.src[g] = rows[k]
		} else {
			r.res.src[g] = miss
		}
	}
	return nil
}

// ---------------------------------------------------------------------------
// Frames

// frame computes each position's frame [lo, hi) (positions relative to the
// partition; hi <= lo is an empty frame). Both ends only move forward from
// one position to the next.
func (s *winSegCtx) frame(fr WindowFrame) {
	m := len(s.rows)
	switch fr.Start.Kind {
	case boundUnboundedPreceding:
		clear(s.lo)
	default:
		for j := 0; j < m; j++ {
			s.lo[j] = int32(s.bound(fr, fr.Start, j, false))
		}
	}
	switch {
	case fr.End.Kind == boundUnboundedFollowing:
		for j := range s.hi {
			s.hi[j] = int32(m)
		}
	case fr.End.Kind == boundCurrentRow && fr.Unit == frameRows:
		for j := range s.hi {
			s.hi[j] = int32(j + 1)
		}
	default:
		for j := 0; j < m; j++ {
			s.hi[j] = int32(s.bound(fr, fr.End, j, true))
		}
	}
}

// bound is where one frame bound puts the frame's start (end false) or
// its exclusive end (end true) for the row at position j.
func (s *winSegCtx) bound(fr WindowFrame, b frameBound, j int, end bool) int {
	m := len(s.rows)
	switch b.Kind {
	case boundUnboundedPreceding:
		return 0
	case boundUnboundedFollowing:
		return m
	case boundCurrentRow:
		if fr.Unit == frameRange {
			if end {
				return int(s.peerEnd[j])
			}
			return int(s.peerStart[j])
		}
		if end {
			return j + 1
		}
		return j
	}
	if fr.Unit == frameRows {
		p := int64(j)
		if b.Kind == boundPreceding {
			p = satSub(p, b.N)
		} else {
			p = satAdd(p, b.N)
		}
		if end {
			p = satAdd(p, 1)
		}
		return int(min(max(p, 0), int64(m)))
	}
	return s.rangeBound(b, j, end)
}

// rangeBound places an OFFSET bound of a RANGE frame: the current row's key
// plus or minus the offset, in window order. A NULL or NaN current row's
// offset bounds are its peer group.
func (s *winSegCtx) rangeBound(b frameBound, j int, end bool) int {
	key := s.keys.keys[0]
	flat := s.keys.flat[0]
	g := int(s.rows[j])
	isFloat := flat.Type == vec.Float64
	if flat.IsNull(g) || isFloat && flat.Floats[g] != flat.Floats[g] {
		if end {
			return int(s.peerEnd[j])
		}
		return int(s.peerStart[j])
	}
	// Toward the partition's start means toward smaller values, ascending.
	back := b.Kind == boundPreceding != key.desc
	var ti int64
	var tf float64
	if isFloat {
		tf = flat.Floats[g] + b.F
		if back {
			tf = flat.Floats[g] - b.F
		}
	} else {
		ti = satAdd(flat.Ints[g], b.N)
		if back {
			ti = satSub(flat.Ints[g], b.N)
		}
	}
	// ord places a row's key against the threshold in window order; NULLs
	// and NaNs sit where the sort put them.
	ord := func(q int) int {
		h := int(s.rows[q])
		if flat.IsNull(h) {
			if key.nullsLast {
				return 1
			}
			return -1
		}
		var c int
		if isFloat {
			x := flat.Floats[h]
			if x != x {
				c = -1
			} else {
				c = cmp.Compare(x, tf)
			}
		} else {
			c = cmp.Compare(flat.Ints[h], ti)
		}
		if key.desc {
			c = -c
		}
		return c
	}
	if end {
		return sort.Search(len(s.rows), func(q int) bool { return ord(q) > 0 })
	}
	return sort.Search(len(s.rows), func(q int) bool { return ord(q) >= 0 })
}

func satAdd(a, b int64) int64 {
	c := a + b
	switch {
	case b > 0 && c < a:
		return math.MaxInt64
	case b < 0 && c > a:
		return math.MinInt64
	}
	return c
}

// satSub is a - b for b >= 0 (frame offsets are never negative),
// saturating.
func satSub(a, b int64) int64 { return satAdd(a, -b) }

// ---------------------------------------------------------------------------
// Functions returning a row's value: FIRST_VALUE, LAST_VALUE, NTH_VALUE,
// ANY_VALUE, MIN, MAX.

type valueRunner struct {
	f     *WindowFunc
	res   *winResult
	nulls vec.Bitset  // argument NULLs
	flat  *vec.Vector // argument values (MIN, MAX)
	next  []int32     // first non-NULL position at or after each position
	prev  []int32     // last non-NULL position at or before each position
	nnPos []int32     // positions of non-NULL values
	nnCnt []int32     // non-NULL values before each position
	deque []int32     // MIN/MAX candidates
	nans  []int32     // NaNs before each position (MIN/MAX of FLOAT64)
}

func (r *valueRunner) result() *winResult { return r.res }

func (r *valueRunner) isNull(g int32) bool { return r.nulls != nil && r.nulls.Get(int(g)) }

func (r *valueRunner) segment(s *winSegCtx) error {
	s.frame(r.f.Frame)
	rows := s.rows
	src := r.res.src
	switch r.f.Name {
	case "first_value", "last_value", "nth_value", "any_value":
		ignore := r.f.IgnoreNulls || r.f.Name == "any_value"
		if ignore {
			r.scanNulls(rows)
		}
		for j, g := range rows {
			lo, hi := int(s.lo[j]), int(s.hi[j])
			k := -1
			if lo < hi {
				switch {
				case r.f.Name == "last_value" && ignore:
					if p := int(r.prev[hi-1]); p >= lo {
						k = p
					}
				case r.f.Name == "last_value":
					k = hi - 1
				case r.f.Name == "nth_value" && ignore:
					// The N-th non-NULL value from lo, if it is in the frame.
					if left := int64(len(r.nnPos)) - int64(r.nnCnt[lo]); r.f.N <= left {
						if p := int(r.nnPos[int64(r.nnCnt[lo])+r.f.N-1]); p < hi {
							k = p
						}
					}
				case r.f.Name == "nth_value":
					if r.f.N <= int64(hi-lo) {
						k = lo + int(r.f.N) - 1
					}
				case ignore:
					if p := int(r.next[lo]); p < hi {
						k = p
					}
				default:
					k = lo
				}
			}
			if k >= 0 {
				src[g] = rows[k]
			} else {
				src[g] = srcNull
			}
		}
		return nil
	}
	r.minMax(s)
	return nil
}

// scanNulls fills next, prev, nnPos and nnCnt for a partition.
func (r *valueRunner) scanNulls(rows []int32) {
	m := len(rows)
	r.next = growInt32(r.next, m+1)
	r.prev = growInt32(r.prev, m)
	r.nnCnt = growInt32(r.nnCnt, m+1)
	r.nnPos = r.nnPos[:0]
	last := int32(-1)
	for j, g := range rows {
		r.nnCnt[j] = int32(len(r.nnPos))
		if !r.isNull(g) {
			last = int32(j)
			r.nnPos = append(r.nnPos, int32(j))
		}
		r.prev[j] = last
	}
	r.nnCnt[m] = int32(len(r.nnPos))
	nxt := int32(m)
	r.next[m] = nxt
	for j := m - 1; j >= 0; j-- {
		if !r.isNull(rows[j]) {
			nxt = int32(j)
		}
		r.next[j] = nxt
	}
}

func growInt32(s []int32, n int) []int32 {
	if cap(s) < n {
		return make([]int32, n)
	}
	return s[:n]
}

// minMax slides a monotonic deque of candidate positions through the
// frames: O(1) amortised per row whatever the frame size. A NaN in the
// frame makes the result NaN, as in BigQuery.
func (r *valueRunner) minMax(s *winSegCtx) {
	rows := s.rows
	m := len(rows)
	flat := r.flat
	isMax := r.f.Name == "max"
	isFloat := flat.Type == vec.Float64
	if isFloat {
		r.nans = growInt32(r.nans, m+1)
		r.nans[0] = 0
		for j, g := range rows {
			x := int32(0)
			if !r.isNull(g) && flat.Floats[g] != flat.Floats[g] {
				x = 1
			}
			r.nans[j+1] = r.nans[j] + x
		}
	}
	usable := func(j int) bool {
		g := rows[j]
		return !r.isNull(g) && !(isFloat && flat.Floats[g] != flat.Floats[g])
	}
	// better reports whether position a's value beats b's (ties: no).
	better := func(a, b int) bool {
		c := compareNonNull(flat, int(rows[a]), flat, int(rows[b]), flat.Type)
		if isMax {
			return c > 0
		}
		return c < 0
	}
	dq := r.deque[:0]
	head := 0
	curLo, curHi := 0, 0
	for j, g := range rows {
		lo, hi := int(s.lo[j]), int(s.hi[j])
		if hi < lo {
			hi = lo
		}
		if lo < curLo || hi < curHi {
			// Frames only move forward; start over if one does not.
			dq, head, curLo, curHi = dq[:0], 0, lo, lo
		}
		for ; curHi < hi; curHi++ {
			if !usable(curHi) {
				continue
			}
			for len(dq) > head && better(curHi, int(dq[len(dq)-1])) {
				dq = dq[:len(dq)-1]
			}
			dq = append(dq, int32(curHi))
		}
		curLo = lo
		for head < len(dq) && int(dq[head]) < lo {
			head++
		}
		switch {
		case isFloat && lo < hi && r.nans[hi]-r.nans[lo] > 0:
			r.res.src[g] = srcNaN
		case head < len(dq) && lo < hi:
			r.res.src[g] = rows[dq[head]]
		default:
			r.res.src[g] = srcNull
		}
		if head > 1024 && head*2 > len(dq) {
			dq = append(dq[:0], dq[head:]...)
			head = 0
		}
	}
	r.deque = dq
}

// ---------------------------------------------------------------------------
// Numeric aggregates: COUNT, COUNTIF, SUM, AVG, LOGICAL_AND, LOGICAL_OR.

type aggRunner struct {
	f     *WindowFunc
	res   *winResult
	nulls vec.Bitset
	flat  *vec.Vector
	pre   []int32 // prefix counts
	pre2  []int32
}

func (r *aggRunner) result() *winResult { return r.res }

func (r *aggRunner) isNull(g int32) bool { return r.nulls != nil && r.nulls.Get(int(g)) }

func (r *aggRunner) segment(s *winSegCtx) error {
	s.frame(r.f.Frame)
	rows := s.rows
	out := r.res
	switch r.f.Name {
	case "count":
		if r.f.Star {
			for j, g := range rows {
				out.ints[g] = int64(max(s.hi[j]-s.lo[j], 0))
			}
			return nil
		}
		r.prefix(rows, func(g int32) bool { return !r.isNull(g) }, &r.pre)
		for j, g := range rows {
			out.ints[g] = int64(r.count(r.pre, s.lo[j], s.hi[j]))
		}
	case "countif":
		r.prefix(rows, func(g int32) bool { return !r.isNull(g) && r.flat.Bools[g] }, &r.pre)
		for j, g := range rows {
			out.ints[g] = int64(r.count(r.pre, s.lo[j], s.hi[j]))
		}
	case "logical_and", "logical_or":
		r.prefix(rows, func(g int32) bool { return !r.isNull(g) }, &r.pre)
		want := r.f.Name == "logical_or" // count TRUE for OR, FALSE for AND
		r.prefix(rows, func(g int32) bool { return !r.isNull(g) && r.flat.Bools[g] == want }, &r.pre2)
		for j, g := range rows {
			if r.count(r.pre, s.lo[j], s.hi[j]) == 0 {
				out.setNull(g)
				continue
			}
			hit := r.count(r.pre2, s.lo[j], s.hi[j]) > 0
			out.bools[g] = hit == want
		}
	case "sum", "avg":
		if r.flat.Type == vec.Float64 {
			r.floatSum(s)
		} else {
			return r.intSum(s)
		}
	}
	return nil
}

// prefix fills *pre with running counts of rows satisfying ok.
func (r *aggRunner) prefix(rows []int32, ok func(int32) bool, pre *[]int32) {
	p := growInt32(*pre, len(rows)+1)
	p[0] = 0
	for j, g := range rows {
		x := p[j]
		if ok(g) {
			x++
		}
		p[j+1] = x
	}
	*pre = p
}

func (r *aggRunner) count(pre []int32, lo, hi int32) int32 {
	if hi <= lo {
		return 0
	}
	return pre[hi] - pre[lo]
}

// int128 is a two's complement 128-bit sum: no intermediate overflow.
type int128 struct {
	hi int64
	lo uint64
}

func (a *int128) add(x int64) {
	l, c := bits.Add64(a.lo, uint64(x), 0)
	a.hi += x>>63 + int64(c)
	a.lo = l
}

func (a *int128) sub(x int64) {
	l, b := bits.Sub64(a.lo, uint64(x), 0)
	a.hi -= x>>63 + int64(b)
	a.lo = l
}

func (a int128) int64() (int64, bool) { return int64(a.lo), a.hi == int64(a.lo)>>63 }

func (a int128) float64() float64 {
	if v, ok := a.int64(); ok {
		return float64(v)
	}
	if a.hi < 0 {
		lo, c := bits.Add64(^a.lo, 1, 0)
		return -(float64(^a.hi+int64(c))*(1<<64) + float64(lo))
	}
	return float64(a.hi)*(1<<64) + float64(a.lo)
}

// intSum slides an exact sum of an INT64 (or BOOL) argument over the
// frames: each row enters and leaves the window once.
func (r *aggRunner) intSum(s *winSegCtx) error {
	rows := s.rows
	flat := r.flat
	val := func(g int32) int64 {
		if flat.Type == vec.Bool {
			return b2i(flat.Bools[g])
		}
		return flat.Ints[g]
	}
	var sum int128
	cnt := 0
	curLo, curHi := 0, 0
	out := r.res
	for j, g := range rows {
		lo, hi := int(s.lo[j]), int(s.hi[j])
		if hi < lo {
			hi = lo
		}
		if lo < curLo || hi < curHi {
			sum, cnt, curLo, curHi = int128{}, 0, lo, lo
		}
		for ; curHi < hi; curHi++ {
			if h := rows[curHi]; !r.isNull(h) {
				sum.add(val(h))
				cnt++
			}
		}
		for ; curLo < lo; curLo++ {
			if h := rows[curLo]; !r.isNull(h) {
				sum.sub(val(h))
				cnt--
			}
		}
		if cnt == 0 {
			out.setNull(g)
			continue
		}
		if r.f.Name == "avg" {
			out.flts[g] = sum.float64() / float64(cnt)
			continue
		}
		v, ok := sum.int64()
		if !ok {
			return fmt.Errorf("int64 overflow: SUM")
		}
		if out.ints != nil {
			out.ints[g] = v
		} else {
			out.flts[g] = float64(v)
		}
	}
	return nil
}

// floatSum slides a FLOAT64 sum over the frames. Frames that only grow
// (UNBOUNDED PRECEDING) add in order, as the SUM aggregate does; sliding
// frames use compensated addition and subtraction so the sum does not
// drift, and count NaNs and infinities apart so that one leaving the frame
// leaves no trace.
func (r *aggRunner) floatSum(s *winSegCtx) {
	rows := s.rows
	x := r.flat.Floats
	compensate := r.f.Frame.Start.Kind != boundUnboundedPreceding
	var sum, comp float64
	var nan, pinf, ninf, finite, cnt int
	add := func(v float64, sign int) {
		cnt += sign
		switch {
		case v != v:
			nan += sign
		case math.IsInf(v, 1):
			pinf += sign
		case math.IsInf(v, -1):
			ninf += sign
		default:
			finite += sign
			if finite == 0 {
				sum, comp = 0, 0 // no drift left over from values gone
				return
			}
			if sign < 0 {
				v = -v
			}
			t := sum + v
			if compensate {
				if math.Abs(sum) >= math.Abs(v) {
					comp += (sum - t) + v
				} else {
					comp += (v - t) + sum
				}
			}
			sum = t
		}
	}
	curLo, curHi := 0, 0
	out := r.res
	for j, g := range rows {
		lo, hi := int(s.lo[j]), int(s.hi[j])
		if hi < lo {
			hi = lo
		}
		if lo < curLo || hi < curHi {
			sum, comp, nan, pinf, ninf, finite, cnt = 0, 0, 0, 0, 0, 0, 0
			curLo, curHi = lo, lo
		}
		for ; curHi < hi; curHi++ {
			if h := rows[curHi]; !r.isNull(h) {
				add(x[h], 1)
			}
		}
		for ; curLo < lo; curLo++ {
			if h := rows[curLo]; !r.isNull(h) {
				add(x[h], -1)
			}
		}
		var v float64
		switch {
		case cnt == 0:
			out.setNull(g)
			continue
		case nan > 0 || pinf > 0 && ninf > 0:
			v = math.NaN()
		case pinf > 0:
			v = math.Inf(1)
		case ninf > 0:
			v = math.Inf(-1)
		default:
			v = sum + comp
		}
		if r.f.Name == "avg" {
			v /= float64(cnt)
		}
		out.flts[g] = v
	}
}

// ---------------------------------------------------------------------------
// PERCENTILE_CONT and PERCENTILE_DISC, over whole partitions.

type percentileRunner struct {
	f     *WindowFunc
	res   *winResult
	nulls vec.Bitset
	flat  *vec.Vector
	buf   []int32
}

func (r *percentileRunner) result() *winResult { return r.res }

func (r *percentileRunner) isNull(g int32) bool { return r.nulls != nil && r.nulls.Get(int(g)) }

func (r *percentileRunner) segment(s *winSegCtx) error {
	// The partition's values in order, NULLs first when they count.
	buf := r.buf[:0]
	nulls := 0
	for _, g := range s.rows {
		if r.isNull(g) {
			nulls++
			continue
		}
		buf = append(buf, g)
	}
	flat := r.flat
	slices.SortFunc(buf, func(a, b int32) int {
		if c := compareNonNull(flat, int(a), flat, int(b), flat.Type); c != 0 {
			return c
		}
		return cmp.Compare(a, b)
	})
	r.buf = buf
	if !r.f.RespectNulls {
		nulls = 0
	}
	n := nulls + len(buf)
	// at returns the row at sorted position i, -1 for a NULL.
	at := func(i int) int32 {
		if i < nulls {
			return -1
		}
		return buf[i-nulls]
	}
	out := r.res
	if n == 0 {
		for _, g := range s.rows {
			if out.src != nil {
				out.src[g] = srcNull
			} else {
				out.setNull(g)
			}
		}
		return nil
	}
	if r.f.Name == "percentile_disc" {
		// The first value whose cumulative distribution reaches p.
		i := int(math.Ceil(r.f.P*float64(n))) - 1
		for i > 0 && float64(i)/float64(n) >= r.f.P {
			i--
		}
		for i < n-1 && float64(i+1)/float64(n) < r.f.P {
			i++
		}
		src := at(max(i, 0))
		if src < 0 {
			src = srcNull
		}
		for _, g := range s.rows {
			out.src[g] = src
		}
		return nil
	}
	// Linear interpolation between the values around p*(n-1); a NULL
	// neighbour gives way to the other value.
	pos := r.f.P * float64(n-1)
	lo := int(math.Floor(pos))
	hi := min(lo+1, n-1)
	val := func(g int32) float64 {
		if flat.Type == vec.Float64 {
			return flat.Floats[g]
		}
		return float64(flat.Ints[g])
	}
	a, b := at(lo), at(hi)
	var v float64
	null := false
	frac := pos - float64(lo)
	switch {
	case a < 0 && (b < 0 || frac == 0):
		null = true
	case a < 0:
		v = val(b)
	case b < 0 || frac == 0:
		v = val(a)
	default:
		v = val(a) + frac*(val(b)-val(a))
	}
	for _, g := range s.rows {
		if null {
			out.setNull(g)
		} else {
			out.flts[g] = v
		}
	}
	return nil
}
