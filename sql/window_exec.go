package sql

import (
	"cmp"
	"context"
	"errors"
	"math"
	"slices"

	"github.com/sediment/sediment/internal/vec"
)

// windowOp computes a WindowNode. It buffers its whole input (accounted
// against the query's memory budget), numbers the rows globally in arrival
// order, and for each distinct PARTITION BY/ORDER BY spec:
//
//  1. assigns each row its partition (hash on the keys, dictionary codes
//     and integers without hashing strings, as GROUP BY does);
//  2. orders the row numbers by partition with a counting sort, then each
//     partition by the ORDER BY keys (a flat int64 key sort when there is
//     one numeric or time key);
//  3. runs every call of that spec over each partition, writing results
//     at the rows' global numbers.
//
// It then emits the input batches unchanged, in arrival order, each with the
// result columns appended: input columns (records, arrays) are never
// copied or reordered.
type windowOp struct {
	q       *queryRun
	in      operator
	node    *WindowNode
	groups  []*winGroup
	results []*winResult // per node.Funcs

	batches []*vec.Batch
	starts  []int // global number of each batch's first row, then the total
	n       int
	// rowBatch maps a global row to its batch (built when a result needs
	// values of other rows).
	rowBatch []int32

	done bool
	pos  int

	// mem holds what lives until the rows are out: the batches (sizes in
	// batchSize), the results and what they read; gmem what one spec's
	// computation needs (partition ids, order, sort keys, scratch).
	mem       memAccount
	gmem      memAccount
	dicts     dictSet
	batchSize []int64
}

// winGroup is the calls sharing one PARTITION BY and ORDER BY.
type winGroup struct {
	part   []evaluator
	ptypes []ColType
	order  []compiledKey
	funcs  []*winFuncOp
}

// winFuncOp is one call's compiled expressions.
type winFuncOp struct {
	f    *WindowFunc
	idx  int
	args []evaluator
	def  evaluator
	// acc computes aggregates that need a whole partition (DISTINCT,
	// STRING_AGG, ARRAY_AGG, APPROX_*) with the aggregate library.
	acc *aggAcc
}

// errWindowTooManyRows guards the int32 row numbers.
var errWindowTooManyRows = errors.New("Resources exceeded during query execution: too many rows for a window function")

func newWindowOp(q *queryRun, n *WindowNode, in operator) (*windowOp, error) {
	lay := layoutOf(n.In.Cols())
	o := &windowOp{q: q, in: in, node: n, results: make([]*winResult, len(n.Funcs)), mem: q.account(), gmem: q.account(), dicts: dictSet{}}
	byKey := map[string]*winGroup{}
	for i, f := range n.Funcs {
		key := f.specKey()
		g := byKey[key]
		if g == nil {
			g = &winGroup{}
			for _, p := range f.Partition {
				ev, err := compile(p, lay)
				if err != nil {
					return nil, err
				}
				g.part = append(g.part, ev)
				g.ptypes = append(g.ptypes, p.Type())
			}
			keys, err := compileKeys(f.Order, lay)
			if err != nil {
				return nil, err
			}
			g.order = keys
			byKey[key] = g
			o.groups = append(o.groups, g)
		}
		fo := &winFuncOp{f: f, idx: i}
		for _, a := range f.Args {
			ev, err := compile(a, lay)
			if err != nil {
				return nil, err
			}
			fo.args = append(fo.args, ev)
		}
		if f.Default != nil {
			ev, err := compile(f.Default, lay)
			if err != nil {
				return nil, err
			}
			fo.def = ev
		}
		if f.Agg != nil && (f.Distinct || !frameAggregates[f.Name]) {
			acc, err := newAggAcc(f.Agg, lay)
			if err != nil {
				return nil, err
			}
			fo.acc = acc
		}
		g.funcs = append(g.funcs, fo)
	}
	return o, nil
}

func (o *windowOp) close() {
	o.in.close()
	o.release()
}

// release lets go of everything buffered and its charge.
func (o *windowOp) release() {
	o.batches, o.results, o.rowBatch = nil, nil, nil
	o.mem.clear()
	o.gmem.clear()
}

func (o *windowOp) next(ec *evalCtx) (*vec.Batch, error) {
	if !o.done {
		o.done = true
		if err := o.fill(ec); err != nil {
			return nil, err
		}
		if o.n > 0 {
			for _, g := range o.groups {
				if err := ec.ctx.Err(); err != nil {
					return nil, err
				}
				err := o.computeGroup(ec, g)
				o.gmem.clear()
				if err != nil {
					return nil, err
				}
			}
		}
	}
	if o.pos >= len(o.batches) {
		o.release()
		return nil, nil
	}
	if err := ec.ctx.Err(); err != nil {
		return nil, err
	}
	bi := o.pos
	o.pos++
	b := o.batches[bi]
	o.batches[bi] = nil
	out := &vec.Batch{Len: b.Len, Cols: make([]*vec.Vector, 0, len(b.Cols)+len(o.results))}
	out.Cols = append(out.Cols, b.Cols...)
	for _, r := range o.results {
		out.Cols = append(out.Cols, r.vector(o, o.starts[bi], o.starts[bi+1]))
	}
	// The batch is the consumer's now; the results stay until the last.
	o.mem.shrink(o.batchSize[bi])
	if o.pos >= len(o.batches) {
		o.release()
	}
	return out, nil
}

// fill buffers the input, with every batch made dense (no selection).
func (o *windowOp) fill(ec *evalCtx) error {
	for {
		if err := ec.ctx.Err(); err != nil {
			return err
		}
		b, err := o.in.next(ec)
		if err != nil {
			return err
		}
		if b == nil {
			break
		}
		if b.Rows() == 0 {
			continue
		}
		if b.Sel != nil {
			d := &vec.Batch{Len: len(b.Sel), Cols: make([]*vec.Vector, len(b.Cols))}
			for i, c := range b.Cols {
				d.Cols[i] = gather(c, b.Sel)
			}
			b = d
		}
		size := batchBytes(b, o.dicts)
		if err := o.mem.grow(size); err != nil {
			return err
		}
		o.batchSize = append(o.batchSize, size)
		o.batches = append(o.batches, b)
		o.starts = append(o.starts, o.n)
		o.n += b.Len
		if o.n > math.MaxInt32 {
			return errWindowTooManyRows
		}
	}
	o.starts = append(o.starts, o.n)
	return o.mem.grow(int64(cap(o.starts)) * 8)
}

// buildRowBatch makes the global row → batch map.
func (o *windowOp) buildRowBatch() error {
	if o.rowBatch != nil {
		return nil
	}
	if err := o.mem.grow(int64(o.n) * 4); err != nil {
		return err
	}
	o.rowBatch = make([]int32, o.n)
	for bi := range len(o.starts) - 1 {
		for g := o.starts[bi]; g < o.starts[bi+1]; g++ {
			o.rowBatch[g] = int32(bi)
		}
	}
	return nil
}

// eval evaluates ev over every buffered batch.
func (o *windowOp) eval(ec *evalCtx, ev evaluator) ([]*vec.Vector, error) {
	out := make([]*vec.Vector, len(o.batches))
	for i, b := range o.batches {
		v, err := ev(ec, b, nil)
		if err != nil {
			return nil, err
		}
		out[i] = v
	}
	return out, nil
}

// flatten copies per-batch vectors of a scalar type into one vector over
// the global row numbers.
func (o *windowOp) flatten(vecs []*vec.Vector, t ColType) (*vec.Vector, error) {
	flat := newVector(t, o.n)
	for bi, v := range vecs {
		s := o.starts[bi]
		if v.Type == t.V && !v.Const && v.Dict == nil {
			// Same layout: copy the payload, then the NULLs.
			switch {
			case v.Ints != nil:
				copy(flat.Ints[s:], v.Ints[:v.Len])
			case v.Floats != nil:
				copy(flat.Floats[s:], v.Floats[:v.Len])
			case v.Bools != nil:
				copy(flat.Bools[s:], v.Bools[:v.Len])
			case v.Strs != nil && !v.IsBytes():
				copy(flat.Strs[s:], v.Strs[:v.Len])
			default:
				goto rowByRow
			}
			if v.Nulls != nil {
				for i := 0; i < v.Len; i++ {
					if v.Nulls.Get(i) {
						setNull(flat, s+i)
					}
				}
			}
			continue
		}
	rowByRow:
		for i := 0; i < v.Len; i++ {
			copyValue(flat, s+i, v, i)
		}
	}
	return flat, o.gmem.grow(vectorBytes(flat, nil))
}

// nullsOf is the global NULL bitset of per-batch vectors (nil: none).
func (o *windowOp) nullsOf(vecs []*vec.Vector) vec.Bitset {
	var nulls vec.Bitset
	for bi, v := range vecs {
		if v.Nulls == nil {
			continue
		}
		s := o.starts[bi]
		for i := 0; i < v.Len; i++ {
			if v.IsNull(i) {
				if nulls == nil {
					nulls = vec.NewBitset(o.n)
				}
				nulls.Set(s + i)
			}
		}
	}
	return nulls
}

// partitionIDs numbers each row's partition; nil when there is one.
func (o *windowOp) partitionIDs(ec *evalCtx, g *winGroup) ([]int32, int, error) {
	if len(g.part) == 0 {
		return nil, 1, nil
	}
	// The GROUP BY machinery assigns group numbers per batch.
	p := &aggOp{q: o.q, keys: g.part, ktypes: g.ptypes, nullGroup: -1, lastGroup: -1}
	for _, t := range g.ptypes {
		p.kvals = append(p.kvals, newColBuilder(t))
	}
	if err := o.gmem.grow(int64(o.n) * 4); err != nil {
		return nil, 0, err
	}
	pid := make([]int32, o.n)
	keys := o.q.account()
	defer keys.clear() // the partition keys are not kept, only their numbers
	for bi, b := range o.batches {
		if bi&15 == 0 {
			if err := ec.ctx.Err(); err != nil {
				return nil, 0, err
			}
		}
		gids, err := p.groupIDs(ec, b)
		if err != nil {
			return nil, 0, err
		}
		copy(pid[o.starts[bi]:], gids[:b.Len])
		if err := keys.resize(p.stateBytes()); err != nil {
			return nil, 0, err
		}
	}
	return pid, p.ngroups, nil
}

// partitionOrder lists the global rows partition by partition (each in
// arrival order) and returns the partitions' bounds in that list.
func (o *windowOp) partitionOrder(pid []int32, nparts int) ([]int32, []int, error) {
	if err := o.gmem.grow(int64(o.n)*4 + int64(nparts+1)*8); err != nil {
		return nil, nil, err
	}
	perm := make([]int32, o.n)
	bounds := make([]int, nparts+1)
	if pid == nil {
		for i := range perm {
			perm[i] = int32(i)
		}
		bounds[1] = o.n
		return perm, bounds, nil
	}
	for _, p := range pid {
		bounds[p+1]++
	}
	for i := 1; i <= nparts; i++ {
		bounds[i] += bounds[i-1]
	}
	next := append([]int(nil), bounds[:nparts]...)
	for g, p := range pid {
		perm[next[p]] = int32(g)
		next[p]++
	}
	return perm, bounds, nil
}

// winKeys are a spec's ORDER BY keys over the global row numbers.
type winKeys struct {
	keys []compiledKey
	flat []*vec.Vector
	// sortable, for a single numeric or time key: an int64 per row whose
	// order is the value order (NULL rows are set apart before sorting).
	sortable []int64
	tmp      []sortPair // radix sort scratch
}

// radixMin is the partition size from which a radix sort beats a
// comparison sort.
const radixMin = 512

// Radix sort digits: 11 bits, a 16 KiB count table.
const (
	radixBits = 11
	radixMask = 1<<radixBits - 1
)

// radixSortPairs sorts pairs by key (descending when desc) with a stable
// least-significant-digit radix sort, 11 bits a pass, skipping the digits
// every key shares (the high bytes of timestamps close in time). Being
// stable, it keeps ties in arrival order. It returns the scratch buffer.
func radixSortPairs(a, tmp []sortPair, desc bool) []sortPair {
	n := len(a)
	if cap(tmp) < n {
		tmp = make([]sortPair, n)
	}
	tmp = tmp[:n]
	flip := uint64(1) << 63 // order int64 as uint64
	if desc {
		flip = ^flip
	}
	var and, or uint64 = ^uint64(0), 0
	for _, p := range a {
		u := uint64(p.k) ^ flip
		and &= u
		or |= u
	}
	differ := and ^ or // bits not shared by every key
	src, dst := a, tmp
	var count [1 << radixBits]int
	for shift := uint(0); shift < 64; shift += radixBits {
		if (differ>>shift)&radixMask == 0 {
			continue
		}
		count = [1 << radixBits]int{}
		for _, p := range src {
			count[((uint64(p.k)^flip)>>shift)&radixMask]++
		}
		sum := 0
		for i, c := range count {
			count[i] = sum
			sum += c
		}
		for _, p := range src {
			d := ((uint64(p.k) ^ flip) >> shift) & radixMask
			dst[count[d]] = p
			count[d]++
		}
		src, dst = dst, src
	}
	if &src[0] != &a[0] {
		copy(a, src)
	}
	return tmp
}

// cmp orders two global rows by the keys.
func (k *winKeys) cmp(a, b int32) int {
	for i, key := range k.keys {
		if c := compareKey(k.flat[i], int(a), k.flat[i], int(b), key); c != 0 {
			return c
		}
	}
	return 0
}

func (o *windowOp) orderKeys(ec *evalCtx, g *winGroup) (*winKeys, error) {
	k := &winKeys{keys: g.order}
	for _, key := range g.order {
		vecs, err := o.eval(ec, key.ev)
		if err != nil {
			return nil, err
		}
		flat, err := o.flatten(vecs, ColType{V: key.t})
		if err != nil {
			return nil, err
		}
		k.flat = append(k.flat, flat)
	}
	if len(g.order) == 1 {
		f := k.flat[0]
		switch {
		case isIntLike(f.Type) && f.Type != vec.Bool:
			k.sortable = f.Ints
		case f.Type == vec.Float64:
			if err := o.gmem.grow(int64(o.n) * 8); err != nil {
				return nil, err
			}
			k.sortable = make([]int64, o.n)
			for i, x := range f.Floats {
				k.sortable[i] = sortableFloat(x)
			}
		}
	}
	return k, nil
}

// sortableFloat maps a float to an int64 with the same order as BigQuery's
// (NaN first, -0 equal to 0).
func sortableFloat(x float64) int64 {
	if x != x {
		return math.MinInt64
	}
	if x == 0 {
		x = 0
	}
	u := math.Float64bits(x)
	if u>>63 != 0 {
		u = ^u
	} else {
		u |= 1 << 63
	}
	return int64(u ^ 1<<63)
}

// sortPair is a row with its sortable key.
type sortPair struct {
	k int64
	g int32
}

// sortSegment orders the rows of one partition by the keys; ties keep
// arrival order, so results are deterministic.
func (k *winKeys) sortSegment(ctx context.Context, seg []int32, buf []sortPair) ([]sortPair, error) {
	if len(seg) < 2 {
		return buf, nil
	}
	if k.sortable == nil {
		// Rows are in arrival order: a stable sort keeps ties so.
		return buf, sortStable(ctx, seg, k.cmp)
	}
	key := k.keys[0]
	nulls := k.flat[0].Nulls
	buf = buf[:0]
	var nullRows []int32
	for _, g := range seg {
		if nulls != nil && nulls.Get(int(g)) {
			nullRows = append(nullRows, g)
			continue
		}
		buf = append(buf, sortPair{k: k.sortable[g], g: g})
	}
	switch {
	case len(buf) >= radixMin:
		k.tmp = radixSortPairs(buf, k.tmp, key.desc)
	case key.desc:
		slices.SortFunc(buf, func(a, b sortPair) int {
			if a.k != b.k {
				return cmp.Compare(b.k, a.k)
			}
			return cmp.Compare(a.g, b.g)
		})
	default:
		slices.SortFunc(buf, func(a, b sortPair) int {
			if a.k != b.k {
				return cmp.Compare(a.k, b.k)
			}
			return cmp.Compare(a.g, b.g)
		})
	}
	i := 0
	if !key.nullsLast {
		i += copy(seg, nullRows)
	}
	for _, p := range buf {
		seg[i] = p.g
		i++
	}
	if key.nullsLast {
		copy(seg[i:], nullRows)
	}
	return buf, nil
}

// computeGroup partitions and orders the rows for one spec and runs its
// calls.
func (o *windowOp) computeGroup(ec *evalCtx, g *winGroup) error {
	pid, nparts, err := o.partitionIDs(ec, g)
	if err != nil {
		return err
	}
	perm, bounds, err := o.partitionOrder(pid, nparts)
	if err != nil {
		return err
	}
	maxPart := 0
	for p := 0; p < nparts; p++ {
		maxPart = max(maxPart, bounds[p+1]-bounds[p])
	}
	// Scratch sized by the largest partition: the frame bounds and peer
	// groups (16 bytes a row), the sort's pairs and radix buffer (32).
	if err := o.gmem.grow(int64(maxPart) * 48); err != nil {
		return err
	}
	var keys *winKeys
	if len(g.order) > 0 {
		if keys, err = o.orderKeys(ec, g); err != nil {
			return err
		}
		var buf []sortPair
		done := 0
		for p := 0; p < nparts; p++ {
			if done >= sortRun {
				if err := ec.ctx.Err(); err != nil {
					return err
				}
				done = 0
			}
			seg := perm[bounds[p]:bounds[p+1]]
			done += len(seg)
			if buf, err = keys.sortSegment(ec.ctx, seg, buf); err != nil {
				return err
			}
		}
	}
	runners := make([]winRunner, len(g.funcs))
	needPeers := false
	for i, fo := range g.funcs {
		r, err := o.newRunner(ec, fo, pid, nparts)
		if err != nil {
			return err
		}
		runners[i] = r
		o.results[fo.idx] = r.result()
		needPeers = needPeers || needsPeers(fo.f)
	}
	sc := &winSegCtx{keys: keys}
	done := 0
	for p := 0; p < nparts; p++ {
		if p&127 == 0 || done >= sortRun {
			if err := ec.ctx.Err(); err != nil {
				return err
			}
			done = 0
		}
		done += bounds[p+1] - bounds[p]
		sc.reset(perm[bounds[p]:bounds[p+1]], needPeers)
		for _, r := range runners {
			if err := r.segment(sc); err != nil {
				return err
			}
		}
	}
	return nil
}

// needsPeers reports whether a call reads the ORDER BY peer groups.
func needsPeers(f *WindowFunc) bool {
	switch f.Name {
	case "rank", "dense_rank", "percent_rank", "cume_dist":
		return true
	}
	return f.Frame.Unit == frameRange && len(f.Order) > 0
}

// winSegCtx is one partition in window order, with scratch space reused
// from partition to partition.
type winSegCtx struct {
	rows []int32 // global rows in window order
	keys *winKeys
	// peerStart and peerEnd give each position's peer group [start, end)
	// (positions relative to the partition).
	peerStart, peerEnd []int32
	lo, hi             []int32 // frame scratch
}

func (s *winSegCtx) reset(rows []int32, peers bool) {
	s.rows = rows
	m := len(rows)
	if cap(s.lo) < m {
		s.lo, s.hi = make([]int32, m), make([]int32, m)
	}
	s.lo, s.hi = s.lo[:m], s.hi[:m]
	if !peers {
		return
	}
	if cap(s.peerStart) < m {
		s.peerStart, s.peerEnd = make([]int32, m), make([]int32, m)
	}
	s.peerStart, s.peerEnd = s.peerStart[:m], s.peerEnd[:m]
	start := 0
	for j := 0; j < m; j++ {
		if j > 0 && s.keys.cmp(rows[j-1], rows[j]) != 0 {
			for k := start; k < j; k++ {
				s.peerEnd[k] = int32(j)
			}
			start = j
		}
		s.peerStart[j] = int32(start)
	}
	for k := start; k < m; k++ {
		s.peerEnd[k] = int32(m)
	}
}
