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
