package segment

import (
	"fmt"
	"testing"

	"github.com/sediment/sediment/internal/vec"
	"github.com/sediment/sediment/internal/vfs"
)

// TestPageOfFindsEveryRowsPage: pageOf finds, for every row of a block of
// many pages and from every page at or before the row's, the page that
// holds the row; past the last row it finds none. A read of a few rows
// and of a short range then comes back right from the pages it finds.
func TestPageOfFindsEveryRowsPage(t *testing.T) {
	const n = 5000
	ts := testColumn{desc: ColumnDesc{Path: "timestamp", Type: TypeTimestamp}}
	msg := testColumn{desc: ColumnDesc{Path: "event_message", Type: TypeString}}
	for i := 0; i < n; i++ {
		ts.vals = append(ts.vals, int64(i))
		msg.vals = append(msg.vals, fmt.Sprintf("message %d with some words to fill a page %08x", i, i*2654435761))
	}
	fs := vfs.NewMemFS()
	fs.MkdirAll("/d")
	writeSegment(t, fs, "/d/s.seg", []testColumn{ts, msg}, n, &WriterOptions{PageBytes: 4 << 10})
	r := openSegment(t, fs, "/d/s.seg")
	defer r.Close()
	c, err := r.chunk(0, 1)
	if err != nil {
		t.Fatal(err)
	}
	pages := c.pages
	if pages.Len() < 20 {
		t.Fatalf("%d pages, want many", pages.Len())
	}
	for row := 0; row < n; row++ {
		want := 0
		for first, end := pages.Span(want); row < first || row >= end; first, end = pages.Span(want) {
			want++
		}
		for from := 0; from <= want; from += max(1, want/3) {
			if got := pageOf(pages, from, row); got != want {
				t.Fatalf("row %d from page %d: page %d, want %d", row, from, got, want)
			}
		}
	}
	if got := pageOf(pages, 0, n); got != pages.Len() {
		t.Fatalf("past the last row: page %d, want %d", got, pages.Len())
	}
	rows := []int32{0, 1, 777, 778, 2500, n - 1}
	var v vec.Vector
	if err := r.ReadRows(0, 1, rows, &v); err != nil {
		t.Fatal(err)
	}
	for k, row := range rows {
		if got := v.StringAt(k); got != msg.vals[row] {
			t.Fatalf("row %d: %q, want %q", row, got, msg.vals[row])
		}
	}
	if err := r.ReadColumn(0, 1, 1234, 1300, &v); err != nil {
		t.Fatal(err)
	}
	for k := 0; k < 66; k++ {
		if got := v.StringAt(k); got != msg.vals[1234+k] {
			t.Fatalf("range row %d: %q, want %q", 1234+k, got, msg.vals[1234+k])
		}
	}
}
