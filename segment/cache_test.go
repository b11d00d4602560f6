package segment

import (
	"testing"

	"github.com/sediment/sediment/internal/vfs"
)

// Dictionaries read through readers share one bounded cache: reading every
// block keeps at most the budget, values read stay correct after their
// dictionary is evicted, and closing a reader releases its entries.
func TestDictCacheBounded(t *testing.T) {
	fs := vfs.NewMemFS()
	fs.MkdirAll("/d")
	cols := makeColumns(8000, 5)
	writeSegment(t, fs, "/d/s.seg", cols, 500, nil) // 16 blocks
	r := openSegment(t, fs, "/d/s.seg")
	method := r.Column("metadata.request.method", TypeString)

	prev := SetDictCacheBytes(1 << 20)
	defer SetDictCacheBytes(prev)
	for b := range r.NumBlocks() {
		if _, err := r.DictStrings(b, method); err != nil {
			t.Fatal(err)
		}
	}
	full := DictCacheBytes()
	if full == 0 {
		t.Fatal("nothing cached after reading 16 dictionaries")
	}

	// A budget for about two dictionaries: reading every block again must
	// evict, and the results must not change.
	SetDictCacheBytes(full / 8)
	want := readAll(t, r, method)
	for range 2 {
		for b := range r.NumBlocks() {
			if _, err := r.DictStrings(b, method); err != nil {
				t.Fatal(err)
			}
			if got := DictCacheBytes(); got > full/8 {
				t.Fatalf("cache holds %d bytes, budget %d", got, full/8)
			}
		}
	}
	got := readAll(t, r, method)
	for i := range want {
		if !equalVals(got[i], want[i]) {
			t.Fatalf("row %d: %v after eviction, want %v", i, got[i], want[i])
		}
	}

	SetDictCacheBytes(1 << 20)
	if _, err := r.DictStrings(0, method); err != nil {
		t.Fatal(err)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if got := DictCacheBytes(); got != 0 {
		t.Fatalf("after Close the cache holds %d bytes of the closed reader", got)
	}
}

// Decompressed pages are cached within a budget; values read through the
// cache, and after eviction, are those written; Close releases them.
func TestPageCacheBounded(t *testing.T) {
	fs := vfs.NewMemFS()
	fs.MkdirAll("/d")
	cols := makeColumns(8000, 9)
	writeSegment(t, fs, "/d/s.seg", cols, 500, &WriterOptions{PageBytes: 512})
	r := openSegment(t, fs, "/d/s.seg")

	prev := SetPageCacheBytes(8 << 20)
	defer SetPageCacheBytes(prev)
	want := make([][]any, len(cols))
	for c := range cols {
		want[c] = readAll(t, r, c)
	}
	full := PageCacheBytes()
	if full == 0 {
		t.Fatal("no page cached after reading every column")
	}
	SetPageCacheBytes(full / 10)
	for range 2 {
		for c := range cols {
			got := readAll(t, r, c)
			for i := range got {
				if !equalVals(got[i], want[c][i]) {
					t.Fatalf("column %d row %d: %v, want %v", c, i, got[i], want[c][i])
				}
			}
			if PageCacheBytes() > full/10 {
				t.Fatalf("cache holds %d bytes, budget %d", PageCacheBytes(), full/10)
			}
		}
	}
	for c := range cols {
		for i, w := range want[c] {
			if !equalVals(w, cols[c].vals[i]) {
				t.Fatalf("column %d row %d read %v, wrote %v", c, i, w, cols[c].vals[i])
			}
		}
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if got := PageCacheBytes(); got != 0 {
		t.Fatalf("after Close the cache holds %d bytes", got)
	}
}
