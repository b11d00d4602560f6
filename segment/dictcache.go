package segment

import (
	"container/list"
	"sync"
)

// DefaultDictCacheBytes is the default budget of the dictionary cache.
const DefaultDictCacheBytes = 32 << 20

// dictCache keeps the most recently used decoded dictionaries of every open
// Reader, up to a byte budget shared by all of them. A chunk's dictionary
// is needed by every page read of that chunk, so caching it saves a read,
// a CRC and a decompression per page; bounding the cache keeps a server
// that has queried every block of a large data set from holding all their
// dictionaries for as long as it runs. Evicting an entry is always safe:
// vectors that still use a dictionary keep it alive themselves.
type dictCache struct {
	mu   sync.Mutex
	max  int64
	used int64
	m    map[dictKey]*list.Element
	lru  list.List // of *dictEntry, most recently used first
}

type dictKey struct {
	r      *Reader
	b, col int
}

type dictEntry struct {
	key  dictKey
	d    *dictData
	size int64
}

var dicts = &dictCache{max: DefaultDictCacheBytes, m: map[dictKey]*list.Element{}}

// SetDictCacheBytes sets the budget of the dictionary cache shared by all
// readers (0 disables it) and returns the previous one.
func SetDictCacheBytes(n int64) int64 {
	dicts.mu.Lock()
	defer dicts.mu.Unlock()
	old := dicts.max
	dicts.max = max(n, 0)
	dicts.evictLocked()
	return old
}

// DictCacheBytes returns the bytes the dictionary cache holds.
func DictCacheBytes() int64 {
	dicts.mu.Lock()
	defer dicts.mu.Unlock()
	return dicts.used
}

func (c *dictCache) get(k dictKey) *dictData {
	c.mu.Lock()
	defer c.mu.Unlock()
	e := c.m[k]
	if e == nil {
		return nil
	}
	c.lru.MoveToFront(e)
	return e.Value.(*dictEntry).d
}

// put adds a dictionary whose decoded form takes about size bytes.
func (c *dictCache) put(k dictKey, d *dictData, size int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if size > c.max/4 || c.m[k] != nil {
		return // one dictionary may not take most of the cache
	}
	c.m[k] = c.lru.PushFront(&dictEntry{key: k, d: d, size: size})
	c.used += size
	c.evictLocked()
}

func (c *dictCache) evictLocked() {
	for c.used > c.max {
		e := c.lru.Back()
		if e == nil {
			return
		}
		c.removeLocked(e)
	}
}

func (c *dictCache) removeLocked(e *list.Element) {
	de := c.lru.Remove(e).(*dictEntry)
	delete(c.m, de.key)
	c.used -= de.size
}

// dropReader forgets the dictionaries of a reader being closed.
func (c *dictCache) dropReader(r *Reader) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for e := c.lru.Front(); e != nil; {
		next := e.Next()
		if e.Value.(*dictEntry).key.r == r {
			c.removeLocked(e)
		}
		e = next
	}
}
