package objstore

import (
	"context"
	"errors"
	"strings"
	"time"
)

// GCOptions configure CollectGarbage.
type GCOptions struct {
	// Grace is how long an unlisted object is kept (default DefaultGrace):
	// an upload not yet listed (PublishSegment lists within half of it),
	// or a segment delisted while queries that read the previous manifest
	// may still be reading it. It must exceed the clock skew between
	// nodes and the store by far.
	Grace time.Duration
	// Now is the clock (default time.Now).
	Now func() time.Time
	// Node is the id the manifest update is written as (default "gc").
	Node string
	// Update bounds the manifest update's retries.
	Update *UpdateOptions
}

// GCResult says what a collection did.
type GCResult struct {
	// Deleted are the keys of the objects deleted.
	Deleted []string
	// Live counts segment objects the manifest lists; Waiting those
	// unlisted but within the grace period; Foreign the objects under the
	// segments prefix whose names are not segment names (left alone).
	Live, Waiting, Foreign int
}

// CollectGarbage deletes the segment objects of source that its manifest
// does not list: uploads interrupted before their manifest update (once
// Grace has passed since they were stored) and segments delisted by
// compaction or retention (once Grace has passed since they were
// delisted), and then forgets the deleted ones in the manifest. It is safe
// to run on any node, concurrently with writers and with itself: objects
// are listed before the manifest is read, so whatever a writer lists
// meanwhile is seen as live.
func CollectGarbage(ctx context.Context, s Store, source string, opts *GCOptions) (GCResult, error) {
	o := GCOptions{}
	if opts != nil {
		o = *opts
	}
	if o.Grace <= 0 {
		o.Grace = DefaultGrace
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Node == "" {
		o.Node = "gc"
	}
	var res GCResult
	prefix := SegmentsPrefix(source)
	objs, err := s.List(ctx, prefix)
	if err != nil {
		return res, err
	}
	m, _, err := ReadManifest(ctx, s, source)
	if err != nil {
		return res, err
	}
	now := o.Now()
	removedAt := map[string]int64{}
	for _, r := range m.Removed {
		removedAt[r.Name] = r.RemovedAt
	}
	present := map[string]bool{}
	var errs []error
	for _, obj := range objs {
		name := strings.TrimPrefix(obj.Key, prefix)
		if _, _, ok := ParseSegmentName(name); !ok {
			res.Foreign++
			continue
		}
		present[name] = true
		if m.Find(name) != nil {
			res.Live++
			continue
		}
		since := obj.Modified // an interrupted upload: since it was stored
		if at, ok := removedAt[name]; ok {
			since = time.UnixMicro(at) // delisted: since then
		}
		if now.Sub(since) < o.Grace {
			res.Waiting++
			continue
		}
		if err := s.Delete(ctx, obj.Key); err != nil {
			errs = append(errs, err)
			continue
		}
		res.Deleted = append(res.Deleted, obj.Key)
		delete(present, name)
	}
	// Forget removed entries whose objects are gone (deleted now, or by
	// an earlier collection whose manifest update failed).
	var forget []string
	for _, r := range m.Removed {
		if !present[r.Name] {
			forget = append(forget, r.Name)
		}
	}
	if len(forget) > 0 {
		_, err := UpdateManifest(ctx, s, source, o.Node, o.Now, func(m *Manifest) error {
			changed := false
			for _, n := range forget {
				if m.Forget(n) {
					changed = true
				}
			}
			if !changed {
				return ErrNoChange
			}
			return nil
		}, o.Update)
		errs = append(errs, err)
	}
	return res, errors.Join(errs...)
}
