package index

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sediment/sediment/internal/vec"
)

// edgeMessages returns n request-log messages of a few shapes, with
// repeated and varying tokens at the same places, opaque ids, long tokens
// and empty messages, as a source's event_message column holds them.
func edgeMessages(n int, seed uint64) []string {
	rng := rand.New(rand.NewPCG(seed, 7))
	methods := []string{"GET", "POST", "PATCH", "DELETE"}
	paths := []string{"rest/v1/users", "rest/v1/orders", "auth/v1/token", "storage/v1/object/public/avatars"}
	out := make([]string, n)
	for i := range out {
		switch rng.IntN(10) {
		case 0:
			out[i] = ""
		case 1:
			out[i] = fmt.Sprintf("error: %s %s timed out after %dms", methods[rng.IntN(4)], paths[rng.IntN(4)], rng.IntN(5000))
		case 2:
			// A long token, and a long hex one.
			out[i] = fmt.Sprintf("token %s%d key %016x%016x", strings.Repeat("k", MaxTokenLen), rng.IntN(50), rng.Uint64(), rng.Uint64())
		default:
			out[i] = fmt.Sprintf("%s | %d | 203.0.113.%d | %016x | https://p%d.supabase.co/%s?select=*&limit=%d | Mozilla/5.0",
				methods[rng.IntN(4)], []int{200, 200, 201, 404, 500}[rng.IntN(5)], rng.IntN(256), rng.Uint64(), rng.IntN(50), paths[rng.IntN(4)], rng.IntN(100))
		}
	}
	return out
}

// TestAddTextSameIndexRowByRow: the token index of a vector of messages is
// the same, byte for byte, as the one built from each message alone (with
// no previous row to share tokens with), in time order and in an order
// where equal messages are next to each other.
func TestAddTextSameIndexRowByRow(t *testing.T) {
	msgs := edgeMessages(20000, 1)
	sorted := append([]string(nil), msgs...)
	slices.SortStableFunc(sorted, strings.Compare)
	for name, m := range map[string][]string{"arrival": msgs, "sorted": sorted} {
		opts := &BuilderOptions{RowsHint: uint32(len(m))}
		whole := NewBuilder(opts)
		whole.AddText("event_message", 0, strVec(m, 13))
		single := NewBuilder(opts)
		v := strVec(m, 13)
		for i := range m {
			one := &vec.Vector{Type: vec.String, Len: 1, Strs: m[i : i+1]}
			if v.IsNull(i) {
				one.Nulls = vec.NewBitset(1)
				one.Nulls.Set(0)
			}
			single.AddText("event_message", uint32(i), one)
		}
		a, b := &memUnits{}, &memUnits{}
		da, err := whole.Write(a)
		if err != nil {
			t.Fatal(err)
		}
		db, err := single.Write(b)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(da, db) || !bytes.Equal(a.data, b.data) {
			t.Fatalf("%s: index differs (%d/%d directory bytes, %d/%d unit bytes)", name, len(da), len(db), len(a.data), len(b.data))
		}
	}
}

// BenchmarkAddText indexes the tokens of 65,536 request-log messages (one
// block of a flush). One op is one message.
//
//	go test ./index -run '^$' -bench AddText -count 6 | tee new.txt
func BenchmarkAddText(b *testing.B) {
	msgs := edgeMessages(65536, 2)
	v := strVec(msgs, 0)
	var raw int
	for _, m := range msgs {
		raw += len(m)
	}
	b.SetBytes(int64(raw / len(msgs)))
	b.ReportAllocs()
	b.ResetTimer()
	cpu := processCPU()
	for done := 0; done < b.N; done += len(msgs) {
		bl := NewBuilder(&BuilderOptions{RowsHint: uint32(len(msgs))})
		bl.AddText("event_message", 0, v)
	}
	// CPU time, unlike the wall clock, does not count waiting for a core
	// on a shared machine.
	b.ReportMetric(float64(processCPU()-cpu)/float64(b.N), "cpu-ns/op")
}

// processCPU returns the CPU time the process has used (user and system).
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// TestPostingsRows: a term's rows come out as added, each once, whether
// it has one row (kept without a slice), a few, or enough to spill into
// its bitmap, with repeats of the last row ignored.
func TestPostingsRows(t *testing.T) {
	defer func(n int) { postingSpill = n }(postingSpill)
	postingSpill = 4 // bytes: a row or two
	for n := 0; n <= 40; n++ {
		step := uint32(3)
		if n > 20 { // rows far apart: several bytes each
			step = 70001
		}
		var p postings
		var want []uint32
		for r := uint32(0); r < uint32(n%21); r++ {
			p.add(step * r)
			p.add(step * r) // the same row again
			want = append(want, step*r)
		}
		out := p.out(termKey{str: "t"})
		got := out.rows
		if out.bm != nil {
			got = out.bm.ToArray()
		}
		if out.list.n > 0 {
			got = out.list.appendSorted(nil)
		}
		if out.card == 1 && got == nil {
			got = []uint32{out.one}
		}
		if out.card != uint64(len(want)) || !slices.Equal(got, want) {
			t.Fatalf("%d rows: got %v (count %d), want %v", n, got, out.card, want)
		}
	}
}

// BenchmarkAddStrings indexes a value field of 1,048,576 rows (16 blocks of
// a merge) of ten terms, and writes the index.
// One op is one row.
//
//	go test ./index -run '^$' -bench AddStrings -count 6 | tee new.txt
func BenchmarkAddStrings(b *testing.B) {
	statuses := []string{"200", "201", "204", "301", "304", "400", "401", "404", "500", "503"}
	const block, rows = 65536, 1 << 20
	vecs := make([]*vec.Vector, rows/block)
	for i := range vecs {
		vals := make([]string, block)
		for j := range vals {
			vals[j] = statuses[min((i*block+j)*7919%16, len(statuses)-1)]
		}
		vecs[i] = dictVec(vals)
	}
	b.ReportAllocs()
	b.ResetTimer()
	cpu := processCPU()
	for done := 0; done < b.N; done += rows {
		bl := NewBuilder(&BuilderOptions{RowsHint: rows})
		for i, v := range vecs {
			bl.AddStrings("status", uint32(i*block), v)
		}
		if _, err := bl.Write(&memUnits{}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(processCPU()-cpu)/float64(b.N), "cpu-ns/op")
}

// BenchmarkWriteText indexes the tokens of 65,536 request-log messages
// (one block of a flush) and writes the index: the allocations of Write
// (terms, their keys, serialised bitmaps) beside those of AddText. One op
// is one message.
//
//	go test ./index -run '^$' -bench WriteText -count 6 | tee new.txt
func BenchmarkWriteText(b *testing.B) {
	msgs := edgeMessages(65536, 2)
	v := strVec(msgs, 0)
	b.ReportAllocs()
	b.ResetTimer()
	cpu := processCPU()
	for done := 0; done < b.N; done += len(msgs) {
		bl := NewBuilder(&BuilderOptions{RowsHint: uint32(len(msgs))})
		bl.AddText("event_message", 0, v)
		if _, err := bl.Write(&memUnits{}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(processCPU()-cpu)/float64(b.N), "cpu-ns/op")
}
