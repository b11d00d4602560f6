package objstore

import (
	"context"
	"testing"
	"time"
)

// TestManifestCacheForget: after Forget, a read within the max age
// downloads the manifest again and sees the change.
func TestManifestCacheForget(t *testing.T) {
	ctx := context.Background()
	st := NewMemStore(nil)
	c := NewManifestCache(st, time.Hour, nil)
	if _, err := c.Read(ctx, "src"); err != nil {
		t.Fatal(err)
	}
	if _, err := UpdateManifest(ctx, st, "src", "n1", nil, func(m *Manifest) error {
		_, err := m.Add(testEntry("n1", 1, "x"))
		return err
	}, nil); err != nil {
		t.Fatal(err)
	}
	if m, _ := c.Read(ctx, "src"); len(m.Segments) != 0 {
		t.Fatalf("within the max age the cached read is served: %d segments", len(m.Segments))
	}
	c.Forget("src")
	m, err := c.Read(ctx, "src")
	if err != nil || len(m.Segments) != 1 {
		t.Fatalf("after Forget: %v, %+v", err, m)
	}
	if s := c.Stats(); s.Downloads != 2 || s.Hits != 1 {
		t.Fatalf("stats %+v", s)
	}
}
