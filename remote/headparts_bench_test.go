package remote

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"syscall"
	"testing"
	"time"

	"github.com/sediment/sediment/engine"
	"github.com/sediment/sediment/event"
	"github.com/sediment/sediment/internal/vec"
	"github.com/sediment/sediment/internal/vfs"
	"github.com/sediment/sediment/objstore"
	"github.com/sediment/sediment/sql/scan"
)

// BenchmarkQueryNodeFreshHead measures a query node's query (the newest
// 100 events, as Studio's log pages ask) while an ingest node's head holds
// 60,000 events and gains 1,000 between queries: with head parts kept by
// the ingest node and held by the query node (the default), and with
// neither (the whole head encoded and sent for every query). One op is one
// query; cpu-ns/op is the process's CPU (both nodes), sent-B/op the bytes
// the ingest node sent.
func BenchmarkQueryNodeFreshHead(b *testing.B) {
	evs := make([]event.Event, 61_000)
	base := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC).UnixMicro()
	for i := range evs {
		evs[i] = event.Event{ID: fmt.Sprintf("e%06d", i), Timestamp: base + int64(i)*1000, HasMessage: true,
			Message: fmt.Sprintf("GET /rest/v1/items?id=eq.%d 200 %d ms from 10.0.%d.%d", i*7919%100000, i%900, i%256, i*31%256)}
	}
	for _, keep := range []bool{true, false} {
		name := "parts-kept"
		if !keep {
			name = "whole-heads"
		}
		b.Run(name, func(b *testing.B) {
			fs := vfs.NewMemFS()
			store := objstore.NewMemStore(nil)
			opts := &engine.Options{FS: fs, DisableBackground: true, AckMode: engine.AckBuffered, HeadMaxRows: 1 << 20,
				HeadMaxBytes: 1 << 30, HeadMemoryBudget: 1 << 40}
			qopts := QueryOptions{ManifestMaxAge: -1}
			if !keep {
				opts.HeadPartsCacheBytes, qopts.MaxHeldPartBytes = -1, -1
			}
			ing, err := engine.Open("/ingest", opts)
			if err != nil {
				b.Fatal(err)
			}
			defer ing.Close()
			sh, _ := ing.Shard(source)
			var sent int64
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				var req UnsealedRequest
				if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
					http.Error(w, err.Error(), http.StatusBadRequest)
					return
				}
				cw := &countingWriter{w: w}
				if err := WriteUnsealed(cw, ing, fs, "a", req); err != nil {
					b.Error(err)
				}
				sent += cw.n
			}))
			defer srv.Close()
			cache, err := objstore.OpenCache(store, objstore.CacheOptions{FS: fs, Dir: "/q/cache"})
			if err != nil {
				b.Fatal(err)
			}
			defer cache.Close()
			qopts.Store, qopts.Cache, qopts.IngestNodes = store, cache, []string{srv.URL}
			qs, err := NewQuerySource(qopts)
			if err != nil {
				b.Fatal(err)
			}
			defer qs.Close()
			q, err := engine.Open("/q/data", &engine.Options{FS: fs, DisableBackground: true, External: qs})
			if err != nil {
				b.Fatal(err)
			}
			defer q.Close()
			qsh, _ := q.Shard(source)
			if err := sh.Append(context.Background(), evs[:60_000]); err != nil {
				b.Fatal(err)
			}
			newest := func() {
				sn := qsh.Snapshot()
				defer sn.Release()
				req := scan.Request{TimeMin: scan.MinTime, TimeMax: scan.MaxTime, Order: scan.Descending, Limit: 100,
					Columns: []scan.Column{{Path: "id", Type: vec.String}, {Path: "event_message", Type: vec.String}}}
				sc, err := sn.Table("t").Open(context.Background(), &req)
				if err != nil {
					b.Fatal(err)
				}
				defer sc.Close()
				rows := 0
				for _, u := range sc.Units() {
					if err := u.Read(context.Background(), func(bt *vec.Batch) error { rows += bt.Len; return nil }); err != nil {
						b.Fatal(err)
					}
				}
				if rows < 100 {
					b.Fatalf("%d rows", rows)
				}
			}
			newest()
			sent = 0
			b.ReportAllocs()
			b.ResetTimer()
			var cpu time.Duration
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				more := evs[60_000:61_000]
				for j := range more {
					more[j].ID = fmt.Sprintf("n%d-%d", i, j) // new events, not replays
				}
				if err := sh.Append(context.Background(), more); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
				c := processCPUTime()
				newest()
				cpu += processCPUTime() - c
			}
			b.ReportMetric(float64(cpu)/float64(b.N), "cpu-ns/op")
			b.ReportMetric(float64(sent)/float64(b.N), "sent-B/op")
		})
	}
}

type countingWriter struct {
	w interface{ Write([]byte) (int, error) }
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// processCPUTime is the CPU time the process has used (user and system).
func processCPUTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
