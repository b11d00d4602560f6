package objstore

import (
	"bytes"
	"context"
	"testing"
	"time"
)

// TestCollectGarbage: an interrupted upload (stored, never listed) and
// segments delisted by compaction are deleted once the grace period has
// passed, not before; listed segments never are.
func TestCollectGarbage(t *testing.T) {
	testCollectGarbage(t, NewMemStore(nil), nil)
}

// testCollectGarbage runs on any store: the clock the collector uses is
// moved instead of the objects' times (age counts from the store's
// Modified, which tests cannot set on a real store).
func testCollectGarbage(t *testing.T, s Store, cleanup func()) {
	ctx := context.Background()
	clock := newFakeClock()
	clock.t = time.Now()
	popts := &PublishOptions{Now: clock.Now, Update: fastRetry}
	if _, err := PublishSegment(ctx, s, upload("n1", 1, "one"), popts); err != nil {
		t.Fatal(err)
	}
	if _, err := PublishSegment(ctx, s, upload("n1", 2, "two"), popts); err != nil {
		t.Fatal(err)
	}
	// A crash between the upload and the manifest update.
	orphan := SegmentKey(testSource, "n2", 9)
	if _, err := s.Put(ctx, orphan, bytes.NewReader([]byte("orphan")), 6, PutOptions{IfNoneMatch: true}); err != nil {
		t.Fatal(err)
	}
	// Compaction replaces both, a minute later.
	clock.Advance(time.Minute)
	if _, err := PublishSegment(ctx, s, upload("n1", 3, "onetwo", SegmentName("n1", 1), SegmentName("n1", 2)), popts); err != nil {
		t.Fatal(err)
	}
	foreign := SegmentsPrefix(testSource) + "README"
	s.Put(ctx, foreign, bytes.NewReader([]byte("x")), 1, PutOptions{})

	gopts := &GCOptions{Now: clock.Now, Grace: time.Hour, Update: fastRetry}
	res, err := CollectGarbage(ctx, s, testSource, gopts)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Deleted) != 0 || res.Waiting != 3 || res.Live != 1 || res.Foreign != 1 {
		t.Fatalf("within the grace period: %+v", res)
	}

	clock.Advance(time.Hour - time.Second) // the orphan is past it, the delisted not yet
	res, err = CollectGarbage(ctx, s, testSource, gopts)
	if err != nil {
		t.Fatal(err)
	}
	if !equalStrings(res.Deleted, []string{orphan}) || res.Waiting != 2 {
		t.Fatalf("orphan past the grace period: %+v", res)
	}

	clock.Advance(2 * time.Second)
	res, err = CollectGarbage(ctx, s, testSource, gopts)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{SegmentKey(testSource, "n1", 1), SegmentKey(testSource, "n1", 2)}; !equalStrings(res.Deleted, want) {
		t.Fatalf("delisted past the grace period: deleted %v, want %v", res.Deleted, want)
	}
	mf, _, err := ReadManifest(ctx, s, testSource)
	if err != nil {
		t.Fatal(err)
	}
	if len(mf.Removed) != 0 || len(mf.Segments) != 1 {
		t.Fatalf("manifest after collection: %+v", mf)
	}
	objs, err := s.List(ctx, SegmentsPrefix(testSource))
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, o := range objs {
		keys = append(keys, o.Key)
	}
	if want := []string{foreign, SegmentKey(testSource, "n1", 3)}; !equalStrings(keys, want) {
		t.Fatalf("objects left %v, want %v", keys, want)
	}
	if got := readAll(t, s, SegmentKey(testSource, "n1", 3), GetOptions{}); string(got) != "onetwo" {
		t.Fatalf("live segment %q", got)
	}
}
