package segment

// Benchmarks of writing and reading a block of generated platform edge
// events (bench/gen): the wide message and URL, a cf-ray id, a client IP,
// a request path (dictionary) and the status code.
//
//	go test ./segment -run '^$' -bench . -count 6 | tee new.txt
//	benchstat old.txt new.txt

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/sediment/sediment/bench/gen"
	"github.com/sediment/sediment/event"
	"github.com/sediment/sediment/internal/vec"
	"github.com/sediment/sediment/internal/vfs"
)

const benchBlockRows = 65536

var benchCols = []struct {
	path string
	typ  ColType
	from []string // path of the field in the event; nil: the message
}{
	{"timestamp", TypeTimestamp, nil},
	{"event_message", TypeString, nil},
	{"metadata.request.url", TypeString, []string{"metadata", "request", "url"}},
	{"metadata.request.path", TypeString, []string{"metadata", "request", "path"}},
	{"metadata.response.headers.cf_ray", TypeString, []string{"metadata", "response", "headers", "cf_ray"}},
	{"metadata.request.headers.x_real_ip", TypeString, []string{"metadata", "request", "headers", "x_real_ip"}},
	{"metadata.response.status_code", TypeInt64, []string{"metadata", "response", "status_code"}},
}

var (
	benchOnce sync.Once
	benchData []*ColumnData
	benchRaw  int64
)

// benchBlock generates one block of platform edge events as columns.
func benchBlock(tb testing.TB) ([]*ColumnData, int64) {
	benchOnce.Do(func() {
		g := gen.New(gen.EdgeLogs, gen.Options{Seed: 5, Shape: gen.Platform, Projects: 50, Rate: 100})
		var p event.Parser
		var norm event.Normalizer
		now := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
		benchData = make([]*ColumnData, len(benchCols))
		for i := range benchData {
			benchData[i] = &ColumnData{Nulls: vec.NewBitset(benchBlockRows)}
		}
		var buf []byte
		for r := 0; r < benchBlockRows; r++ {
			buf = g.AppendEvent(buf[:0])
			benchRaw += int64(len(buf))
			v, err := p.Parse(buf)
			if err != nil {
				panic(err)
			}
			ev, _ := norm.Normalize(v, now, event.NormalizeOptions{})
			for c, bc := range benchCols {
				d := benchData[c]
				switch {
				case bc.typ == TypeTimestamp:
					d.Ints = append(d.Ints, ev.Timestamp)
				case bc.from == nil:
					d.Strs = append(d.Strs, ev.Message)
				default:
					fv := ev.Fields.Path(bc.from...)
					if fv == nil {
						d.Nulls.Set(r)
					}
					if bc.typ == TypeInt64 {
						x := int64(0)
						if fv != nil {
							x = fv.Int()
						}
						d.Ints = append(d.Ints, x)
					} else {
						s := ""
						if fv != nil {
							s = fv.Str
						}
						d.Strs = append(d.Strs, string([]byte(s)))
					}
				}
			}
			ev.Message = string([]byte(ev.Message))
			benchData[1].Strs[r] = ev.Message
			if r%4096 == 0 {
				p.Reset()
				norm.Reset()
			}
		}
		for r := 1; r < benchBlockRows; r++ { // a block is sorted by time
			if benchData[0].Ints[r] < benchData[0].Ints[r-1] {
				benchData[0].Ints[r] = benchData[0].Ints[r-1]
			}
		}
	})
	return benchData, benchRaw
}

// benchSegment writes the block as a segment (compaction's level, and
// opts' page sizes and history) and opens it.
func benchSegment(tb testing.TB, opts WriterOptions) *Reader {
	data, _ := benchBlock(tb)
	fs := vfs.NewMemFS()
	fs.MkdirAll("/b")
	f, err := fs.Create("/b/s.seg")
	if err != nil {
		tb.Fatal(err)
	}
	descs := make([]ColumnDesc, len(benchCols))
	for i, c := range benchCols {
		descs[i] = ColumnDesc{Path: c.path, Type: c.typ}
	}
	opts.ZstdLevel = 3
	w, err := NewWriter(f, descs, &opts)
	if err != nil {
		tb.Fatal(err)
	}
	if err := w.WriteBlock(benchBlockRows, data); err != nil {
		tb.Fatal(err)
	}
	if err := w.Finish(); err != nil {
		tb.Fatal(err)
	}
	f.Close()
	rf, err := fs.Open("/b/s.seg")
	if err != nil {
		tb.Fatal(err)
	}
	r, err := Open(rf, "s.seg")
	if err != nil {
		tb.Fatal(err)
	}
	return r
}

// BenchmarkWriteBlock encodes and compresses one block (level 3, as
// compaction writes). Reports the segment's bytes per row.
func BenchmarkWriteBlock(b *testing.B) {
	data, raw := benchBlock(b)
	descs := make([]ColumnDesc, len(benchCols))
	for i, c := range benchCols {
		descs[i] = ColumnDesc{Path: c.path, Type: c.typ}
	}
	b.SetBytes(raw)
	b.ReportAllocs()
	b.ResetTimer()
	var size int64
	for i := 0; i < b.N; i++ {
		fs := vfs.NewMemFS()
		fs.MkdirAll("/b")
		f, _ := fs.Create("/b/s.seg")
		w, err := NewWriter(f, descs, &WriterOptions{ZstdLevel: 3})
		if err != nil {
			b.Fatal(err)
		}
		if err := w.WriteBlock(benchBlockRows, data); err != nil {
			b.Fatal(err)
		}
		if err := w.Finish(); err != nil {
			b.Fatal(err)
		}
		size = w.Size()
	}
	b.ReportMetric(float64(size)/benchBlockRows, "bytes/row")
}

// benchLayouts are the page layouts the read benchmarks compare: the
// writer's defaults (128 KiB pages of wide values, 2048 rows of narrow
// ones, 8192 of tiny ones), the earlier 8192-row cap for all, 64 KiB
// pages compressed against a 32 KiB history, and 1 MiB pages (version
// 1's default).
var benchLayouts = []struct {
	name string
	opts WriterOptions
}{
	{"layout=default", WriterOptions{}},
	{"layout=8192rows", WriterOptions{PageRows: 8192}},
	{"layout=64K-history", WriterOptions{PageBytes: 64 << 10, HistoryBytes: 32 << 10}},
	{"layout=1M", WriterOptions{PageBytes: 1 << 20}},
}

// BenchmarkReadColumn decodes a whole block of each column, the caches
// off (every page decompressed: a scan of much data).
func BenchmarkReadColumn(b *testing.B) {
	defer SetPageCacheBytes(SetPageCacheBytes(0))
	defer SetDictCacheBytes(SetDictCacheBytes(0))
	for _, l := range benchLayouts {
		r := benchSegment(b, l.opts)
		for col, c := range benchCols {
			b.Run(l.name+"/col="+c.path, func(b *testing.B) {
				var v vec.Vector
				b.ReportAllocs()
				for i := 0; i < b.N; i++ {
					if err := r.ReadColumn(0, col, 0, benchBlockRows, &v); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/benchBlockRows, "ns/row")
			})
		}
	}
}

// BenchmarkReadRows reads 16 random rows of each column of a block, the
// caches off: a record a query materialises, one column at a time.
func BenchmarkReadRows(b *testing.B) {
	defer SetPageCacheBytes(SetPageCacheBytes(0))
	defer SetDictCacheBytes(SetDictCacheBytes(0))
	rng := rand.New(rand.NewPCG(1, 1))
	rows := make([]int32, 16)
	for i := range rows {
		rows[i] = int32(rng.IntN(benchBlockRows))
	}
	rows = distinctSorted(rows)
	for _, l := range benchLayouts {
		r := benchSegment(b, l.opts)
		for col, c := range benchCols {
			b.Run(fmt.Sprintf("%s/col=%s", l.name, c.path), func(b *testing.B) {
				var v vec.Vector
				b.ReportAllocs()
				for i := 0; i < b.N; i++ {
					if err := r.ReadRows(0, col, rows, &v); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// distinctSorted sorts rows and drops repeats.
func distinctSorted(rows []int32) []int32 {
	slices.Sort(rows)
	return slices.Compact(rows)
}

// BenchmarkPlanChunk plans (picks the encoding of, without encoding) each
// column of the block, with a writer's reused scratch: the work a writer
// does per chunk before writing a page.
func BenchmarkPlanChunk(b *testing.B) {
	data, _ := benchBlock(b)
	for c, bc := range benchCols {
		b.Run("col="+bc.path, func(b *testing.B) {
			var sc planScratch
			b.ReportAllocs()
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			cpu := threadCPU()
			for b.Loop() {
				planChunk(bc.typ, data[c], benchBlockRows, FormatLatest, &sc)
			}
			b.ReportMetric(float64(threadCPU()-cpu)/float64(b.N), "cpu-ns/op")
		})
	}
}

// BenchmarkWriteSegment writes the block's rows as a segment of 8 blocks
// of 8,192 rows, at flush's zstd level (1) and compaction's (3): planning,
// derived text, encoding and compression, on the benchmark's thread
// (cpu-ns/op is that thread's CPU, which other work on the machine does
// not inflate as it does ns/op). One op is one segment.
func BenchmarkWriteSegment(b *testing.B) {
	data, raw := benchBlock(b)
	descs := make([]ColumnDesc, len(benchCols))
	for i, c := range benchCols {
		descs[i] = ColumnDesc{Path: c.path, Type: c.typ}
	}
	const blockRows = 8192
	blocks := make([][]*ColumnData, benchBlockRows/blockRows)
	for k := range blocks {
		from := k * blockRows
		for _, d := range data {
			p := &ColumnData{}
			if d.Nulls != nil {
				p.Nulls = vec.NewBitset(blockRows)
				for r := 0; r < blockRows; r++ {
					if d.Nulls.Get(from + r) {
						p.Nulls.Set(r)
					}
				}
			}
			if d.Ints != nil {
				p.Ints = d.Ints[from : from+blockRows]
			}
			if d.Strs != nil {
				p.Strs = d.Strs[from : from+blockRows]
			}
			blocks[k] = append(blocks[k], p)
		}
	}
	for _, level := range []int{1, 3} {
		b.Run(fmt.Sprintf("zstd=%d", level), func(b *testing.B) {
			b.SetBytes(raw)
			b.ReportAllocs()
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			var size int64
			cpu := threadCPU()
			for b.Loop() {
				fs := vfs.NewMemFS()
				fs.MkdirAll("/b")
				f, _ := fs.Create("/b/s.seg")
				w, err := NewWriter(f, descs, &WriterOptions{ZstdLevel: level})
				if err != nil {
					b.Fatal(err)
				}
				for _, blk := range blocks {
					if err := w.WriteBlock(blockRows, blk); err != nil {
						b.Fatal(err)
					}
				}
				if err := w.Finish(); err != nil {
					b.Fatal(err)
				}
				size = w.Size()
			}
			b.ReportMetric(float64(threadCPU()-cpu)/float64(b.N), "cpu-ns/op")
			b.ReportMetric(float64(size)/benchBlockRows, "bytes/row")
		})
	}
}
