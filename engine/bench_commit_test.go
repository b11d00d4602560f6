package engine

import (
	"testing"

	"github.com/sediment/sediment/internal/vfs"
)

// discardFS is an in-memory file system whose files forget what is written
// to them: the benchmarks below measure CPU, not the disk.
type discardFS struct{ *vfs.MemFS }

type discardFile struct{ vfs.File }

func (f discardFile) Write(p []byte) (int, error) { return len(p), nil }

func (d discardFS) Create(name string) (vfs.File, error) {
	f, err := d.MemFS.Create(name)
	return discardFile{f}, err
}

// BenchmarkAppendCPU measures the CPU of the ingest path (the per-event
// field cap, the log record, staging in the head, publishing) without
// I/O: one writer, 500-event batches, heads frozen every 10,000 events and
// dropped without being written out. One op is one event.
//
//	go test ./engine -run '^$' -bench AppendCPU -count 6 | tee new.txt
func BenchmarkAppendCPU(b *testing.B) {
	evs, raw := edgeEvents(b, 20_000, 1)
	e, err := Open("/data", &Options{FS: discardFS{vfs.NewMemFS()}, DisableBackground: true,
		MaxFrozenHeads: 1 << 30, HeadMemoryBudget: 1 << 40})
	if err != nil {
		b.Fatal(err)
	}
	defer e.Close()
	s, err := e.Shard("bench")
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(raw / int64(len(evs)))
	b.ReportAllocs()
	b.ResetTimer()
	const batch = 500
	for i := 0; i < b.N; i += batch {
		off := i % (len(evs) - batch)
		n := min(batch, b.N-i)
		if err := s.Append(ctx, evs[off:off+n]); err != nil {
			b.Fatal(err)
		}
		if i%(20*batch) == 0 {
			s.mu.Lock()
			s.frozen = nil
			s.mu.Unlock()
			if err := s.requestRotate(); err != nil {
				b.Fatal(err)
			}
		}
	}
}
