package segment

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"testing"

	"github.com/sediment/sediment/internal/vec"
	"github.com/sediment/sediment/internal/vfs"
)

// v1Fixture is testdata/v1.seg: makeColumns(v1FixtureRows, v1FixtureSeed)
// in blocks of v1FixtureBlockRows, written by the version 1 writer (before
// version 2 existed) with v1FixtureOptions.
const (
	v1FixtureRows      = 1200
	v1FixtureSeed      = 7
	v1FixtureBlockRows = 500
)

var v1FixtureOptions = WriterOptions{PageBytes: 4096, PageRows: 300}

func openFixture(t *testing.T) (*Reader, []byte) {
	t.Helper()
	data, err := os.ReadFile("testdata/v1.seg")
	if err != nil {
		t.Fatal(err)
	}
	fs := vfs.NewMemFS()
	if err := fs.MkdirAll("/d"); err != nil {
		t.Fatal(err)
	}
	f, err := fs.Create("/d/v1.seg")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write(data); err != nil {
		t.Fatal(err)
	}
	f.Close()
	return openSegment(t, fs, "/d/v1.seg"), data
}

// TestReadVersion1: a segment written by the version 1 writer reads back
// every value, whole and row by row.
func TestReadVersion1(t *testing.T) {
	r, _ := openFixture(t)
	defer r.Close()
	if r.Version() != FormatV1 {
		t.Fatalf("version %d", r.Version())
	}
	cols := makeColumns(v1FixtureRows, v1FixtureSeed)
	checkAllValues(t, r, cols)
	if err := r.Check(); err != nil {
		t.Fatal(err)
	}
}

// TestWriteVersion1 writes the fixture again with FormatVersion 1: the
// bytes are those of the version 1 writer.
func TestWriteVersion1(t *testing.T) {
	_, want := openFixture(t)
	fs := vfs.NewMemFS()
	fs.MkdirAll("/d")
	opts := v1FixtureOptions
	opts.FormatVersion = FormatV1
	writeSegment(t, fs, "/d/again.seg", makeColumns(v1FixtureRows, v1FixtureSeed), v1FixtureBlockRows, &opts)
	got, err := vfs.ReadFile(fs, "/d/again.seg")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("version 1 writer output differs from testdata/v1.seg (%d vs %d bytes)", len(got), len(want))
	}
}

// checkAllValues compares every column of r with cols, read whole and as
// every third row.
func checkAllValues(t *testing.T, r *Reader, cols []testColumn) {
	t.Helper()
	for ci, c := range cols {
		col := r.Column(c.desc.Path, c.desc.Type)
		got := readAll(t, r, col)
		if len(got) != len(c.vals) {
			t.Fatalf("%s: %d values, want %d", c.desc.Path, len(got), len(c.vals))
		}
		for i := range got {
			if !equalVals(got[i], c.vals[i]) {
				t.Fatalf("%s row %d: %v, want %v", c.desc.Path, i, got[i], c.vals[i])
			}
		}
		var v vec.Vector
		for b := 0; b < r.NumBlocks(); b++ {
			bi := r.Block(b)
			var rows []int32
			for i := b % 3; i < bi.Rows; i += 3 {
				rows = append(rows, int32(i))
			}
			if err := r.ReadRows(b, col, rows, &v); err != nil {
				t.Fatal(err)
			}
			for k, row := range rows {
				want := cols[ci].vals[bi.FirstRow+int(row)]
				if g := valueAt(&v, k, c.desc.Type); !equalVals(g, want) {
					t.Fatalf("%s block %d row %d: ReadRows %v, want %v", c.desc.Path, b, row, g, want)
				}
			}
		}
	}
}

func valueAt(v *vec.Vector, i int, t ColType) any {
	if v.IsNull(i) {
		return nil
	}
	switch t {
	case TypeBool:
		return v.Bools[i]
	case TypeObject:
		return true
	case TypeInt64, TypeTimestamp:
		return v.Ints[i]
	case TypeFloat64:
		return v.Floats[i]
	}
	return v.StringAt(i)
}

// TestCopyBlockRewritesOldVersion: compaction's block copy from a
// version 1 segment writes version 2 blocks (page ranges, dictionary
// pages) with the same values.
func TestCopyBlockRewritesOldVersion(t *testing.T) {
	old, _ := openFixture(t)
	defer old.Close()
	fs := vfs.NewMemFS()
	fs.MkdirAll("/d")
	copyAllBlocks(t, fs, old, "/d/new.seg", &WriterOptions{PageBytes: 4096})
	r := openSegment(t, fs, "/d/new.seg")
	defer r.Close()
	if r.Version() != FormatLatest {
		t.Fatalf("version %d", r.Version())
	}
	checkAllValues(t, r, makeColumns(v1FixtureRows, v1FixtureSeed))
	for b := 0; b < r.NumBlocks(); b++ {
		tp := r.testTimePages(b)
		for i := range tp.Len() {
			if p := tp.At(i); !p.HasRange || p.Present != p.Rows {
				t.Fatalf("block %d: timestamp page without its range: %+v", b, p)
			}
		}
	}
	// A version 2 block copies as it is, page ranges included.
	f2, _ := fs.Create("/d/copy.seg")
	w2, err := NewWriter(f2, r.Columns(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := w2.CopyBlock(r, 1, identityMap(len(r.Columns())), false); err != nil {
		t.Fatal(err)
	}
	if err := w2.Finish(); err != nil {
		t.Fatal(err)
	}
	f2.Close()
	r2 := openSegment(t, fs, "/d/copy.seg")
	defer r2.Close()
	if got, want := r2.testTimePages(0), r.testTimePages(1); got.Len() != want.Len() || got.At(0) != want.At(0) {
		t.Fatalf("copied page ranges %+v, want %+v", got, want)
	}
}

// TestPageRanges: each page of a numeric chunk knows its value count and
// range, each page of a dictionary-encoded string chunk the range of its
// codes; NaN stays out of float ranges; other strings have none.
func TestPageRanges(t *testing.T) {
	fs := vfs.NewMemFS()
	fs.MkdirAll("/d")
	cols := makeColumns(3000, 5)
	writeSegment(t, fs, "/d/s.seg", cols, 3000, &WriterOptions{PageRows: 256})
	r := openSegment(t, fs, "/d/s.seg")
	defer r.Close()
	for ci, c := range cols {
		col := r.Column(c.desc.Path, c.desc.Type)
		info, ok := r.Chunk(0, col)
		if !ok {
			continue
		}
		numeric := c.desc.Type == TypeInt64 || c.desc.Type == TypeTimestamp || c.desc.Type == TypeFloat64
		pages := r.testPages(0, col)
		if pages.Len() < 2 && c.desc.Path != "metadata.rare" {
			t.Fatalf("%s: %d pages", c.desc.Path, pages.Len())
		}
		for pi := range pages.Len() {
			p := pages.At(pi)
			if c.desc.Type == TypeString && info.DictEntries > 0 {
				dict, err := r.DictStrings(0, col)
				if err != nil {
					t.Fatal(err)
				}
				lo, hi, seen := "", "", false
				for i := p.FirstRow; i < p.FirstRow+p.Rows; i++ {
					if s, ok := cols[ci].vals[i].(string); ok {
						if !seen || s < lo {
							lo = s
						}
						hi, seen = max(hi, s), true
					}
				}
				if p.HasRange != seen || seen && (dict[p.MinInt] != lo || dict[p.MaxInt] != hi) {
					t.Fatalf("%s page at %d: codes %+v, values [%q, %q]", c.desc.Path, p.FirstRow, p, lo, hi)
				}
				continue
			}
			if !numeric {
				if p.Present != -1 || p.HasRange {
					t.Fatalf("%s: page statistics on a %s column: %+v", c.desc.Path, c.desc.Type, p)
				}
				continue
			}
			present, first := 0, true
			var lo, hi float64
			for i := p.FirstRow; i < p.FirstRow+p.Rows; i++ {
				v := cols[ci].vals[i]
				if v == nil {
					continue
				}
				present++
				var x float64
				switch y := v.(type) {
				case int64:
					x = float64(y)
				case float64:
					x = y
				}
				if x != x { // NaN
					continue
				}
				if first || x < lo {
					lo = x
				}
				if first || x > hi {
					hi = x
				}
				first = false
			}
			if p.Present != present || p.HasRange == first {
				t.Fatalf("%s page at %d: present %d range %v, want %d %v", c.desc.Path, p.FirstRow, p.Present, p.HasRange, present, !first)
			}
			if first {
				continue
			}
			gotLo, gotHi := float64(p.MinInt), float64(p.MaxInt)
			if c.desc.Type == TypeFloat64 {
				gotLo, gotHi = p.MinFloat, p.MaxFloat
			}
			if gotLo != lo || gotHi != hi {
				t.Fatalf("%s page at %d: range [%v, %v], want [%v, %v]", c.desc.Path, p.FirstRow, gotLo, gotHi, lo, hi)
			}
		}
	}
}

// countingFile counts the units read from a file.
type countingFile struct {
	vfs.File
	reads, bytes int
}

func (c *countingFile) ReadAt(p []byte, off int64) (int, error) {
	c.reads++
	c.bytes += len(p)
	return c.File.ReadAt(p, off)
}

// writeCounted writes cols as a segment of blockRows-row blocks in memory
// and opens it through a countingFile (closed when the test ends), which
// counts the reads that follow.
func writeCounted(t *testing.T, cols []testColumn, blockRows int, o *WriterOptions) (*Reader, *countingFile) {
	t.Helper()
	fs := vfs.NewMemFS()
	if err := fs.MkdirAll("/d"); err != nil {
		t.Fatal(err)
	}
	writeSegment(t, fs, "/d/s.seg", cols, blockRows, o)
	f, err := fs.Open("/d/s.seg")
	if err != nil {
		t.Fatal(err)
	}
	cf := &countingFile{File: f}
	r, err := Open(cf, "s.seg")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r, cf
}

// TestSparseReadsStaySparse: reading a few rows of a block reads the pages
// holding them (and the history they were compressed against) and, of a
// big dictionary, the dictionary pages holding their entries, and nothing
// else.
func TestSparseReadsStaySparse(t *testing.T) {
	const n = 30000
	rng := rand.New(rand.NewPCG(9, 9))
	ts := testColumn{desc: ColumnDesc{Path: "timestamp", Type: TypeTimestamp}}
	msg := testColumn{desc: ColumnDesc{Path: "event_message", Type: TypeString}}
	path := testColumn{desc: ColumnDesc{Path: "path", Type: TypeString}}
	for i := 0; i < n; i++ {
		ts.vals = append(ts.vals, int64(i))
		msg.vals = append(msg.vals, fmt.Sprintf("GET | 200 | %d.%d.%d.%d | %016x | https://example.com/rest/v1/items?id=%d", rng.IntN(256), rng.IntN(256), rng.IntN(256), rng.IntN(256), rng.Uint64(), rng.IntN(1e9)))
		path.vals = append(path.vals, fmt.Sprintf("/storage/v1/object/public/bucket-%d/photo-%05d.jpg", i%3, rng.IntN(600)))
	}
	cols := []testColumn{ts, msg, path}
	r, cf := writeCounted(t, cols, n, &WriterOptions{PageBytes: 64 << 10, HistoryBytes: 32 << 10})
	pc := r.testChunk(0, 2)
	if pc.enc != encDict || len(pc.dict) < 4 {
		t.Fatalf("path column: encoding %d with %d dictionary pages, want a paged dictionary", pc.enc, len(pc.dict))
	}
	if mc := r.testChunk(0, 1); mc.pages.Len() < 10 || mc.histOff == 0 {
		t.Fatalf("message column: %d pages, history at %d", mc.pages.Len(), mc.histOff)
	}
	rows := []int32{17, 15000, 29999}
	var v vec.Vector
	for col, maxReads := range map[int]int{1: 4, 2: 6} {
		cf.reads, cf.bytes = 0, 0
		if err := r.ReadRows(0, col, rows, &v); err != nil {
			t.Fatal(err)
		}
		if cf.reads > maxReads {
			t.Errorf("%s: %d units read (%d bytes) for %d rows, want at most %d", cols[col].desc.Path, cf.reads, cf.bytes, len(rows), maxReads)
		}
		if !v.IsBytes() {
			t.Errorf("%s: sparse strings should come back as bytes", cols[col].desc.Path)
		}
		for k, row := range rows {
			if got, want := v.StringAt(k), cols[col].vals[row]; got != want {
				t.Fatalf("%s row %d: %q, want %q", cols[col].desc.Path, row, got, want)
			}
		}
	}
}

// TestReadRowsAnyOrder: rows asked out of order, with repeats, come back
// in the order asked.
func TestReadRowsAnyOrder(t *testing.T) {
	fs := vfs.NewMemFS()
	fs.MkdirAll("/d")
	cols := makeColumns(2000, 13)
	writeSegment(t, fs, "/d/s.seg", cols, 2000, &WriterOptions{PageBytes: 1024})
	r := openSegment(t, fs, "/d/s.seg")
	defer r.Close()
	rows := []int32{1999, 5, 700, 5, 0, 1500, 1499, 1999}
	var v vec.Vector
	for ci, c := range cols {
		col := r.Column(c.desc.Path, c.desc.Type)
		if err := r.ReadRows(0, col, rows, &v); err != nil {
			t.Fatal(err)
		}
		for k, row := range rows {
			if got, want := valueAt(&v, k, c.desc.Type), cols[ci].vals[row]; !equalVals(got, want) {
				t.Fatalf("%s row %d (asked %d-th): %.40v, want %.40v", c.desc.Path, row, k, got, want)
			}
		}
	}
	if err := r.ReadRows(0, 0, []int32{2000}, &v); err == nil {
		t.Fatal("a row past the block must be refused")
	}
}

// TestColumnBytesCountEveryUnit: the bytes ColumnBytes gives the columns
// (pages, dictionary pages, histories) and the sections make up every
// byte between the header and the footer.
func TestColumnBytesCountEveryUnit(t *testing.T) {
	const n = 20000
	rng := rand.New(rand.NewPCG(3, 4))
	ts := testColumn{desc: ColumnDesc{Path: "timestamp", Type: TypeTimestamp}}
	msg := testColumn{desc: ColumnDesc{Path: "event_message", Type: TypeString}}
	path := testColumn{desc: ColumnDesc{Path: "path", Type: TypeString}}
	for i := 0; i < n; i++ {
		ts.vals = append(ts.vals, int64(i))
		msg.vals = append(msg.vals, fmt.Sprintf("GET | 200 | %016x | https://example.com/rest/v1/items?id=%d", rng.Uint64(), rng.IntN(1e9)))
		path.vals = append(path.vals, fmt.Sprintf("/storage/v1/object/public/photo-%05d.jpg", rng.IntN(3000)))
	}
	fs := vfs.NewMemFS()
	fs.MkdirAll("/d")
	writeSegment(t, fs, "/d/s.seg", []testColumn{ts, msg, path}, n, &WriterOptions{PageBytes: 32 << 10, HistoryBytes: 16 << 10})
	r := openSegment(t, fs, "/d/s.seg")
	defer r.Close()
	if r.testChunk(0, 1).histOff == 0 || len(r.testChunk(0, 2).dict) < 2 {
		t.Fatal("the message column should have a history and the path column a paged dictionary")
	}
	total := int64(headerSize)
	for _, b := range r.ColumnBytes() {
		total += b
	}
	for _, s := range r.ft.sections {
		total += s.len
	}
	if total != r.footOff {
		t.Fatalf("header, columns and sections take %d bytes, the footer starts at %d", total, r.footOff)
	}
}

// copyAllBlocks writes every block of old, as they are, into a new
// segment at name (what compaction's block copy does).
func copyAllBlocks(t *testing.T, fs vfs.FS, old *Reader, name string, opts *WriterOptions) {
	t.Helper()
	f, err := fs.Create(name)
	if err != nil {
		t.Fatal(err)
	}
	w, err := NewWriter(f, old.Columns(), opts)
	if err != nil {
		t.Fatal(err)
	}
	colMap := identityMap(len(old.Columns()))
	for b := 0; b < old.NumBlocks(); b++ {
		if err := w.CopyBlock(old, b, colMap, false); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Finish(); err != nil {
		t.Fatal(err)
	}
	f.Close()
}

// identityMap maps each of n columns to itself (CopyBlock's colMap).
func identityMap(n int) []int {
	m := make([]int, n)
	for i := range m {
		m[i] = i
	}
	return m
}
