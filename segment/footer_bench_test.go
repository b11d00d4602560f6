package segment

import (
	"runtime"
	"testing"

	"github.com/sediment/sediment/internal/vfs"
)

// BenchmarkOpenFooter opens a segment of 16 blocks of platform edge events
// (the writer's default page layout): the footer is decoded and kept for
// as long as the segment is open, so its bytes per page (footer-B/page,
// from B/op) are memory every open segment holds.
//
//	go test ./segment -run '^$' -bench OpenFooter -count 6 | tee new.txt
func BenchmarkOpenFooter(b *testing.B) {
	fs := writeFooterBenchSegment(b)
	open := func() *Reader { return openSegment(b, fs, "/b/s.seg") }
	r := open()
	pages := 0
	for blk := range r.NumBlocks() {
		for col := range r.Columns() {
			pages += r.testPages(blk, col).Len()
		}
	}
	r.Close()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		open().Close()
	}
	b.StopTimer()
	runtime.ReadMemStats(&after)
	// What one Open allocates, spread over the pages (the footer's bytes
	// dominate).
	b.ReportMetric(float64(after.TotalAlloc-before.TotalAlloc)/float64(b.N)/float64(pages), "footer-B/page")
}

// BenchmarkBlockDirectoryLoad is the cost of a read of a block whose
// directory the block directory cache does not hold (footcache.go): the
// block's footer record decoded again, from the cached footer unit
// (body=cached) or with the unit read from the file and decompressed
// first (body=file). A segment of 16 blocks of platform edge events, as
// BenchmarkOpenFooter writes it; per op, one block.
//
//	go test ./segment -run '^$' -bench BlockDirectoryLoad -count 6
func BenchmarkBlockDirectoryLoad(b *testing.B) {
	r := openSegment(b, writeFooterBenchSegment(b), "/b/s.seg")
	defer r.Close()
	for _, cached := range []bool{true, false} {
		name := "body=file"
		if cached {
			name = "body=cached"
		}
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				details.dropAll()
				if cached {
					r.footerBody(cacheFill)
				}
				b.StartTimer()
				if _, err := r.block(i % footerBenchBlocks); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// footerBenchBlocks is the blocks of the segment writeFooterBenchSegment
// writes.
const footerBenchBlocks = 16

// writeFooterBenchSegment writes /b/s.seg, footerBenchBlocks blocks of
// platform edge events in the writer's default page layout, into a new
// file system.
func writeFooterBenchSegment(b *testing.B) vfs.FS {
	data, _ := benchBlock(b)
	descs := make([]ColumnDesc, len(benchCols))
	for i, c := range benchCols {
		descs[i] = ColumnDesc{Path: c.path, Type: c.typ}
	}
	fs := vfs.NewMemFS()
	fs.MkdirAll("/b")
	f, err := fs.Create("/b/s.seg")
	if err != nil {
		b.Fatal(err)
	}
	w, err := NewWriter(f, descs, &WriterOptions{ZstdLevel: 1})
	if err != nil {
		b.Fatal(err)
	}
	for range footerBenchBlocks {
		if err := w.WriteBlock(benchBlockRows, data); err != nil {
			b.Fatal(err)
		}
	}
	if err := w.Finish(); err != nil {
		b.Fatal(err)
	}
	f.Close()
	return fs
}
