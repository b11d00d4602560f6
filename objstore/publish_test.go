package objstore

import (
	"bytes"
	"context"
	"errors"
	"sync"
	"testing"
	"time"
)

// fakeClock is a settable clock.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func newFakeClock() *fakeClock { return &fakeClock{t: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)} }

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func upload(node string, seq uint64, content string, replaces ...string) SegmentUpload {
	return SegmentUpload{Source: testSource, Node: node, Seq: seq, File: bytes.NewReader([]byte(content)),
		Size: int64(len(content)), MinTime: 10, MaxTime: 20, Rows: 3, Replaces: replaces}
}

func TestPublishSegment(t *testing.T) {
	ctx := context.Background()
	clock := newFakeClock()
	m := NewMemStore(clock.Now)
	opts := &PublishOptions{Now: clock.Now, Update: fastRetry}

	e, err := PublishSegment(ctx, m, upload("n1", 1, "segment one"), opts)
	if err != nil {
		t.Fatal(err)
	}
	if e.Name != "n1/0000000000000001.seg" || e.Size != 11 || !e.Sum.Matches(SumBytes([]byte("segment one"))) || e.ETag == "" {
		t.Fatalf("entry %+v", e)
	}
	head, err := m.Head(ctx, SegmentKey(testSource, "n1", 1))
	if err != nil || head.ETag != e.ETag {
		t.Fatalf("object: %+v, %v", head, err)
	}

	// Published again (its answer was lost): nothing changes.
	if _, err := PublishSegment(ctx, m, upload("n1", 1, "segment one"), opts); err != nil {
		t.Fatal(err)
	}
	mf, _, _ := ReadManifest(ctx, m, testSource)
	if len(mf.Segments) != 1 || mf.Generation != 1 {
		t.Fatalf("republish changed the manifest: %+v", mf)
	}

	// A compaction's output replaces its inputs in one update.
	if _, err := PublishSegment(ctx, m, upload("n1", 2, "segment two"), opts); err != nil {
		t.Fatal(err)
	}
	if _, err := PublishSegment(ctx, m, upload("n1", 3, "one and two", e.Name, SegmentName("n1", 2)), opts); err != nil {
		t.Fatal(err)
	}
	mf, _, _ = ReadManifest(ctx, m, testSource)
	if len(mf.Segments) != 1 || mf.Segments[0].Name != SegmentName("n1", 3) || len(mf.Removed) != 2 {
		t.Fatalf("after compaction: live %+v removed %+v", mf.Segments, mf.Removed)
	}

	// Another node using the same id with other bytes is refused.
	if _, err := PublishSegment(ctx, m, upload("n1", 3, "not the same"), opts); !errors.Is(err, ErrCollision) {
		t.Fatalf("collision: %v, want ErrCollision", err)
	}

	// Retention delists.
	if err := RemoveSegments(ctx, m, testSource, "n1", []string{SegmentName("n1", 3)}, opts); err != nil {
		t.Fatal(err)
	}
	mf, _, _ = ReadManifest(ctx, m, testSource)
	if len(mf.Segments) != 0 || len(mf.Removed) != 3 {
		t.Fatalf("after retention: %+v", mf)
	}
}

// TestPublishAfterFailures: whatever step fails, publishing again ends
// with the segment listed once and its object intact.
func TestPublishAfterFailures(t *testing.T) {
	ctx := context.Background()
	for fail := int64(1); fail <= 8; fail++ {
		for _, lose := range []bool{false, true} {
			clock := newFakeClock()
			m := NewMemStore(clock.Now)
			opts := &PublishOptions{Now: clock.Now, Update: fastRetry}
			if lose {
				m.LoseAnswer(fail)
			} else {
				m.FailCall(fail)
			}
			_, err1 := PublishSegment(ctx, m, upload("n1", 7, "payload"), opts)
			if err1 != nil && !Retryable(err1) {
				t.Fatalf("call %d failing (lost answer %v): %v is not retryable", fail, lose, err1)
			}
			m.ClearFaults() // past the publish's last call: not injected
			if _, err := PublishSegment(ctx, m, upload("n1", 7, "payload"), opts); err != nil {
				t.Fatalf("call %d failing (lost answer %v), then publishing again: %v", fail, lose, err)
			}
			mf, _, err := ReadManifest(ctx, m, testSource)
			if err != nil {
				t.Fatal(err)
			}
			if len(mf.Segments) != 1 {
				t.Fatalf("call %d failing: %d segments listed", fail, len(mf.Segments))
			}
			if got := readAll(t, m, SegmentKey(testSource, "n1", 7), GetOptions{}); string(got) != "payload" {
				t.Fatalf("object %q", got)
			}
		}
	}
}

// TestPublishCorruptUpload: an upload the store stored damaged is noticed,
// deleted and uploaded again.
func TestPublishCorruptUpload(t *testing.T) {
	ctx := context.Background()
	m := NewMemStore(nil)
	m.CorruptNextPut()
	if _, err := PublishSegment(ctx, m, upload("n1", 1, "precious"), &PublishOptions{Update: fastRetry}); err != nil {
		t.Fatal(err)
	}
	if got := readAll(t, m, SegmentKey(testSource, "n1", 1), GetOptions{}); string(got) != "precious" {
		t.Fatalf("object %q", got)
	}
}

// TestPublishStaleUpload: an unlisted upload older than half the grace
// period (a crash long ago) is uploaded anew, so that the garbage
// collector cannot delete it under the manifest.
func TestPublishStaleUpload(t *testing.T) {
	ctx := context.Background()
	clock := newFakeClock()
	m := NewMemStore(clock.Now)
	key := SegmentKey(testSource, "n1", 1)
	m.Put(ctx, key, bytes.NewReader([]byte("precious")), 8, PutOptions{})
	old, _ := m.Head(ctx, key)
	clock.Advance(DefaultGrace)
	if _, err := PublishSegment(ctx, m, upload("n1", 1, "precious"), &PublishOptions{Now: clock.Now}); err != nil {
		t.Fatal(err)
	}
	now, _ := m.Head(ctx, key)
	if now.ETag == old.ETag || !now.Modified.After(old.Modified) {
		t.Fatalf("stale upload reused: %+v", now)
	}
}
