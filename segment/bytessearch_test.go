package segment

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/sediment/sediment/internal/predicate"
	"github.com/sediment/sediment/internal/vec"
	"github.com/sediment/sediment/internal/vfs"
)

// FuzzSplitBytesValues: the value area of an encBytes page splits back
// into the values written, and any bytes as an area of any count give an
// error or offsets within the bytes, never a panic.
func FuzzSplitBytesValues(f *testing.F) {
	f.Add("GET /auth/v1/token\nhttps://x.supabase.co/storage/v1/object/sign/documents/logo-24505.jpg\n\n-")
	f.Add("\x80\x80\x80\x01")
	f.Add("\x05ab")
	f.Fuzz(func(t *testing.T, in string) {
		vals := strings.Split(in, "\n")
		d := &ColumnData{Strs: vals}
		area := appendBytesValues(nil, d, 0, len(vals))
		data, offs, err := splitBytesValues(area, len(vals), nil)
		if err != nil {
			t.Fatalf("values %q: %v", vals, err)
		}
		for k, s := range vals {
			if got := string(data[offs[k]:offs[k+1]]); got != s {
				t.Fatalf("value %d: %q, want %q", k, got, s)
			}
		}
		raw := []byte(in)
		for _, n := range []int{0, 1, 3, len(raw)} {
			data, offs, err := splitBytesValues(raw, n, nil)
			if err != nil {
				continue
			}
			if len(offs) != n+1 {
				t.Fatalf("%d values: %d offsets", n, len(offs))
			}
			for k := 0; k < n; k++ {
				if offs[k] > offs[k+1] || int(offs[k+1]) > len(data) {
					t.Fatalf("value %d: offsets %d..%d of %d bytes", k, offs[k], offs[k+1], len(data))
				}
			}
		}
	})
}

// TestBytesColumnHolding: searching an encBytes column where its values
// lie gives the rows, and the rows without a value, that a read of the
// values then valuesHolding give, over ranges of pages with NULLs, pages
// without, and pages of NULLs alone.
func TestBytesColumnHolding(t *testing.T) {
	const n, blockRows = 3000, 1500
	rng := rand.New(rand.NewPCG(9, 9))
	tc := []testColumn{{desc: ColumnDesc{Path: "timestamp", Type: TypeTimestamp}}, {desc: ColumnDesc{Path: "path", Type: TypeString}}}
	for i := 0; i < n; i++ {
		tc[0].vals = append(tc[0].vals, int64(i))
		var v any = fmt.Sprintf("/storage/v1/object/logo-%d.jpg?t=%x", rng.IntN(100000), rng.Uint64())
		switch {
		case i >= 600 && i < 900: // pages of NULLs alone
			v = nil
		case i < blockRows && rng.IntN(5) == 0:
			v = nil
		}
		tc[1].vals = append(tc[1].vals, v)
	}
	fs := vfs.NewMemFS()
	fs.MkdirAll("/d")
	writeSegment(t, fs, "/d/s.seg", tc, blockRows, &WriterOptions{PageBytes: 4096})
	r := openSegment(t, fs, "/d/s.seg")
	defer r.Close()
	for b := 0; b < r.NumBlocks(); b++ {
		c := r.testChunk(b, 1)
		if c.enc != encBytes || c.pages.Len() < 4 {
			t.Fatalf("block %d: encoding %d, %d pages", b, c.enc, c.pages.Len())
		}
		for _, lits := range [][]string{{"logo-1"}, {"logo-12", "t=a"}, {"no such"}, {"/"}} {
			s := predicate.NewSearcher(lits)
			for k := 0; k < 6; k++ {
				from := rng.IntN(blockRows)
				to := from + rng.IntN(blockRows-from+1)
				if k == 0 {
					from, to = 0, blockRows
				}
				hits, nulls, err := r.bytesColumnHolding(b, 1, c, from, to, s, lits, cacheNoFill, new(bytesScratch))
				if err != nil {
					t.Fatal(err)
				}
				var v vec.Vector
				if err := r.readColumnInto(b, 1, from, to, &v, readCtl{mode: cacheNoFill}); err != nil {
					t.Fatal(err)
				}
				want := valuesHolding(&v, to-from, lits)
				if !slices.Equal(hits, want) {
					t.Fatalf("block %d rows [%d,%d) %q: hits differ from the values'", b, from, to, lits)
				}
				var wantNulls vec.Bitset
				if v.HasNulls() {
					wantNulls = v.Nulls
				}
				if !slices.Equal(nulls, wantNulls) {
					t.Fatalf("block %d rows [%d,%d): NULLs %v, the values' %v", b, from, to, nulls, wantNulls)
				}
			}
		}
	}
}
