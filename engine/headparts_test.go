package engine

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/sediment/sediment/internal/vfs"
	"github.com/sediment/sediment/sql/scan"
)

// sendHeadParts asks the snapshot of sh for its head parts, as an ingest
// node answering a query node does, and writes them under dir.
func sendHeadParts(t *testing.T, fs vfs.FS, sh *Shard, dir string) ([]HeadPart, []string) {
	t.Helper()
	sn := sh.Snapshot()
	parts, err := sn.HeadParts()
	sn.Release()
	if err != nil {
		t.Fatal(err)
	}
	var files []string
	for _, p := range parts {
		f := dir + "/" + p.Name + ".seg"
		if err := fs.MkdirAll(dir); err != nil {
			t.Fatal(err)
		}
		if err := vfs.WriteFileAtomic(fs, f, p.Data); err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	return parts, files
}

// TestHeadPartsKeptAndComplete: a head asked for again and again as it
// grows (events arriving out of time order) goes as parts that hold each
// of its events exactly once, read by a query node as the head's own
// shard reads them; whole parts are encoded once and sent again as they
// were, eight small parts become one, the tail is encoded per ask, and
// a flush lets the kept parts go.
func TestHeadPartsKeptAndComplete(t *testing.T) {
	fs := vfs.NewMemFS()
	ing, err := Open("/ingest", &Options{FS: fs, DisableBackground: true, HeadMaxRows: 1 << 20, HeadMaxBytes: 1 << 30, HeadMemoryBudget: 1 << 40})
	if err != nil {
		t.Fatal(err)
	}
	defer ing.Close()
	sh, _ := ing.Shard("src")
	rng := rand.New(rand.NewPCG(1, 2))
	truth := testEvents(0, 21_000, 1_700_000_000_000_000)
	rng.Shuffle(len(truth), func(i, j int) { truth[i], truth[j] = truth[j], truth[i] })
	base := headPartBytes.Load()
	seen := map[string][]byte{} // kept part name -> the bytes first sent
	sent := 0
	for ask := 0; sent < len(truth); ask++ {
		n := min(len(truth)-sent, 1+rng.IntN(3000))
		if ask == 3 {
			n = min(len(truth)-sent, 9000) // a whole level-1 part fills between two asks
		}
		if err := sh.Append(ctx, truth[sent:sent+n]); err != nil {
			t.Fatal(err)
		}
		sent += n
		parts, files := sendHeadParts(t, fs, sh, fmt.Sprintf("/sent/%d", ask))
		kept, rows := 0, 0
		for _, p := range parts {
			var lo, hi int
			var inst, id uint64
			if _, err := fmt.Sscanf(p.Name, "head-%x-%d-%d-%d", &inst, &id, &lo, &hi); err != nil || lo != rows || inst != ing.instance {
				t.Fatalf("ask %d: part %s does not follow row %d", ask, p.Name, rows)
			}
			rows = hi
			if !p.Kept {
				if hi-lo >= headPartRows {
					t.Fatalf("ask %d: part %s of a whole range was not kept", ask, p.Name)
				}
				continue
			}
			kept++
			if old, ok := seen[p.Name]; ok && &old[0] != &p.Data[0] {
				t.Fatalf("ask %d: kept part %s encoded again", ask, p.Name)
			}
			seen[p.Name] = p.Data
		}
		if rows != sent {
			t.Fatalf("ask %d: parts end at row %d of %d", ask, rows, sent)
		}
		if max := sent/(headPartRows*headPartFanout) + headPartFanout - 1; kept > max {
			t.Fatalf("ask %d: %d kept parts for %d rows (at most %d)", ask, kept, sent, max)
		}

		q, err := Open(fmt.Sprintf("/query%d", ask), &Options{FS: fs, DisableBackground: true, External: &fixedExternal{fs: fs, files: files}})
		if err != nil {
			t.Fatal(err)
		}
		qs, _ := q.Shard("src")
		req := scan.Request{TimeMin: scan.MinTime, TimeMax: scan.MaxTime}
		a := queryShard(qs, req)
		if missing := checkHonest(t, "query node", a, expected(truth[:sent], req)); len(missing) > 0 || a.count != int64(sent) {
			t.Fatalf("ask %d: missing %d, count %d of %d", ask, len(missing), a.count, sent)
		}
		q.Close()
	}
	if headPartBytes.Load() <= base {
		t.Fatal("no part was kept")
	}
	if err := sh.Flush(); err != nil {
		t.Fatal(err)
	}
	if got := headPartBytes.Load(); got != base {
		t.Fatalf("after the flush %d bytes of parts are still kept", got-base)
	}
}

// TestHeadPartsWithoutCache: with HeadPartsCacheBytes negative, nothing
// is kept and each head goes as one part.
func TestHeadPartsWithoutCache(t *testing.T) {
	fs := vfs.NewMemFS()
	ing, err := Open("/ingest", &Options{FS: fs, DisableBackground: true, HeadPartsCacheBytes: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer ing.Close()
	sh, _ := ing.Shard("src")
	if err := sh.Append(ctx, testEvents(0, 5000, 1_700_000_000_000_000)); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		parts, _ := sendHeadParts(t, fs, sh, "/sent")
		if len(parts) != 1 || parts[0].Kept || !strings.HasSuffix(parts[0].Name, "-0-5000") {
			t.Fatalf("parts %+v", parts)
		}
	}
}

// BenchmarkHeadParts measures what a query node's ask costs an ingest
// node whose head holds 60,000 edge events and grows by 1,000 between
// asks (one op is one ask): with the parts kept between asks, and with
// none kept (each ask encodes the whole head, as before parts were kept).
func BenchmarkHeadParts(b *testing.B) {
	evs, _ := edgeEvents(b, 61_000, 1)
	for _, keep := range []int64{0, -1} {
		name := "kept"
		if keep < 0 {
			name = "none-kept"
		}
		b.Run(name, func(b *testing.B) {
			ing, err := Open(b.TempDir(), &Options{DisableBackground: true, AckMode: AckBuffered, HeadMaxRows: 1 << 20,
				HeadMaxBytes: 1 << 30, HeadMemoryBudget: 1 << 40, HeadPartsCacheBytes: keep})
			if err != nil {
				b.Fatal(err)
			}
			defer ing.Close()
			sh, _ := ing.Shard("src")
			if err := sh.Append(ctx, evs[:60_000]); err != nil {
				b.Fatal(err)
			}
			ask := func() int {
				sn := sh.Snapshot()
				defer sn.Release()
				parts, err := sn.HeadParts()
				if err != nil {
					b.Fatal(err)
				}
				n := 0
				for _, p := range parts {
					n += len(p.Data)
				}
				return n
			}
			ask() // the parts of the rows already there
			b.ReportAllocs()
			b.ResetTimer()
			var cpu time.Duration
			var sent int
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				// The same thousand events again: the head keeps growing.
				if err := sh.Append(ctx, evs[60_000:61_000]); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
				c := processCPU()
				sent += ask()
				cpu += processCPU() - c
			}
			b.ReportMetric(float64(cpu)/float64(b.N), "cpu-ns/op")
			b.ReportMetric(float64(sent)/float64(b.N), "sent-B/op")
		})
	}
}
