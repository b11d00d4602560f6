package engine

import (
	"context"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/sediment/sediment/internal/vfs"
)

// recordingRemote records what the engine tells a Remote and holds the
// added segments until release.
type recordingRemote struct {
	mu    sync.Mutex
	calls []remoteCall
	held  []*RemoteSegment
}

type remoteCall struct {
	added   uint64 // 0: none (segment ids start at 1)
	removed []uint64
}

func (r *recordingRemote) SegmentsReplaced(shard string, added *RemoteSegment, removed []uint64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	c := remoteCall{removed: removed}
	if added != nil {
		c.added = added.ID
		r.held = append(r.held, added)
	}
	r.calls = append(r.calls, c)
}

func (r *recordingRemote) OpenSegment(ctx context.Context, shard string, id uint64) (vfs.File, error) {
	panic("not called by the engine")
}

func (r *recordingRemote) take() ([]remoteCall, []*RemoteSegment) {
	r.mu.Lock()
	defer r.mu.Unlock()
	c, h := r.calls, r.held
	r.calls, r.held = nil, nil
	return c, h
}

// TestRemoteTold: flushes, compactions and retention tell Options.Remote
// what they publish and remove, in order; an added segment's file stays
// until the remote is done with it, even after it was compacted away.
func TestRemoteTold(t *testing.T) {
	fs := vfs.NewMemFS()
	rem := &recordingRemote{}
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	e, err := Open("/data", &Options{FS: fs, DisableBackground: true, CompactionMinInputs: 3, Remote: rem, Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	s, err := e.Shard("src")
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		mixedAges(t, s, now, i*100, 100)
		if err := s.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	calls, held := rem.take()
	if len(calls) != 3 || len(held) != 3 {
		t.Fatalf("after three flushes: %+v", calls)
	}
	for i, c := range calls {
		seg := held[i]
		if c.added != seg.ID || len(c.removed) != 0 || seg.Rows != 100 || seg.Size <= 0 || seg.MinTime > seg.MaxTime {
			t.Fatalf("flush %d told %+v, segment %+v", i, c, seg)
		}
		if !fs.Exists(seg.Path) || filepath.Base(seg.Path) != segName(seg.ID) {
			t.Fatalf("flush %d: file %s", i, seg.Path)
		}
	}

	if n, err := s.Compact(); err != nil || n != 3 {
		t.Fatalf("compact: %d, %v", n, err)
	}
	calls, merged := rem.take()
	if len(calls) != 1 || len(merged) != 1 || merged[0].Rows != 300 || len(calls[0].removed) != 3 {
		t.Fatalf("after compaction: %+v", calls)
	}
	for i, id := range calls[0].removed {
		if id != held[i].ID {
			t.Fatalf("compaction removed %v, want the three flushed segments", calls[0].removed)
		}
	}
	// The inputs' files stay while the remote holds them.
	for _, seg := range held {
		if !fs.Exists(seg.Path) {
			t.Fatalf("compacted input %s deleted before the remote was done with it", seg.Path)
		}
		seg.Done()
		seg.Done() // once only
		if fs.Exists(seg.Path) {
			t.Fatalf("compacted input %s kept after the remote was done", seg.Path)
		}
	}
	if got := countScan(t, s); got != 300 {
		t.Fatalf("%d events after compaction", got)
	}

	// Retention rewrites the merged segment without its expired half.
	s.SetRetentionDays(1)
	if n, err := s.ApplyRetention(); err != nil || n != 1 {
		t.Fatalf("retention: %d, %v", n, err)
	}
	calls, kept := rem.take()
	if len(calls) != 1 || len(kept) != 1 || kept[0].Rows != 150 || len(calls[0].removed) != 1 || calls[0].removed[0] != merged[0].ID {
		t.Fatalf("after retention: %+v", calls)
	}
	merged[0].Done()
	kept[0].Done()
	if got := countScan(t, s); got != 150 {
		t.Fatalf("%d events after retention", got)
	}
}
