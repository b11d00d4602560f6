package engine

import (
	"testing"

	"github.com/sediment/sediment/sql/scan"
)

// TestScanMemosShareOneBound: the memos of scans running at once hold at
// most scanMemoBytes together; a scan that finds it taken reads without
// a memo, and closing scans gives their share back.
func TestScanMemosShareOneBound(t *testing.T) {
	// Whatever scans of earlier tests left unclosed is not this test's.
	was := scanMemoFree.Swap(scanMemoBytes)
	t.Cleanup(func() { scanMemoFree.Store(was) })
	req := &scan.Request{Columns: []scan.Column{{Kind: scan.Record}}}
	first, firstBytes := newScanMemo(req)
	if first == nil || firstBytes != scanMemoBytes {
		t.Fatalf("first memo: %v, %d bytes", first, firstBytes)
	}
	second := &shardScan{}
	if second.memo, second.memoBytes = newScanMemo(req); second.memo != nil {
		t.Fatalf("a second memo took %d bytes while the first holds the bound", second.memoBytes)
	}
	(&shardScan{memo: first, memoBytes: firstBytes}).Close()
	third := &shardScan{}
	if third.memo, third.memoBytes = newScanMemo(req); third.memo == nil || third.memoBytes != scanMemoBytes {
		t.Fatalf("after the first closed: %v, %d bytes", third.memo, third.memoBytes)
	}
	third.Close()
	third.Close() // twice gives nothing back twice
	if free := scanMemoFree.Load(); free != scanMemoBytes {
		t.Fatalf("%d bytes free after every scan closed, want %d", free, scanMemoBytes)
	}
	if m, _ := newScanMemo(&scan.Request{}); m != nil {
		t.Fatal("a scan selecting no record got a memo")
	}
}
