package sql

import (
	"cmp"
	"context"
	"slices"
	"strings"

	"github.com/sediment/sediment/internal/vec"
)

type compiledKey struct {
	ev        evaluator
	desc      bool
	nullsLast bool
	t         vec.Type
}

func compileKeys(keys []SortKey, lay layout) ([]compiledKey, error) {
	out := make([]compiledKey, len(keys))
	for i, k := range keys {
		ev, err := compile(k.E, lay)
		if err != nil {
			return nil, err
		}
		out[i] = compiledKey{ev: ev, desc: k.Desc, nullsLast: k.NullsLast, t: k.E.Type().V}
	}
	return out, nil
}

// sortOp sorts its input; with limit >= 0 it keeps only the first
// offset+limit rows as it goes (top-K), pruning by the current K-th row.
type sortOp struct {
	q      *queryRun
	in     operator
	keys   []compiledKey
	limit  int64
	offset int64
	// cols are the input's columns: their types are the output's, whatever
	// the batches a row comes from (the branches of a UNION ALL differ:
	// one has a field as STRING, another never had it).
	cols []Column

	// prune, when set, receives the time of the K-th row so the scan can
	// skip units that cannot beat it; pruneKey is the key column's position.
	prune    *scanOp
	pruneKey int

	batches []*sortBatch
	rows    []sortRow
	out     []sortRow
	pos     int
	done    bool
	// bound: the K-th row once known, for quick rejection.
	bound *sortRow

	// mem holds the batches' charges (held) and the row lists'.
	mem   memAccount
	dicts dictSet
	held  int64
}

type sortBatch struct {
	b    *vec.Batch
	keys []*vec.Vector
	size int64 // charged for b and keys
}

type sortRow struct {
	b, r int32
}

func (o *sortOp) cmp(x, y sortRow) int {
	bx, by := o.batches[x.b], o.batches[y.b]
	for k, key := range o.keys {
		if c := compareKey(bx.keys[k], int(x.r), by.keys[k], int(y.r), key); c != 0 {
			return c
		}
	}
	return 0
}

// compareKey orders two rows by one key in its final order: NULLs where
// nullsLast puts them whatever the direction, values by direction.
func compareKey(vx *vec.Vector, x int, vy *vec.Vector, y int, key compiledKey) int {
	nx, ny := vx.IsNull(x), vy.IsNull(y)
	switch {
	case nx && ny:
		return 0
	case nx:
		if key.nullsLast {
			return 1
		}
		return -1
	case ny:
		if key.nullsLast {
			return -1
		}
		return 1
	}
	c := compareNonNull(vx, x, vy, y, key.t)
	if key.desc {
		return -c
	}
	return c
}

// compareNonNull orders two non-NULL values ascending. NaN sorts first,
// as in BigQuery.
func compareNonNull(vx *vec.Vector, x int, vy *vec.Vector, y int, t vec.Type) int {
	switch t {
	case vec.String, vec.JSON:
		return strings.Compare(vx.StringAt(x), vy.StringAt(y))
	case vec.Float64:
		a, b := vx.FloatAt(x), vy.FloatAt(y)
		if a != a || b != b {
			switch {
			case a != a && b != b:
				return 0
			case a != a:
				return -1
			}
			return 1
		}
		return cmp.Compare(a, b)
	case vec.Bool:
		a, b := vx.BoolAt(x), vy.BoolAt(y)
		switch {
		case a == b:
			return 0
		case !a:
			return -1
		}
		return 1
	}
	return cmp.Compare(vx.IntAt(x), vy.IntAt(y))
}

func (o *sortOp) fill(ec *evalCtx) error {
	o.mem = o.q.account()
	o.dicts = dictSet{}
	k := o.limit + o.offset
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
		b = compact(b)
		sb := &sortBatch{b: b, keys: make([]*vec.Vector, len(o.keys))}
		sb.size = batchBytes(b, o.dicts)
		for i, key := range o.keys {
			v, err := key.ev(ec, b, b.Sel)
			if err != nil {
				return err
			}
			sb.keys[i] = v
			if !slices.Contains(b.Cols, v) {
				sb.size += vectorBytes(v, o.dicts)
			}
		}
		bi := int32(len(o.batches))
		added := 0
		b.ForEach(func(i int) {
			r := sortRow{b: bi, r: int32(i)}
			if o.bound != nil && o.cmpWith(sb, r, *o.bound) > 0 {
				return // cannot make the top K
			}
			o.rows = append(o.rows, r)
			added++
		})
		if added == 0 {
			continue // nothing kept from it
		}
		o.batches = append(o.batches, sb)
		o.held += sb.size
		if err := o.charge(0); err != nil {
			return err
		}
		// Truncate once rows pile up; and as soon as there are K rows when
		// the scan can use the K-th row's time to skip units.
		if o.limit >= 0 && (int64(len(o.rows)) > 2*k+1024 || (o.prune != nil && o.bound == nil && k > 0 && int64(len(o.rows)) >= k)) {
			if err := o.truncate(ec, k); err != nil {
				return err
			}
		}
	}
	// The merge sort's scratch is as large as the rows.
	if err := o.charge(int64(len(o.rows)) * 8); err != nil {
		return err
	}
	if err := sortStable(ec.ctx, o.rows, o.cmp); err != nil {
		return err
	}
	if o.limit >= 0 && int64(len(o.rows)) > k {
		o.rows = o.rows[:k]
	}
	if int64(len(o.rows)) > o.offset {
		o.out = o.rows[o.offset:]
	}
	return o.charge(0)
}

// charge makes the account the held batches, the row list and extra.
func (o *sortOp) charge(extra int64) error {
	return o.mem.resize(o.held + int64(cap(o.rows))*8 + extra)
}

// cmpWith orders row x of a batch not yet added against row y.
func (o *sortOp) cmpWith(bx *sortBatch, x, y sortRow) int {
	by := o.batches[y.b]
	for k, key := range o.keys {
		if c := compareKey(bx.keys[k], int(x.r), by.keys[k], int(y.r), key); c != 0 {
			return c
		}
	}
	return 0
}

// truncate keeps the best k rows and tells the scan the K-th row's time.
func (o *sortOp) truncate(ec *evalCtx, k int64) error {
	if err := o.charge(int64(len(o.rows)) * 8); err != nil {
		return err
	}
	if err := sortStable(ec.ctx, o.rows, o.cmp); err != nil {
		return err
	}
	if int64(len(o.rows)) <= k {
		return nil
	}
	o.rows = o.rows[:k]
	if k == 0 {
		return nil
	}
	last := o.rows[k-1]
	o.bound = &last
	if o.prune != nil {
		v := o.batches[last.b].b.Cols[o.pruneKey]
		if !v.IsNull(int(last.r)) {
			o.prune.setThreshold(v.IntAt(int(last.r)))
		}
	}
	// Drop batches no kept row uses, to bound memory.
	used := make([]bool, len(o.batches))
	for _, r := range o.rows {
		used[r.b] = true
	}
	for i, sb := range o.batches {
		if !used[i] && sb.b != nil {
			o.held -= sb.size
			o.batches[i] = &sortBatch{}
		}
	}
	return o.charge(0)
}

func (o *sortOp) next(ec *evalCtx) (*vec.Batch, error) {
	if !o.done {
		o.done = true
		if err := o.fill(ec); err != nil {
			return nil, err
		}
	}
	if o.pos >= len(o.out) {
		o.release()
		return nil, nil
	}
	if err := ec.ctx.Err(); err != nil {
		return nil, err
	}
	end := min(o.pos+4096, len(o.out))
	chunk := o.out[o.pos:end]
	o.pos = end
	// Gather rows in order, batch by batch of origin.
	width := 0
	for _, sb := range o.batches {
		if sb.b != nil {
			width = len(sb.b.Cols)
			break
		}
	}
	out := &vec.Batch{Len: len(chunk), Cols: make([]*vec.Vector, width)}
	for c := 0; c < width; c++ {
		var first *vec.Vector
		for _, r := range chunk {
			first = o.batches[r.b].b.Cols[c]
			if first.Type != vec.Unknown {
				break
			}
		}
		t := ColType{V: first.Type}
		if c < len(o.cols) && o.cols[c].T.V != vec.Unknown && first.Type != vec.List && first.Type != vec.Struct {
			t = o.cols[c].T
		}
		dst := newVector(t, len(chunk))
		if first.Type == vec.List || first.Type == vec.Struct {
			// Arrays and records: a deep copy of each row.
			cells := make([]cell, len(chunk))
			for i, r := range chunk {
				cells[i] = cell{o.batches[r.b].b.Cols[c], r.r}
			}
			dst = gatherCells(first.Type, cells)
		} else {
			for i, r := range chunk {
				copyValue(dst, i, o.batches[r.b].b.Cols[c], int(r.r))
			}
		}
		out.Cols[c] = dst
	}
	if o.pos >= len(o.out) {
		o.release() // the rows are all out: the batches are garbage
	}
	return out, nil
}

// release lets go of the buffered rows and their charge.
func (o *sortOp) release() {
	o.batches, o.rows, o.out, o.bound = nil, nil, nil, nil
	o.held = 0
	o.mem.clear()
}

func (o *sortOp) close() {
	o.in.close()
	o.release()
}

// sortRun is the run a merge sort sorts in one piece; the context is
// checked between runs and every sortRun rows of a merge.
const sortRun = 1 << 15

// sortStable sorts s stably by cmp, checking ctx every sortRun rows so that
// a cancelled query does not finish sorting millions of rows first. Past
// one run it merge-sorts with a scratch copy as large as s.
func sortStable[T any](ctx context.Context, s []T, cmp func(a, b T) int) error {
	n := len(s)
	if n <= sortRun {
		slices.SortStableFunc(s, cmp)
		return nil
	}
	for i := 0; i < n; i += sortRun {
		if err := ctx.Err(); err != nil {
			return err
		}
		slices.SortStableFunc(s[i:min(i+sortRun, n)], cmp)
	}
	src, dst := s, make([]T, n)
	for width := sortRun; width < n; width *= 2 {
		for lo := 0; lo < n; lo += 2 * width {
			mid, hi := min(lo+width, n), min(lo+2*width, n)
			if err := mergeRuns(ctx, src[lo:mid], src[mid:hi], dst[lo:hi], cmp); err != nil {
				return err
			}
		}
		src, dst = dst, src
	}
	if &src[0] != &s[0] {
		copy(s, src)
	}
	return nil
}

// mergeRuns merges sorted a and b into dst, taking from a on ties.
func mergeRuns[T any](ctx context.Context, a, b, dst []T, cmp func(x, y T) int) error {
	i, j, k := 0, 0, 0
	for i < len(a) && j < len(b) {
		if k&(sortRun-1) == sortRun-1 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		if cmp(b[j], a[i]) < 0 {
			dst[k] = b[j]
			j++
		} else {
			dst[k] = a[i]
			i++
		}
		k++
	}
	k += copy(dst[k:], a[i:])
	copy(dst[k:], b[j:])
	return nil
}
