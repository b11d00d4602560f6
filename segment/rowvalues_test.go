package segment

import (
	"math"
	"strconv"
	"testing"

	"github.com/sediment/sediment/internal/vec"
	"github.com/sediment/sediment/internal/vfs"
)

// TestRowValuesKeptForSparseReads: reads of a few rows of a block of a
// text or number column (the derived message and the plain text and
// numbers it refers to; a dictionary-encoded one is read from its
// dictionary)
// return, the first time and again (from the values the first read
// kept, without reading the file), what a read of the whole block
// returns, NULLs included; a read of most of a block keeps nothing.
func TestRowValuesKeptForSparseReads(t *testing.T) {
	DropCaches()
	defer DropCaches()
	cols := makeEdgeColumns(3000, 5)
	r, cf := writeCounted(t, cols, 1000, nil)
	msg := r.Column("event_message", TypeString)
	if derivedBlocks(r, msg) == 0 {
		t.Fatal("no block derives the message")
	}
	var textCols []int // and number columns
	kinds := map[ColType]bool{}
	for _, c := range cols {
		switch c.desc.Type {
		case TypeString, TypeInt64, TypeTimestamp, TypeFloat64:
			textCols = append(textCols, r.Column(c.desc.Path, c.desc.Type))
			kinds[c.desc.Type] = true
		}
	}
	t.Logf("column types %v", kinds)
	if len(kinds) < 3 {
		t.Fatalf("columns of types %v only", kinds)
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

// readBlockStrings reads rows of a column of block b (all of them when
// rows is nil) through a scan's single pass, as text (numbers printed),
// a nil for a NULL.
func readBlockStrings(t *testing.T, r *Reader, b, col int, rows []int32) []*string {
	t.Helper()
	var v vec.Vector
	if err := r.Read(b, col, 0, r.Block(b).Rows, rows, &v, ReadOptions{Once: true}); err != nil {
		t.Fatal(err)
	}
	out := make([]*string, v.Len)
	for i := range out {
		if !v.IsNull(i) {
			var s string
			switch v.Type {
			case vec.String:
				s = v.StringAt(i)
			case vec.Float64:
				s = strconv.FormatFloat(v.Floats[i], 'g', -1, 64)
			default:
				s = strconv.FormatInt(v.Ints[i], 10)
			}
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

// TestRowValuesKeptOfNumbers: kept floats (NaN, negative zero, NULL
// among them) and ints read back as the pages give them.
func TestRowValuesKeptOfNumbers(t *testing.T) {
	DropCaches()
	defer DropCaches()
	const n = 4000
	ts, fl, in := make([]any, n), make([]any, n), make([]any, n)
	for i := range ts {
		ts[i] = int64(1_700_000_000_000_000 + 7*i)
		switch i % 5 {
		case 0:
			fl[i], in[i] = nil, nil
		case 1:
			fl[i], in[i] = math.NaN(), int64(math.MinInt64)
		case 2:
			fl[i], in[i] = math.Copysign(0, -1), int64(-i)
		default:
			fl[i], in[i] = float64(i)/3, int64(i)*1_000_003
		}
	}
	cols := []testColumn{
		{ColumnDesc{Path: "timestamp", Type: TypeTimestamp}, ts},
		{ColumnDesc{Path: "f", Type: TypeFloat64}, fl},
		{ColumnDesc{Path: "i", Type: TypeInt64}, in},
	}
	fs := vfs.NewMemFS()
	fs.MkdirAll("/d")
	writeSegment(t, fs, "/d/n.seg", cols, 2000, nil)
	r := openSegment(t, fs, "/d/n.seg")
	defer r.Close()
	for _, c := range cols {
		col := r.Column(c.desc.Path, c.desc.Type)
		for b := 0; b < r.NumBlocks(); b++ {
			var whole vec.Vector
			if err := r.ReadColumn(b, col, 0, r.Block(b).Rows, &whole); err != nil {
				t.Fatal(err)
			}
			for start := 0; start+3 < r.Block(b).Rows; start += 211 {
				rows := []int32{int32(start), int32(start + 1), int32(start + 2), int32(start + 3)}
				for round := 0; round < 2; round++ {
					var v vec.Vector
					if err := r.Read(b, col, 0, 0, rows, &v, ReadOptions{Once: true}); err != nil {
						t.Fatal(err)
					}
					for i, x := range rows {
						same := v.IsNull(i) == whole.IsNull(int(x))
						if !v.IsNull(i) {
							if v.Type == vec.Float64 {
								same = same && math.Float64bits(v.Floats[i]) == math.Float64bits(whole.Floats[x])
							} else {
								same = same && v.Ints[i] == whole.Ints[x]
							}
						}
						if !same {
							t.Fatalf("%s block %d row %d, read %d: differs from the whole block's", c.desc.Path, b, x, round)
						}
					}
				}
			}
		}
	}
	if RowTextBytes() == 0 {
		t.Fatal("no value was kept")
	}
}
