package sql

import (
	"cmp"
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
}

type sortBatch struct {
	b    *vec.Batch
	keys []*vec.Vector
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
	k := o.limit + o.offset
	for {
		b, err := o.in.next(ec)
		if err != nil {
			return err
		}
		if b == nil {
			break
		}
		b = compact(b)
		sb := &sortBatch{b: b, keys: make([]*vec.Vector, len(o.keys))}
		for i, key := range o.keys {
			v, err := key.ev(ec, b, b.Sel)
			if err != nil {
				return err
			}
			sb.keys[i] = v
		}
		if err := o.q.reserve(batchBytes(b)); err != nil {
			return err
		}
		bi := int32(len(o.batches))
		o.batches = append(o.batches, sb)
		added := 0
		b.ForEach(func(i int) {
			r := sortRow{b: bi, r: int32(i)}
			if o.bound != nil && o.cmp(r, *o.bound) > 0 {
				return // cannot make the top K
			}
			o.rows = append(o.rows, r)
			added++
		})
		if added == 0 {
			o.batches[bi] = &sortBatch{} // nothing kept from it
			o.q.reserve(-batchBytes(b))
		}
		// Truncate once rows pile up; and as soon as there are K rows when
		// the scan can use the K-th row's time to skip units.
		if o.limit >= 0 && (int64(len(o.rows)) > 2*k+1024 || (o.prune != nil && o.bound == nil && k > 0 && int64(len(o.rows)) >= k)) {
			o.truncate(k)
		}
	}
	slices.SortStableFunc(o.rows, o.cmp)
	if o.limit >= 0 && int64(len(o.rows)) > k {
		o.rows = o.rows[:k]
	}
	if int64(len(o.rows)) > o.offset {
		o.out = o.rows[o.offset:]
	}
	return nil
}

// truncate keeps the best k rows and tells the scan the K-th row's time.
func (o *sortOp) truncate(k int64) {
	slices.SortStableFunc(o.rows, o.cmp)
	if int64(len(o.rows)) <= k {
		return
	}
	o.rows = o.rows[:k]
	if k == 0 {
		return
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
	used := map[int32]bool{}
	for _, r := range o.rows {
		used[r.b] = true
	}
	for i, sb := range o.batches {
		if !used[int32(i)] && sb.b != nil {
			o.q.reserve(-batchBytes(sb.b))
			o.batches[i] = &sortBatch{}
		}
	}
}

func (o *sortOp) next(ec *evalCtx) (*vec.Batch, error) {
	if !o.done {
		o.done = true
		if err := o.fill(ec); err != nil {
			return nil, err
		}
	}
	if o.pos >= len(o.out) {
		return nil, nil
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
	return out, nil
}

func (o *sortOp) close() { o.in.close() }
