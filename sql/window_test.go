package sql

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/sediment/sediment/internal/vec"
	"github.com/sediment/sediment/sql/fn"
)

// batchesOp replays fixed batches.
type batchesOp struct {
	bs  []*vec.Batch
	pos int
}

func (o *batchesOp) next(*evalCtx) (*vec.Batch, error) {
	if o.pos >= len(o.bs) {
		return nil, nil
	}
	o.pos++
	return o.bs[o.pos-1], nil
}
func (o *batchesOp) close() {}

// winRow is one input row of the randomized window tests.
type winRow struct {
	p       int64 // partition key
	pNull   bool
	k       int64 // order key
	kNull   bool
	fk      float64 // float order key
	fkNull  bool
	x       int64 // value
	xNull   bool
	f       float64 // float value
	fNull   bool
	arrival int
}

// winTestInput makes random rows and splits them into batches, some with a
// selection vector, with columns p, k, fk, x, f (ids 1..5).
func winTestInput(r *rand.Rand, n int) ([]winRow, []*vec.Batch, []Column) {
	rows := make([]winRow, n)
	for i := range rows {
		rows[i] = winRow{
			p: r.Int64N(3), pNull: r.IntN(10) == 0,
			k: r.Int64N(6) - 2, kNull: r.IntN(8) == 0,
			fk: float64(r.IntN(7)) / 2, fkNull: r.IntN(8) == 0,
			x: r.Int64N(21) - 10, xNull: r.IntN(5) == 0,
			f: float64(r.IntN(9)) / 4, fNull: r.IntN(5) == 0,
			arrival: i,
		}
		if r.IntN(40) == 0 {
			rows[i].fk = math.NaN()
		}
	}
	cols := []Column{
		{ID: 1, Name: "p", T: ColType{V: vec.Int64}},
		{ID: 2, Name: "k", T: ColType{V: vec.Int64}},
		{ID: 3, Name: "fk", T: ColType{V: vec.Float64}},
		{ID: 4, Name: "x", T: ColType{V: vec.Int64}},
		{ID: 5, Name: "f", T: ColType{V: vec.Float64}},
	}
	var batches []*vec.Batch
	for i := 0; i < n; {
		size := 1 + r.IntN(17)
		chunk := rows[i:min(i+size, n)]
		i += len(chunk)
		// Pad with dead rows behind a selection half of the time.
		withSel := r.IntN(2) == 0
		var sel []int32
		var all []winRow
		for _, row := range chunk {
			if withSel {
				all = append(all, winRow{p: 99, x: 999})
			}
			sel = append(sel, int32(len(all)))
			all = append(all, row)
		}
		b := &vec.Batch{Len: len(all)}
		if withSel {
			b.Sel = sel
		}
		mk := func(t vec.Type) *vec.Vector { return newVector(ColType{V: t}, len(all)) }
		p, k, fk, x, f := mk(vec.Int64), mk(vec.Int64), mk(vec.Float64), mk(vec.Int64), mk(vec.Float64)
		for j, row := range all {
			p.Ints[j], k.Ints[j], fk.Floats[j], x.Ints[j], f.Floats[j] = row.p, row.k, row.fk, row.x, row.f
			for _, c := range []struct {
				v    *vec.Vector
				null bool
			}{{p, row.pNull}, {k, row.kNull}, {fk, row.fkNull}, {x, row.xNull}, {f, row.fNull}} {
				if c.null {
					setNull(c.v, j)
				}
			}
		}
		b.Cols = []*vec.Vector{p, k, fk, x, f}
		batches = append(batches, b)
	}
	return rows, batches, cols
}

// naiveOrder is every row's partition in window order, and its position
// there, computed by definition.
type naiveOrder struct {
	parts                     map[string][]winRow
	pos                       []int
	floatKey, desc, nullsLast bool
}

func (o *naiveOrder) key(r winRow) (float64, bool) {
	if o.floatKey {
		return r.fk, r.fkNull
	}
	return float64(r.k), r.kNull
}

func (o *naiveOrder) pkey(r winRow) string {
	if r.pNull {
		return "null"
	}
	return fmt.Sprint(r.p)
}

// ordCmp orders two rows in window order by the key alone.
func (o *naiveOrder) ordCmp(a, b winRow) int {
	va, na := o.key(a)
	vb, nb := o.key(b)
	switch {
	case na && nb:
		return 0
	case na:
		if o.nullsLast {
			return 1
		}
		return -1
	case nb:
		if o.nullsLast {
			return -1
		}
		return 1
	}
	var c int
	switch {
	case va != va && vb != vb:
		c = 0
	case va != va:
		c = -1
	case vb != vb:
		c = 1
	default:
		c = cmp.Compare(va, vb)
	}
	if o.desc {
		c = -c
	}
	return c
}

func newNaiveOrder(rows []winRow, floatKey, desc, nullsLast bool) *naiveOrder {
	o := &naiveOrder{parts: map[string][]winRow{}, pos: make([]int, len(rows)), floatKey: floatKey, desc: desc, nullsLast: nullsLast}
	for _, r := range rows {
		o.parts[o.pkey(r)] = append(o.parts[o.pkey(r)], r)
	}
	for _, part := range o.parts {
		slices.SortStableFunc(part, o.ordCmp)
		for i, r := range part {
			o.pos[r.arrival] = i
		}
	}
	return o
}

// naiveWindow computes a call by definition: for every row, the rows of
// its partition in window order and, for framed calls, the rows of its
// frame tested one by one.
func naiveWindow(rows []winRow, f *WindowFunc, o *naiveOrder) []any {
	key, ordCmp, desc, nullsLast := o.key, o.ordCmp, o.desc, o.nullsLast
	out := make([]any, len(rows))
	var frame []winRow
	for i, cur := range rows {
		part := o.parts[o.pkey(cur)]
		pos := o.pos[cur.arrival]
		m := len(part)
		peersBefore, peersThrough := 0, 0
		switch f.Name {
		case "rank", "percent_rank", "cume_dist":
			for _, r := range part {
				c := ordCmp(r, cur)
				if c < 0 {
					peersBefore++
				}
				if c <= 0 {
					peersThrough++
				}
			}
		}
		switch f.Name {
		case "row_number":
			out[i] = int64(pos + 1)
			continue
		case "rank":
			out[i] = int64(peersBefore + 1)
			continue
		case "dense_rank":
			d := map[string]bool{}
			for _, r := range part {
				if ordCmp(r, cur) <= 0 {
					v, n := key(r)
					if n {
						d["null"] = true
					} else {
						d[fmt.Sprint(v)] = true
					}
				}
			}
			out[i] = int64(len(d))
			continue
		case "percent_rank":
			if m == 1 {
				out[i] = 0.0
			} else {
				out[i] = float64(peersBefore) / float64(m-1)
			}
			continue
		case "cume_dist":
			out[i] = float64(peersThrough) / float64(m)
			continue
		case "ntile":
			// Bucket sizes: m/k, the first m%k one larger.
			k := int(f.N)
			b, start := 0, 0
			for b = 0; b < k; b++ {
				size := m / k
				if b < m%k {
					size++
				}
				if pos < start+size {
					break
				}
				start += size
			}
			out[i] = int64(b + 1)
			continue
		case "lag", "lead":
			q := satSub(int64(pos), f.N)
			if f.Name == "lead" {
				q = satAdd(int64(pos), f.N)
			}
			if q >= 0 && q < int64(m) {
				out[i] = xval(part[q])
			} else if f.Default != nil {
				out[i] = f.Default.(*Literal).D.Int
			} else {
				out[i] = nil
			}
			continue
		}
		// Framed calls.
		frame = frame[:0]
		curV, curNull := key(cur)
		curNull = curNull || curV != curV
		for q, r := range part {
			if inBound(f.Frame, f.Frame.Start, false, q, pos, r, cur, curNull, ordCmp, key, desc, nullsLast) &&
				inBound(f.Frame, f.Frame.End, true, q, pos, r, cur, curNull, ordCmp, key, desc, nullsLast) {
				frame = append(frame, r)
			}
		}
		out[i] = naiveAgg(f, frame)
	}
	return out
}

func xval(r winRow) any {
	if r.xNull {
		return nil
	}
	return r.x
}

// inBound tests one row of the partition against one frame bound.
func inBound(fr WindowFrame, b frameBound, end bool, q, pos int, r, cur winRow, curNull bool,
	ordCmp func(a, b winRow) int, key func(winRow) (float64, bool), desc, nullsLast bool) bool {
	switch b.Kind {
	case boundUnboundedPreceding, boundUnboundedFollowing:
		return true
	}
	if fr.Unit == frameRows {
		lim := int64(pos)
		switch b.Kind {
		case boundPreceding:
			lim = satSub(lim, b.N)
		case boundFollowing:
			lim = satAdd(lim, b.N)
		}
		if end {
			return int64(q) <= lim
		}
		return int64(q) >= lim
	}
	// RANGE.
	if b.Kind == boundCurrentRow || curNull {
		c := ordCmp(r, cur)
		if end {
			return c <= 0
		}
		return c >= 0
	}
	v, _ := key(cur)
	off := b.F
	back := b.Kind == boundPreceding != desc
	t := v + off
	if back {
		t = v - off
	}
	rv, rn := key(r)
	var c int
	switch {
	case rn:
		c = -1
		if nullsLast {
			c = 1
		}
	case rv != rv:
		c = -1
		if desc {
			c = 1
		}
	default:
		c = cmp.Compare(rv, t)
		if desc {
			c = -c
		}
	}
	if end {
		return c <= 0
	}
	return c >= 0
}

// naiveAgg aggregates a frame.
func naiveAgg(f *WindowFunc, frame []winRow) any {
	useFloat := len(f.Args) > 0 && f.Args[0].Type().V == vec.Float64
	vals := make([]any, 0, len(frame))
	for _, r := range frame {
		switch {
		case f.Star:
			vals = append(vals, true)
		case useFloat && !r.fNull:
			vals = append(vals, r.f)
		case !useFloat && !r.xNull:
			vals = append(vals, r.x)
		default:
			vals = append(vals, nil)
		}
	}
	nonNull := make([]any, 0, len(vals))
	for _, v := range vals {
		if v != nil {
			nonNull = append(nonNull, v)
		}
	}
	num := func(v any) float64 {
		if x, ok := v.(int64); ok {
			return float64(x)
		}
		return v.(float64)
	}
	switch f.Name {
	case "count":
		return int64(len(nonNull))
	case "sum", "avg":
		if len(nonNull) == 0 {
			return nil
		}
		if !useFloat {
			var s int64
			for _, v := range nonNull {
				s += v.(int64)
			}
			if f.Name == "avg" {
				return float64(s) / float64(len(nonNull))
			}
			return s
		}
		s := 0.0
		for _, v := range nonNull {
			s += v.(float64)
		}
		if f.Name == "avg" {
			return s / float64(len(nonNull))
		}
		return s
	case "min", "max":
		if len(nonNull) == 0 {
			return nil
		}
		best := nonNull[0]
		for _, v := range nonNull[1:] {
			if f.Name == "min" && num(v) < num(best) || f.Name == "max" && num(v) > num(best) {
				best = v
			}
		}
		return best
	case "any_value":
		if len(nonNull) == 0 {
			return nil
		}
		return nonNull[0]
	case "first_value", "last_value", "nth_value":
		list := vals
		if f.IgnoreNulls {
			list = nonNull
		}
		i := int64(0)
		switch f.Name {
		case "last_value":
			i = int64(len(list)) - 1
		case "nth_value":
			i = f.N - 1
		}
		if i < 0 || i >= int64(len(list)) {
			return nil
		}
		return list[i]
	}
	panic("naiveAgg: " + f.Name)
}

// runWindowOp runs a WindowNode over batches and returns its result
// columns' values in arrival order.
func runWindowOp(t *testing.T, batches []*vec.Batch, cols []Column, funcs []*WindowFunc) [][]any {
	t.Helper()
	node := &WindowNode{In: &emptyNode{cols: cols}, Funcs: funcs}
	q := testRun(1 << 30)
	op, err := newWindowOp(q, node, &batchesOp{bs: batches})
	if err != nil {
		t.Fatal(err)
	}
	ec := q.newEvalCtx(context.Background())
	out := make([][]any, len(funcs))
	for {
		b, err := op.next(ec)
		if err != nil {
			t.Fatal(err)
		}
		if b == nil {
			break
		}
		for fi := range funcs {
			v := b.Cols[len(cols)+fi]
			for i := 0; i < b.Len; i++ {
				var x any
				switch {
				case v.IsNull(i):
				case v.Type == vec.Float64:
					x = v.FloatAt(i)
				default:
					x = v.IntAt(i)
				}
				out[fi] = append(out[fi], x)
			}
		}
	}
	return out
}

func sameValue(a, b any) bool {
	fa, aok := a.(float64)
	fb, bok := b.(float64)
	if aok && bok {
		if math.IsNaN(fa) || math.IsNaN(fb) {
			return math.IsNaN(fa) && math.IsNaN(fb)
		}
		return math.Abs(fa-fb) <= 1e-9*math.Max(1, math.Abs(fa))
	}
	return a == b
}

// TestWindowAgainstNaive checks every function and frame shape, over random
// partitions with NULL keys, ties and NaNs, against a by-definition
// computation.
func TestWindowAgainstNaive(t *testing.T) {
	col := func(id ColID, name string, v vec.Type) *ColRef { return &ColRef{ID: id, Name: name, T: ColType{V: v}} }
	pCol, kCol, fkCol := col(1, "p", vec.Int64), col(2, "k", vec.Int64), col(3, "fk", vec.Float64)
	xCol, fCol := col(4, "x", vec.Int64), col(5, "f", vec.Float64)
	rows := WindowFrame{Unit: frameRows}
	rng := WindowFrame{Unit: frameRange}
	b := func(k boundKind, n int64) frameBound { return frameBound{Kind: k, N: n, F: float64(n)} }
	up, uf, cr := b(boundUnboundedPreceding, 0), b(boundUnboundedFollowing, 0), b(boundCurrentRow, 0)
	frames := []WindowFrame{}
	for _, base := range []WindowFrame{rows, rng} {
		for _, se := range [][2]frameBound{
			{up, cr}, {up, uf}, {cr, uf}, {cr, cr},
			{b(boundPreceding, 1), b(boundFollowing, 1)},
			{b(boundPreceding, 2), cr},
			{up, b(boundPreceding, 1)},
			{b(boundPreceding, 3), b(boundPreceding, 1)},
			{b(boundFollowing, 1), b(boundFollowing, 2)},
			{b(boundFollowing, 1), uf},
			{b(boundPreceding, 0), b(boundFollowing, 0)},
			{b(boundPreceding, math.MaxInt64), b(boundFollowing, math.MaxInt64)},
		} {
			fr := base
			fr.Start, fr.End = se[0], se[1]
			frames = append(frames, fr)
		}
	}
	for seed := uint64(1); seed <= 6; seed++ {
		r := rand.New(rand.NewPCG(seed, 7))
		data, batches, cols := winTestInput(r, 1+r.IntN(90))
		for _, floatKey := range []bool{false, true} {
			for _, desc := range []bool{false, true} {
				nullsLast := desc != (seed%3 == 0)
				key := kCol
				if floatKey {
					key = fkCol
				}
				order := []SortKey{{E: key, Desc: desc, NullsLast: nullsLast}}
				part := []Expr{pCol}
				var funcs []*WindowFunc
				add := func(f *WindowFunc) {
					f.Partition, f.Order = part, order
					if f.Agg == nil && len(f.Args) > 0 && f.T.V == vec.Unknown {
						f.T = f.Args[0].Type()
					}
					f.Out = Column{ID: ColID(100 + len(funcs)), Name: f.Name, T: f.T}
					funcs = append(funcs, f)
				}
				for _, name := range []string{"row_number", "rank", "dense_rank"} {
					add(&WindowFunc{Name: name, T: ColType{V: vec.Int64}})
				}
				add(&WindowFunc{Name: "percent_rank", T: ColType{V: vec.Float64}})
				add(&WindowFunc{Name: "cume_dist", T: ColType{V: vec.Float64}})
				for _, k := range []int64{1, 3, 7, 200} {
					add(&WindowFunc{Name: "ntile", N: k, T: ColType{V: vec.Int64}})
				}
				for _, off := range []int64{0, 1, 3, math.MaxInt64} {
					add(&WindowFunc{Name: "lag", N: off, Args: []Expr{xCol}})
					add(&WindowFunc{Name: "lead", N: off, Args: []Expr{xCol}, Default: &Literal{D: fnInt(-1)}})
				}
				for _, fr := range frames {
					if fr.Unit == frameRange {
						fr.FloatKey = floatKey
					}
					for _, name := range []string{"count", "sum", "avg", "min", "max", "any_value"} {
						for _, arg := range []*ColRef{xCol, fCol} {
							a := &AggCall{Name: name, Args: []Expr{arg}}
							t, _ := aggResultType(name, arg.T)
							a.T = t
							add(&WindowFunc{Name: name, Args: a.Args, Agg: a, Frame: fr, T: t})
						}
					}
					a := &AggCall{Name: "count", Star: true, T: ColType{V: vec.Int64}}
					add(&WindowFunc{Name: "count", Star: true, Agg: a, Frame: fr, T: a.T})
					for _, ignore := range []bool{false, true} {
						add(&WindowFunc{Name: "first_value", Args: []Expr{xCol}, Frame: fr, IgnoreNulls: ignore})
						add(&WindowFunc{Name: "last_value", Args: []Expr{xCol}, Frame: fr, IgnoreNulls: ignore})
						add(&WindowFunc{Name: "nth_value", N: 2, Args: []Expr{xCol}, Frame: fr, IgnoreNulls: ignore})
						add(&WindowFunc{Name: "nth_value", N: math.MaxInt64, Args: []Expr{xCol}, Frame: fr, IgnoreNulls: ignore})
					}
				}
				got := runWindowOp(t, batches, cols, funcs)
				naive := newNaiveOrder(data, floatKey, desc, nullsLast)
				for fi, f := range funcs {
					want := naiveWindow(data, f, naive)
					for i := range data {
						if !sameValue(got[fi][i], want[i]) {
							t.Fatalf("seed %d float=%v desc=%v nullsLast=%v %s: row %d (%+v): got %v, want %v",
								seed, floatKey, desc, nullsLast, f, i, data[i], got[fi][i], want[i])
						}
					}
				}
			}
		}
	}
}

func fnInt(v int64) fn.Datum { return fn.Datum{Type: vec.Int64, Int: v} }

// TestWindowMemoryLimit checks that the buffered input counts against the
// query's memory budget.
func TestWindowMemoryLimit(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	_, batches, cols := winTestInput(r, 5000)
	f := &WindowFunc{Name: "row_number", T: ColType{V: vec.Int64}, Out: Column{ID: 100, T: ColType{V: vec.Int64}}}
	node := &WindowNode{In: &emptyNode{cols: cols}, Funcs: []*WindowFunc{f}}
	q := testRun(64 << 10)
	op, err := newWindowOp(q, node, &batchesOp{bs: batches})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := op.next(q.newEvalCtx(context.Background())); !errors.Is(err, ErrMemoryLimit) {
		t.Fatalf("got %v, want ErrMemoryLimit", err)
	}
}

func TestSortableFloat(t *testing.T) {
	xs := []float64{math.NaN(), math.Inf(-1), -1e300, -2.5, -1, math.Copysign(0, -1), 0, 1e-300, 1, 2.5, 1e300, math.Inf(1)}
	for i := 1; i < len(xs); i++ {
		a, b := sortableFloat(xs[i-1]), sortableFloat(xs[i])
		if xs[i-1] == xs[i] {
			if a != b {
				t.Errorf("%v and %v: keys differ", xs[i-1], xs[i])
			}
		} else if a >= b {
			t.Errorf("%v sorts after %v: %d >= %d", xs[i-1], xs[i], a, b)
		}
	}
}
