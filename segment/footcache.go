package segment

import (
	"sync"
	"sync/atomic"
	"unsafe"
)

// An open segment keeps resident only what every query's pruning reads
// (footer.go: blockSum and chunkSum: block time ranges and row counts,
// the columns present, their encodings, value counts and min/max). The
// rest of a block's footer record (its page directory, dictionary page
// lists, history units and derived-text templates) is decoded when a
// read first needs it and kept in the block directory cache below,
// bounded in bytes and shared by every Reader of the process, as the page
// and dictionary caches are (cache.go). A read of an evicted block
// decodes its record again from the footer unit (through the page cache,
// else from the file).
//
// Lookups are on the hot path of every column read, so a Reader finds a
// block's cached directory through a pointer of its own (one per block,
// an atomic load); the cache's lock is taken only to add or evict. A hit
// sets the entry's used flag, and eviction gives an entry whose flag is
// set a second chance (CLOCK): recency without a lock per lookup.
//
// Evicting only drops the cache's and the Reader's pointers: a read that
// loaded the directory keeps its own pointer, so the garbage collector
// frees the directory once the last such read is done. Nothing is ever
// reused in place.

// DefaultFooterCacheBytes is the default budget of the block directory
// cache. 32 MiB holds the directories of ~13M edge events stored (2.5
// MiB per million, counted): a query reading every block of 10M (Q6 of
// the peers suite) finds them all, where a budget smaller than what it
// reads decodes every block again on each run (a cyclic scan defeats any
// recency order).
const DefaultFooterCacheBytes = 32 << 20

// minFooterCacheBytes is the least budget the block directory cache
// keeps: a read takes a block's directory several times (once per column
// and once per lookup of its pages), and one that decodes it again for
// each would be slow. A budget below it (0 included) is raised to it.
const minFooterCacheBytes = 1 << 20

// blockDetail is one entry of the block directory cache: a block's full
// footer record, decoded (b >= 0), or a segment's decompressed footer
// unit (b == footerBody, body), which the records of its other blocks
// are decoded from without reading the file again.
type blockDetail struct {
	bm   blockMeta
	body []byte
	size int64 // what it holds, estimated (detailSize)
	used atomic.Bool
	// The cache's list, guarded by its lock.
	r          *Reader
	b          int
	prev, next *blockDetail
}

// footerBody is the b of a blockDetail that holds a footer unit.
const footerBody = -1

// slot returns where d's reader points to d.
func (d *blockDetail) slot() *atomic.Pointer[blockDetail] {
	if d.b == footerBody {
		return &d.r.body
	}
	return &d.r.details[d.b]
}

// detailCache is the block directory cache: a ring of entries, most
// recently added first, bounded by the bytes they hold.
type detailCache struct {
	mu   sync.Mutex
	max  int64
	held int64
	ring blockDetail // sentinel: ring.next is the newest, ring.prev the oldest

	loads     atomic.Int64
	evictions atomic.Int64
	// resident is what open Readers hold of their footers outside this
	// cache (blockSum, chunkSum, the column directory).
	resident atomic.Int64
}

var details = newDetailCache(DefaultFooterCacheBytes)

func newDetailCache(budget int64) *detailCache {
	c := &detailCache{max: max(budget, minFooterCacheBytes)}
	c.ring.next, c.ring.prev = &c.ring, &c.ring
	return c
}

// SetFooterCacheBytes sets the budget of the block directory cache (the
// per-block page directories and unit lists of open segments, decoded on
// demand from their footers) and returns the previous one. A budget below
// 1 MiB, 0 included, is raised to 1 MiB: reads need a block's directory
// while they read it.
func SetFooterCacheBytes(n int64) int64 {
	c := details
	c.mu.Lock()
	defer c.mu.Unlock()
	old := c.max
	c.max = max(n, minFooterCacheBytes)
	c.evictLocked(nil)
	return old
}

// FooterStats describes the memory open segments' footers take.
type FooterStats struct {
	// ResidentBytes is what open segments keep of their footers for
	// their whole life (what pruning reads), estimated.
	ResidentBytes int64
	// CacheBytes is what the block directory cache holds, estimated;
	// CacheBudget bounds it.
	CacheBytes, CacheBudget int64
	// Loads counts block directories decoded from a footer because they
	// were not cached; Evictions those the cache dropped for room.
	Loads, Evictions int64
}

// FooterMemory returns the footer memory of the process's open segments.
func FooterMemory() FooterStats {
	c := details
	c.mu.Lock()
	held, budget := c.held, c.max
	c.mu.Unlock()
	return FooterStats{ResidentBytes: c.resident.Load(), CacheBytes: held, CacheBudget: budget,
		Loads: c.loads.Load(), Evictions: c.evictions.Load()}
}

// add caches d, the directory of block d.b of d.r, unless the reader is
// closed, and evicts others while the cache is over its budget. d itself
// stays even when it alone is bigger than the budget: the read that
// loaded it uses it next.
func (c *detailCache) add(d *blockDetail) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if d.r.closed {
		return
	}
	d.next, d.prev = c.ring.next, &c.ring
	d.next.prev, c.ring.next = d, d
	c.held += d.size
	c.evictLocked(d)
}

// evictLocked drops the oldest entries (never keep) until the cache is
// within its budget or holds keep alone; an entry used since it was last
// looked at here goes back to the front instead, once.
func (c *detailCache) evictLocked(keep *blockDetail) {
	for c.held > c.max {
		d := c.ring.prev
		if d == &c.ring || d == keep && d.prev == &c.ring {
			return // empty, or only keep
		}
		c.unlinkLocked(d)
		if d == keep {
			d.next, d.prev = c.ring.next, &c.ring
			d.next.prev, c.ring.next = d, d
			c.held += d.size
			continue
		}
		if d.used.Swap(false) {
			d.next, d.prev = c.ring.next, &c.ring
			d.next.prev, c.ring.next = d, d
			c.held += d.size
			continue
		}
		d.slot().CompareAndSwap(d, nil)
		c.evictions.Add(1)
	}
}

func (c *detailCache) unlinkLocked(d *blockDetail) {
	d.prev.next, d.next.prev = d.next, d.prev
	d.prev, d.next = nil, nil
	c.held -= d.size
}

// dropReader forgets the directories of a reader being closed, and keeps
// any from being added later. It reports whether r was open.
func (c *detailCache) dropReader(r *Reader) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if r.closed {
		return false
	}
	r.closed = true
	for d := c.ring.next; d != &c.ring; {
		next := d.next
		if d.r == r {
			c.unlinkLocked(d)
		}
		d = next
	}
	return true
}

// dropAll empties the cache (DropCaches).
func (c *detailCache) dropAll() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for d := c.ring.next; d != &c.ring; {
		next := d.next
		c.unlinkLocked(d)
		d.slot().CompareAndSwap(d, nil)
		d = next
	}
}

// block returns the full footer record of block b: from the cache, else
// decoded from the footer (loadBlock).
func (r *Reader) block(b int) (*blockMeta, error) {
	if d := r.details[b].Load(); d != nil {
		if !d.used.Load() {
			d.used.Store(true)
		}
		return &d.bm, nil
	}
	return r.loadBlock(b, cacheFill)
}

// loadBlock decodes block b's footer record from the footer unit and
// caches it. The unit comes from the cache (the blocks of a segment are
// often read one after the other), else from the file; with cacheFill it
// is cached for the next block's load.
func (r *Reader) loadBlock(b int, mode cacheMode) (*blockMeta, error) {
	body, err := r.footerBody(mode)
	if err != nil {
		return nil, err
	}
	s := &r.ft.blocks[b]
	var bm blockMeta
	if s.recEnd <= len(body) {
		bm, err = decodeBlockRecord(body[s.rec:s.recEnd], b, r.ft.cols, r.footOff, r.version)
	} else {
		err = errShort
	}
	if err == nil && (bm.rows != s.rows || bm.minTime != s.minTime || bm.maxTime != s.maxTime || len(bm.chunks) != int(s.nchunks)) {
		err = errFooterChanged
	}
	if err != nil {
		return nil, corruptf(r.path, "footer", r.footOff, "block %d: %v", b, err)
	}
	bm.firstRow = s.firstRow
	// The statistics strings are the resident ones (the same bytes):
	// the record's copies go, and the cache does not count them.
	for i := range bm.chunks {
		c := &bm.chunks[i]
		if sum := r.ft.chunkSumOf(b, c.col); sum != nil {
			if lo, hi := sum.minStr(r.ft), sum.maxStr(r.ft); lo == c.stats.minS && hi == c.stats.maxS {
				c.stats.minS, c.stats.maxS = lo, hi
			}
		}
	}
	d := &blockDetail{bm: bm, size: detailSize(&bm), r: r, b: b}
	details.loads.Add(1)
	if !r.details[b].CompareAndSwap(nil, d) {
		// Another read loaded it meanwhile: use that one.
		if o := r.details[b].Load(); o != nil {
			return &o.bm, nil
		}
		return &d.bm, nil
	}
	details.add(d)
	return &d.bm, nil
}

// footerBody returns the decompressed footer unit: cached, or read from
// the file (and cached when mode is cacheFill and it takes at most a
// quarter of the cache's budget).
func (r *Reader) footerBody(mode cacheMode) ([]byte, error) {
	if mode != cacheBypass {
		if d := r.body.Load(); d != nil {
			d.used.Store(true)
			return d.body, nil
		}
	}
	body, err := r.readUnit(r.footOff, r.footLen, "footer", maxFooterSize)
	if err != nil || mode != cacheFill {
		return body, err
	}
	d := &blockDetail{body: body, size: int64(cap(body)) + 256, r: r, b: footerBody}
	details.mu.Lock()
	small := d.size <= details.max/4
	details.mu.Unlock()
	if small && r.body.CompareAndSwap(nil, d) {
		details.add(d)
	}
	return body, nil
}

// detailSize estimates the bytes a decoded block record holds (its
// statistics strings are the resident part's, not counted).
func detailSize(bm *blockMeta) int64 {
	const (
		chunkBytes = int64(unsafe.Sizeof(chunkMeta{}))
		entryBytes = 16 // pageEntry, pageBounds, pageUnit
		dictBytes  = int64(unsafe.Sizeof(dictPageMeta{}))
		overhead   = int64(unsafe.Sizeof(blockDetail{}) + unsafe.Sizeof(pageDir{}) + 64) // and allocation rounding
	)
	n := overhead + int64(cap(bm.chunks))*chunkBytes + 4*int64(cap(bm.byCol))
	var dir *pageDir
	for i := range bm.chunks {
		c := &bm.chunks[i]
		n += int64(cap(c.dict)) * dictBytes
		if c.derived != nil {
			n += c.derived.memSize()
		}
		if c.pages.d != nil && c.pages.d != dir {
			dir = c.pages.d
			n += int64(cap(dir.ents)+cap(dir.bounds)+cap(dir.wide)) * entryBytes
		}
	}
	return n
}

// memSize estimates the bytes a derived table holds.
func (t *derivedTable) memSize() int64 {
	n := int64(64 + 24*len(t.tpls) + 9*len(t.cols))
	for _, tpl := range t.tpls {
		for _, p := range tpl {
			n += 40 + int64(len(p.lit))
		}
	}
	return n
}

// memSize estimates the bytes the resident part of a footer holds.
func (f *footer) memSize() int64 {
	const (
		footerBytes   = 128
		colBytes      = 48 // ColumnDesc
		elemBytes     = 24 // ElemField
		blockSumBytes = int64(unsafe.Sizeof(blockSum{}))
		chunkSumBytes = int64(unsafe.Sizeof(chunkSum{}))
		sectionBytes  = 40
	)
	n := int64(footerBytes) + int64(cap(f.cols))*colBytes + int64(cap(f.blocks))*blockSumBytes +
		int64(cap(f.chunks))*chunkSumBytes + int64(cap(f.strs)) + int64(cap(f.sections))*sectionBytes
	for _, c := range f.cols {
		n += int64(len(c.Path)) + int64(cap(c.Elem))*elemBytes
		for _, e := range c.Elem {
			n += int64(len(e.Path))
		}
	}
	for _, s := range f.sections {
		n += int64(len(s.name))
	}
	return n
}
