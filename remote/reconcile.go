package remote

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/sediment/sediment/engine"
	"github.com/sediment/sediment/objstore"
)

// Reconcile queues, for one shard, a comparison of the segments the engine
// serves (sh.RemoteSegments, taken now: local files and evicted segments
// alike) with this node's entries in the shard's manifest:
//
//   - it publishes the local segments the manifest does not list (written
//     while the store was away, or queued when the process stopped or was
//     killed);
//   - this node's entries the engine does not serve are delisted (a
//     compaction or retention whose manifest update never happened), or,
//     with adopt, handed to the engine (sh.AdoptRemoteSegments), which
//     takes them as evicted segments unless one of its own replaced them
//     or it set them aside as damaged (those are delisted). adopt is for a
//     data directory that may lack what the store lists: a replacement
//     node on a new directory (see AdoptAll). Without it, a node whose
//     directory is intact knows every segment of its own, evicted ones
//     included (their stubs), so an entry it lacks is one it dropped;
//   - evicted segments that could not be opened at startup are opened.
//
// Every step is idempotent, so a crash during it is finished by the next
// startup's. Changes queued for the shard after it are published after it,
// in order.
func (r *Segments) Reconcile(sh *engine.Shard, adopt bool) {
	segs := sh.RemoteSegments()
	shard := sh.ID()
	r.mu.Lock()
	if len(r.queues[shard]) == 0 {
		r.order = append(r.order, shard)
	}
	r.queues[shard] = append(r.queues[shard], &change{reconcile: true, local: segs, shard: sh, adopt: adopt})
	r.mu.Unlock()
	r.signal()
}

// reconcile performs a Reconcile change.
func (r *Segments) reconcile(shard string, c *change) error {
	m, _, err := objstore.ReadManifest(r.ctx, r.opts.Store, shard)
	if err != nil {
		return err
	}
	r.manifests.Forget(shard)
	local := map[string]bool{}
	for _, a := range c.local {
		name := objstore.SegmentName(r.opts.Node, a.ID)
		local[name] = true
		if a.Size == 0 || m.Find(name) != nil {
			continue
		}
		if a.Remote {
			// Evicted, hence listed once; only this node delists its
			// entries, and it never evicts a segment it dropped. Nothing
			// to publish from: say so loudly.
			r.opts.Logger.Error("remote: an evicted segment is missing from the manifest; its events are not in the store's answers", "source", shard, "segment", name)
			continue
		}
		if err := r.publish(shard, &change{added: a, keepHeld: true}); err != nil {
			return fmt.Errorf("remote: reconcile %s: %w", name, err)
		}
		r.reconciled.Add(1)
	}
	var stale []string
	var unknown []engine.ListedSegment
	for _, e := range m.Segments {
		if e.Node() != r.opts.Node || local[e.Name] {
			continue
		}
		if !c.adopt {
			stale = append(stale, e.Name)
			continue
		}
		unknown = append(unknown, engine.ListedSegment{ID: e.Seq(), Size: e.Size, Rows: e.Rows, MinTime: e.MinTime, MaxTime: e.MaxTime})
	}
	if len(unknown) > 0 {
		adopted, retired, err := c.shard.AdoptRemoteSegments(r.ctx, unknown)
		r.adopted.Add(int64(len(adopted)))
		if err != nil {
			return fmt.Errorf("remote: adopting the segments the store lists for %s: %w", shard, err)
		}
		for _, id := range retired {
			stale = append(stale, objstore.SegmentName(r.opts.Node, id))
		}
	}
	if len(stale) > 0 {
		slices.Sort(stale)
		if err := objstore.RemoveSegments(r.ctx, r.opts.Store, shard, r.opts.Node, stale, r.opts.Publish); err != nil {
			return err
		}
		r.delisted.Add(int64(len(stale)))
	}
	if c.shard != nil {
		if _, err := c.shard.OpenRemoteSegments(r.ctx); err != nil {
			r.opts.Logger.Warn("remote: evicted segments still do not open", "source", shard, "err", err)
		}
	}
	for _, a := range c.local {
		a.Done()
	}
	c.local = nil
	return nil
}

// AdoptAll adopts, for every source whose manifest lists segments of this
// node, those the engine does not serve (creating the source's shard if
// needed), and delists those it retires: what Reconcile with adopt does,
// for the sources this node has no directory for yet. A replacement node
// on a new data directory (same --node-id) runs it until it succeeds;
// until then its answers miss its predecessor's segments, and its own
// new segments take ids from the clock, so they never collide with them.
func (r *Segments) AdoptAll(ctx context.Context, eng *engine.Engine) error {
	objs, err := r.opts.Store.List(ctx, "sources/")
	if err != nil {
		return err
	}
	var errs []error
	for _, o := range objs {
		source, ok := strings.CutSuffix(strings.TrimPrefix(o.Key, "sources/"), "/manifest")
		if !ok || strings.Contains(source, "/") || objstore.ManifestKey(source) != o.Key {
			continue
		}
		if err := r.adoptSource(ctx, eng, source); err != nil {
			errs = append(errs, fmt.Errorf("source %s: %w", source, err))
		}
	}
	return errors.Join(errs...)
}

// adoptSource is AdoptAll for one source.
func (r *Segments) adoptSource(ctx context.Context, eng *engine.Engine, source string) error {
	m, _, err := objstore.ReadManifest(ctx, r.opts.Store, source)
	if err != nil {
		return err
	}
	var own []objstore.SegmentEntry
	for _, e := range m.Segments {
		if e.Node() == r.opts.Node {
			own = append(own, e)
		}
	}
	if len(own) == 0 {
		return nil
	}
	sh, err := eng.Shard(source)
	if err != nil {
		return err
	}
	have := map[uint64]bool{}
	for _, a := range sh.RemoteSegments() {
		have[a.ID] = true
		a.Done()
	}
	var unknown []engine.ListedSegment
	for _, e := range own {
		if !have[e.Seq()] {
			unknown = append(unknown, engine.ListedSegment{ID: e.Seq(), Size: e.Size, Rows: e.Rows, MinTime: e.MinTime, MaxTime: e.MaxTime})
		}
	}
	if len(unknown) == 0 {
		return nil
	}
	adopted, retired, err := sh.AdoptRemoteSegments(ctx, unknown)
	r.adopted.Add(int64(len(adopted)))
	if err != nil {
		return err
	}
	if len(retired) == 0 {
		return nil
	}
	names := make([]string, len(retired))
	for i, id := range retired {
		names[i] = objstore.SegmentName(r.opts.Node, id)
	}
	slices.Sort(names)
	if err := objstore.RemoveSegments(ctx, r.opts.Store, source, r.opts.Node, names, r.opts.Publish); err != nil {
		return err
	}
	r.delisted.Add(int64(len(names)))
	return nil
}
