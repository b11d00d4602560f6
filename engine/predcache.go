package engine

import (
	"container/list"
	"math/bits"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/sediment/sediment/sql/scan"
)

// The predicate cache keeps, for a text predicate (a regex, LIKE or
// substring test) that a scan evaluated on every row of a segment block or
// a head chunk, which rows passed, as a bitset. The rows of a block never
// change, nor do those of a head once visible (headchunk.go), so the next
// query with the same predicate over the same unit takes the bitset
// instead of reading and searching the column again: Studio runs the same
// regexp count over and over on a chart, and over high-cardinality text
// (event_message) neither a block dictionary nor the token index (whose
// common words keep no postings) narrows such a search.
//
// Only predicates that cost a read and a search per row are cached, and
// only when evaluated on the whole unit with nothing narrowed before (a
// result over part of the unit would not be the unit's). The cache is
// engine-wide, bounded by bytes (predCacheBudget), least recently used
// first out; entries name their unit by a number, not a pointer, so that
// a segment dropped by compaction is not kept alive: its entries age out.

// defaultPredCacheBytes is the default bound of the bytes of the bitsets
// the cache keeps (Options.PredicateCacheBytes; a bitset costs a bit per
// row: 16 MiB hold 128M rows' answers).
const defaultPredCacheBytes = 16 << 20

// predUnit says which rows a scan unit covers, for the cache: a segment
// block or a head chunk.
type predUnit struct {
	owner uint64 // cache number of the segment or head; 0: do not cache
	part  int    // the segment's block, or the head chunk's first row
	// lo, hi: the unit's rows, in the numbering evalPreds is given.
	lo, hi int
}

type predCacheKey struct {
	owner    uint64
	part, hi int
	pred     string
}

type predCacheEntry struct {
	key  predCacheKey
	bits []uint64 // bit i: row lo+i passed
}

var predCache = struct {
	mu  sync.Mutex
	m   map[predCacheKey]*list.Element
	lru list.List // front: most recently used
	// perPred counts the entries of each predicate: warming (predwarm.go)
	// computes only answers that queries store, not those of predicates
	// a dictionary or the index decides.
	perPred map[string]int
	bytes   int
	budget  int // 0: no caching
	hits    atomic.Uint64
	// What warming new segments did (predwarm.go): block answers stored,
	// segments or blocks left (queue full, removed, unreadable, closing),
	// and panics recovered.
	warmedBlocks, warmSkipped, warmPanics atomic.Uint64
}{m: map[predCacheKey]*list.Element{}, perPred: map[string]int{}, budget: defaultPredCacheBytes}

// setPredCacheBytes sets the cache's bound (0: no caching), dropping what
// no longer fits.
func setPredCacheBytes(n int64) {
	predCache.mu.Lock()
	defer predCache.mu.Unlock()
	predCache.budget = int(min(n, 1<<40))
	evictPredCache()
}

// PredCacheStats describes the predicate cache, for metrics.
type PredCacheStats struct {
	// Hits counts answers taken from the cache.
	Hits uint64
	// Entries and Bytes are what it holds; Budget its bound (0: off).
	Entries, Bytes, Budget int
	// WarmedBlocks counts block answers computed ahead of queries for new
	// segments; WarmSkipped the segments or blocks left unwarmed (queue
	// full, segment removed, block unreadable, engine closing);
	// WarmPanics the warming jobs that panicked (logged).
	WarmedBlocks, WarmSkipped, WarmPanics uint64
}

// PredicateCacheStats returns the predicate cache's counts (the cache is
// the process's, shared by its engines).
func PredicateCacheStats() PredCacheStats {
	predCache.mu.Lock()
	defer predCache.mu.Unlock()
	return PredCacheStats{Hits: predCache.hits.Load(), Entries: len(predCache.m), Bytes: predCache.bytes,
		Budget: predCache.budget, WarmedBlocks: predCache.warmedBlocks.Load(),
		WarmSkipped: predCache.warmSkipped.Load(), WarmPanics: predCache.warmPanics.Load()}
}

// predCached reports whether the cache holds answers of the predicate
// with cache key key.
func predCached(key string) bool {
	predCache.mu.Lock()
	defer predCache.mu.Unlock()
	return predCache.perPred[key] > 0
}

// predCacheOn reports whether the cache keeps anything.
func predCacheOn() bool {
	predCache.mu.Lock()
	defer predCache.mu.Unlock()
	return predCache.budget > 0
}

// dropPredCache empties the cache.
func dropPredCache() {
	predCache.mu.Lock()
	defer predCache.mu.Unlock()
	clear(predCache.m)
	clear(predCache.perPred)
	predCache.lru.Init()
	predCache.bytes = 0
}

// evict drops the least recently used entries past the budget. Called
// with mu held.
func evictPredCache() {
	for predCache.bytes > predCache.budget {
		old := predCache.lru.Back()
		oe := old.Value.(*predCacheEntry)
		predCache.lru.Remove(old)
		delete(predCache.m, oe.key)
		if predCache.perPred[oe.key.pred]--; predCache.perPred[oe.key.pred] <= 0 {
			delete(predCache.perPred, oe.key.pred)
		}
		predCache.bytes -= entrySize(oe.bits, oe.key.pred)
	}
}

// entrySize is what an entry counts for against the budget.
func entrySize(set []uint64, pred string) int { return len(set)*8 + len(pred) + 64 }

// predCacheOwners numbers the segments and heads the cache knows.
var predCacheOwners atomic.Uint64

// cacheOwner returns the cache number in id, giving one on first use.
func cacheOwner(id *atomic.Uint64) uint64 {
	if v := id.Load(); v != 0 {
		return v
	}
	id.CompareAndSwap(0, predCacheOwners.Add(1))
	return id.Load()
}

// predCacheKeyOf returns the key under which the cache keeps a predicate's
// answers ("" for one not worth keeping). The key is everything the
// answer on a value depends on.
func predCacheKeyOf(p *pred) string {
	var arg string
	switch p.Op {
	case scan.Regex:
		arg = p.re.Regexp().String()
	case scan.Like, scan.Contains:
		arg = p.Args[0].Str
	default:
		return ""
	}
	b := make([]byte, 0, len(p.Path)+len(arg)+16)
	b = strconv.AppendInt(b, int64(p.Op), 10)
	b = append(b, ' ')
	b = strconv.AppendInt(b, int64(p.Type), 10)
	b = append(b, ' ')
	b = strconv.AppendBool(b, p.Not)
	b = append(b, ' ')
	b = strconv.AppendInt(b, int64(len(p.Path)), 10)
	b = append(b, ' ')
	b = append(b, p.Path...)
	b = append(b, arg...)
	return string(b)
}

// cachedRows returns the rows of u that passed p, as a bitset, if the
// cache has them.
func cachedRows(u predUnit, p *pred) ([]uint64, bool) {
	if u.owner == 0 || p.cacheKey == "" {
		return nil, false
	}
	k := predCacheKey{owner: u.owner, part: u.part, hi: u.hi, pred: p.cacheKey}
	predCache.mu.Lock()
	defer predCache.mu.Unlock()
	e, ok := predCache.m[k]
	if !ok {
		return nil, false
	}
	predCache.lru.MoveToFront(e)
	predCache.hits.Add(1)
	return e.Value.(*predCacheEntry).bits, true
}

// hasCachedRows reports whether the cache has p's answer for u, without
// counting a hit or refreshing it.
func hasCachedRows(u predUnit, p *pred) bool {
	if u.owner == 0 || p.cacheKey == "" {
		return false
	}
	k := predCacheKey{owner: u.owner, part: u.part, hi: u.hi, pred: p.cacheKey}
	predCache.mu.Lock()
	defer predCache.mu.Unlock()
	_, ok := predCache.m[k]
	return ok
}

// cacheRows keeps the rows of u that passed p (rows: ascending, in u's
// numbering).
func cacheRows(u predUnit, p *pred, rows []int32) {
	if !cachesFor(u, p) {
		return
	}
	set := make([]uint64, (u.hi-u.lo+63)/64)
	for _, r := range rows {
		i := int(r) - u.lo
		set[i>>6] |= 1 << (i & 63)
	}
	keepBits(u, p, set)
}

// cacheAllRows keeps that every row of u passed p, without a list of
// them (a predicate every row passes: a project filter on a source of one
// project).
func cacheAllRows(u predUnit, p *pred) {
	if !cachesFor(u, p) {
		return
	}
	n := u.hi - u.lo
	set := make([]uint64, (n+63)/64)
	for i := range set {
		set[i] = ^uint64(0)
	}
	if n%64 != 0 {
		set[len(set)-1] = 1<<(n%64) - 1
	}
	keepBits(u, p, set)
}

// cachesFor reports whether the cache would keep p's answer for u: a unit
// and predicate it caches, and a cache that is on.
func cachesFor(u predUnit, p *pred) bool {
	if u.owner == 0 || p.cacheKey == "" {
		return false
	}
	predCache.mu.Lock()
	defer predCache.mu.Unlock()
	return predCache.budget != 0
}

// keepBits keeps set as p's answer for u.
func keepBits(u predUnit, p *pred, set []uint64) {
	size := entrySize(set, p.cacheKey)
	k := predCacheKey{owner: u.owner, part: u.part, hi: u.hi, pred: p.cacheKey}
	predCache.mu.Lock()
	defer predCache.mu.Unlock()
	if size > predCache.budget/16 {
		return // one entry never takes more than a sixteenth
	}
	if _, ok := predCache.m[k]; ok {
		return // another scan got there first, with the same answer
	}
	predCache.m[k] = predCache.lru.PushFront(&predCacheEntry{key: k, bits: set})
	predCache.perPred[k.pred]++
	predCache.bytes += size
	evictPredCache()
}

// rowsFromBits returns the rows of sel (nil: every row of [lo, hi), a
// range within u) whose bit is set.
func rowsFromBits(set []uint64, u predUnit, sel []int32, lo, hi int) []int32 {
	has := func(r int) bool {
		i := r - u.lo
		return set[i>>6]&(1<<(i&63)) != 0
	}
	if sel != nil {
		out := make([]int32, 0, len(sel))
		for _, r := range sel {
			if has(int(r)) {
				out = append(out, r)
			}
		}
		return out
	}
	if lo != u.lo || hi != u.hi {
		out := []int32{}
		for r := lo; r < hi; r++ {
			if has(r) {
				out = append(out, int32(r))
			}
		}
		return out
	}
	n := 0
	for _, w := range set {
		n += bits.OnesCount64(w)
	}
	out := make([]int32, 0, n)
	for wi, w := range set {
		for w != 0 {
			out = append(out, int32(u.lo+wi*64+bits.TrailingZeros64(w)))
			w &= w - 1
		}
	}
	return out
}
