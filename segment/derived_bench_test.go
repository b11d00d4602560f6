package segment

import (
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/sediment/sediment/internal/vec"
	"github.com/sediment/sediment/internal/vfs"
)

// BenchmarkDerivedRead reads the message column of edge-shaped rows
// (makeEdgeColumns), stored as templates (version 3) and as plain text
// (version 2), with the pages read from the file each time (no page
// cache): whole, as a scan that filters on it does, and a list of one
// row in 16, as a read of the records a filter kept does. cpu-ns/op is
// the process's CPU time (steadier than wall time on a shared machine):
//
//	go test ./segment -run '^$' -bench DerivedRead -count 6
func BenchmarkDerivedRead(b *testing.B) {
	const rows = 65536
	cols := makeEdgeColumns(rows, 13)
	var list []int32
	for i := int32(3); i < rows; i += 16 {
		list = append(list, i)
	}
	benchMessageReads(b, cols, rows, list, FormatV2, FormatV3)
}

// benchMessageReads writes cols (rows rows, one block) as one segment of each version and reads
// its event_message column back, pages read from the file each time (no
// page cache): "whole/v<version>" all its rows, as a scan does, and
// "rows/v<version>" the rows of list, as a read of a filter's records
// does.
func benchMessageReads(b *testing.B, cols []testColumn, rows int, list []int32, versions ...uint8) {
	for _, version := range versions {
		fs := vfs.NewMemFS()
		fs.MkdirAll("/d")
		opts := WriterOptions{FormatVersion: version}
		writeSegment(b, fs, "/d/s.seg", cols, rows, &opts)
		r := openSegment(b, fs, "/d/s.seg")
		col := r.Column("event_message", TypeString)
		for _, read := range []string{"whole", "rows"} {
			b.Run(fmt.Sprintf("%s/v%d", read, version), func(b *testing.B) {
				var v vec.Vector
				n := rows
				if read == "rows" {
					n = len(list)
				}
				b.ReportAllocs()
				cpu := benchCPU()
				for i := 0; i < b.N; i++ {
					var err error
					if read == "rows" {
						err = r.readRowsInto(0, col, list, &v, readCtl{mode: cacheBypass, reuse: true})
					} else {
						err = r.readColumnInto(0, col, 0, rows, &v, readCtl{mode: cacheBypass, reuse: true})
					}
					if err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(benchCPU()-cpu)/float64(b.N), "cpu-ns/op")
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/row")
			})
		}
		r.Close()
	}
}

// benchCPU is the CPU time the process has used.
func benchCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
