package engine

import (
	"strings"
	"testing"

	"github.com/sediment/sediment/segment"
)

// TestMergeColumnsOutliveTheNextRead fills every column of each output
// block of a merge into data of its own and checks them only once the
// whole block is filled, as the segment writer holds several columns of a
// block at once (blockColumns, derived text): the merge reads every piece
// into one reused scratch vector, so a column whose strings pointed into
// it would show the values of a later read. The reference is the same
// merge with each column's values copied as soon as it is filled.
func TestMergeColumnsOutliveTheNextRead(t *testing.T) {
	s, sn := overlappingSegments(t, 14, 6, 300)

	const blockRows = 250
	fillAll := func(copyEach bool) [][][]string {
		ms, err := newMergeSource(sn.segs, noCutoff, "", s.opts.BlockRows)
		if err != nil {
			t.Fatal(err)
		}
		cols := ms.columns()
		var blocks [][][]string
		for from := 0; from < ms.rows(); from += blockRows {
			to := min(from+blockRows, ms.rows())
			held := make([]segment.ColumnData, len(cols))
			got := make([][]string, len(cols))
			for ci := range cols {
				if _, err := ms.fillColumn(ci, from, to, &held[ci]); err != nil {
					t.Fatal(err)
				}
				if copyEach {
					got[ci] = columnStrings(&held[ci], to-from)
				}
			}
			if !copyEach {
				for ci := range cols {
					got[ci] = columnStrings(&held[ci], to-from)
				}
			}
			blocks = append(blocks, got)
		}
		return blocks
	}
	want, got := fillAll(true), fillAll(false)
	strCols := 0
	for b := range want {
		for ci := range want[b] {
			if len(want[b][ci]) > 0 {
				strCols++
			}
			for r := range want[b][ci] {
				if got[b][ci][r] != want[b][ci][r] {
					t.Fatalf("block %d column %d row %d: %q once the block is filled, %q right after the column", b, ci, r, got[b][ci][r], want[b][ci][r])
				}
			}
		}
	}
	if strCols == 0 {
		t.Fatal("no string column merged")
	}
}

// columnStrings copies the string values of a filled column ("\x00null"
// for NULL), or returns nil for a column of another type.
func columnStrings(d *segment.ColumnData, n int) []string {
	if d.Strs == nil && d.Dict == nil {
		return nil
	}
	out := make([]string, n)
	for r := 0; r < n; r++ {
		switch {
		case d.Nulls != nil && d.Nulls.Get(r):
			out[r] = "\x00null"
		case d.Dict != nil:
			out[r] = strings.Clone(d.Dict[d.Codes[r]])
		default:
			out[r] = strings.Clone(d.Strs[r])
		}
	}
	return out
}
