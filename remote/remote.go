// Package remote keeps the engine's sealed segments in object storage: it
// implements engine.Remote over an objstore.Store, publishing every
// segment the engine publishes (upload, checksum verified, then one
// conditional manifest update that lists it and delists what it
// replaces) and opening segments back through the objstore.Cache.
//
// It is the seam between the engine, which knows nothing of object
// storage, and objstore, which knows nothing of the engine; docs/scale.md
// describes what the next phases build on it (query nodes that read the
// manifests, WAL trimming only once a segment is listed, the catalog in
// the store).
package remote

import (
	"context"
	"errors"
	"fmt"
	iofs "io/fs"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sediment/sediment/engine"
	"github.com/sediment/sediment/internal/vfs"
	"github.com/sediment/sediment/objstore"
)

// Options configure Segments. Store, Cache and Node are required.
type Options struct {
	Store objstore.Store
	Cache *objstore.Cache
	// Node is this node's id (objstore.NewNodeID, kept in the data
	// directory): it names the segments it uploads.
	Node string
	// FS is the engine's file system, to read the segments it publishes
	// (default the OS).
	FS vfs.FS
	// Publish configures uploads and manifest updates (clock, grace
	// period, retries of a lost race).
	Publish *objstore.PublishOptions
	// A failed publication is retried after RetryMin (default 1s),
	// doubling up to RetryMax (default 1 minute) while it keeps failing.
	RetryMin, RetryMax time.Duration
	// Publishers is how many sources' changes are published at once
	// (default 3); one source's changes are always published one after
	// another, in order.
	Publishers int
	// Logger receives failures (default discards).
	Logger *slog.Logger
}

// Segments is an engine.Remote on object storage. Changes are published
// by Options.Publishers background goroutines, each working on one shard
// at a time, in the order the engine made them for that shard; a failure
// is retried with backoff until it succeeds, never skipped (skipping would
// leave a manifest that lists data twice or not at all), and the shard is
// held by its publisher while it waits, so that other shards go on. Stats
// shows what is pending and why.
type Segments struct {
	opts   Options
	ctx    context.Context
	cancel context.CancelFunc
	done   chan struct{}

	mu      sync.Mutex
	queues  map[string][]*change // per shard, oldest first
	order   []string             // shards with changes, in arrival order
	busy    map[string]bool      // shards a publisher is working on
	wake    chan struct{}        // signalled when a change is queued
	lastErr error

	// manifests are recent reads for OpenSegment (many evicted segments
	// open at once at startup or in an eviction pass), kept for
	// manifestMaxAge: a segment a manifest lists stays listed until this
	// node delists it, so a read this recent can only be wrong about
	// segments the engine no longer serves (replaced meanwhile), which it
	// does not open. This node's own manifest changes forget the read.
	manifests *objstore.ManifestCache
	// What eviction did (evict.go).
	evict evictState

	uploaded, uploadedBytes, delisted, skipped, abandoned, failures, reconciled, adopted atomic.Int64
	// failingSince is when the current run of failed attempts started
	// (Unix µs; 0 while publishing succeeds).
	failingSince atomic.Int64
}

// change is one engine.Remote call to publish.
type change struct {
	added   *engine.RemoteSegment // nil: only removals
	removed []uint64
	// keepHeld: publishing added does not call its Done (a reconcile
	// publishes segments it releases itself).
	keepHeld bool
	// reconcile: a Reconcile of the shard's segments, local (held).
	reconcile bool
	local     []*engine.RemoteSegment
	shard     *engine.Shard
	adopt     bool
}

var _ engine.Remote = (*Segments)(nil)

// manifestMaxAge is how long a manifest read serves OpenSegment again
// (Segments.manifests).
const manifestMaxAge = 2 * time.Second

// New starts publishing for a node. Close stops it.
func New(opts Options) (*Segments, error) {
	if opts.Store == nil || opts.Cache == nil {
		return nil, errors.New("remote: Store and Cache are required")
	}
	if !objstore.ValidID(opts.Node) {
		return nil, fmt.Errorf("remote: bad node id %q", opts.Node)
	}
	if opts.FS == nil {
		opts.FS = vfs.OS
	}
	if opts.RetryMin <= 0 {
		opts.RetryMin = time.Second
	}
	if opts.RetryMax <= 0 {
		opts.RetryMax = time.Minute
	}
	opts.RetryMax = max(opts.RetryMax, opts.RetryMin)
	if opts.Publishers <= 0 {
		opts.Publishers = 3
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	r := &Segments{opts: opts, queues: map[string][]*change{}, busy: map[string]bool{}, wake: make(chan struct{}, 1), done: make(chan struct{}),
		manifests: objstore.NewManifestCache(opts.Store, manifestMaxAge, nil)}
	r.evict.wake = make(chan struct{}, 1)
	r.ctx, r.cancel = context.WithCancel(context.Background())
	var publishers sync.WaitGroup
	for range opts.Publishers {
		publishers.Go(r.run)
	}
	go func() {
		publishers.Wait()
		close(r.done)
	}()
	return r, nil
}

// SegmentsReplaced implements engine.Remote: it queues the change.
func (r *Segments) SegmentsReplaced(shard string, added *engine.RemoteSegment, removed []uint64) {
	r.mu.Lock()
	if len(r.queues[shard]) == 0 {
		r.order = append(r.order, shard)
	}
	r.queues[shard] = append(r.queues[shard], &change{added: added, removed: slices.Clone(removed)})
	r.mu.Unlock()
	r.signal()
}

// signal wakes the publishing goroutine.
func (r *Segments) signal() {
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

// OpenSegment implements engine.Remote: it opens segment id that this
// node published for shard, as listed in the shard's manifest, through
// the cache.
func (r *Segments) OpenSegment(ctx context.Context, shard string, id uint64) (vfs.File, error) {
	m, err := r.manifests.Read(ctx, shard)
	if err != nil {
		return nil, err
	}
	name := objstore.SegmentName(r.opts.Node, id)
	e := m.Find(name)
	if e == nil {
		return nil, fmt.Errorf("remote: segment %s of source %s: %w (not in the manifest)", name, shard, objstore.ErrNotExist)
	}
	key := objstore.SegmentsPrefix(shard) + name
	return r.opts.Cache.Open(ctx, key, objstore.ObjectInfo{Key: key, Size: e.Size, ETag: e.ETag, Sum: e.Sum})
}

// Stats are what Segments did and has left to do.
type Stats struct {
	// Uploaded segments and their bytes; Delisted segments removed from
	// manifests; Skipped segments replaced before they were uploaded
	// (their replacement carries their data); Abandoned segments whose
	// local file was gone (set aside as damaged) before they could be
	// uploaded.
	Uploaded, UploadedBytes, Delisted, Skipped, Abandoned int64
	// Reconciled counts segments published by Reconcile (found unlisted
	// at startup).
	Reconciled int64
	// Adopted counts this node's listed segments the engine took as
	// evicted ones (Reconcile with adopt: a new data directory).
	Adopted int64
	// Evicted segments and the bytes their local files held; EvictFailures
	// failed evictions (retried at the next pass); LocalBytes the local
	// segment files at the last pass and LocalLimit their bound (0: no
	// eviction). See StartEviction.
	Evicted, EvictedBytes, EvictFailures int64
	LocalBytes, LocalLimit               int64
	// Failures counts failed attempts (each retried); LastError is the
	// latest, nil once an attempt succeeds; FailingSince is when the
	// current run of failures began (zero while publishing succeeds).
	Failures     int64
	LastError    error
	FailingSince time.Time
	// Pending counts the changes not yet published.
	Pending int
}

// Stats returns the counters.
func (r *Segments) Stats() Stats {
	r.mu.Lock()
	pending := 0
	for _, q := range r.queues {
		pending += len(q)
	}
	last := r.lastErr
	r.mu.Unlock()
	st := Stats{Uploaded: r.uploaded.Load(), UploadedBytes: r.uploadedBytes.Load(), Delisted: r.delisted.Load(),
		Skipped: r.skipped.Load(), Abandoned: r.abandoned.Load(), Reconciled: r.reconciled.Load(),
		Failures: r.failures.Load(), LastError: last, Pending: pending, Adopted: r.adopted.Load(),
		Evicted: r.evict.evicted.Load(), EvictedBytes: r.evict.evictedBytes.Load(), EvictFailures: r.evict.failures.Load(),
		LocalBytes: r.evict.localBytes.Load(), LocalLimit: r.evict.limit.Load()}
	if us := r.failingSince.Load(); us != 0 {
		st.FailingSince = time.UnixMicro(us)
	}
	return st
}

// Drain waits until every change queued so far is published, or ctx
// ends.
func (r *Segments) Drain(ctx context.Context) error {
	t := time.NewTicker(5 * time.Millisecond)
	defer t.Stop()
	for {
		if st := r.Stats(); st.Pending == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			st := r.Stats()
			return fmt.Errorf("remote: %d changes pending: %w (last error: %v)", st.Pending, ctx.Err(), st.LastError)
		case <-t.C:
		}
	}
}

// Close stops publishing. What is still queued is not published now
// (Reconcile at the next startup publishes it from what the engine has);
// the local files it held are released.
func (r *Segments) Close() error {
	r.cancel()
	<-r.done
	if r.evict.done != nil {
		<-r.evict.done
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for shard, q := range r.queues {
		for _, c := range q {
			if c.added != nil && !c.keepHeld {
				c.added.Done()
			}
			for _, a := range c.local {
				a.Done()
			}
		}
		delete(r.queues, shard)
	}
	r.order = nil
	return nil
}

// run is one publisher: it takes the change of a shard no other
// publisher holds, publishes it, and retries it with backoff until it is
// published, holding the shard meanwhile.
func (r *Segments) run() {
	backoff := r.opts.RetryMin
	for {
		shard, c := r.next()
		if c == nil {
			select {
			case <-r.ctx.Done():
				return
			case <-r.wake:
				continue
			}
		}
		// More may be queued for other shards: let another publisher look.
		r.signal()
		var err error
		if c.reconcile {
			err = r.reconcile(shard, c)
		} else {
			err = r.publish(shard, c)
		}
		r.mu.Lock()
		r.lastErr = err
		if err == nil {
			r.pop(shard)
			delete(r.busy, shard)
		}
		r.mu.Unlock()
		if err == nil {
			backoff = r.opts.RetryMin
			r.failingSince.Store(0)
			continue
		}
		if r.ctx.Err() != nil {
			return
		}
		r.failures.Add(1)
		r.failingSince.CompareAndSwap(0, time.Now().UnixMicro())
		r.opts.Logger.Warn("remote: publishing a segment change failed; retrying", "source", shard, "err", err, "retry_in", backoff)
		t := time.NewTimer(backoff)
		select {
		case <-r.ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		backoff = min(backoff*2, r.opts.RetryMax)
		// The shard is given back: the retry takes its oldest change again,
		// in turn with the others.
		r.mu.Lock()
		delete(r.busy, shard)
		r.mu.Unlock()
	}
}

// next returns the oldest change of the shard that has waited longest
// and that no publisher holds, and holds it; it folds into later changes
// the segments they replace before upload.
func (r *Segments) next() (string, *change) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for i := 0; i < len(r.order); {
		shard := r.order[i]
		if r.busy[shard] {
			i++
			continue
		}
		q := r.queues[shard]
		if len(q) == 0 {
			r.order = slices.Delete(r.order, i, i+1)
			delete(r.queues, shard)
			continue
		}
		c := q[0]
		if c.added != nil {
			// Removed by a later change before it was uploaded: never
			// upload it; the later change delists what it replaced, in
			// the same manifest update that lists the replacement.
			if later := replacedBy(q[1:], c.added.ID); later != nil {
				for _, id := range c.removed {
					if !slices.Contains(later.removed, id) {
						later.removed = append(later.removed, id)
					}
				}
				c.added.Done()
				r.skipped.Add(1)
				r.queues[shard] = q[1:]
				continue
			}
		}
		r.busy[shard] = true
		return shard, c // stays queued (and counted pending) until published
	}
	return "", nil
}

func replacedBy(q []*change, id uint64) *change {
	for _, c := range q {
		if slices.Contains(c.removed, id) {
			return c
		}
	}
	return nil
}

// pop removes the shard's oldest change, published. Callers hold r.mu.
func (r *Segments) pop(shard string) {
	q := r.queues[shard]
	if len(q) > 0 {
		r.queues[shard] = q[1:]
	}
	if len(r.queues[shard]) == 0 {
		delete(r.queues, shard)
		if i := slices.Index(r.order, shard); i >= 0 {
			r.order = slices.Delete(r.order, i, i+1)
		}
	} else if i := slices.Index(r.order, shard); i >= 0 {
		// Round robin: the shard's next change waits behind the others.
		r.order = append(slices.Delete(r.order, i, i+1), shard)
	}
}

// publish makes one change in the store.
func (r *Segments) publish(shard string, c *change) error {
	defer r.manifests.Forget(shard)
	names := make([]string, len(c.removed))
	for i, id := range c.removed {
		names[i] = objstore.SegmentName(r.opts.Node, id)
	}
	if c.added == nil {
		if err := objstore.RemoveSegments(r.ctx, r.opts.Store, shard, r.opts.Node, names, r.opts.Publish); err != nil {
			return err
		}
		r.delisted.Add(int64(len(names)))
		return nil
	}
	a := c.added
	f, err := r.opts.FS.Open(a.Path)
	if errors.Is(err, iofs.ErrNotExist) {
		// Set aside as damaged after it was published (the engine moved
		// it to quarantine/): it cannot be uploaded, and what it replaced
		// stays listed, the store's copies being intact. Startup
		// reconciliation (next phase) settles the manifest.
		r.abandoned.Add(1)
		r.opts.Logger.Error("remote: segment gone before it could be uploaded; the manifest keeps what it replaced", "source", shard, "segment", a.Path)
		if !c.keepHeld {
			a.Done()
		}
		return nil
	}
	if err != nil {
		return fmt.Errorf("remote: open segment %s: %w", a.Path, err)
	}
	defer f.Close()
	_, err = objstore.PublishSegment(r.ctx, r.opts.Store, objstore.SegmentUpload{
		Source: shard, Node: r.opts.Node, Seq: a.ID, File: f, Size: a.Size,
		MinTime: a.MinTime, MaxTime: a.MaxTime, Rows: int64(a.Rows), Replaces: names,
	}, r.opts.Publish)
	if err != nil {
		return err
	}
	r.uploaded.Add(1)
	r.uploadedBytes.Add(a.Size)
	r.delisted.Add(int64(len(names)))
	r.wakeEviction()
	if !c.keepHeld {
		a.Done()
	}
	return nil
}
