package engine

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sediment/sediment/event"
	"github.com/sediment/sediment/internal/vfs"
)

// TestIdleHeadIsFlushed: a head that holds enough to matter and got no
// events for HeadIdleFlush is written to a segment without waiting for
// HeadMaxAge; a smaller one stays in memory.
func TestIdleHeadIsFlushed(t *testing.T) {
	var clock atomic.Int64
	clock.Store(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).UnixNano())
	opts := testOptions(vfs.NewMemFS())
	opts.DisableBackground = false
	opts.Now = func() time.Time { return time.Unix(0, clock.Load()) }
	opts.HeadIdleFlush = 30 * time.Second
	opts.HeadIdleMinBytes = 4096
	opts.CompactionInterval = time.Hour
	e := openTestEngine(t, nil, opts)
	defer e.Close()
	busy, _ := e.Shard("busy")
	quiet, _ := e.Shard("quiet")
	ts := clock.Load() / 1000
	var evs []event.Event
	for i := range 200 {
		evs = append(evs, testEvent(i, ts+int64(i)))
	}
	if err := busy.Append(context.Background(), evs); err != nil {
		t.Fatal(err)
	}
	if err := quiet.Append(context.Background(), evs[:1]); err != nil {
		t.Fatal(err)
	}
	clock.Add(int64(29 * time.Second))
	time.Sleep(1500 * time.Millisecond) // the flusher looks every second
	if in := busy.Info(); in.Segments != 0 || in.HeadRows != 200 {
		t.Fatalf("flushed before idle: %+v", in)
	}
	clock.Add(int64(2 * time.Second))
	deadline := time.Now().Add(10 * time.Second)
	for busy.Info().Segments == 0 {
		if time.Now().After(deadline) {
			t.Fatalf("idle head not flushed: %+v", busy.Info())
		}
		time.Sleep(50 * time.Millisecond)
	}
	if in := busy.Info(); in.HeadRows != 0 || in.SegmentRows != 200 {
		t.Fatalf("after idle flush: %+v", in)
	}
	if in := quiet.Info(); in.Segments != 0 || in.HeadRows != 1 {
		t.Fatalf("tiny head flushed: %+v", in)
	}
	checkClean(t, e)
}
