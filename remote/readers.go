package remote

import (
	"context"
	"sync"

	"github.com/sediment/sediment/engine"
	"github.com/sediment/sediment/objstore"
	"github.com/sediment/sediment/segment"
)

// openReaders keeps a query node's listed segments open from query to
// query, so that their footers, indexes and decompressed pages (the
// process caches are keyed by the open reader) serve every query rather
// than being read again each time. A reader is closed once no manifest
// read lists it any more and no snapshot holds it.
type openReaders struct {
	mu sync.Mutex
	m  map[string]*sharedReader // by source, segment name and ETag
}

type sharedReader struct {
	r      *segment.Reader
	refs   int  // snapshots holding it
	listed bool // in the latest manifest read of its source
	source string
}

// get returns the open reader of entry e of source, opening it through
// the cache when it is not open, as a part held until its Release.
func (o *openReaders) get(ctx context.Context, cache *objstore.Cache, source string, e objstore.SegmentEntry) (engine.ExternalPart, error) {
	id := source + "/" + e.Name + "@" + e.ETag
	o.mu.Lock()
	sr := o.m[id]
	if sr != nil {
		sr.refs++
		o.mu.Unlock()
		return o.part(id, e.Name, sr), nil
	}
	o.mu.Unlock()
	key := objstore.SegmentsPrefix(source) + e.Name
	f, err := cache.Open(ctx, key, objstore.ObjectInfo{Key: key, Size: e.Size, ETag: e.ETag, Sum: e.Sum})
	if err != nil {
		return engine.ExternalPart{}, err
	}
	r, err := segment.Open(f, e.Name)
	if err != nil {
		return engine.ExternalPart{}, err
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.m == nil {
		o.m = map[string]*sharedReader{}
	}
	if sr = o.m[id]; sr != nil { // opened meanwhile by another query
		r.Close()
	} else {
		sr = &sharedReader{r: r, listed: true, source: source}
		o.m[id] = sr
	}
	sr.refs++
	return o.part(id, e.Name, sr), nil
}

func (o *openReaders) part(id, name string, sr *sharedReader) engine.ExternalPart {
	var once sync.Once
	return engine.ExternalPart{Name: name, Reader: sr.r, Release: func() {
		once.Do(func() {
			o.mu.Lock()
			defer o.mu.Unlock()
			sr.refs--
			o.closeIfUnusedLocked(id, sr)
		})
	}}
}

// listed records the entries the latest manifest of source lists: the
// others' readers close once no snapshot holds them.
func (o *openReaders) listed(source string, m *objstore.Manifest) {
	live := make(map[string]bool, len(m.Segments))
	for _, e := range m.Segments {
		live[source+"/"+e.Name+"@"+e.ETag] = true
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	for id, sr := range o.m {
		if sr.source == source {
			sr.listed = live[id]
			o.closeIfUnusedLocked(id, sr)
		}
	}
}

func (o *openReaders) closeIfUnusedLocked(id string, sr *sharedReader) {
	if sr.refs == 0 && !sr.listed {
		sr.r.Close()
		delete(o.m, id)
	}
}

// closeAll closes every reader no snapshot holds.
func (o *openReaders) closeAll() {
	o.mu.Lock()
	defer o.mu.Unlock()
	for id, sr := range o.m {
		sr.listed = false
		o.closeIfUnusedLocked(id, sr)
	}
}
