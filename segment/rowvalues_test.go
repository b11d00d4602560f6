package segment

import (
	"strconv"
	"testing"

	"github.com/sediment/sediment/internal/vec"
	"github.com/sediment/sediment/internal/vfs"
)

// TestRowValuesKeptForSparseReads: reads of a few rows of a block of a
// text column (the derived message and the plain text it refers to; a
// dictionary-encoded one is read from its dictionary)
// return, the first time and again (from the values the first read
// kept, without reading the file), what a read of the whole block
// returns, NULLs included; a read of most of a block keeps nothing.
func TestRowValuesKeptForSparseReads(t *testing.T) {
	DropCaches()
	defer DropCaches()
	cols := makeEdgeColumns(3000, 5)
	fs := vfs.NewMemFS()
	fs.MkdirAll("/d")
	writeSegment(t, fs, "/d/s.seg", cols, 1000, nil)
	f, err := fs.Open("/d/s.seg")
	if err != nil {
		t.Fatal(err)
	}
	cf := &countingFile{File: f}
	r, err := Open(cf, "s.seg")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	msg := r.Column("event_message", TypeString)
	if derivedBlocks(r, msg) == 0 {
		t.Fatal("no block derives the message")
	}
	var textCols []int
	for _, c := range cols {
		if c.desc.Type == TypeString {
			textCols = append(textCols, r.Column(c.desc.Path, TypeString))
		}
	}
	nulls := 0
	for _, col := range textCols {
		for b := 0; b < r.NumBlocks(); b++ {
			bi := r.Block(b)
			whole := readBlockStrings(t, r, b, col, nil)
			for start := 0; start+40 < bi.Rows; start += 97 {
				rows := []int32{int32(start), int32(start + 13), int32(start + 40)}
				for round := 0; round < 2; round++ {
					reads := cf.reads
					got := readBlockStrings(t, r, b, col, rows)
					for i, x := range rows {
						if (got[i] == nil) != (whole[x] == nil) || got[i] != nil && *got[i] != *whole[x] {
							t.Fatalf("%s block %d row %d, read %d: %s, want %s", r.Columns()[col].Path, b, x, round, show(got[i]), show(whole[x]))
						}
						if got[i] == nil {
							nulls++
						}
					}
					if ci, _ := r.Chunk(b, col); round == 1 && ci.DictEntries == 0 && cf.reads != reads {
						t.Fatalf("%s block %d rows %v read again: %d reads of the file, want none", r.Columns()[col].Path, b, rows, cf.reads-reads)
					}
				}
			}
		}
	}
	if nulls == 0 {
		t.Fatal("no NULL among the rows read")
	}
	// Most of a block: read from the pages every time.
	DropCaches()
	SetPageCacheBytes(0)
	defer SetPageCacheBytes(DefaultPageCacheBytes)
	SetPageCacheBytes(DefaultPageCacheBytes)
	rows := make([]int32, 500)
	for i := range rows {
		rows[i] = int32(2 * i)
	}
	readBlockStrings(t, r, 0, msg, rows)
	if n := RowTextBytes(); n != 0 {
		t.Fatalf("a read of half a block kept %d bytes", n)
	}
}

// readBlockStrings reads rows of a string column of block b (all of them
// when rows is nil) through a scan's single pass, a nil for a NULL.
func readBlockStrings(t *testing.T, r *Reader, b, col int, rows []int32) []*string {
	t.Helper()
	var v vec.Vector
	if err := r.Read(b, col, 0, r.Block(b).Rows, rows, &v, ReadOptions{Once: true}); err != nil {
		t.Fatal(err)
	}
	out := make([]*string, v.Len)
	for i := range out {
		if !v.IsNull(i) {
			s := v.StringAt(i)
			out[i] = &s
		}
	}
	return out
}

func show(s *string) string {
	if s == nil {
		return "NULL"
	}
	return strconv.Quote(*s)
}
