package segment

import (
	"fmt"
	"testing"

	"github.com/sediment/sediment/internal/vec"
	"github.com/sediment/sediment/internal/vfs"
)

// BenchmarkDerivedRead reads the message column of edge-shaped rows
// (makeEdgeColumns) whole, as a scan that filters on it does, stored as
// templates (version 3) and as plain text (version 2), with the pages
// read from the file each time (no page cache):
//
//	go test ./segment -run '^$' -bench DerivedRead -count 6
func BenchmarkDerivedRead(b *testing.B) {
	const rows = 65536
	cols := makeEdgeColumns(rows, 13)
	for _, version := range []uint8{FormatV2, FormatV3} {
		fs := vfs.NewMemFS()
		fs.MkdirAll("/d")
		opts := WriterOptions{FormatVersion: version}
		writeSegment(b, fs, "/d/s.seg", cols, rows, &opts)
		r := openSegment(b, fs, "/d/s.seg")
		col := r.Column("event_message", TypeString)
		b.Run(fmt.Sprintf("v%d", version), func(b *testing.B) {
			var v vec.Vector
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				if err := r.readColumnInto(0, col, 0, rows, &v, cacheBypass, true); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*rows), "ns/row")
		})
		r.Close()
	}
}
