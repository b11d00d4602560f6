package engine

import (
	"github.com/sediment/sediment/segment"
	"github.com/sediment/sediment/sql/scan"
)

// scanMemoBytes bounds the pages one scan's memo keeps: more than the
// pages of 200 records of platform events (a derived message refers to a
// 128 KiB page of URLs, a 16 KiB page of client addresses and a few small
// ones), the newest hits of a rare word over 20M events. The memo lives
// until the query ends.
const scanMemoBytes = 32 << 20

// newScanMemo returns the memo of a scan that selects records (nil for
// one that selects none). Such a scan reads its rows' columns (a derived
// message reads those it is built from: the URL, the status, the client
// address), then the query materialises the records it keeps from every
// column under them, the same ones among them: the memo keeps the pages
// of columns under the records the scan reads for a few rows, and saves
// decompressing them again. A scan of values only reads each page once
// and gets none.
func newScanMemo(req *scan.Request) *segment.UnitMemo {
	var records []string
	for _, c := range req.Columns {
		if c.Kind == scan.Record {
			records = append(records, c.Path)
		}
	}
	if len(records) == 0 {
		return nil
	}
	return segment.NewUnitMemo(scanMemoBytes, func(path string) bool {
		for _, rec := range records {
			if rec == "" || hasPrefixPath(path, rec) { // "": the whole event
				return true
			}
		}
		return false
	})
}
