package engine

import (
	"sync/atomic"

	"github.com/sediment/sediment/segment"
	"github.com/sediment/sediment/sql/scan"
)

// scanMemoBytes bounds the pages the memos of all scans running at once
// keep together (a scan takes what is left of it, up to all of it): more
// than the pages of 200 records of platform events (a derived message
// refers to a 128 KiB page of URLs, a 16 KiB page of client addresses and
// a few small ones), the newest hits of a rare word over 20M events. A
// memo lives until its query ends. The queries' own memory accounts do
// not reach the engine's scans, so the bound is the process's: however
// many queries run, memos hold at most this much.
const scanMemoBytes = 32 << 20

// minScanMemoBytes is the least worth keeping a memo for.
const minScanMemoBytes = 1 << 20

// scanMemoFree is what is left of scanMemoBytes for new scans' memos.
var scanMemoFree atomic.Int64

func init() { scanMemoFree.Store(scanMemoBytes) }

// takeScanMemoBytes takes up to want bytes of scanMemoFree and returns
// how many it took.
func takeScanMemoBytes(want int64) int64 {
	for {
		free := scanMemoFree.Load()
		got := min(want, free)
		if got < minScanMemoBytes {
			return 0
		}
		if scanMemoFree.CompareAndSwap(free, free-got) {
			return got
		}
	}
}

// newScanMemo returns the memo of a scan that selects records (nil for
// one that selects none). Such a scan reads its rows' columns (a derived
// message reads those it is built from: the URL, the status, the client
// address), then the query materialises the records it keeps from every
// column under them, the same ones among them: the memo keeps the pages
// of columns under the records the scan reads for a few rows, and saves
// decompressing them again. A scan of values only reads each page once
// and gets none.
func newScanMemo(req *scan.Request) (*segment.UnitMemo, int64) {
	var records []string
	for _, c := range req.Columns {
		if c.Kind == scan.Record {
			records = append(records, c.Path)
		}
	}
	if len(records) == 0 {
		return nil, 0
	}
	granted := takeScanMemoBytes(scanMemoBytes)
	if granted == 0 {
		return nil, 0 // other scans' memos hold the bound: read as without
	}
	return segment.NewUnitMemo(granted, func(path string) bool {
		for _, rec := range records {
			if rec == "" || hasPrefixPath(path, rec) { // "": the whole event
				return true
			}
		}
		return false
	}), granted
}
