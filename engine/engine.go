// Package engine is Sediment's storage engine and everything that runs on
// top of it without knowing about HTTP: sources and their shards (WAL,
// head, segments), flush, compaction and retention, the scan interface the
// SQL executor reads through, and consistency checks.
package engine

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sediment/sediment/segment"
)

// Engine owns the shards of all sources under one data directory:
//
//	<dir>/sources/<source id>/{wal,segments,quarantine}
type Engine struct {
	opts *Options
	dir  string

	mu     sync.Mutex
	shards map[string]*Shard
	closed bool

	// instance tells this opening of the engine from others (random): it
	// is in the names of head parts (headparts.go), which a query node
	// may hold on to across an ingest node's restart.
	instance uint64

	stop chan struct{}
	wg   sync.WaitGroup

	// mem accounts the heads of every shard, so that memory is bounded by
	// the engine's budget however many sources are busy.
	mem headMemory
	// freed wakes appends waiting for heads to be written out.
	freed headsFreed
	// slots are flushed heads' byte slots for the next heads (headslots.go).
	slots slotPool
	// flushSlots bounds flushes running at once across shards: each holds
	// a block of decoded columns and an index builder in memory.
	flushSlots chan struct{}
	// disk tracks whether the data directory's file system has room.
	disk diskGuard
	// warm warms the predicate cache for new segments (predwarm.go).
	warm *predWarmer
}

// headMemory is the bytes held by heads, engine-wide.
type headMemory struct {
	active      atomic.Int64 // in heads taking events
	activeHeads atomic.Int64 // heads taking events that hold any
	total       atomic.Int64 // active plus frozen, until written out
}

// HeadMemory reports the bytes held in memory by heads: those taking
// events, and all of them including heads waiting to be written out.
func (e *Engine) HeadMemory() (active, total int64) {
	return e.mem.active.Load(), e.mem.total.Load()
}

// DropCaches empties the process's caches of segment dictionaries, pages
// and block directories; they refill as queries read. A server going idle
// calls it to hand the memory back.
func DropCaches() {
	segment.DropCaches()
	dropPredCache()
}

// Open opens (creating if needed) the engine under dir and recovers every
// shard found there.
func Open(dir string, opts *Options) (*Engine, error) {
	o, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	segment.SetDictCacheBytes(o.DictCacheBytes)
	segment.SetPageCacheBytes(o.PageCacheBytes)
	segment.SetFooterCacheBytes(o.FooterCacheBytes)
	setPredCacheBytes(o.PredicateCacheBytes)
	e := &Engine{opts: o, dir: dir, shards: map[string]*Shard{}, stop: make(chan struct{}),
		flushSlots: make(chan struct{}, o.MaxConcurrentFlushes), instance: rand.Uint64()}
	// One head's worth: what the next head takes while the one before is
	// flushed.
	e.slots.setMaxBytes(o.HeadMaxBytes)
	srcDir := filepath.Join(dir, "sources")
	if !o.ReadOnly {
		if err := o.FS.MkdirAll(srcDir); err != nil {
			return nil, err
		}
	} else if !o.FS.Exists(srcDir) {
		return e, nil // nothing stored yet
	}
	names, err := o.FS.List(srcDir)
	if err != nil {
		return nil, err
	}
	for _, n := range names {
		if !validShardID(n) {
			continue
		}
		s, err := openShard(e, n, filepath.Join(srcDir, n), o.RepairWAL)
		if err != nil {
			e.closeShards(false)
			// Errors name files relative to the source's directory.
			return nil, fmt.Errorf("source directory %s: %w", filepath.Join(srcDir, n), err)
		}
		e.shards[n] = s
	}
	if !o.ReadOnly {
		w := newPredWarmer(e.stop)
		e.warm = w
		e.wg.Add(1)
		go func() {
			defer e.wg.Done()
			w.run()
		}()
	}
	if !o.DisableBackground {
		e.wg.Add(2)
		go e.maintenance()
		go e.diskMonitor()
	}
	return e, nil
}

// validShardID accepts the ids used as directory names: letters, digits,
// '-' and '_' (source tokens are UUIDs).
func validShardID(id string) bool {
	if id == "" || len(id) > 128 {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

// Shard returns the shard of source id, creating it if needed.
func (e *Engine) Shard(id string) (*Shard, error) {
	if !validShardID(id) {
		return nil, fmt.Errorf("engine: invalid source id %q", id)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return nil, ErrClosed
	}
	if s := e.shards[id]; s != nil {
		return s, nil
	}
	if e.opts.ReadOnly {
		return nil, fmt.Errorf("engine: no data for source %s (read-only)", id)
	}
	s, err := openShard(e, id, filepath.Join(e.dir, "sources", id), e.opts.RepairWAL)
	if err != nil {
		return nil, e.noteNoSpace("creating the source's directory", err)
	}
	e.shards[id] = s
	return s, nil
}

// LookupShard returns the shard of source id, or nil when it has none
// (yet): unlike Shard, it never creates one.
func (e *Engine) LookupShard(id string) *Shard {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.shards[id]
}

// Shards returns the open shards sorted by id.
func (e *Engine) Shards() []*Shard {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := make([]*Shard, 0, len(e.shards))
	for _, s := range e.shards {
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].id < out[j].id })
	return out
}

// DropShard closes a shard and deletes its data (a deleted source).
func (e *Engine) DropShard(id string) error {
	e.mu.Lock()
	s := e.shards[id]
	delete(e.shards, id)
	e.mu.Unlock()
	if s == nil {
		return nil
	}
	err := s.close(false)
	return errors.Join(err, removeAll(e.opts, s.dir))
}

// removeAll deletes a directory tree.
func removeAll(o *Options, p string) error {
	if names, err := o.FS.List(p); err == nil {
		for _, n := range names {
			if err := removeAll(o, filepath.Join(p, n)); err != nil {
				return err
			}
		}
	}
	return o.FS.Remove(p)
}

// Close flushes every head to segments and closes all shards.
func (e *Engine) Close() error {
	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		return nil
	}
	e.closed = true
	e.mu.Unlock()
	close(e.stop)
	e.wg.Wait()
	return e.closeShards(true)
}

func (e *Engine) closeShards(flush bool) error {
	var errs []error
	for _, s := range e.Shards() {
		if err := s.close(flush); err != nil {
			errs = append(errs, fmt.Errorf("shard %s: %w", s.id, err))
		}
	}
	return errors.Join(errs...)
}

// maintenance runs compaction, retention and the size caps on every
// shard. Failures are logged, counted and retried with backoff by the
// shards' supervision; a shard whose task is backing off is skipped until
// its retry is due.
func (e *Engine) maintenance() {
	defer e.wg.Done()
	runLoop(e.opts, "maintenance", e.stop, e.maintenanceLoop)
}

func (e *Engine) maintenanceLoop() {
	ct := time.NewTicker(e.opts.CompactionInterval)
	rt := time.NewTicker(e.opts.RetentionInterval)
	defer ct.Stop()
	defer rt.Stop()
	for {
		select {
		case <-e.stop:
			return
		case <-ct.C:
			for _, s := range e.Shards() {
				if s.hasPendingRemote() {
					s.OpenRemoteSegments(context.Background())
				}
				if s.taskDue(taskCompaction) {
					s.Compact()
				}
			}
		case <-rt.C:
			e.ApplyRetention()
		}
	}
}
