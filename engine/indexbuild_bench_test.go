package engine

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"testing"

	"github.com/sediment/sediment/index"
	"github.com/sediment/sediment/internal/vec"
	"github.com/sediment/sediment/segment"
)

// indexInput is one column vector of one block, as writeSegment hands it
// to the index builder.
type indexInput struct {
	path string
	typ  segment.ColType
	text bool
	base uint32
	v    *vec.Vector
}

// flushIndexData is what flushIndexFixture reads back from one flush.
type flushIndexData struct {
	once   sync.Once
	inputs []indexInput
	rows   uint32
	// texts are the event_message vectors of every segment the flush
	// wrote, by segment.
	texts [][]indexInput
}

// flushIndexInputs are the fixtures of a flush in time order, and
// flushIndexInputsByProject of one ordered by project (as compaction
// orders its outputs).
var flushIndexInputs, flushIndexInputsByProject flushIndexData

// flushIndexFixture flushes 262,144 edge events, in time order or by
// project (sortKey "project"), and reads back, block by block, every
// column the index of the largest segment it wrote is built from.
func flushIndexFixture(b *testing.B, sortKey string) ([]indexInput, uint32) {
	f := &flushIndexInputs
	if sortKey != "" {
		f = &flushIndexInputsByProject
	}
	f.once.Do(func() {
		evs, _ := edgeEvents(b, 262144, 3)
		e, err := Open(b.TempDir(), &Options{DisableBackground: true, AckMode: AckBuffered, HeadMaxBytes: 1 << 30, HeadMemoryBudget: 1 << 30, SortKey: sortKey})
		if err != nil {
			b.Fatal(err)
		}
		defer e.Close()
		s, _ := e.Shard("bench")
		for off := 0; off < len(evs); off += 4096 {
			if err := s.Append(context.Background(), evs[off:min(off+4096, len(evs))]); err != nil {
				b.Fatal(err)
			}
		}
		if err := s.Flush(); err != nil {
			b.Fatal(err)
		}
		text := s.textIndexPaths()
		s.mu.RLock()
		segs := append([]*segRef(nil), s.segs...)
		s.mu.RUnlock()
		// A flush may cut its rows into more than one segment: take the
		// largest.
		r := segs[0].r
		for _, sg := range segs {
			if sg.r.Rows() > r.Rows() {
				r = sg.r
			}
			col := sg.r.Column("event_message", segment.TypeString)
			if col < 0 {
				b.Fatal("no event_message column")
			}
			var texts []indexInput
			for bl := 0; bl < sg.r.NumBlocks(); bl++ {
				bi := sg.r.Block(bl)
				v := &vec.Vector{}
				if err := sg.r.ReadColumnOnce(bl, col, 0, bi.Rows, v); err != nil {
					b.Fatal(err)
				}
				texts = append(texts, indexInput{path: "event_message", typ: segment.TypeString, text: true, base: uint32(bi.FirstRow), v: v})
			}
			f.texts = append(f.texts, texts)
		}
		for bl := 0; bl < r.NumBlocks(); bl++ {
			bi := r.Block(bl)
			for ci, c := range r.Columns() {
				if c.Type != segment.TypeString && c.Type != segment.TypeInt64 && c.Type != segment.TypeBool {
					continue
				}
				v := &vec.Vector{}
				if err := r.ReadColumnOnce(bl, ci, 0, bi.Rows, v); err != nil {
					b.Fatal(err)
				}
				f.inputs = append(f.inputs, indexInput{path: c.Path, typ: c.Type, text: text[c.Path], base: uint32(bi.FirstRow), v: v})
			}
			f.rows = uint32(bi.FirstRow + bi.Rows)
		}
	})
	return f.inputs, f.rows
}

// buildFlushIndex adds the inputs as writeSegment does.
func buildFlushIndex(inputs []indexInput, rows uint32) *index.Builder {
	ib := index.NewBuilder(&index.BuilderOptions{RowsHint: rows})
	for _, in := range inputs {
		switch in.typ {
		case segment.TypeString:
			if in.path != "id" {
				ib.AddStrings(in.path, in.base, in.v)
			}
			if in.text {
				ib.AddText(in.path, in.base, in.v)
			}
		case segment.TypeInt64:
			ib.AddInts(in.path, in.base, in.v)
		case segment.TypeBool:
			ib.AddBools(in.path, in.base, in.v)
		}
	}
	return ib
}

type discardUnits struct{ n int64 }

func (d *discardUnits) WriteUnit(p []byte) (int64, int64, error) {
	off := d.n
	d.n += int64(len(p))
	return off, int64(len(p)), nil
}

// BenchmarkFlushIndex builds and writes the index of one flushed segment
// of 262,144 edge events, from the segment's own column vectors, with the
// rows in time order and ordered by project (as compaction's outputs
// are). One op is one index. held-B is what the builder holds once every
// block is added (what a flush or a merge keeps live until Write); index-B
// the bytes written.
//
//	go test ./engine -run '^$' -bench FlushIndex -count 6 | tee new.txt
func BenchmarkFlushIndex(b *testing.B) {
	for _, key := range []string{"", "project"} {
		b.Run("key="+map[string]string{"": "time"}[key]+key, func(b *testing.B) {
			inputs, rows := flushIndexFixture(b, key)
			benchFlushIndex(b, inputs, rows)
		})
	}
}

func benchFlushIndex(b *testing.B, inputs []indexInput, rows uint32) {
	var ms runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms)
	before := ms.HeapAlloc
	ib := buildFlushIndex(inputs, rows)
	runtime.GC()
	runtime.ReadMemStats(&ms)
	held := int64(ms.HeapAlloc) - int64(before)
	var out discardUnits
	dir, err := ib.Write(&out)
	if err != nil {
		b.Fatal(err)
	}
	written := out.n + int64(len(dir))
	runtime.KeepAlive(ib)
	b.ReportAllocs()
	b.ResetTimer()
	cpu := processCPU()
	for i := 0; i < b.N; i++ {
		ib := buildFlushIndex(inputs, rows)
		if _, err := ib.Write(&discardUnits{}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(processCPU()-cpu)/float64(b.N), "cpu-ns/op")
	b.ReportMetric(float64(held), "held-B")
	b.ReportMetric(float64(written), "index-B")
	b.ReportMetric(float64(rows), "rows")
}

// BenchmarkMergeTextIndex merges the token indexes of event_message of
// four flushed segments of edge events (the fixture's, twice over) into
// the index of the segment a compaction writes, as a full merge does
// (Builder.MergeText, then Write). One op is one merge. held-B is what the
// builder holds once MergeText returns (until Write).
//
//	go test ./engine -run '^$' -bench MergeTextIndex -count 6 | tee new.txt
func BenchmarkMergeTextIndex(b *testing.B) {
	flushIndexFixture(b, "")
	var inputs []index.MappedInput
	offset := uint32(0)
	for range 2 {
		for _, seg := range flushIndexInputs.texts {
			ib := index.NewBuilder(nil)
			rows := 0
			for _, in := range seg {
				ib.AddText(in.path, in.base, in.v)
				rows = int(in.base) + in.v.Len
			}
			u := &memIndexUnits{}
			dir, err := ib.Write(u)
			if err != nil {
				b.Fatal(err)
			}
			ix, err := index.Open(dir, u)
			if err != nil {
				b.Fatal(err)
			}
			rowMap := make([]uint32, rows)
			for i := range rowMap {
				rowMap[i] = offset + uint32(i)
			}
			offset += uint32(rows)
			seg := seg
			inputs = append(inputs, index.MappedInput{Index: ix, RowMap: rowMap, Values: func(fn func(row uint32, s string)) error {
				for _, in := range seg {
					for i := 0; i < in.v.Len; i++ {
						if !in.v.IsNull(i) {
							fn(in.base+uint32(i), in.v.StringAt(i))
						}
					}
				}
				return nil
			}})
		}
	}
	merge := func() *index.Builder {
		ib := index.NewBuilder(&index.BuilderOptions{RowsHint: offset})
		if err := ib.MergeText("event_message", inputs); err != nil {
			b.Fatal(err)
		}
		return ib
	}
	var ms runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms)
	before := ms.HeapAlloc
	ib := merge()
	runtime.GC()
	runtime.ReadMemStats(&ms)
	held := int64(ms.HeapAlloc) - int64(before)
	runtime.KeepAlive(ib)
	b.ReportAllocs()
	b.ResetTimer()
	cpu := processCPU()
	for i := 0; i < b.N; i++ {
		if _, err := merge().Write(&discardUnits{}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(processCPU()-cpu)/float64(b.N), "cpu-ns/op")
	b.ReportMetric(float64(held), "held-B")
	b.ReportMetric(float64(offset), "rows")
}

// memIndexUnits keeps the units written, to read them back.
type memIndexUnits struct{ data []byte }

func (m *memIndexUnits) WriteUnit(p []byte) (int64, int64, error) {
	off := int64(len(m.data))
	m.data = append(m.data, p...)
	return off, int64(len(p)), nil
}

func (m *memIndexUnits) ReadUnit(off, ln int64) ([]byte, error) {
	if off < 0 || ln < 0 || off+ln > int64(len(m.data)) {
		return nil, fmt.Errorf("unit [%d, +%d) past %d bytes", off, ln, len(m.data))
	}
	return m.data[off : off+ln], nil
}
