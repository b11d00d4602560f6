package endpoints

import (
	"context"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sediment/sediment/catalog"
)

// cache keeps endpoint results per (endpoint, full parameter map).
//
// A result is served for cache_duration_seconds from when it was computed,
// and never past the moment the oldest event it may hold passes its
// source's retention (scan.Validity): an expired event must not show in a
// cached answer either.
// With proactive_requerying_seconds, results read within their lifetime
// are recomputed in the background on that interval, so a popular endpoint
// is always answered from memory; a failed refresh keeps the last good
// result until it expires. A failed first run is not cached. Concurrent
// identical requests on a cold entry run the query once. Results are held
// unredacted; redaction is applied per request.
type cache struct {
	s   *Service
	max int64

	mu      sync.Mutex
	entries map[string]*entry
	bytes   int64

	// hits counts requests a stored result answered; misses those that
	// ran the query or waited for a run of it (see CacheStats).
	hits, misses atomic.Int64
}

// CacheStats describes the endpoint result cache, for metrics.
type CacheStats struct {
	// Hits counts endpoint calls a stored result answered, Misses those
	// that ran the query or waited for an identical run, since the
	// service started. Calls to endpoints without caching count in
	// neither.
	Hits, Misses int64
	// Entries and Bytes are the results held now and their size.
	Entries int
	Bytes   int64
}

// CacheStats returns the result cache's counts.
func (s *Service) CacheStats() CacheStats {
	c := s.cache
	c.mu.Lock()
	defer c.mu.Unlock()
	return CacheStats{Hits: c.hits.Load(), Misses: c.misses.Load(), Entries: len(c.entries), Bytes: c.bytes}
}

type entry struct {
	key    string
	ep     *catalog.Endpoint // as it was when the entry was made
	params map[string]string

	body        []byte    // last good result
	computed    time.Time // when body was computed
	expires     time.Time // when body stops being served
	lastAccess  time.Time
	nextRefresh time.Time
	refreshing  bool

	// inflight is set while the first computation (or a recomputation
	// after expiry) runs; waiters block on it.
	inflight *call
}

type call struct {
	done chan struct{}
	body []byte
	err  error
}

func newCache(s *Service, max int64) *cache {
	return &cache{s: s, max: max, entries: map[string]*entry{}}
}

// cacheKey identifies a request: the endpoint and every parameter.
func cacheKey(ep *catalog.Endpoint, params map[string]string) string {
	keys := make([]string, 0, len(params))
	for k := range params {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	b := strconv.AppendInt(nil, ep.ID, 10)
	for _, k := range keys {
		b = append(b, 0)
		b = append(b, k...)
		b = append(b, 0)
		b = append(b, params[k]...)
	}
	return string(b)
}

func (c *cache) ttl(ep *catalog.Endpoint) time.Duration {
	return time.Duration(ep.CacheDurationSeconds) * time.Second
}

// lookup returns the endpoint's result for params, from memory when
// fresh, and reports whether the stored result answered (hit) or the
// query ran for this request or one it joined (miss).
func (c *cache) lookup(ctx context.Context, ep *catalog.Endpoint, params map[string]string) (body []byte, hit bool, err error) {
	key := cacheKey(ep, params)
	now := c.s.opts.Now()
	c.mu.Lock()
	e := c.entries[key]
	if e != nil && !e.ep.UpdatedAt.Equal(ep.UpdatedAt) {
		// The endpoint changed since: its cached results are void.
		c.removeLocked(e)
		e = nil
	}
	if e != nil && e.body != nil && now.Before(e.expires) {
		e.lastAccess = now
		body := e.body
		c.mu.Unlock()
		c.hits.Add(1)
		return body, true, nil
	}
	c.misses.Add(1)
	if e != nil && e.inflight != nil {
		cl := e.inflight
		e.lastAccess = now
		c.mu.Unlock()
		select {
		case <-cl.done:
			return cl.body, false, cl.err
		case <-ctx.Done():
			return nil, false, ctx.Err()
		}
	}
	if e == nil {
		e = &entry{key: key, ep: ep, params: copyParams(params)}
		c.entries[key] = e
	}
	cl := &call{done: make(chan struct{})}
	e.inflight = cl
	e.lastAccess = now
	c.mu.Unlock()

	// The computation outlives a caller that gives up: others may wait on it.
	body, until, err := c.s.execute(context.WithoutCancel(ctx), ep, params)

	c.mu.Lock()
	cl.body, cl.err = body, err
	e.inflight = nil
	if c.entries[key] == e { // not dropped meanwhile
		if err != nil {
			if e.body == nil || !c.s.opts.Now().Before(e.expires) {
				c.removeLocked(e) // failed first run: nothing is cached
			}
		} else {
			c.storeLocked(e, body, until)
		}
	}
	c.mu.Unlock()
	close(cl.done)
	return body, false, err
}

// fresh returns the stored result for params when it is fresh, without
// computing anything or waiting for a computation in flight.
func (c *cache) fresh(ep *catalog.Endpoint, params map[string]string) ([]byte, bool) {
	key := cacheKey(ep, params)
	now := c.s.opts.Now()
	c.mu.Lock()
	defer c.mu.Unlock()
	e := c.entries[key]
	if e == nil || e.body == nil || !e.ep.UpdatedAt.Equal(ep.UpdatedAt) || !now.Before(e.expires) {
		return nil, false
	}
	e.lastAccess = now
	c.hits.Add(1)
	return e.body, true
}

func copyParams(p map[string]string) map[string]string {
	out := make(map[string]string, len(p))
	for k, v := range p {
		out[k] = v
	}
	return out
}

// storeLocked records a fresh result, valid until its time to live ends
// or until (when not zero), and enforces the memory bound.
func (c *cache) storeLocked(e *entry, body []byte, until time.Time) {
	now := c.s.opts.Now()
	c.bytes += int64(len(body)) - int64(len(e.body))
	e.body = body
	e.computed = now
	e.expires = now.Add(c.ttl(e.ep))
	if !until.IsZero() && until.Before(e.expires) {
		e.expires = until
	}
	if p := e.ep.ProactiveRequeryingSeconds; p > 0 {
		e.nextRefresh = now.Add(time.Duration(p) * time.Second)
	}
	for c.bytes > c.max && len(c.entries) > 1 {
		var lru *entry
		for _, x := range c.entries {
			if x != e && x.inflight == nil && !x.refreshing && (lru == nil || x.lastAccess.Before(lru.lastAccess)) {
				lru = x
			}
		}
		if lru == nil {
			break
		}
		c.removeLocked(lru)
	}
}

func (c *cache) removeLocked(e *entry) {
	if c.entries[e.key] == e {
		delete(c.entries, e.key)
		c.bytes -= int64(len(e.body))
	}
}

// dropEndpoint forgets every result of an endpoint (it changed).
func (c *cache) dropEndpoint(id int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, e := range c.entries {
		if e.ep.ID == id {
			c.removeLocked(e)
		}
	}
}

// tick drops expired results and refreshes due ones, one at a time.
func (c *cache) tick() {
	now := c.s.opts.Now()
	var due []*entry
	c.mu.Lock()
	for _, e := range c.entries {
		if e.inflight != nil || e.refreshing {
			continue
		}
		ttl := c.ttl(e.ep)
		if e.body != nil && !now.Before(e.expires) {
			c.removeLocked(e)
			continue
		}
		// Refresh only results read within their lifetime: an unread one
		// is left to expire.
		if e.body != nil && e.ep.ProactiveRequeryingSeconds > 0 && !now.Before(e.nextRefresh) &&
			now.Sub(e.lastAccess) < ttl {
			e.refreshing = true
			due = append(due, e)
		}
	}
	c.mu.Unlock()
	for _, e := range due {
		body, until, err := c.s.execute(context.Background(), e.ep, e.params)
		c.mu.Lock()
		e.refreshing = false
		if c.entries[e.key] == e {
			if err == nil {
				c.storeLocked(e, body, until)
			} else {
				// Keep serving the last good result until it expires.
				e.nextRefresh = c.s.opts.Now().Add(time.Duration(e.ep.ProactiveRequeryingSeconds) * time.Second)
				c.s.opts.Logger.Warn("endpoint refresh failed", "endpoint", e.ep.Name, "err", err)
			}
		}
		c.mu.Unlock()
	}
}
