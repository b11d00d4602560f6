package engine

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/sediment/sediment/internal/vfs"
	"github.com/sediment/sediment/segment"
)

// BenchmarkFooterMemory measures what the footers of open segments hold in
// memory: the segments of SEDIMENT_BENCH_EVENTS edge events (default 1M;
// ordered by project, flushed every 100,000 events and compacted, as
// loadedShard builds them) are opened together, each footerOpens times
// (as that many segments of the same shape would be: the shared zstd
// decoder keeps some of its last outputs, which must not count as a
// segment's), and the live heap one opening of all of them adds is
// reported per million events stored (footer-MiB/Mevent: what stays
// resident, counted-MiB/Mevent: what segment.FooterMemory counts of it),
// per segment, per chunk, and against the footers' encoded size on disk
// (x-encoded). Then every block's directory is loaded into the block
// directory cache (unbounded for the measure), as a query reading every
// block would: dirs-MiB/Mevent is what the directories add to the heap,
// dirs-counted-MiB/Mevent what the cache counts of them (the cache's
// budget bounds the counted bytes). Every op opens all the segments once;
// B/op and allocs/op are those of the opens.
//
//	SEDIMENT_BENCH_EVENTS=1000000 go test ./engine -run '^$' -bench FooterMemory -count 1
func BenchmarkFooterMemory(b *testing.B) {
	n := benchEvents()
	s := loadedShard(b, "footmem", n, Options{SortKey: "project"})
	var paths []string
	filepath.Walk(s.segDir, func(p string, info os.FileInfo, err error) error {
		if err == nil && !info.IsDir() && filepath.Ext(p) == ".seg" {
			paths = append(paths, p)
		}
		return nil
	})
	if len(paths) == 0 {
		b.Fatal("no segments")
	}
	fs := vfs.OS
	encoded := int64(0)
	for _, p := range paths {
		encoded += footerUnitLen(b, p)
	}
	openAll := func() []*segment.Reader {
		rs := make([]*segment.Reader, len(paths))
		for i, p := range paths {
			f, err := fs.Open(p)
			if err != nil {
				b.Fatal(err)
			}
			if rs[i], err = segment.Open(f, filepath.Base(p)); err != nil {
				b.Fatal(err)
			}
		}
		return rs
	}
	closeAll := func(rs []*segment.Reader) {
		for _, r := range rs {
			r.Close()
		}
	}
	const footerOpens = 8
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	var held [footerOpens][]*segment.Reader
	for i := range held {
		held[i] = openAll()
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	perOpen := float64(int64(after.HeapAlloc)-int64(before.HeapAlloc)) / footerOpens
	resident := float64(segment.FooterMemory().ResidentBytes) / footerOpens
	// Every block's directory loaded (as a query reading every block
	// leaves them), with a cache big enough for all: what the footers
	// would hold without a bound, and what the cache counts of it.
	prevBudget := segment.SetFooterCacheBytes(1 << 40)
	segment.DropCaches()
	chunks := 0
	runtime.GC()
	runtime.ReadMemStats(&before)
	for _, rs := range held {
		for _, r := range rs {
			for blk := range r.NumBlocks() {
				for col := range r.Columns() {
					if _, ok := r.Chunk(blk, col); !ok {
						continue
					}
					chunks++
					if _, err := r.Pages(blk, col); err != nil {
						b.Fatal(err)
					}
				}
			}
		}
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	loaded := float64(int64(after.HeapAlloc)-int64(before.HeapAlloc)) / footerOpens
	counted := float64(segment.FooterMemory().CacheBytes) / footerOpens
	segment.DropCaches()
	segment.SetFooterCacheBytes(prevBudget)
	for _, rs := range held {
		closeAll(rs)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		closeAll(openAll())
	}
	b.StopTimer()
	mib := func(x float64) float64 { return x / float64(n) * 1e6 / (1 << 20) }
	b.ReportMetric(mib(perOpen), "footer-MiB/Mevent")
	b.ReportMetric(mib(resident), "counted-MiB/Mevent")
	b.ReportMetric(mib(loaded), "dirs-MiB/Mevent")
	b.ReportMetric(mib(counted), "dirs-counted-MiB/Mevent")
	b.ReportMetric(perOpen/float64(chunks/footerOpens), "footer-B/chunk")
	b.ReportMetric(perOpen/float64(len(paths)), "footer-B/segment")
	b.ReportMetric(perOpen/float64(encoded), "x-encoded")
	b.ReportMetric(float64(len(paths)), "segments")
}

// footerUnitLen returns the length of a segment file's footer unit, from
// its trailer (footer offset u64, footer length u32, ...).
func footerUnitLen(tb testing.TB, path string) int64 {
	f, err := os.Open(path)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		tb.Fatal(err)
	}
	var tr [20]byte
	if _, err := f.ReadAt(tr[:], st.Size()-int64(len(tr))); err != nil {
		tb.Fatal(err)
	}
	return int64(binary.LittleEndian.Uint32(tr[8:]))
}
