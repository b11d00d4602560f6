package sql

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/sediment/sediment/internal/vec"
)

// testRun is a query run with a memory limit and no pool, for operator
// tests and benchmarks.
func testRun(limit int64) *queryRun {
	q := &queryRun{}
	q.mem.limit = limit
	return q
}

// genOp makes batches on demand, as a scan does: batch i (of n) has rows
// rows, built by gen. Each call to next is counted, and onBatch (when set)
// runs before batch i is handed out.
type genOp struct {
	n, rows int
	gen     func(i, rows int) *vec.Batch
	onBatch func(i int)
	calls   int
}

func (o *genOp) next(*evalCtx) (*vec.Batch, error) {
	i := o.calls
	o.calls++
	if o.onBatch != nil {
		o.onBatch(i)
	}
	if i >= o.n {
		return nil, nil
	}
	return o.gen(i, o.rows), nil
}

func (o *genOp) close() {}

// intStrBatch is rows of (k INT64 = first+row, s STRING of width bytes,
// unique per k): keys as distinct as a request id.
func intStrBatch(first, rows, width int) *vec.Batch {
	k := &vec.Vector{Type: vec.Int64, Len: rows, Ints: make([]int64, rows)}
	s := &vec.Vector{Type: vec.String, Len: rows, Strs: make([]string, rows)}
	pad := strings.Repeat("x", max(width-12, 0))
	for i := range rows {
		k.Ints[i] = int64(first + i)
		s.Strs[i] = fmt.Sprintf("%012d%s", first+i, pad)
	}
	return &vec.Batch{Len: rows, Cols: []*vec.Vector{k, s}}
}

var intStrCols = []Column{{ID: 1, Name: "k", T: ColType{V: vec.Int64}}, {ID: 2, Name: "s", T: ColType{V: vec.String}}}

func colRef(c Column) *ColRef { return &ColRef{ID: c.ID, Name: c.Name, T: c.T} }

// liveHeap is the heap in use after a full collection.
func liveHeap() int64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return int64(ms.HeapAlloc)
}

func TestMemoryLimitErrors(t *testing.T) {
	q := &queryMemory{limit: 8 << 20, setting: "--query-memory"}
	if err := q.reserve(6 << 20); err != nil {
		t.Fatal(err)
	}
	err := q.reserve(3 << 20)
	var me *MemoryLimitError
	if !errors.As(err, &me) || me.Shared || !errors.Is(err, ErrMemoryLimit) {
		t.Fatalf("got %v", err)
	}
	want := "Resources exceeded during query execution: the query needs more memory than the limit of one query (8MiB, set by --query-memory); reduce the time range or add filters"
	if err.Error() != want {
		t.Fatalf("message\n got %s\nwant %s", err, want)
	}
	if q.used.Load() != 6<<20 {
		t.Fatalf("a refused reservation stays charged: %d", q.used.Load())
	}
	pool := NewMemoryPool(12<<20, "--query-memory-total")
	a := &queryMemory{limit: 10 << 20, pool: pool}
	b := &queryMemory{limit: 10 << 20, pool: pool}
	if err := a.reserve(7 << 20); err != nil {
		t.Fatal(err)
	}
	// b fits its own limit, not beside a.
	err = b.reserve(7 << 20)
	if !errors.As(err, &me) || !me.Shared || me.Limit != 12<<20 {
		t.Fatalf("got %v", err)
	}
	if !strings.Contains(err.Error(), "the limit of all queries (12MiB, set by --query-memory-total)") {
		t.Fatalf("message %s", err)
	}
	a.returnAll()
	if pool.Used() != 0 {
		t.Fatalf("pool holds %d after the query ended", pool.Used())
	}
	if err := b.reserve(7 << 20); err != nil {
		t.Fatalf("b alone: %v", err)
	}
	// Releasing gives surplus back to the pool.
	b.release(7 << 20)
	if pool.Used() > poolStep {
		t.Fatalf("pool holds %d after b released everything", pool.Used())
	}
	b.returnAll()
	if pool.Used() != 0 || pool.Peak() < 7<<20 {
		t.Fatalf("pool used %d peak %d", pool.Used(), pool.Peak())
	}
}

func TestFormatBytes(t *testing.T) {
	for n, want := range map[int64]string{64 << 20: "64MiB", 1 << 30: "1GiB", 1536 << 10: "1536KiB", 1000: "1000B", 3 << 30: "3GiB"} {
		if got := FormatBytes(n); got != want {
			t.Errorf("FormatBytes(%d) = %s, want %s", n, got, want)
		}
	}
}

// A cancelled query stops every operator before it pulls another batch:
// the input generator cancels the context while handing out batch k, and
// the operator must return the context's error without asking for more.
func TestOperatorsStopOnCancel(t *testing.T) {
	const k = 3
	mk := map[string]func(q *queryRun, in operator) (operator, error){
		"sort": func(q *queryRun, in operator) (operator, error) {
			keys, err := compileKeys([]SortKey{{E: colRef(intStrCols[1]), Desc: true}}, layoutOf(intStrCols))
			return &sortOp{q: q, in: in, keys: keys, limit: -1}, err
		},
		"topK": func(q *queryRun, in operator) (operator, error) {
			keys, err := compileKeys([]SortKey{{E: colRef(intStrCols[1])}}, layoutOf(intStrCols))
			return &sortOp{q: q, in: in, keys: keys, limit: 10}, err
		},
		"aggregate": func(q *queryRun, in operator) (operator, error) {
			return newAggOp(q, &AggregateNode{In: &emptyNode{cols: intStrCols}, Keys: []Expr{colRef(intStrCols[1])},
				Aggs: []*AggCall{{Name: "count", Star: true, Limit: -1, T: ColType{V: vec.Int64}}}}, in)
		},
		"distinct": func(q *queryRun, in operator) (operator, error) {
			return newDistinctOp(q, &DistinctNode{In: &emptyNode{cols: intStrCols}}, in), nil
		},
		"window": func(q *queryRun, in operator) (operator, error) {
			f := &WindowFunc{Name: "row_number", T: ColType{V: vec.Int64}, Order: []SortKey{{E: colRef(intStrCols[1])}},
				Out: Column{ID: 10, Name: "r", T: ColType{V: vec.Int64}}}
			return newWindowOp(q, &WindowNode{In: &emptyNode{cols: intStrCols}, Funcs: []*WindowFunc{f}}, in)
		},
		"crossJoinLeft": func(q *queryRun, in operator) (operator, error) {
			right := &genOp{n: 1, rows: 10, gen: func(i, rows int) *vec.Batch { return intStrBatch(0, rows, 20) }}
			return newJoinOp(q, crossJoinNode(), in, right)
		},
		"crossJoinRight": func(q *queryRun, in operator) (operator, error) {
			left := &genOp{n: 1, rows: 10, gen: func(i, rows int) *vec.Batch { return intStrBatch(0, rows, 20) }}
			return newJoinOp(q, crossJoinNode(), left, in)
		},
		"unnest": func(q *queryRun, in operator) (operator, error) {
			return &stageOp{in: in, fn: unnestStage(unnestNodeOf(), generateArray(50), 2, q.account())}, nil
		},
	}
	for name, build := range mk {
		t.Run(name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			in := &genOp{n: 100, rows: 1000, gen: func(i, rows int) *vec.Batch { return intStrBatch(i*rows, rows, 40) }}
			in.onBatch = func(i int) {
				if i == k {
					cancel()
				}
			}
			q := testRun(1 << 30)
			op, err := build(q, in)
			if err != nil {
				t.Fatal(err)
			}
			defer op.close()
			ec := q.newEvalCtx(ctx)
			for {
				b, err := op.next(ec)
				if err != nil {
					if !errors.Is(err, context.Canceled) {
						t.Fatalf("got %v, want the context's error", err)
					}
					break
				}
				if b == nil {
					t.Fatal("the operator finished although its query was cancelled")
				}
			}
			if in.calls != k+1 {
				t.Fatalf("the operator asked for %d batches, %d after the cancellation", in.calls, in.calls-k-1)
			}
		})
	}
}

// A long operator stops at the next batch it produces when the query is
// cancelled in the middle of its output (a cross join of one left batch
// with 1000 right rows makes a million rows out of a thousand; a sort and
// a window emit what they buffered), and a sort or window cancelled after
// its input ends stops before it sorts.
func TestOperatorsStopMidOutput(t *testing.T) {
	cases := map[string]func(q *queryRun, in operator) (operator, error){
		"crossJoin": func(q *queryRun, in operator) (operator, error) {
			right := &genOp{n: 1, rows: 1000, gen: func(i, rows int) *vec.Batch { return intStrBatch(0, rows, 20) }}
			return newJoinOp(q, crossJoinNode(), in, right)
		},
		"sort": func(q *queryRun, in operator) (operator, error) {
			keys, err := compileKeys([]SortKey{{E: colRef(intStrCols[0]), Desc: true}}, layoutOf(intStrCols))
			return &sortOp{q: q, in: in, keys: keys, limit: -1}, err
		},
		"window": func(q *queryRun, in operator) (operator, error) {
			f := &WindowFunc{Name: "row_number", T: ColType{V: vec.Int64}, Order: []SortKey{{E: colRef(intStrCols[0])}},
				Out: Column{ID: 10, Name: "r", T: ColType{V: vec.Int64}}}
			return newWindowOp(q, &WindowNode{In: &emptyNode{cols: intStrCols}, Funcs: []*WindowFunc{f}}, in)
		},
		"unnest": func(q *queryRun, in operator) (operator, error) {
			return &stageOp{in: in, fn: unnestStage(unnestNodeOf(), generateArray(1000), 2, q.account())}, nil
		},
	}
	for name, build := range cases {
		for _, when := range []string{"output", "endOfInput"} {
			if when == "endOfInput" && (name == "crossJoin" || name == "unnest") {
				continue
			}
			t.Run(name+"/"+when, func(t *testing.T) {
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				in := &genOp{n: 4, rows: 2000, gen: func(i, rows int) *vec.Batch { return intStrBatch(i*rows, rows, 20) }}
				if when == "endOfInput" {
					in.onBatch = func(i int) {
						if i == in.n {
							cancel()
						}
					}
				}
				q := testRun(1 << 30)
				op, err := build(q, in)
				if err != nil {
					t.Fatal(err)
				}
				defer op.close()
				ec := q.newEvalCtx(ctx)
				if when == "output" {
					b, err := op.next(ec)
					if err != nil || b == nil {
						t.Fatalf("first batch: %v %v", b, err)
					}
					cancel()
				}
				if _, err := op.next(ec); !errors.Is(err, context.Canceled) {
					t.Fatalf("got %v, want the context's error", err)
				}
			})
		}
	}
}

func crossJoinNode() *JoinNode {
	l := &emptyNode{cols: intStrCols}
	r := &emptyNode{cols: []Column{{ID: 3, Name: "k2", T: ColType{V: vec.Int64}}, {ID: 4, Name: "s2", T: ColType{V: vec.String}}}}
	return &JoinNode{Kind: JoinCross, Left: l, Right: r}
}

// unnestNodeOf is UNNEST over intStrCols' rows (the array comes from the
// evaluator the test gives).
func unnestNodeOf() *UnnestNode {
	return &UnnestNode{Elem: Column{ID: 5, Name: "x", T: ColType{V: vec.Int64}}, elemChild: -1}
}

// generateArray is an evaluator giving every row the array 1..n.
func generateArray(n int) evaluator {
	return func(_ *evalCtx, b *vec.Batch, _ []int32) (*vec.Vector, error) {
		elem := &vec.Vector{Type: vec.Int64, Len: n, Ints: make([]int64, n)}
		for i := range elem.Ints {
			elem.Ints[i] = int64(i + 1)
		}
		return &vec.Vector{Type: vec.List, Len: b.Len, Const: true, Offsets: []int32{0, int32(n)}, Elem: elem}, nil
	}
}

// A join's output streams: asking a cross join of 2000 x 2000 rows for its
// first batch holds one chunk of joined rows, not the four million the
// left batch makes.
func TestCrossJoinStreams(t *testing.T) {
	q := testRun(1 << 30)
	left := &genOp{n: 1, rows: 2000, gen: func(i, rows int) *vec.Batch { return intStrBatch(0, rows, 20) }}
	right := &genOp{n: 1, rows: 2000, gen: func(i, rows int) *vec.Batch { return intStrBatch(0, rows, 20) }}
	op, err := newJoinOp(q, crossJoinNode(), left, right)
	if err != nil {
		t.Fatal(err)
	}
	defer op.close()
	ec := q.newEvalCtx(context.Background())
	base := liveHeap()
	b, err := op.next(ec)
	if err != nil {
		t.Fatal(err)
	}
	held := liveHeap() - base
	runtime.KeepAlive(b)
	if b.Rows() > joinChunk {
		t.Fatalf("a batch of %d rows", b.Rows())
	}
	// Both inputs (2000 rows of ~44 bytes each) and one chunk of output
	// (8192 rows of ~44 bytes) are well under 2 MiB; four million joined
	// rows would be hundreds.
	if held > 2<<20 {
		t.Fatalf("the join holds %d bytes after its first batch", held)
	}
	n := b.Rows()
	for {
		b, err := op.next(ec)
		if err != nil {
			t.Fatal(err)
		}
		if b == nil {
			break
		}
		n += b.Rows()
	}
	if n != 2000*2000 {
		t.Fatalf("%d rows, want %d", n, 2000*2000)
	}
}

// What operators charge is what they hold: after each has taken in its
// input, the live heap it added is within a third of its charge. (The
// input is generated as a scan would, so the batches an operator keeps
// are new memory.) After close, nothing stays charged.
func TestChargesTrackHeap(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	const batches, rows = 16, 4096
	strs := func(width int) *genOp {
		return &genOp{n: batches, rows: rows, gen: func(i, rows int) *vec.Batch { return intStrBatch(i*rows, rows, width) }}
	}
	sortKeys := func(c Column) []compiledKey {
		k, err := compileKeys([]SortKey{{E: colRef(c)}}, layoutOf(intStrCols))
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	type tracked struct {
		op     operator
		fill   func(ec *evalCtx) error
		charge func() int64
	}
	cases := map[string]func(q *queryRun) tracked{
		"groupByString": func(q *queryRun) tracked {
			o, _ := newAggOp(q, &AggregateNode{In: &emptyNode{cols: intStrCols}, Keys: []Expr{colRef(intStrCols[1])},
				Aggs: []*AggCall{{Name: "count", Star: true, Limit: -1, T: ColType{V: vec.Int64}}}}, strs(60))
			a := o.(*aggOp)
			return tracked{a, a.consume, func() int64 { return a.mem.n }}
		},
		"groupByTwoKeys": func(q *queryRun) tracked {
			o, _ := newAggOp(q, &AggregateNode{In: &emptyNode{cols: intStrCols}, Keys: []Expr{colRef(intStrCols[0]), colRef(intStrCols[1])},
				Aggs: []*AggCall{{Name: "count", Star: true, Limit: -1, T: ColType{V: vec.Int64}},
					{Name: "max", Args: []Expr{colRef(intStrCols[1])}, Limit: -1, T: ColType{V: vec.String}}}}, strs(120))
			a := o.(*aggOp)
			return tracked{a, a.consume, func() int64 { return a.mem.n }}
		},
		"groupByInt": func(q *queryRun) tracked {
			o, _ := newAggOp(q, &AggregateNode{In: &emptyNode{cols: intStrCols}, Keys: []Expr{colRef(intStrCols[0])},
				Aggs: []*AggCall{{Name: "sum", Args: []Expr{colRef(intStrCols[0])}, Limit: -1, T: ColType{V: vec.Int64}}}}, strs(20))
			a := o.(*aggOp)
			return tracked{a, a.consume, func() int64 { return a.mem.n }}
		},
		"sort": func(q *queryRun) tracked {
			o := &sortOp{q: q, in: strs(100), keys: sortKeys(intStrCols[1]), limit: -1}
			return tracked{o, o.fill, func() int64 { return o.mem.n }}
		},
		"distinct": func(q *queryRun) tracked {
			o := newDistinctOp(q, &DistinctNode{In: &emptyNode{cols: intStrCols}}, strs(100)).(*distinctOp)
			return tracked{o, func(ec *evalCtx) error {
				for {
					b, err := o.next(ec)
					if b == nil || err != nil {
						return err
					}
				}
			}, func() int64 { return o.mem.n }}
		},
		"hashJoinBuild": func(q *queryRun) tracked {
			n := crossJoinNode()
			n.Kind = JoinInner
			n.Cond = &Call{Name: "=", Args: []Expr{colRef(intStrCols[1]), &ColRef{ID: 4, Name: "s2", T: ColType{V: vec.String}}}, T: ColType{V: vec.Bool}}
			o := &joinOp{q: q, n: n, left: &genOp{}, right: strs(60), rwidth: 2, mpos: mposStart}
			o.rkeys = []evaluator{func(_ *evalCtx, b *vec.Batch, _ []int32) (*vec.Vector, error) { return b.Cols[1], nil }}
			o.ktypes = []vec.Type{vec.String}
			return tracked{o, o.build, func() int64 { return o.mem.n }}
		},
		"window": func(q *queryRun) tracked {
			f := &WindowFunc{Name: "row_number", T: ColType{V: vec.Int64}, Order: []SortKey{{E: colRef(intStrCols[0]), Desc: true}},
				Out: Column{ID: 10, Name: "r", T: ColType{V: vec.Int64}}}
			o, _ := newWindowOp(q, &WindowNode{In: &emptyNode{cols: intStrCols}, Funcs: []*WindowFunc{f}}, strs(100))
			return tracked{o, o.fill, func() int64 { return o.mem.n }}
		},
	}
	for name, mk := range cases {
		t.Run(name, func(t *testing.T) {
			q := testRun(1 << 40)
			tr := mk(q)
			ec := q.newEvalCtx(context.Background())
			base := liveHeap()
			if err := tr.fill(ec); err != nil {
				t.Fatal(err)
			}
			live := liveHeap() - base
			charged := tr.charge()
			runtime.KeepAlive(tr.op)
			ratio := float64(charged) / float64(live)
			t.Logf("live %d charged %d (%.2f)", live, charged, ratio)
			if ratio < 0.75 || ratio > 1.33 {
				t.Fatalf("charged %d bytes for %d live (%.2f)", charged, live, ratio)
			}
			tr.op.close()
			if u := q.mem.used.Load(); u != 0 {
				t.Fatalf("%d bytes still charged after close", u)
			}
		})
	}
}
