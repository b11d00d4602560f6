package segment

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/sediment/sediment/internal/vec"
	"github.com/sediment/sediment/internal/vfs"
)

// testColumn is a column with its values for a whole segment, as a test
// expects to read it back. nil entries are NULL.
type testColumn struct {
	desc ColumnDesc
	vals []any // bool, int64, float64, string
}

// newTestWriter creates file name on fs and a writer of cols into it.
func newTestWriter(t testing.TB, fs vfs.FS, name string, cols []testColumn, opts *WriterOptions) (vfs.File, *Writer) {
	t.Helper()
	f, err := fs.Create(name)
	if err != nil {
		t.Fatal(err)
	}
	descs := make([]ColumnDesc, len(cols))
	for i, c := range cols {
		descs[i] = c.desc
	}
	w, err := NewWriter(f, descs, opts)
	if err != nil {
		t.Fatal(err)
	}
	return f, w
}

// fillTestColumn sets d to rows [from, to) of c and reports whether any
// of them has a value.
func fillTestColumn(c *testColumn, from, to int, d *ColumnData) bool {
	*d = ColumnData{}
	present := false
	for i := from; i < to; i++ {
		v := c.vals[i]
		if v == nil {
			if d.Nulls == nil {
				d.Nulls = vec.NewBitset(to - from)
			}
			d.Nulls.Set(i - from)
		} else {
			present = true
		}
		switch c.desc.Type {
		case TypeBool, TypeObject:
			d.Bools = append(d.Bools, v == true)
		case TypeInt64, TypeTimestamp:
			x, _ := v.(int64)
			d.Ints = append(d.Ints, x)
		case TypeFloat64:
			x, _ := v.(float64)
			d.Floats = append(d.Floats, x)
		default:
			x, _ := v.(string)
			d.Strs = append(d.Strs, x)
		}
	}
	return present
}

func writeSegment(t testing.TB, fs vfs.FS, name string, cols []testColumn, blockRows int, opts *WriterOptions) {
	t.Helper()
	f, w := newTestWriter(t, fs, name, cols, opts)
	total := len(cols[0].vals)
	for start := 0; start < total; start += blockRows {
		end := min(start+blockRows, total)
		n := end - start
		data := make([]*ColumnData, len(cols))
		for ci := range cols {
			d := &ColumnData{}
			if fillTestColumn(&cols[ci], start, end, d) {
				data[ci] = d
			}
		}
		if err := w.WriteBlock(n, data); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.AddSection("extra", []byte("section payload")); err != nil {
		t.Fatal(err)
	}
	if err := w.Finish(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

func openSegment(t testing.TB, fs vfs.FS, name string) *Reader {
	t.Helper()
	f, err := fs.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	r, err := Open(f, name)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// readAll reads a column back as []any over the whole segment.
func readAll(t testing.TB, r *Reader, col int) []any {
	t.Helper()
	var out []any
	var v vec.Vector
	typ := r.Columns()[col].Type
	for b := 0; b < r.NumBlocks(); b++ {
		bi := r.Block(b)
		if err := r.ReadColumn(b, col, 0, bi.Rows, &v); err != nil {
			t.Fatal(err)
		}
		for i := 0; i < bi.Rows; i++ {
			if v.IsNull(i) {
				out = append(out, nil)
				continue
			}
			switch typ {
			case TypeBool:
				out = append(out, v.Bools[i])
			case TypeObject:
				out = append(out, true)
			case TypeInt64, TypeTimestamp:
				out = append(out, v.Ints[i])
			case TypeFloat64:
				out = append(out, v.Floats[i])
			default:
				out = append(out, v.StringAt(i))
			}
		}
	}
	return out
}

func equalVals(a, b any) bool {
	if fa, ok := a.(float64); ok {
		fb, ok := b.(float64)
		return ok && (fa == fb || math.IsNaN(fa) && math.IsNaN(fb))
	}
	return a == b
}

// makeColumns builds a table of columns of every type and encoding: sorted
// timestamps (delta), a low-cardinality int (dictionary), a wide int
// (plain), floats with NaN and infinities, bools, a low-cardinality string
// (dictionary), unique strings (bytes), UUIDs, unicode and empty strings,
// object presence, array bytes, a sparse column and a column absent from
// whole blocks.
func makeColumns(n int, seed uint64) []testColumn {
	rng := rand.New(rand.NewPCG(seed, 1))
	cols := []testColumn{
		{desc: ColumnDesc{Path: "timestamp", Type: TypeTimestamp}},
		{desc: ColumnDesc{Path: "metadata.response.status_code", Type: TypeInt64}},
		{desc: ColumnDesc{Path: "metadata.response.origin_time", Type: TypeInt64}},
		{desc: ColumnDesc{Path: "metadata.ratio", Type: TypeFloat64}},
		{desc: ColumnDesc{Path: "metadata.cached", Type: TypeBool}},
		{desc: ColumnDesc{Path: "metadata.request.method", Type: TypeString}},
		{desc: ColumnDesc{Path: "event_message", Type: TypeString}},
		{desc: ColumnDesc{Path: "id", Type: TypeString}},
		{desc: ColumnDesc{Path: "metadata.note", Type: TypeString}},
		{desc: ColumnDesc{Path: "metadata.request", Type: TypeObject}},
		{desc: ColumnDesc{Path: "metadata.context", Type: TypeArray, Elem: []ElemField{{Path: "host", Type: TypeString}, {Path: "pid", Type: TypeInt64}}}},
		{desc: ColumnDesc{Path: "metadata.rare", Type: TypeInt64}},
		{desc: ColumnDesc{Path: "metadata.late", Type: TypeString}},
	}
	methods := []string{"GET", "POST", "PATCH", "DELETE", "OPTIONS"}
	statuses := []int64{200, 201, 204, 301, 400, 401, 404, 500, 502}
	notes := []string{"", "héllo wörld", "日本語のテキスト", strings.Repeat("x", 70000), "emoji 🚀", "tab\tand\nnewline"}
	ts := int64(1_700_000_000_000_000)
	for i := 0; i < n; i++ {
		ts += int64(rng.IntN(5000))
		cols[0].vals = append(cols[0].vals, ts)
		cols[1].vals = append(cols[1].vals, statuses[rng.IntN(len(statuses))])
		cols[2].vals = append(cols[2].vals, rng.Int64())
		var f float64
		switch i % 50 {
		case 7:
			f = math.NaN()
		case 8:
			f = math.Inf(1)
		case 9:
			f = math.Inf(-1)
		default:
			f = rng.NormFloat64() * 1e6
		}
		cols[3].vals = append(cols[3].vals, f)
		cols[4].vals = append(cols[4].vals, rng.IntN(3) == 0)
		cols[5].vals = append(cols[5].vals, methods[rng.IntN(len(methods))])
		cols[6].vals = append(cols[6].vals, fmt.Sprintf("request %d took %dms from 10.0.%d.%d", i, rng.IntN(900), rng.IntN(255), rng.IntN(255)))
		cols[7].vals = append(cols[7].vals, fmt.Sprintf("%08x-%04x-4%03x-8%03x-%012x", rng.Uint32(), rng.IntN(1<<16), rng.IntN(1<<12), rng.IntN(1<<12), rng.Int64N(1<<48)))
		if i%3 == 0 {
			cols[8].vals = append(cols[8].vals, notes[rng.IntN(len(notes))])
		} else {
			cols[8].vals = append(cols[8].vals, nil)
		}
		if i%10 != 0 {
			cols[9].vals = append(cols[9].vals, true)
		} else {
			cols[9].vals = append(cols[9].vals, nil)
		}
		if i%4 == 0 {
			cols[10].vals = append(cols[10].vals, string([]byte{0x06, 0x01, 0x07, 0x00, byte(i)}))
		} else {
			cols[10].vals = append(cols[10].vals, nil)
		}
		if i == n/2 {
			cols[11].vals = append(cols[11].vals, int64(-42))
		} else {
			cols[11].vals = append(cols[11].vals, nil)
		}
		if i >= n-n/5 {
			cols[12].vals = append(cols[12].vals, "late")
		} else {
			cols[12].vals = append(cols[12].vals, nil)
		}
	}
	return cols
}

func TestRoundTripEveryType(t *testing.T) {
	for _, tc := range []struct {
		name      string
		rows      int
		blockRows int
		pageBytes int
		level     int
	}{
		{"one row", 1, 100, 0, 1},
		{"one block", 500, 1000, 0, 1},
		{"many blocks", 5000, 1024, 0, 1},
		{"tiny pages", 3000, 1000, 512, 1},
		{"best level", 2000, 700, 4096, 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fs := vfs.NewMemFS()
			fs.MkdirAll("/d")
			cols := makeColumns(tc.rows, 7)
			writeSegment(t, fs, "/d/s.seg", cols, tc.blockRows, &WriterOptions{PageBytes: tc.pageBytes, ZstdLevel: tc.level})
			r := openSegment(t, fs, "/d/s.seg")
			defer r.Close()
			if r.Rows() != tc.rows {
				t.Fatalf("rows %d, want %d", r.Rows(), tc.rows)
			}
			minT, maxT := r.TimeRange()
			if minT != cols[0].vals[0].(int64) || maxT != cols[0].vals[tc.rows-1].(int64) {
				t.Fatalf("time range %d..%d", minT, maxT)
			}
			for ci, c := range cols {
				col := r.Column(c.desc.Path, c.desc.Type)
				if col != ci {
					t.Fatalf("column %q at %d, want %d", c.desc.Path, col, ci)
				}
				got := readAll(t, r, col)
				if len(got) != len(c.vals) {
					t.Fatalf("%s: %d values, want %d", c.desc.Path, len(got), len(c.vals))
				}
				for i := range got {
					if !equalVals(got[i], c.vals[i]) {
						t.Fatalf("%s row %d: got %.80v want %.80v", c.desc.Path, i, got[i], c.vals[i])
					}
				}
			}
			if got := r.Columns()[10].Elem; len(got) != 2 || got[1].Path != "pid" || got[1].Type != TypeInt64 {
				t.Fatalf("array element fields %+v", got)
			}
			sec, err := r.Section("extra")
			if err != nil || string(sec) != "section payload" {
				t.Fatalf("section %q %v", sec, err)
			}
			if sec, err := r.Section("missing"); sec != nil || err != nil {
				t.Fatalf("missing section %q %v", sec, err)
			}
			if err := r.Check(); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func TestEncodingsChosen(t *testing.T) {
	fs := vfs.NewMemFS()
	fs.MkdirAll("/d")
	cols := makeColumns(4000, 3)
	writeSegment(t, fs, "/d/s.seg", cols, 4000, nil)
	r := openSegment(t, fs, "/d/s.seg")
	defer r.Close()
	want := map[string]Encoding{
		"timestamp":                     encDelta,
		"metadata.response.status_code": encDict,
		"metadata.response.origin_time": encPlain64,
		"metadata.request.method":       encDict,
		"event_message":                 encBytes,
		"id":                            encUUID,
		"metadata.request":              encNone,
	}
	for path, enc := range want {
		col := -1
		for i, c := range r.Columns() {
			if c.Path == path {
				col = i
			}
		}
		if got := r.testChunk(0, col).enc; got != enc {
			t.Errorf("%s: encoding %d, want %d", path, got, enc)
		}
	}
	ci, ok := r.Chunk(0, r.Column("metadata.response.status_code", TypeInt64))
	if !ok || ci.DictEntries != 9 || !ci.HasNumRange || ci.MinInt != 200 || ci.MaxInt != 502 {
		t.Fatalf("status chunk info %+v", ci)
	}
	dict, err := r.DictInts(0, r.Column("metadata.response.status_code", TypeInt64))
	if err != nil || len(dict) != 9 || dict[0] != 200 {
		t.Fatalf("dict %v %v", dict, err)
	}
	strs, err := r.DictStrings(0, r.Column("metadata.request.method", TypeString))
	if err != nil || strings.Join(strs, ",") != "DELETE,GET,OPTIONS,PATCH,POST" {
		t.Fatalf("method dict %v %v", strs, err)
	}
	if _, ok := r.Chunk(0, r.Column("metadata.rare", TypeInt64)); !ok {
		t.Fatal("rare column should be present in the block")
	}
}

func TestReadRangeWithinPages(t *testing.T) {
	fs := vfs.NewMemFS()
	fs.MkdirAll("/d")
	cols := makeColumns(3000, 11)
	writeSegment(t, fs, "/d/s.seg", cols, 3000, &WriterOptions{PageBytes: 200})
	r := openSegment(t, fs, "/d/s.seg")
	defer r.Close()
	col := r.Column("metadata.note", TypeString)
	if pl := r.testPages(0, col); pl.Len() < 3 {
		t.Fatalf("want several pages, got %d", pl.Len())
	}
	var v vec.Vector
	for _, rg := range [][2]int{{0, 1}, {5, 6}, {999, 2001}, {2999, 3000}, {17, 17}} {
		if err := r.ReadColumn(0, col, rg[0], rg[1], &v); err != nil {
			t.Fatal(err)
		}
		if v.Len != rg[1]-rg[0] {
			t.Fatalf("len %d", v.Len)
		}
		for i := rg[0]; i < rg[1]; i++ {
			want := cols[8].vals[i]
			if want == nil {
				if !v.IsNull(i - rg[0]) {
					t.Fatalf("row %d should be null", i)
				}
			} else if v.IsNull(i-rg[0]) || v.StringAt(i-rg[0]) != want {
				t.Fatalf("row %d: %q want %q", i, v.StringAt(i-rg[0]), want)
			}
		}
	}
}

func TestWriterRejects(t *testing.T) {
	fs := vfs.NewMemFS()
	fs.MkdirAll("/d")
	f, _ := fs.Create("/d/x")
	if _, err := NewWriter(f, []ColumnDesc{{Path: "id", Type: TypeString}}, nil); err == nil {
		t.Fatal("want error without timestamp column")
	}
	w, err := NewWriter(f, []ColumnDesc{{Path: "timestamp", Type: TypeTimestamp}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.WriteBlock(2, []*ColumnData{{Ints: []int64{5, 4}}}); err == nil || !strings.Contains(err.Error(), "not sorted") {
		t.Fatalf("unsorted block: %v", err)
	}
	if err := w.WriteBlock(2, []*ColumnData{{Ints: []int64{1}}}); err == nil {
		t.Fatal("short column accepted")
	}
	if err := w.Finish(); err == nil {
		t.Fatal("finish with no blocks accepted")
	}
	ts := ColumnDesc{Path: "timestamp", Type: TypeTimestamp}
	long := ColumnDesc{Path: strings.Repeat("a", MaxPathLen+1), Type: TypeInt64}
	if _, err := NewWriter(f, []ColumnDesc{ts, long}, nil); err == nil {
		t.Fatal("a path the reader would refuse was accepted")
	}
	many := make([]ColumnDesc, MaxColumns+1)
	for i := range many {
		many[i] = ColumnDesc{Path: fmt.Sprint("c", i), Type: TypeInt64}
	}
	many[0] = ts
	if _, err := NewWriter(f, many, nil); err == nil {
		t.Fatal("more columns than the reader accepts were accepted")
	}
	arr := ColumnDesc{Path: "a", Type: TypeArray, Elem: []ElemField{{Path: "x", Type: 99}}}
	if _, err := NewWriter(f, []ColumnDesc{ts, arr}, nil); err == nil {
		t.Fatal("an invalid element field type was accepted")
	}
}

// TestNewerVersion: a segment whose header and trailer agree on a version
// this build does not know is a VersionError, not corruption (the engine
// must refuse to start, not quarantine it).
func TestNewerVersion(t *testing.T) {
	fs := vfs.NewMemFS()
	fs.MkdirAll("/d")
	writeSegment(t, fs, "/d/good.seg", makeColumns(100, 1), 1000, nil)
	b, err := vfs.ReadFile(fs, "/d/good.seg")
	if err != nil {
		t.Fatal(err)
	}
	b[4] = FormatLatest + 1
	b[len(b)-trailerSize+12] = FormatLatest + 1
	f, _ := fs.Create("/d/new.seg")
	f.Write(b)
	f.Close()
	f, _ = fs.Open("/d/new.seg")
	_, err = Open(f, "/d/new.seg")
	var ve *VersionError
	if !errors.As(err, &ve) || errors.Is(err, ErrCorrupt) || ve.Version != FormatLatest+1 {
		t.Fatalf("got %v", err)
	}
}

// corruptions damages a good segment in the ways a disk or a crash can, and
// every one must come back as a typed, located error — at Open or at the
// first read of the damaged unit — never a panic or a wrong answer.
func TestCorruption(t *testing.T) {
	fs := vfs.NewMemFS()
	fs.MkdirAll("/d")
	cols := makeColumns(3000, 5)
	writeSegment(t, fs, "/d/good.seg", cols, 1000, &WriterOptions{PageBytes: 4096, HistoryBytes: 2048})
	good, err := vfs.ReadFile(fs, "/d/good.seg")
	if err != nil {
		t.Fatal(err)
	}
	r := openSegment(t, fs, "/d/good.seg")
	blk := r.testBlock(1)
	pageOff := blk.chunks[3].page(0).off
	var dictOff int64
	for _, c := range blk.chunks {
		if c.dictEntries > 0 {
			dictOff = c.dict[0].off
			break
		}
	}
	var histOff, lastDictOff int64
	for _, c := range blk.chunks {
		if c.histOff > 0 && histOff == 0 {
			histOff = c.histOff
		}
		if len(c.dict) > 1 {
			lastDictOff = c.dict[len(c.dict)-1].off
		}
	}
	if histOff == 0 || lastDictOff == 0 {
		t.Fatal("the segment should have a history and a paged dictionary in block 1")
	}
	secOff := r.ft.sections[0].off
	footOff := int64(len(good)) - trailerSize - 10
	r.Close()

	flip := func(off int64) func([]byte) []byte {
		return func(b []byte) []byte { b[off] ^= 0x40; return b }
	}
	for _, tc := range []struct {
		name    string
		damage  func([]byte) []byte
		section string
	}{
		{"truncated to half", func(b []byte) []byte { return b[:len(b)/2] }, "trailer"},
		{"truncated tail", func(b []byte) []byte { return b[:len(b)-3] }, "trailer"},
		{"empty", func(b []byte) []byte { return b[:0] }, "file"},
		{"bad magic", flip(1), "header"},
		{"unknown version", func(b []byte) []byte { b[4] = 99; return b }, "header"},
		{"bad trailer magic", flip(int64(len(good) - 1)), "trailer"},
		{"footer offset", flip(int64(len(good) - trailerSize + 2)), "trailer"},
		{"flipped byte in footer", flip(footOff), "footer"},
		{"flipped byte in page", flip(pageOff + 3), "page"},
		{"flipped byte in dictionary", flip(dictOff + 1), "dictionary"},
		{"flipped byte in a later dictionary page", flip(lastDictOff + 1), "dictionary"},
		// A damaged history makes its chunk's pages unreadable: the error
		// names a page of the block, not the history.
		{"flipped byte in history", flip(histOff + 2), "page"},
		{"flipped byte in index section", flip(secOff + 2), "section extra"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bad := tc.damage(append([]byte(nil), good...))
			name := "/d/bad.seg"
			f, _ := fs.Create(name)
			f.Write(bad)
			f.Close()
			f, _ = fs.Open(name)
			r, err := Open(f, name)
			if err == nil {
				err = r.Check()
				r.Close()
			}
			if err == nil {
				t.Fatal("damage not detected")
			}
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("error %v is not ErrCorrupt", err)
			}
			var ce *CorruptError
			if !errors.As(err, &ce) || ce.Path != name || ce.Section != tc.section {
				t.Fatalf("error %v: want section %q in %s", err, tc.section, name)
			}
			if !strings.Contains(err.Error(), name) {
				t.Fatalf("message %q does not name the file", err)
			}
			if tc.section == "page" || tc.section == "dictionary" {
				if b := r.BlockAt(ce.Offset); b != 1 {
					t.Fatalf("damage at offset %d placed in block %d, want 1", ce.Offset, b)
				}
			}
		})
	}
}

// TestWriteFromCodes writes string columns given as dictionary codes (an
// unsorted dictionary with unused and repeated entries) and reads back
// the same values as when they are given as strings.
func TestWriteFromCodes(t *testing.T) {
	fs := vfs.NewMemFS()
	fs.MkdirAll("/d")
	dict := []string{"zeta", "alpha", "unused", "mid", "alpha", ""}
	n := 500
	codes := make([]uint32, n)
	nulls := vec.NewBitset(n)
	var want []any
	for i := range codes {
		codes[i] = uint32([]int{0, 1, 3, 4, 5}[i%5])
		if i%7 == 0 {
			nulls.Set(i)
			want = append(want, nil)
		} else {
			want = append(want, dict[codes[i]])
		}
	}
	ts := make([]int64, n)
	for i := range ts {
		ts[i] = int64(i)
	}
	// A second column with many distinct values written as codes, which
	// should come out as bytes, not a dictionary.
	wide := make([]string, n)
	wcodes := make([]uint32, n)
	for i := range wide {
		wide[i] = fmt.Sprintf("value-%d", i)
		wcodes[i] = uint32(i)
	}
	f, _ := fs.Create("/d/c.seg")
	w, err := NewWriter(f, []ColumnDesc{{Path: "timestamp", Type: TypeTimestamp}, {Path: "s", Type: TypeString}, {Path: "w", Type: TypeString}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.WriteBlock(n, []*ColumnData{{Ints: ts}, {Nulls: nulls, Codes: codes, Dict: dict}, {Codes: wcodes, Dict: wide}}); err != nil {
		t.Fatal(err)
	}
	if err := w.WriteBlock(n, []*ColumnData{{Ints: ts}, {Codes: []uint32{99}, Dict: dict}, nil}); err == nil {
		t.Fatal("a code outside the dictionary was accepted")
	}
	w.Finish()
	f.Close()
	r := openSegment(t, fs, "/d/c.seg")
	defer r.Close()
	got := readAll(t, r, 1)
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("row %d: %v, want %v", i, got[i], want[i])
		}
	}
	if r.testChunk(0, 1).enc != encDict || r.testChunk(0, 1).dictEntries != 4 {
		t.Fatalf("codes column: encoding %d with %d entries", r.testChunk(0, 1).enc, r.testChunk(0, 1).dictEntries)
	}
	if r.testChunk(0, 2).enc != encBytes {
		t.Fatalf("wide codes column: encoding %d, want bytes", r.testChunk(0, 2).enc)
	}
	for i, v := range readAll(t, r, 2) {
		if v != wide[i] {
			t.Fatalf("wide row %d: %v", i, v)
		}
	}
	if err := r.Check(); err != nil {
		t.Fatal(err)
	}
}

// TestColumnAtATime: a block written one column at a time, in any order,
// reads back as the same block written whole; misuse is refused.
func TestColumnAtATime(t *testing.T) {
	fs := vfs.NewMemFS()
	fs.MkdirAll("/d")
	cols := []ColumnDesc{{Path: "timestamp", Type: TypeTimestamp}, {Path: "n", Type: TypeInt64}, {Path: "s", Type: TypeString}}
	ts := &ColumnData{Ints: []int64{1, 2, 3}}
	n := &ColumnData{Ints: []int64{10, 20, 30}}
	str := &ColumnData{Strs: []string{"a", "", "c"}, Nulls: vec.NewBitset(3)}
	str.Nulls.Set(1)
	f, _ := fs.Create("/d/x.seg")
	w, err := NewWriter(f, cols, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.WriteColumn(1, n); err == nil {
		t.Fatal("column outside a block accepted")
	}
	if err := w.BeginBlock(3, ts); err != nil {
		t.Fatal(err)
	}
	for _, ci := range []int{2, 0, 1} {
		if err := w.WriteColumn(ci, []*ColumnData{ts, n, str}[ci]); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.WriteColumn(1, n); err == nil {
		t.Fatal("column written twice accepted")
	}
	if err := w.Finish(); err == nil {
		t.Fatal("finish inside a block accepted")
	}
	if err := w.EndBlock(); err != nil {
		t.Fatal(err)
	}
	if err := w.BeginBlock(1, &ColumnData{Ints: []int64{4}}); err != nil {
		t.Fatal(err)
	}
	if err := w.EndBlock(); err == nil {
		t.Fatal("block without its timestamp column accepted")
	}
	if err := w.Finish(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	r := openSegment(t, fs, "/d/x.seg")
	defer r.Close()
	if got := fmt.Sprint(readAll(t, r, 0), readAll(t, r, 1), readAll(t, r, 2)); got != "[1 2 3] [10 20 30] [a <nil> c]" {
		t.Fatalf("read back %s", got)
	}
}
