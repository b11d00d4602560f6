package objstore

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// ManifestCache keeps the manifests a query node reads, so that a burst
// of queries does not download a source's manifest once per query. A
// manifest read is served from memory while it is younger than MaxAge
// (counted from when the read that confirmed it was sent: the bound on
// how stale an answer's manifest can be); past that, it is revalidated
// with a conditional GET (If-None-Match with its ETag), which costs a
// round trip but no download when nothing changed (304). Concurrent reads
// of one source wait for one request.
//
// Why a stale manifest loses no event (docs/scale.md, "the read path"):
// a query node sends the names the manifest lists to every ingest node,
// which answers with what of its own the list lacks; a manifest read
// earlier only lists fewer (or older) segments, and the ingest nodes fill
// the difference. What the staleness must stay below is garbage
// collection's grace period, after which a delisted segment's object may
// be gone.
type ManifestCache struct {
	store  Store
	maxAge time.Duration
	now    func() time.Time

	mu sync.Mutex
	m  map[string]*cachedManifest

	hits, notModified, downloads atomic.Int64
}

type cachedManifest struct {
	mu   sync.Mutex // held during a read: one request per source at a time
	m    *Manifest
	etag string
	at   time.Time // when the read that confirmed m was sent
}

// NewManifestCache returns a cache over store whose entries are served
// without a request for maxAge (0: every read is a conditional GET). now
// is the clock (nil: time.Now).
func NewManifestCache(store Store, maxAge time.Duration, now func() time.Time) *ManifestCache {
	if now == nil {
		now = time.Now
	}
	return &ManifestCache{store: store, maxAge: max(maxAge, 0), now: now, m: map[string]*cachedManifest{}}
}

// ManifestCacheStats count how reads were answered.
type ManifestCacheStats struct {
	// Hits were served from memory, NotModified by a 304, Downloads by
	// reading the manifest (a new version, or the first read).
	Hits, NotModified, Downloads int64
}

// Stats returns the counters.
func (c *ManifestCache) Stats() ManifestCacheStats {
	return ManifestCacheStats{Hits: c.hits.Load(), NotModified: c.notModified.Load(), Downloads: c.downloads.Load()}
}

// Forget drops what the cache holds of source's manifest: the caller has
// just changed it, and the next Read downloads it again.
func (c *ManifestCache) Forget(source string) {
	c.mu.Lock()
	delete(c.m, source)
	c.mu.Unlock()
}

// Read returns source's manifest, at most MaxAge older than the store's
// (plus the read's own duration). The manifest is shared: callers must
// not change it. A failed read is returned as it is (the cached version
// is not served past its age).
func (c *ManifestCache) Read(ctx context.Context, source string) (*Manifest, error) {
	if !ValidID(source) {
		return nil, fmt.Errorf("objstore: bad source id %q", source)
	}
	c.mu.Lock()
	e := c.m[source]
	if e == nil {
		e = &cachedManifest{}
		c.m[source] = e
	}
	c.mu.Unlock()

	e.mu.Lock()
	defer e.mu.Unlock()
	sent := c.now()
	if e.m != nil && sent.Sub(e.at) < c.maxAge {
		c.hits.Add(1)
		return e.m, nil
	}
	key := ManifestKey(source)
	b, info, exists, err := readWholeWith(ctx, c.store, key, 256<<20, GetOptions{IfNoneMatch: e.etag})
	switch {
	case errors.Is(err, ErrNotModified) && e.m != nil:
		c.notModified.Add(1)
		e.at = sent
		return e.m, nil
	case err != nil:
		return nil, err
	}
	c.downloads.Add(1)
	m := &Manifest{Source: source}
	if exists {
		if m, err = decodeManifestOf(source, b); err != nil {
			return nil, err
		}
	}
	e.m, e.etag, e.at = m, info.ETag, sent
	return m, nil
}
