package remote

import (
	"context"
	"sync"
	"time"

	"github.com/sediment/sediment/objstore"
)

// manifestMemoTTL is how long a manifest read serves OpenSegment again.
// A segment a manifest lists stays listed until this node delists it, so
// a read this recent can only be wrong about segments the engine no
// longer serves (replaced meanwhile), which it does not open.
const manifestMemoTTL = 2 * time.Second

// manifestMemo keeps each source's latest manifest read for a moment.
type manifestMemo struct {
	mu sync.Mutex
	m  map[string]memoEntry
}

type memoEntry struct {
	m  *objstore.Manifest
	at time.Time
}

// read returns source's manifest, from a read less than manifestMemoTTL
// old or from the store.
func (mm *manifestMemo) read(ctx context.Context, store objstore.Store, source string) (*objstore.Manifest, error) {
	mm.mu.Lock()
	e, ok := mm.m[source]
	mm.mu.Unlock()
	if ok && time.Since(e.at) < manifestMemoTTL {
		return e.m, nil
	}
	m, _, err := objstore.ReadManifest(ctx, store, source)
	if err != nil {
		return nil, err
	}
	mm.mu.Lock()
	if mm.m == nil {
		mm.m = map[string]memoEntry{}
	}
	mm.m[source] = memoEntry{m: m, at: time.Now()}
	mm.mu.Unlock()
	return m, nil
}

// forget drops source's read: this node just changed its manifest.
func (mm *manifestMemo) forget(source string) {
	mm.mu.Lock()
	delete(mm.m, source)
	mm.mu.Unlock()
}
