package objstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

var fastRetry = &UpdateOptions{BackoffMin: time.Millisecond, BackoffMax: 5 * time.Millisecond, MaxAttempts: 200}

const testSource = "src-1"

// TestManifestWritersRace: writers adding segments to one manifest at
// once never lose each other's updates.
func TestManifestWritersRace(t *testing.T) {
	testManifestWritersRace(t, NewMemStore(nil))
}

func testManifestWritersRace(t *testing.T, s Store) {
	ctx := context.Background()
	const writers, each = 4, 8
	var wg sync.WaitGroup
	errs := make(chan error, writers*each)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			node := fmt.Sprintf("n%d", w)
			for i := range each {
				_, err := UpdateManifest(ctx, s, testSource, node, nil, func(m *Manifest) error {
					_, err := m.Add(testEntry(node, uint64(i), fmt.Sprintf("%s-%d", node, i)))
					return err
				}, fastRetry)
				if err != nil {
					errs <- err
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	m, info, err := ReadManifest(ctx, s, testSource)
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Segments) != writers*each {
		t.Fatalf("manifest lists %d segments, want %d: updates were lost", len(m.Segments), writers*each)
	}
	if m.Generation != writers*each || info.ETag == "" {
		t.Fatalf("generation %d, want %d (one per update)", m.Generation, writers*each)
	}
}

// TestUpdateLosesRaceThenRetries: a conditional write that loses (another
// writer got in between the read and the write) is retried on the new
// version, and both changes survive.
func TestUpdateLosesRaceThenRetries(t *testing.T) {
	ctx := context.Background()
	m := NewMemStore(nil)
	var raced atomic.Bool
	m.BeforeConditionalPut(func(key string) {
		if !raced.CompareAndSwap(false, true) {
			return // the interloper's own put, and our retry
		}
		_, err := UpdateManifest(ctx, m, testSource, "other", nil, func(mf *Manifest) error {
			_, err := mf.Add(testEntry("other", 1, "theirs"))
			return err
		}, nil)
		if err != nil {
			t.Error(err)
		}
	})
	calls := 0
	got, err := UpdateManifest(ctx, m, testSource, "me", nil, func(mf *Manifest) error {
		calls++
		_, err := mf.Add(testEntry("me", 1, "mine"))
		return err
	}, fastRetry)
	if err != nil {
		t.Fatal(err)
	}
	if calls != 2 {
		t.Fatalf("mutate ran %d times, want 2 (the lost race, then the retry)", calls)
	}
	if len(got.Segments) != 2 || got.Find(SegmentName("other", 1)) == nil || got.Find(SegmentName("me", 1)) == nil {
		t.Fatalf("manifest %+v lost an update", got.Segments)
	}
}

// TestUpdateGivesUp: a writer that always loses fails with
// ErrPrecondition after MaxAttempts, and leaves the object alone.
func TestUpdateGivesUp(t *testing.T) {
	ctx := context.Background()
	m := NewMemStore(nil)
	m.BeforeConditionalPut(func(key string) {
		b := []byte("interloper") // an unconditional put: no recursion
		m.Put(ctx, key, bytes.NewReader(b), int64(len(b)), PutOptions{})
	})
	_, err := UpdateObject(ctx, m, "obj", func(cur []byte, exists bool) ([]byte, error) { return []byte("mine"), nil },
		&UpdateOptions{MaxAttempts: 3, BackoffMin: time.Millisecond})
	if !errors.Is(err, ErrPrecondition) {
		t.Fatalf("%v, want ErrPrecondition", err)
	}
	if got := readAll(t, m, "obj", GetOptions{}); string(got) != "interloper" {
		t.Fatalf("object %q", got)
	}
}

// TestUpdateStoreAway: an unreachable store fails the update cleanly
// with a retryable error; retried when it is back, the update happens
// once, even when the first write's answer was lost after it happened.
func TestUpdateStoreAway(t *testing.T) {
	ctx := context.Background()
	m := NewMemStore(nil)
	add := func() error {
		_, err := UpdateManifest(ctx, m, testSource, "n1", nil, func(mf *Manifest) error {
			changed, err := mf.Add(testEntry("n1", 1, "x"))
			if err == nil && !changed {
				return ErrNoChange
			}
			return err
		}, fastRetry)
		return err
	}
	m.SetDown(true)
	if err := add(); !errors.Is(err, ErrUnavailable) || !Retryable(err) {
		t.Fatalf("store down: %v, want ErrUnavailable", err)
	}
	m.SetDown(false)
	m.LoseAnswer(2) // the get answers, the put happens but its answer is lost
	if err := add(); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("lost answer: %v, want ErrUnavailable", err)
	}
	if err := add(); err != nil {
		t.Fatal(err)
	}
	mf, _, err := ReadManifest(ctx, m, testSource)
	if err != nil {
		t.Fatal(err)
	}
	if len(mf.Segments) != 1 || mf.Generation != 1 {
		t.Fatalf("after retries: %d segments, generation %d; want 1 and 1", len(mf.Segments), mf.Generation)
	}
}

// TestUpdateRefusesDamage: a damaged manifest is reported, not replaced.
func TestUpdateRefusesDamage(t *testing.T) {
	ctx := context.Background()
	m := NewMemStore(nil)
	junk := []byte("SDMF\x01 not a manifest")
	m.Put(ctx, ManifestKey(testSource), bytes.NewReader(junk), int64(len(junk)), PutOptions{})
	_, err := UpdateManifest(ctx, m, testSource, "n1", nil, func(*Manifest) error { return nil }, nil)
	if !errors.Is(err, ErrCorrupt) {
		t.Fatalf("%v, want ErrCorrupt", err)
	}
	if got := readAll(t, m, ManifestKey(testSource), GetOptions{}); !bytes.Equal(got, junk) {
		t.Fatal("the damaged manifest was overwritten")
	}
	if _, _, err := ReadManifest(ctx, m, testSource); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("read: %v, want ErrCorrupt", err)
	}
}

// TestCatalogObject: the catalog is updated by the same scheme.
func TestCatalogObject(t *testing.T) {
	ctx := context.Background()
	m := NewMemStore(nil)
	if _, _, err := ReadCatalog(ctx, m); !errors.Is(err, ErrNotExist) {
		t.Fatalf("no catalog: %v", err)
	}
	var wg sync.WaitGroup
	for i := range 5 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := UpdateCatalog(ctx, m, func(cur []byte) ([]byte, error) {
				return append(append([]byte(nil), cur...), byte('a'+i)), nil
			}, fastRetry)
			if err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	b, _, err := ReadCatalog(ctx, m)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) != 5 {
		t.Fatalf("catalog %q: lost updates", b)
	}
}
