package sql

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/sediment/sediment/internal/vec"
)

// BenchmarkGroupByString is `select path, count(*) ... group by path` over
// plain (not dictionary-coded) strings of about 45 bytes with a quarter as
// many distinct values as rows, the shape of "top paths" over request logs
// whose paths carry query strings.
//
//	go test ./sql -run '^$' -bench GroupByString -count 6 | tee agg.txt
func BenchmarkGroupByString(b *testing.B) {
	const rows = 1 << 20
	r := rand.New(rand.NewPCG(7, 7))
	distinct := make([]string, rows/4)
	for i := range distinct {
		distinct[i] = fmt.Sprintf("/rest/v1/table_%d?select=*&id=eq.%d&order=created_at", i%97, r.Int64())
	}
	cols := []Column{{ID: 1, Name: "path", T: ColType{V: vec.String}}}
	var batches []*vec.Batch
	for done := 0; done < rows; done += 4096 {
		v := &vec.Vector{Type: vec.String, Len: 4096, Strs: make([]string, 4096)}
		for i := range v.Strs {
			// Popular paths repeat more: a skewed pick.
			k := r.IntN(len(distinct))
			if r.IntN(2) == 0 {
				k %= 1000
			}
			v.Strs[i] = distinct[k]
		}
		batches = append(batches, &vec.Batch{Len: 4096, Cols: []*vec.Vector{v}})
	}
	key := &ColRef{ID: 1, Name: "path", T: cols[0].T}
	node := &AggregateNode{In: &emptyNode{cols: cols}, Keys: []Expr{key},
		Aggs: []*AggCall{{Name: "count", Star: true, Limit: -1}}}
	b.ReportAllocs()
	for b.Loop() {
		q := testRun(1 << 40)
		op, err := newAggOp(q, node, &batchesOp{bs: batches})
		if err != nil {
			b.Fatal(err)
		}
		ec := q.newEvalCtx(context.Background())
		out, err := op.next(ec)
		if err != nil {
			b.Fatal(err)
		}
		if out.Len < rows/8 {
			b.Fatalf("%d groups", out.Len)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/rows, "ns/row")
}

// BenchmarkGroupByInt is `select timestamp_trunc(timestamp, minute) m,
// count(*), countif(status >= 500) ... group by m` over time-sorted
// minute buckets (the chart every log page draws): integer keys that
// repeat in runs, two aggregates.
func BenchmarkGroupByInt(b *testing.B) {
	const rows = 1 << 20
	r := rand.New(rand.NewPCG(7, 8))
	cols := []Column{{ID: 1, Name: "m", T: ColType{V: vec.Timestamp}}, {ID: 2, Name: "err", T: ColType{V: vec.Bool}}}
	var batches []*vec.Batch
	ts := int64(1752148800000000)
	for done := 0; done < rows; done += 4096 {
		m := &vec.Vector{Type: vec.Timestamp, Len: 4096, Ints: make([]int64, 4096)}
		e := &vec.Vector{Type: vec.Bool, Len: 4096, Bools: make([]bool, 4096)}
		for i := range m.Ints {
			ts += r.Int64N(20_000)
			m.Ints[i] = ts / 60_000_000 * 60_000_000
			e.Bools[i] = r.IntN(10) == 0
		}
		batches = append(batches, &vec.Batch{Len: 4096, Cols: []*vec.Vector{m, e}})
	}
	key := &ColRef{ID: 1, Name: "m", T: cols[0].T}
	errCol := &ColRef{ID: 2, Name: "err", T: cols[1].T}
	node := &AggregateNode{In: &emptyNode{cols: cols}, Keys: []Expr{key},
		Aggs: []*AggCall{{Name: "count", Star: true, Limit: -1}, {Name: "countif", Args: []Expr{errCol}, Limit: -1}}}
	b.ReportAllocs()
	for b.Loop() {
		q := testRun(1 << 40)
		op, err := newAggOp(q, node, &batchesOp{bs: batches})
		if err != nil {
			b.Fatal(err)
		}
		ec := q.newEvalCtx(context.Background())
		if _, err := op.next(ec); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/rows, "ns/row")
}
