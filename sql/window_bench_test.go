package sql

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/sediment/sediment/internal/vec"
)

// windowBenchInput is rows of (project STRING dictionary-coded, 8 values;
// timestamp, mostly increasing; value INT64) in 4096-row batches, as a
// scan of request logs delivers them.
func windowBenchInput(rows int) ([]*vec.Batch, []Column) {
	r := rand.New(rand.NewPCG(42, 1))
	dict := []string{"default", "other", "staging", "prod-eu", "prod-us", "dev", "test", "edge"}
	cols := []Column{
		{ID: 1, Name: "project", T: ColType{V: vec.String}},
		{ID: 2, Name: "timestamp", T: ColType{V: vec.Timestamp}},
		{ID: 3, Name: "value", T: ColType{V: vec.Int64}},
	}
	var out []*vec.Batch
	ts := int64(1752148800000000)
	for done := 0; done < rows; {
		n := min(4096, rows-done)
		p := &vec.Vector{Type: vec.String, Len: n, Dict: dict, Codes: make([]uint32, n)}
		t := &vec.Vector{Type: vec.Timestamp, Len: n, Ints: make([]int64, n)}
		v := &vec.Vector{Type: vec.Int64, Len: n, Ints: make([]int64, n)}
		for i := 0; i < n; i++ {
			p.Codes[i] = uint32(r.IntN(len(dict)))
			ts += r.Int64N(2000) - 200 // mostly increasing, some out of order
			t.Ints[i] = ts
			v.Ints[i] = r.Int64N(1000)
		}
		out = append(out, &vec.Batch{Len: n, Cols: []*vec.Vector{p, t, v}})
		done += n
	}
	return out, cols
}

func benchWindow(b *testing.B, rows int, f *WindowFunc) {
	batches, cols := windowBenchInput(rows)
	part := &ColRef{ID: 1, Name: "project", T: cols[0].T}
	ts := &ColRef{ID: 2, Name: "timestamp", T: cols[1].T}
	f.Partition = []Expr{part}
	f.Order = []SortKey{{E: ts, Desc: f.Name == "row_number", NullsLast: f.Name == "row_number"}}
	f.Out = Column{ID: 10, Name: f.Name, T: f.T}
	node := &WindowNode{In: &emptyNode{cols: cols}, Funcs: []*WindowFunc{f}}
	b.SetBytes(int64(rows) * 8 * 3)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		q := testRun(1 << 40)
		op, err := newWindowOp(q, node, &batchesOp{bs: batches})
		if err != nil {
			b.Fatal(err)
		}
		ec := q.newEvalCtx(context.Background())
		got := 0
		for {
			out, err := op.next(ec)
			if err != nil {
				b.Fatal(err)
			}
			if out == nil {
				break
			}
			got += out.Len
		}
		if got != rows {
			b.Fatalf("got %d rows", got)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(rows), "ns/row")
}

// BenchmarkWindowRowNumber is ROW_NUMBER() OVER (PARTITION BY project ORDER
// BY timestamp DESC): the "newest N per project" shape.
//
//	go test ./sql -run '^$' -bench BenchmarkWindow -count 6 | tee window.txt
func BenchmarkWindowRowNumber(b *testing.B) {
	for _, rows := range []int{100_000, 1_000_000} {
		b.Run(fmt.Sprintf("rows=%d", rows), func(b *testing.B) {
			benchWindow(b, rows, &WindowFunc{Name: "row_number", T: ColType{V: vec.Int64}})
		})
	}
}

// BenchmarkWindowRunningSum is SUM(value) OVER (PARTITION BY project ORDER
// BY timestamp ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW), and the
// same over a sliding 1000-row frame (each row enters and leaves once).
func BenchmarkWindowRunningSum(b *testing.B) {
	arg := &ColRef{ID: 3, Name: "value", T: ColType{V: vec.Int64}}
	for _, frame := range []struct {
		name  string
		start frameBound
	}{
		{"running", frameBound{Kind: boundUnboundedPreceding}},
		{"sliding1000", frameBound{Kind: boundPreceding, N: 1000}},
	} {
		b.Run(fmt.Sprintf("frame=%s/rows=%d", frame.name, 1_000_000), func(b *testing.B) {
			agg := &AggCall{Name: "sum", Args: []Expr{arg}, T: ColType{V: vec.Int64}}
			benchWindow(b, 1_000_000, &WindowFunc{Name: "sum", Args: agg.Args, Agg: agg, T: agg.T,
				Frame: WindowFrame{Unit: frameRows, Start: frame.start, End: frameBound{Kind: boundCurrentRow}}})
		})
	}
}

// BenchmarkWindowSlidingMax is MAX(value) over a sliding 1000-row frame: a
// monotonic deque, O(1) per row whatever the frame size.
func BenchmarkWindowSlidingMax(b *testing.B) {
	arg := &ColRef{ID: 3, Name: "value", T: ColType{V: vec.Int64}}
	agg := &AggCall{Name: "max", Args: []Expr{arg}, T: ColType{V: vec.Int64}}
	benchWindow(b, 1_000_000, &WindowFunc{Name: "max", Args: agg.Args, Agg: agg, T: agg.T,
		Frame: WindowFrame{Unit: frameRows, Start: frameBound{Kind: boundPreceding, N: 1000}, End: frameBound{Kind: boundCurrentRow}}})
}
