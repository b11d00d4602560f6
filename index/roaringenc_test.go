package index

import (
	"bytes"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"

	"github.com/RoaringBitmap/roaring/v2"
)

// roaringTestSets are row sets that reach every container kind and the
// boundaries between them: single rows, arrays at and past 4096 rows,
// runs beating arrays and bitsets, bitsets, keys far apart, four or more
// containers (offsets written with runs) and fewer.
func roaringTestSets() [][]uint32 {
	rng := rand.New(rand.NewPCG(14, 2))
	var sets [][]uint32
	add := func(rows []uint32) {
		slices.Sort(rows)
		sets = append(sets, slices.Compact(rows))
	}
	add([]uint32{0})
	add([]uint32{65535, 65536})
	add([]uint32{1<<32 - 2})
	add([]uint32{7, 8, 9, 10, 11})
	for _, n := range []int{2, 3, 100, 4095, 4096, 4097, 5000, 30000, 65536} {
		var rows []uint32
		for i := range n {
			rows = append(rows, uint32(i)) // one run
		}
		add(rows)
		rows = nil
		for i := range n {
			rows = append(rows, uint32(2*i)) // no runs
		}
		add(rows)
		rows = nil
		for range n {
			rows = append(rows, rng.Uint32N(200000))
		}
		add(rows)
	}
	// Runs of every length around the run/array and run/bitset breaks.
	for _, runLen := range []int{1, 2, 3, 4, 8, 16} {
		for _, nruns := range []int{1, 3, 500, 2000, 2055, 2056, 3000} {
			var rows []uint32
			at := uint32(rng.IntN(5))
			for range nruns {
				for k := range runLen {
					rows = append(rows, at+uint32(k))
				}
				at += uint32(runLen) + 1 + uint32(rng.IntN(3))
			}
			add(rows)
		}
	}
	// Many containers, with and without runs.
	for _, k := range []int{2, 3, 4, 5, 20} {
		var rows []uint32
		for c := range k {
			base := uint32(c) * 3 << 16
			for i := range 50 {
				rows = append(rows, base+uint32(i)*uint32(1+c%2))
			}
		}
		add(rows)
	}
	for range 50 {
		var rows []uint32
		n := rng.IntN(20000) + 1
		span := uint32(rng.IntN(1<<22) + 1)
		for range n {
			rows = append(rows, rng.Uint32N(span))
		}
		add(rows)
	}
	return sets
}

// roaringBytes is what the writers stored before appendRoaring: the
// bitmap of rows, run-optimized, in roaring's portable serialization.
func roaringBytes(t testing.TB, rows []uint32) []byte {
	bm := roaring.BitmapOf(rows...)
	bm.RunOptimize()
	var buf bytes.Buffer
	if _, err := bm.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestAppendRoaringEqualsRoaring checks that appendRoaring writes the
// bytes roaring writes for the same rows, so that indexes written either
// way are the same.
func TestAppendRoaringEqualsRoaring(t *testing.T) {
	var e roaringEncoder
	for i, rows := range roaringTestSets() {
		want := roaringBytes(t, rows)
		got := e.appendRows([]byte("prefix"), rows)
		if !bytes.Equal(got[6:], want) {
			t.Fatalf("set %d (%d rows, %d..%d): appendRoaring wrote %d bytes, roaring %d", i, len(rows), rows[0], rows[len(rows)-1], len(got)-6, len(want))
		}
	}
}

// TestAppendRoaringRowsDecodes reads back what roaring writes, with the
// bound and the added offset.
func TestAppendRoaringRowsDecodes(t *testing.T) {
	for i, rows := range roaringTestSets() {
		b := roaringBytes(t, rows)
		got, err := appendRoaringRows([]uint32{42}, b, 3, rows[len(rows)-1]+1)
		if err != nil {
			t.Fatalf("set %d: %v", i, err)
		}
		want := []uint32{42}
		for _, r := range rows {
			want = append(want, r+3)
		}
		if !slices.Equal(got, want) {
			t.Fatalf("set %d: decoded %d rows, want %d", i, len(got)-1, len(rows))
		}
		if _, err := appendRoaringRows(nil, b, 0, rows[len(rows)-1]); err == nil {
			t.Fatalf("set %d: a row at the bound was accepted", i)
		}
		for _, n := range []int{0, 3, 7, len(b) / 2, len(b) - 1} {
			if n >= len(b) {
				continue
			}
			// Every byte is read: a cut anywhere leaves a part missing.
			if _, err := appendRoaringRows(nil, b[:n], 0, 1<<32-1); err == nil {
				t.Fatalf("set %d: %d of %d bytes decoded", i, n, len(b))
			}
		}
	}
}

// TestAppendRoaringRandomSets: appendRoaring writes the bytes of a bitmap
// built row by row and serialized after RunOptimize (as posting units held
// them before), whatever the rows' density and runs, its memory reused
// from set to set.
func TestAppendRoaringRandomSets(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 14))
	var enc roaringEncoder
	var buf []byte
	serialize := func(bm *roaring.Bitmap) []byte {
		bm.RunOptimize()
		var buf bytes.Buffer
		if _, err := bm.WriteTo(&buf); err != nil {
			t.Fatal(err)
		}
		return buf.Bytes()
	}
	for i := range 120 {
		span := 1 + rng.IntN(1<<20)
		var rows []uint32
		switch i % 4 {
		case 0: // a share of rows at random
			p := rng.Float64() * rng.Float64()
			for r := range span {
				if rng.Float64() < p {
					rows = append(rows, uint32(r))
				}
			}
		case 1: // runs
			for r := 0; r < span; r += 1 + rng.IntN(5000) {
				for k := range rng.IntN(3000) {
					rows = append(rows, uint32(r+k))
				}
				r += 3000
			}
		case 2: // just over and under an array container's 4096
			base := uint32(rng.IntN(8)) << 16
			for k := range 4090 + rng.IntN(12) {
				rows = append(rows, base+uint32(k*15))
			}
		case 3: // a few
			for range rng.IntN(5) {
				rows = append(rows, uint32(rng.IntN(span)))
			}
		}
		slices.Sort(rows)
		rows = slices.Compact(rows)
		want := roaring.New()
		want.AddMany(rows)
		if len(rows) == 0 {
			continue
		}
		buf = enc.appendRows(buf[:0], rows)
		if !bytes.Equal(buf, serialize(want)) {
			t.Fatalf("case %d (%d rows over %d): bytes differ", i, len(rows), span)
		}
	}
}

// FuzzRoaringRows decodes arbitrary bytes: no panic, no rows past the
// bound, rows ascending, and where roaring reads the same bytes as a
// well-formed bitmap, the same rows.
func FuzzRoaringRows(f *testing.F) {
	for i, rows := range roaringTestSets() {
		if i%4 == 0 {
			f.Add(roaringBytes(f, rows), uint32(1<<20))
		}
	}
	f.Add([]byte{0x3b, 0x30, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0}, uint32(10))
	f.Fuzz(func(t *testing.T, b []byte, below uint32) {
		rows, err := appendRoaringRows(nil, b, 0, below)
		if err != nil {
			return
		}
		for i, r := range rows {
			if r >= below || i > 0 && r <= rows[i-1] {
				t.Fatalf("row %d = %d: not ascending below %d", i, r, below)
			}
		}
		bm, err := decodeBitmap(b)
		if err != nil || bm.Validate() != nil {
			return
		}
		if want := bm.ToArray(); len(rows) > 0 && len(want) > 0 && len(b) == int(bm.GetSerializedSizeInBytes()) && !slices.Equal(rows, want) {
			t.Fatalf("decoded %d rows, roaring %d", len(rows), len(want))
		}
	})
}

// BenchmarkRoaringWrite writes the postings of a term of n rows spread
// over span rows, as roaring did (Bitmap, RunOptimize, WriteTo) and as
// appendRoaring does.
func BenchmarkRoaringWrite(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, c := range []struct{ n, span int }{{20, 35000}, {300, 35000}, {5000, 2 << 20}, {60000, 2 << 20}} {
		rows := make([]uint32, c.n)
		for i := range rows {
			rows[i] = rng.Uint32N(uint32(c.span))
		}
		slices.Sort(rows)
		rows = slices.Compact(rows)
		name := "rows=" + strconv.Itoa(c.n) + "/span=" + strconv.Itoa(c.span)
		b.Run(name+"/roaring", func(b *testing.B) {
			b.ReportAllocs()
			var buf []byte
			for b.Loop() {
				bm := roaring.New()
				bm.AddMany(rows)
				bm.RunOptimize()
				buf = buf[:0]
				bm.WriteTo(appendWriter{&buf})
			}
		})
		b.Run(name+"/append", func(b *testing.B) {
			b.ReportAllocs()
			var e roaringEncoder
			var buf []byte
			for b.Loop() {
				buf = e.appendRows(buf[:0], rows)
			}
		})
	}
}
