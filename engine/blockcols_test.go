package engine

import (
	"fmt"
	"testing"

	"github.com/sediment/sediment/internal/vec"
	"github.com/sediment/sediment/internal/vfs"
	"github.com/sediment/sediment/segment"
)

// fillCounter is a rowSource that counts the fills of each column of each
// block.
type fillCounter struct {
	rowSource
	fills map[[2]int]int // (block's first row, column) → fills
}

func (fc *fillCounter) fillColumn(ci, from, to int, d *segment.ColumnData) (bool, error) {
	fc.fills[[2]int{from, ci}]++
	return fc.rowSource.fillColumn(ci, from, to, d)
}

// TestCompactionDecodesEachColumnOncePerBlock merges segments of platform
// edge events, whose text columns the segment writer stores as templates
// over other columns (it fetches those while writing the text column):
// every column of every output block but the first is filled from the
// inputs once (in the first, a column written before the writer asks for
// it is filled again), and the segment written holds the merged rows.
func TestCompactionDecodesEachColumnOncePerBlock(t *testing.T) {
	fs := vfs.NewMemFS()
	opts := testOptions(fs)
	opts.BlockRows, opts.PageBytes, opts.SegmentMaxRows = 512, 8192, 1<<20
	e := openTestEngine(t, fs, opts)
	defer e.Close()
	s, _ := e.Shard(shardID)
	evs, _ := edgeEvents(t, 3000, 23)
	for k := 0; k < len(evs); k += 1000 {
		if err := s.Append(t.Context(), evs[k:k+1000]); err != nil {
			t.Fatal(err)
		}
		if err := s.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	sn := s.Snapshot()
	defer sn.Release()
	if len(sn.segs) != 3 {
		t.Fatalf("%d segments, want 3", len(sn.segs))
	}
	ms, err := newMergeSource(sn.segs, noCutoff, "", opts.BlockRows)
	if err != nil {
		t.Fatal(err)
	}
	fc := &fillCounter{rowSource: ms, fills: map[[2]int]int{}}
	// The writer starts without what the flushes learned (as a shard's
	// first writer does): a hint can set a text column's next search for
	// templates in a later block, and a search fetches every text and
	// integer column of its block, some of them again. Searches back off
	// (8 blocks, then twice as many each time), so they are rare.
	s.deriveHints = segment.NewDeriveHints()
	ref, err := s.writeSegment(1000, fc, segMeta{}, s.opts.CompactZstdLevel)
	if err != nil {
		t.Fatal(err)
	}
	defer ref.r.Close()
	cols := ms.columns()
	refilled := 0
	for k, n := range fc.fills {
		if n > 1 && k[0] > 0 {
			refilled++
			t.Errorf("block at row %d, column %s: filled %d times", k[0], cols[k[1]].Path, n)
		}
	}
	if blocks := ref.r.NumBlocks(); blocks < 4 || refilled > 0 {
		t.Fatalf("%d blocks, %d columns of blocks after the first filled more than once", blocks, refilled)
	}
	if ref.r.Rows() != len(evs) {
		t.Fatalf("segment has %d rows, want %d", ref.r.Rows(), len(evs))
	}

	// The rows written are the merge's, column by column.
	want, err := newMergeSource(sn.segs, noCutoff, "", opts.BlockRows)
	if err != nil {
		t.Fatal(err)
	}
	got := ref.r
	var d segment.ColumnData
	var v vec.Vector
	for b := 0; b < got.NumBlocks(); b++ {
		bi := got.Block(b)
		for ci, c := range cols {
			present, err := want.fillColumn(ci, bi.FirstRow, bi.FirstRow+bi.Rows, &d)
			if err != nil {
				t.Fatal(err)
			}
			gc := got.Column(c.Path, c.Type)
			if gc < 0 {
				t.Fatalf("column %s missing", c.Path)
			}
			if _, ok := got.Chunk(b, gc); !ok {
				if present {
					t.Fatalf("block %d column %s: no chunk, want values", b, c.Path)
				}
				continue
			}
			if err := got.ReadColumn(b, gc, 0, bi.Rows, &v); err != nil {
				t.Fatal(err)
			}
			wv := columnVector(c.Type, &d, bi.Rows)
			for r := 0; r < bi.Rows; r++ {
				if w, g := vectorCellText(c.Type, wv, r), vectorCellText(c.Type, &v, r); w != g {
					t.Fatalf("block %d column %s row %d: %q, want %q", b, c.Path, r, g, w)
				}
			}
		}
	}
}

// vectorCellText renders row r of a vector of column type t for comparison.
func vectorCellText(t segment.ColType, v *vec.Vector, r int) string {
	if v.IsNull(r) {
		return "NULL"
	}
	switch t {
	case segment.TypeBool:
		return fmt.Sprint(v.Bools[r])
	case segment.TypeInt64, segment.TypeTimestamp:
		return fmt.Sprint(v.Ints[r])
	case segment.TypeFloat64:
		return fmt.Sprint(v.Floats[r])
	case segment.TypeObject:
		return "object"
	}
	return "s:" + v.StringAt(r)
}
