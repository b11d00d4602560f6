package segment

import (
	"testing"

	"github.com/sediment/sediment/internal/vec"
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

// Check reads every unit from the file: a cached page or dictionary (here
// replaced by garbage, as a stand-in for a file damaged after it was
// cached) is not what it verifies, and it adds nothing to the caches.
func TestCheckBypassesCaches(t *testing.T) {
	fs := vfs.NewMemFS()
	fs.MkdirAll("/d")
	writeSegment(t, fs, "/d/s.seg", makeColumns(3000, 4), 1000, &WriterOptions{PageBytes: 4096})
	r := openSegment(t, fs, "/d/s.seg")
	defer r.Close()
	prevP, prevD := SetPageCacheBytes(8<<20), SetDictCacheBytes(8<<20)
	defer SetPageCacheBytes(prevP)
	defer SetDictCacheBytes(prevD)

	if err := r.Check(); err != nil {
		t.Fatal(err)
	}
	if PageCacheBytes() != 0 || DictCacheBytes() != 0 {
		t.Fatalf("Check filled the caches: %d page bytes, %d dictionary bytes", PageCacheBytes(), DictCacheBytes())
	}
	c := r.testBlock(0).chunks[0]
	garbage := []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}
	pages.put(pageKey{r: r, off: c.page(0).off}, garbage, 64)
	for _, ch := range r.testBlock(0).chunks {
		if ch.dictEntries > 0 {
			dicts.put(dictKey{r: r, b: 0, col: ch.col}, &dictData{}, 64)
		}
	}
	if err := r.Check(); err != nil {
		t.Fatalf("Check used the cached garbage: %v", err)
	}
	var v vec.Vector
	if err := r.ReadColumn(0, c.col, 0, r.Block(0).Rows, &v); err == nil {
		t.Fatal("a query read should have used the cached page (and failed on it)")
	}
}
