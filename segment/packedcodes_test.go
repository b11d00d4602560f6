package segment

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/sediment/sediment/internal/vec"
	"github.com/sediment/sediment/internal/vfs"
)

// packedColumns are columns whose dictionaries need 1, 8, 13 and 9 bits
// a code, with codes close to random (packed in version 4), one whose
// codes repeat (zstd keeps them), and NULLs in two of them.
func packedColumns(n int, seed uint64) []testColumn {
	rng := rand.New(rand.NewPCG(seed, 5))
	cols := []testColumn{
		{desc: ColumnDesc{Path: "timestamp", Type: TypeTimestamp}},
		{desc: ColumnDesc{Path: "two", Type: TypeString}},
		{desc: ColumnDesc{Path: "byte", Type: TypeString}},
		{desc: ColumnDesc{Path: "city", Type: TypeString}},
		{desc: ColumnDesc{Path: "num", Type: TypeInt64}},
		{desc: ColumnDesc{Path: "status", Type: TypeString}},
	}
	ts := int64(1_700_000_000_000_000)
	for i := 0; i < n; i++ {
		ts += int64(rng.IntN(1000))
		row := []any{ts,
			[]string{"yes", "no"}[rng.IntN(2)],
			fmt.Sprintf("b%03d", rng.IntN(256)),
			fmt.Sprintf("city-%05d", rng.IntN(3000)),
			int64(rng.IntN(400)) * 7919,
			"200",
		}
		if i%31 == 0 {
			row[5] = fmt.Sprint(400 + rng.IntN(16))
		}
		if rng.IntN(8) == 0 {
			row[2] = nil
		}
		if i%1000 < 300 {
			row[3] = nil
		}
		for c := range cols {
			cols[c].vals = append(cols[c].vals, row[c])
		}
	}
	return cols
}

// packedPages counts the data pages of column col (in every block) and
// those of them stored as packed codes.
func packedPages(t *testing.T, r *Reader, col int) (pages, packed int) {
	t.Helper()
	for b := 0; b < r.NumBlocks(); b++ {
		c := r.testChunk(b, col)
		if c == nil {
			continue
		}
		for i := range c.pages.Len() {
			off, ln := c.pages.unit(i)
			body, pooled, err := r.page(off, ln, "page", cacheBypass, nil)
			if err != nil {
				t.Fatal(err)
			}
			pages++
			if body[0]&validPacked != 0 {
				packed++
			}
			if pooled {
				putBuf(body)
			}
		}
	}
	return pages, packed
}

// TestPackedCodesRoundTrip: version 4 stores the pages of codes close to
// random as packed codes (every page of the one-, eight-, nine- and
// twelve-bit columns), keeps the repeating status codes compressed, and
// every value reads back whole, by row lists and after a block copy;
// version 3 packs nothing.
func TestPackedCodesRoundTrip(t *testing.T) {
	cols := packedColumns(40000, 3)
	fs := vfs.NewMemFS()
	fs.MkdirAll("/d")
	writeSegment(t, fs, "/d/v4.seg", cols, 20000, nil)
	v3 := WriterOptions{FormatVersion: FormatV3}
	writeSegment(t, fs, "/d/v3.seg", cols, 20000, &v3)
	r := openSegment(t, fs, "/d/v4.seg")
	defer r.Close()
	old := openSegment(t, fs, "/d/v3.seg")
	defer old.Close()
	if r.Version() != FormatLatest {
		t.Fatalf("version %d", r.Version())
	}
	for _, tc := range cols[1:] {
		name := tc.desc.Path
		col := r.Column(name, tc.desc.Type)
		if c := r.testChunk(0, col); c == nil || c.enc != encDict {
			t.Fatalf("%s: not dictionary encoded", name)
		}
		pages, packed := packedPages(t, r, col)
		_, oldPacked := packedPages(t, old, col)
		t.Logf("%s: %d of %d pages packed; %d bytes, %d in version 3", name, packed, pages, r.ColumnBytes()[col], old.ColumnBytes()[col])
		switch {
		case oldPacked != 0:
			t.Fatalf("%s: %d pages packed in version 3", name, oldPacked)
		case name == "status" && packed != 0:
			t.Fatalf("status: %d pages packed, zstd keeps repeating codes smaller", packed)
		case name != "status" && packed != pages:
			t.Fatalf("%s: %d of %d pages packed", name, packed, pages)
		case name == "city" && r.ColumnBytes()[col] >= old.ColumnBytes()[col]:
			t.Fatalf("city: %d bytes packed, %d as two-byte codes", r.ColumnBytes()[col], old.ColumnBytes()[col])
		}
	}
	checkAllValues(t, r, cols)
	if err := r.Check(); err != nil {
		t.Fatal(err)
	}
	copyAllBlocks(t, fs, r, "/d/copy.seg", nil)
	c := openSegment(t, fs, "/d/copy.seg")
	defer c.Close()
	checkAllValues(t, c, cols)
}

// TestPackedCodeReads: single rows, lists and ranges of a packed page
// read the codes written, at the page's end too (the last code's bytes
// shorter than one 8-byte load), and a page claiming a width outside
// 1..32, fewer bytes than its codes, or a code past the dictionary is an
// error.
func TestPackedCodeReads(t *testing.T) {
	for _, b := range []int{1, 3, 7, 8, 13, 17, 31, 32} {
		rng := rand.New(rand.NewPCG(uint64(b), 1))
		const rows = 78 // the last row has a value
		d := &ColumnData{Nulls: vec.NewBitset(rows)}
		codes := make([]uint32, rows)
		for i := range codes {
			codes[i] = uint32(rng.Uint64() & (1<<b - 1))
			if i%9 == 4 {
				d.Nulls.Set(i)
			}
		}
		bm := make([]byte, (rows+7)/8)
		for i := 0; i < rows; i++ {
			if !d.Nulls.Get(i) {
				bm[i>>3] |= 1 << (i & 7)
			}
		}
		page := []byte{validBitmap | validPacked}
		page = append(page, bm...)
		page = append(page, byte(b))
		page = appendPackedCodes(page, b, codes, d, 0, rows)
		pv, err := parsePage(page, rows, FormatV4)
		if err != nil || !pv.packed {
			t.Fatalf("b=%d: %v packed=%v", b, err, pv.packed)
		}
		if _, err := parsePage(page, rows, FormatV3); err == nil {
			t.Fatalf("b=%d: a packed page reads in version 3", b)
		}
		c := &chunkMeta{enc: encDict, dictEntries: math.MaxInt}
		var v vec.Vector
		codesVector(&v, rows)
		out := pageOut{dst: &v}
		if err := decodePage(&pv, TypeString, c, rowSel{lo: 0, hi: rows}, &out); err != nil {
			t.Fatalf("b=%d: %v", b, err)
		}
		for i := 0; i < rows; i++ {
			switch {
			case d.Nulls.Get(i) != v.IsNull(i):
				t.Fatalf("b=%d row %d: null %v", b, i, v.IsNull(i))
			case !d.Nulls.Get(i) && v.Codes[i] != codes[i]:
				t.Fatalf("b=%d row %d: code %d, want %d", b, i, v.Codes[i], codes[i])
			}
		}
		codesVector(&v, 1)
		out = pageOut{dst: &v}
		if err := decodePage(&pv, TypeString, c, rowSel{list: []int32{rows - 1}}, &out); err != nil || v.Codes[0] != codes[rows-1] {
			t.Fatalf("b=%d: last row %d (%v), want %d", b, v.Codes[0], err, codes[rows-1])
		}
		// Damage.
		for name, bad := range map[string][]byte{
			"width 0":  append(append(append([]byte{}, page[:1+len(bm)]...), 0), page[2+len(bm):]...),
			"width 33": append(append(append([]byte{}, page[:1+len(bm)]...), 33), page[2+len(bm):]...),
			"short":    page[:len(page)-1],
		} {
			pv, err := parsePage(bad, rows, FormatV4)
			if err == nil {
				codesVector(&v, rows)
				out = pageOut{dst: &v}
				err = decodePage(&pv, TypeString, c, rowSel{lo: 0, hi: rows}, &out)
			}
			if err == nil {
				t.Fatalf("b=%d %s: no error", b, name)
			}
		}
		small := &chunkMeta{enc: encDict, dictEntries: 1}
		if b > 1 {
			codesVector(&v, rows)
			out = pageOut{dst: &v}
			if err := decodePage(&pv, TypeString, small, rowSel{lo: 0, hi: rows}, &out); err == nil {
				t.Fatalf("b=%d: codes past a dictionary of one entry read", b)
			}
		}
	}
}

// FuzzPackedCodes: the packed code decoder on any page bytes never
// panics, and codes made from the input pack and read back.
func FuzzPackedCodes(f *testing.F) {
	f.Add([]byte{validAll | validPacked, 13, 0xff, 0x12, 0x34}, uint8(13), uint16(2))
	f.Add([]byte{validBitmap | validPacked, 0x05, 1, 0x02}, uint8(1), uint16(3))
	f.Add([]byte{validAll | validPacked, 32, 1, 2, 3, 4, 5, 6, 7, 8}, uint8(32), uint16(2))
	f.Add([]byte{validAll | validPacked}, uint8(0), uint16(0))
	// A page as the writer packs it: thirteen-bit codes, NULLs.
	codes := []uint32{0, 8191, 17, 4096, 1, 2, 3, 8000, 5}
	d := &ColumnData{Nulls: vec.NewBitset(len(codes))}
	d.Nulls.Set(3)
	page := []byte{validBitmap | validPacked, 0xf7, 0x01, 13}
	f.Add(appendPackedCodes(page, 13, codes, d, 0, len(codes)), uint8(12), uint16(len(codes)))
	f.Fuzz(func(t *testing.T, in []byte, b uint8, rows uint16) {
		n := int(rows % 600)
		c := &chunkMeta{enc: encDict, width: 2, dictEntries: 1 << 20} // a width the footer allows
		if pv, err := parsePage(in, n, FormatV4); err == nil {
			var v vec.Vector
			codesVector(&v, n)
			out := pageOut{dst: &v}
			_ = decodePage(&pv, TypeString, c, rowSel{lo: 0, hi: n}, &out)
		}
		// Round trip: codes from the input, b bits each.
		w := int(b%32) + 1
		codes := make([]uint32, len(in)/2)
		for i := range codes {
			codes[i] = (uint32(in[2*i]) | uint32(in[2*i+1])<<8 | uint32(i)<<16) & uint32(1<<w-1)
		}
		d := &ColumnData{}
		page := append([]byte{validAll | validPacked, byte(w)}, appendPackedCodes(nil, w, codes, d, 0, len(codes))...)
		pv, err := parsePage(page, len(codes), FormatV4)
		if err != nil {
			t.Fatal(err)
		}
		var v vec.Vector
		codesVector(&v, len(codes))
		out := pageOut{dst: &v}
		wide := &chunkMeta{enc: encDict, dictEntries: math.MaxInt}
		if err := decodePage(&pv, TypeString, wide, rowSel{lo: 0, hi: len(codes)}, &out); err != nil {
			t.Fatal(err)
		}
		for i, x := range codes {
			if v.Codes[i] != x {
				t.Fatalf("code %d: %d, want %d", i, v.Codes[i], x)
			}
		}
	})
}

// codesVector prepares v for n dictionary codes of a string column.
func codesVector(v *vec.Vector, n int) {
	prepare(v, VecType(TypeString), n, false)
	toCodes(v, nil, n)
}
