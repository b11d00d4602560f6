package remote

import (
	"context"
	"sync"
	"time"
)

// unsealedCache shares ingest nodes' answers between a query node's
// snapshots: an answer asked for one manifest generation of a source
// serves the snapshots that read the same generation within maxAge, and
// snapshots that ask while an answer is on its way wait for it instead of
// asking again. A burst of queries (a dashboard opening) thus costs one
// transfer of each node's unpublished events, not one per query, and
// holds one copy of them in memory.
//
// The answer and the manifest it was asked with go together: a segment
// the node published since is in the answer (as unlisted) and not in that
// generation, so every event is counted once. What the answer cannot have
// is what the node acknowledged after it was asked: an answer is up to
// maxAge late.
type unsealedCache struct {
	maxAge time.Duration
	mu     sync.Mutex
	items  map[unsealedKey]*unsealedItem
}

type unsealedKey struct {
	node, shard string
	generation  uint64
}

type unsealedItem struct {
	ready chan struct{} // closed once ans or err is set
	asked time.Time
	ans   *Unsealed
	err   error
}

// get returns the answer for key, asking with ask unless an answer asked
// within maxAge (or being asked now) can serve. Failures are not kept:
// the snapshots waiting for one share it, the next asks again.
func (c *unsealedCache) get(ctx context.Context, key unsealedKey, ask func() (*Unsealed, error)) (*Unsealed, error) {
	now := time.Now()
	c.mu.Lock()
	if c.items == nil {
		c.items = map[unsealedKey]*unsealedItem{}
	}
	it := c.items[key]
	if it != nil && done(it.ready) && now.Sub(it.asked) >= c.maxAge {
		it = nil // too old: ask again (forget drops old answers of other keys)
	}
	if it == nil {
		it = &unsealedItem{ready: make(chan struct{}), asked: now}
		c.items[key] = it
		c.mu.Unlock()
		it.ans, it.err = ask()
		c.mu.Lock()
		if it.err != nil && c.items[key] == it {
			delete(c.items, key)
		}
		c.mu.Unlock()
		close(it.ready)
		if it.err == nil {
			// An idle query node does not keep the answer in memory.
			time.AfterFunc(c.maxAge, func() { c.forget(key, it) })
		}
		return it.ans, it.err
	}
	c.mu.Unlock()
	select {
	case <-it.ready:
		return it.ans, it.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// forget drops it if it is still key's answer.
func (c *unsealedCache) forget(key unsealedKey, it *unsealedItem) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.items[key] == it {
		delete(c.items, key)
	}
}

func done(ch chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}
