package remote

import (
	"fmt"
	"slices"

	"github.com/sediment/sediment/engine"
	"github.com/sediment/sediment/objstore"
)

// Reconcile queues, for one shard, a comparison of the segments the engine
// serves (engine.Shard.RemoteSegments, taken at startup) with this node's
// entries in the shard's manifest: it publishes the segments the manifest
// does not list (written while the store was away, or queued when the
// process stopped or was killed) and then delists this node's entries the
// engine no longer has (a compaction or retention whose manifest update
// never happened). Every step is idempotent, so a crash during it is
// finished by the next startup's. It takes over segs (calling their Done).
//
// Changes queued for the shard after it are published after it, in order.
func (r *Segments) Reconcile(shard string, segs []*engine.RemoteSegment) {
	r.mu.Lock()
	if len(r.queues[shard]) == 0 {
		r.order = append(r.order, shard)
	}
	r.queues[shard] = append(r.queues[shard], &change{reconcile: true, local: segs})
	r.mu.Unlock()
	r.signal()
}

// reconcile performs a Reconcile change.
func (r *Segments) reconcile(shard string, c *change) error {
	m, _, err := objstore.ReadManifest(r.ctx, r.opts.Store, shard)
	if err != nil {
		return err
	}
	local := map[string]bool{}
	for _, a := range c.local {
		name := objstore.SegmentName(r.opts.Node, a.ID)
		local[name] = true
		if a.Size == 0 || m.Find(name) != nil {
			continue
		}
		if err := r.publish(shard, &change{added: a, keepHeld: true}); err != nil {
			return fmt.Errorf("remote: reconcile %s: %w", name, err)
		}
		r.reconciled.Add(1)
	}
	var stale []string
	for _, e := range m.Segments {
		if e.Node() == r.opts.Node && !local[e.Name] {
			stale = append(stale, e.Name)
		}
	}
	if len(stale) > 0 {
		slices.Sort(stale)
		if err := objstore.RemoveSegments(r.ctx, r.opts.Store, shard, r.opts.Node, stale, r.opts.Publish); err != nil {
			return err
		}
		r.delisted.Add(int64(len(stale)))
	}
	for _, a := range c.local {
		a.Done()
	}
	c.local = nil
	return nil
}
