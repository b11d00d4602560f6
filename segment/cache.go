package segment

import (
	"container/list"
	"sync"
)

// Default budgets of the caches shared by every Reader of the process.
const (
	DefaultDictCacheBytes = 32 << 20
	DefaultPageCacheBytes = 32 << 20
)

// Readers share two caches of decoded units (and a third of texts derived
// from rows, rowtext.go), each bounded by bytes and evicting the least
// recently used entry:
//
//   - dictionaries: a chunk's dictionary is needed by every page read of
//     that chunk;
//   - pages: decompressed data pages. The newest pages of a source are read
//     again and again (Studio's log pages, the newest-first searches, live
//     charts), and decompressing them is most of the cost of such a query.
//
// Segments are immutable, so an entry never goes stale; it goes when its
// reader closes or the budget needs room. Evicting is always safe: vectors
// that still use a dictionary or alias a page's bytes keep them alive.
var (
	dicts = newLRU[dictKey, *dictData](DefaultDictCacheBytes)
	pages = newLRU[pageKey, []byte](DefaultPageCacheBytes - DefaultPageCacheBytes/rowTextShare)
)

type dictKey struct {
	r      *Reader
	b, col int
}

type pageKey struct {
	r   *Reader
	off int64
}

// SetDictCacheBytes sets the budget of the dictionary cache (0 disables it)
// and returns the previous one.
func SetDictCacheBytes(n int64) int64 { return dicts.setMax(n) }

// SetPageCacheBytes sets the budget of the page cache (0 disables it) and
// returns the previous one. The cache of row texts (rowtext.go) takes
// 1/rowTextShare of it, the pages the rest.
func SetPageCacheBytes(n int64) int64 {
	n = max(n, 0)
	texts := n / rowTextShare
	old := pages.setMax(n - texts)
	return old + rowTexts.setMax(texts)
}

// PageCacheBudget returns the budget of the page cache, as set (the pages
// and the row texts together): what decides whether a scan reads through
// the cache is the size of the whole, as before the texts took a share.
func PageCacheBudget() int64 { return pages.budget() + rowTexts.budget() }

// DictCacheBytes returns the bytes the dictionary cache holds.
func DictCacheBytes() int64 { return dicts.bytes() }

// PageCacheBytes returns the bytes the page cache holds.
func PageCacheBytes() int64 { return pages.bytes() }

// DropCaches empties the caches of pages, dictionaries and row texts and
// the block directory cache (footcache.go): a server going idle hands the
// memory back; they refill as queries read.
func DropCaches() {
	details.dropAll()
	dicts.dropIf(func(dictKey) bool { return true })
	pages.dropIf(func(pageKey) bool { return true })
	rowTexts.dropIf(func(rowTextKey) bool { return true })
}

// dropReader forgets the entries of a reader being closed.
func dropReader(r *Reader) {
	dicts.dropIf(func(k dictKey) bool { return k.r == r })
	pages.dropIf(func(k pageKey) bool { return k.r == r })
	rowTexts.dropIf(func(k rowTextKey) bool { return k.r == r })
}

// lru is a byte-bounded least-recently-used cache safe for concurrent use.
type lru[K comparable, V any] struct {
	mu   sync.Mutex
	max  int64
	used int64
	m    map[K]*list.Element
	ll   list.List // of *lruEntry, most recently used first
}

type lruEntry[K comparable, V any] struct {
	key  K
	val  V
	size int64
}

func newLRU[K comparable, V any](max int64) *lru[K, V] {
	return &lru[K, V]{max: max, m: map[K]*list.Element{}}
}

func (c *lru[K, V]) get(k K) (V, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e := c.m[k]
	if e == nil {
		var zero V
		return zero, false
	}
	c.ll.MoveToFront(e)
	return e.Value.(*lruEntry[K, V]).val, true
}

// put adds a value taking about size bytes, and reports whether it did.
// One value may not take more than a quarter of the budget: a huge unit
// read once must not flush the cache.
func (c *lru[K, V]) put(k K, v V, size int64) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if size > c.max/4 || c.m[k] != nil {
		return false
	}
	c.m[k] = c.ll.PushFront(&lruEntry[K, V]{key: k, val: v, size: size})
	c.used += size
	c.evictLocked()
	return true
}

func (c *lru[K, V]) setMax(n int64) int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	old := c.max
	c.max = max(n, 0)
	c.evictLocked()
	return old
}

func (c *lru[K, V]) budget() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.max
}

func (c *lru[K, V]) bytes() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.used
}

func (c *lru[K, V]) evictLocked() {
	for c.used > c.max {
		e := c.ll.Back()
		if e == nil {
			return
		}
		c.removeLocked(e)
	}
}

func (c *lru[K, V]) removeLocked(e *list.Element) {
	le := c.ll.Remove(e).(*lruEntry[K, V])
	delete(c.m, le.key)
	c.used -= le.size
}

func (c *lru[K, V]) dropIf(f func(K) bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for e := c.ll.Front(); e != nil; {
		next := e.Next()
		if f(e.Value.(*lruEntry[K, V]).key) {
			c.removeLocked(e)
		}
		e = next
	}
}
