package segment

import (
	"math/rand/v2"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sediment/sediment/bench/gen"
	"github.com/sediment/sediment/event"
	"github.com/sediment/sediment/internal/vec"
	"github.com/sediment/sediment/internal/vfs"
)

// recordBlock is one block of generated platform edge events with a
// column per scalar field (about 90), as a flush writes them: what a
// query reads to rebuild whole records.
var recordBlock struct {
	once  sync.Once
	descs []ColumnDesc
	data  []*ColumnData
}

func recordColumns() ([]ColumnDesc, []*ColumnData) {
	recordBlock.once.Do(func() {
		const rows = benchBlockRows
		g := gen.New(gen.EdgeLogs, gen.Options{Seed: 7, Shape: gen.Platform, Projects: 50, Rate: 100})
		var p event.Parser
		var norm event.Normalizer
		now := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
		type key struct {
			path string
			typ  ColType
		}
		cols := map[key]*ColumnData{}
		column := func(path string, t ColType) *ColumnData {
			k := key{path, t}
			d := cols[k]
			if d == nil {
				d = &ColumnData{Nulls: vec.NewBitset(rows)}
				for r := 0; r < rows; r++ {
					d.Nulls.Set(r)
				}
				switch t {
				case TypeString:
					d.Strs = make([]string, rows)
				case TypeBool:
					d.Bools = make([]bool, rows)
				case TypeFloat64:
					d.Floats = make([]float64, rows)
				default:
					d.Ints = make([]int64, rows)
				}
				cols[k] = d
			}
			return d
		}
		var walk func(r int, prefix string, v *event.Value)
		walk = func(r int, prefix string, v *event.Value) {
			for i := range v.Kids {
				kid := &v.Kids[i]
				// A copy: the key may alias the parser's buffer, reused below.
				path := strings.Clone(prefix + kid.Key)
				var d *ColumnData
				switch kid.Kind {
				case event.Object:
					walk(r, path+".", kid)
					continue
				case event.String:
					d = column(path, TypeString)
					d.Strs[r] = string([]byte(kid.Str))
				case event.Int:
					d = column(path, TypeInt64)
					d.Ints[r] = kid.Int()
				case event.Float:
					d = column(path, TypeFloat64)
					d.Floats[r] = kid.Float()
				case event.Bool:
					d = column(path, TypeBool)
					d.Bools[r] = kid.Bool()
				default:
					continue
				}
				d.Nulls.Clear(r)
			}
		}
		var buf []byte
		var last int64
		for r := 0; r < rows; r++ {
			buf = g.AppendEvent(buf[:0])
			v, err := p.Parse(buf)
			if err != nil {
				panic(err)
			}
			ev, _ := norm.Normalize(v, now, event.NormalizeOptions{})
			last = max(last, ev.Timestamp) // a block is sorted by time
			column("timestamp", TypeTimestamp).Ints[r] = last
			column("timestamp", TypeTimestamp).Nulls.Clear(r)
			column("event_message", TypeString).Strs[r] = string([]byte(ev.Message))
			column("event_message", TypeString).Nulls.Clear(r)
			column("id", TypeString).Strs[r] = string([]byte(ev.ID))
			column("id", TypeString).Nulls.Clear(r)
			walk(r, "", &ev.Fields)
			if r%4096 == 0 {
				p.Reset()
				norm.Reset()
			}
		}
		keys := make([]key, 0, len(cols))
		for k := range cols {
			keys = append(keys, k)
		}
		sort.Slice(keys, func(i, j int) bool { return keys[i].path < keys[j].path })
		for _, k := range keys {
			recordBlock.descs = append(recordBlock.descs, ColumnDesc{Path: k.path, Type: k.typ})
			recordBlock.data = append(recordBlock.data, cols[k])
		}
	})
	return recordBlock.descs, recordBlock.data
}

// BenchmarkReadRecord reads one random row of every column of a block
// (about 90 columns of platform events; the caches off): a whole record
// of a rare match, which decompresses one page of each column. The
// layouts compare the writer's row caps (2048 rows, 8192 for tiny values)
// with the earlier 8192 for every page.
//
//	go test ./segment -run '^$' -bench ReadRecord -count 6 | tee new.txt
func BenchmarkReadRecord(b *testing.B) {
	defer SetPageCacheBytes(SetPageCacheBytes(0))
	defer SetDictCacheBytes(SetDictCacheBytes(0))
	descs, data := recordColumns()
	for _, l := range []struct {
		name string
		opts WriterOptions
	}{{"layout=default", WriterOptions{}}, {"layout=8192rows", WriterOptions{PageRows: 8192}}} {
		fs := vfs.NewMemFS()
		fs.MkdirAll("/b")
		f, err := fs.Create("/b/s.seg")
		if err != nil {
			b.Fatal(err)
		}
		opts := l.opts
		opts.ZstdLevel = 3
		w, err := NewWriter(f, descs, &opts)
		if err != nil {
			b.Fatal(err)
		}
		if err := w.WriteBlock(benchBlockRows, data); err != nil {
			b.Fatal(err)
		}
		if err := w.Finish(); err != nil {
			b.Fatal(err)
		}
		size := w.Size()
		f.Close()
		rf, err := fs.Open("/b/s.seg")
		if err != nil {
			b.Fatal(err)
		}
		r, err := Open(rf, "s.seg")
		if err != nil {
			b.Fatal(err)
		}
		b.Run(l.name, func(b *testing.B) {
			rng := rand.New(rand.NewPCG(1, 1))
			var v vec.Vector
			b.ReportAllocs()
			cpu := benchCPU()
			for i := 0; i < b.N; i++ {
				row := []int32{int32(rng.IntN(benchBlockRows))}
				for c := range descs {
					if err := r.ReadRows(0, c, row, &v); err != nil {
						b.Fatal(err)
					}
				}
			}
			b.ReportMetric(float64(benchCPU()-cpu)/float64(b.N), "cpu-ns/op")
			b.ReportMetric(float64(len(descs)), "columns")
			b.ReportMetric(float64(size)/benchBlockRows, "bytes/row")
		})
	}
}
