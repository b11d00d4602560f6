package segment

import (
	"fmt"
	"testing"

	"github.com/sediment/sediment/internal/vfs"
)

// BenchmarkResidual writes and reads Kong's access lines
// (makeKongColumns, one block of 65,536 rows): as text (version 4) and as
// templates with residual pieces (version 5). write is the whole segment
// (every column; the message's bytes per row reported), whole a read of
// the message column, rows a read of one row in 16, pages read from the
// file each time (no page cache):
//
//	go test ./segment -run '^$' -bench 'Residual$' -count 6
func BenchmarkResidual(b *testing.B) {
	const rows = 65536
	cols := makeKongColumns(rows, 7)
	var list []int32
	for i := int32(5); i < rows; i += 16 {
		list = append(list, i)
	}
	for _, version := range []uint8{FormatV4, FormatV5} {
		opts := WriterOptions{FormatVersion: version}
		b.Run(fmt.Sprintf("write/v%d", version), func(b *testing.B) {
			b.ReportAllocs()
			cpu := benchCPU()
			var msgBytes int64
			for i := 0; i < b.N; i++ {
				fs := vfs.NewMemFS()
				fs.MkdirAll("/d")
				writeSegment(b, fs, "/d/s.seg", cols, rows, &opts)
				r := openSegment(b, fs, "/d/s.seg")
				msgBytes = r.ColumnBytes()[r.Column("event_message", TypeString)]
				r.Close()
			}
			b.ReportMetric(float64(benchCPU()-cpu)/float64(b.N), "cpu-ns/op")
			b.ReportMetric(float64(msgBytes)/rows, "msg-B/row")
		})
	}
	benchMessageReads(b, cols, rows, list, FormatV4, FormatV5)
}
