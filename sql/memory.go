package sql

import (
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/sediment/sediment/internal/vec"
)

// Memory governance. Every operator that holds data past the batch it is
// working on (a join's build side and hash table, a sort's buffered rows,
// an aggregation's groups, DISTINCT's seen keys, a window's partition, a
// subquery's result, the final result) charges an estimate of the heap it
// holds to its query through a memAccount, and releases it when it lets the
// data go. A query fails with a MemoryLimitError when its charges pass its
// own limit (Options.MemoryLimit) or when the MemoryPool shared by all
// queries (Options.MemoryPool) cannot grant them.
//
// What is not charged, and is the slack between the figures and the heap:
// batches in flight between operators (a scan keeps at most three per
// worker queued; a streaming operator holds one in and one out), the
// garbage of batches already processed (the collector's business), and
// decompressed segment pages that buffered strings still point into.

// ErrMemoryLimit is returned (wrapped in a *MemoryLimitError, which
// errors.Is matches) when a query needs more memory than its budget
// allows.
var ErrMemoryLimit = errors.New("Resources exceeded during query execution: the query needs more memory than its limit; reduce the time range or add filters")

// MemoryLimitError is the error of a query that needed more memory than a
// limit allows. Its message says which limit, its figure and the setting
// that changes it.
type MemoryLimitError struct {
	// Shared is true when the limit hit is the one of all queries together
	// (the MemoryPool), false when it is the query's own.
	Shared bool
	// Limit is the limit's figure in bytes.
	Limit int64
	// Setting names how an operator changes the limit (a flag such as
	// --query-memory); empty when the caller gave none.
	Setting string
}

func (e *MemoryLimitError) Error() string {
	set := ""
	if e.Setting != "" {
		set = ", set by " + e.Setting
	}
	if e.Shared {
		return fmt.Sprintf("Resources exceeded during query execution: the queries running now need more memory together than the limit of all queries (%s%s); retry in a moment, or reduce the time range or add filters", FormatBytes(e.Limit), set)
	}
	return fmt.Sprintf("Resources exceeded during query execution: the query needs more memory than the limit of one query (%s%s); reduce the time range or add filters", FormatBytes(e.Limit), set)
}

// Is makes errors.Is(err, ErrMemoryLimit) true.
func (e *MemoryLimitError) Is(target error) bool { return target == ErrMemoryLimit }

// FormatBytes renders a size as the flags take it: 64MiB, 1GiB, 1536KiB,
// or bytes.
func FormatBytes(n int64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return fmt.Sprintf("%dGiB", n>>30)
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%dMiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%dKiB", n>>10)
	}
	return fmt.Sprintf("%dB", n)
}

// MemoryPool is a memory budget shared by queries: each query draws what it
// charges from the pool (in steps of up to poolStep bytes, so that queries
// do not contend on every reservation) and gives it back as it releases and
// when it ends. A reservation the pool cannot grant fails at once with a
// MemoryLimitError naming the pool: queries do not wait for memory, since
// two queries waiting for each other's memory would both wait until their
// deadline; bounding how many queries run at once is admission control's
// job. A MemoryPool is safe for concurrent use.
type MemoryPool struct {
	total   int64
	setting string
	used    atomic.Int64
	peak    atomic.Int64
}

// NewMemoryPool returns a pool of total bytes (<= 0: unlimited, the pool
// only counts). setting names how an operator changes total (a flag such
// as --query-memory-total), for the error message.
func NewMemoryPool(total int64, setting string) *MemoryPool {
	return &MemoryPool{total: total, setting: setting}
}

// Total returns the pool's size in bytes (<= 0: unlimited).
func (p *MemoryPool) Total() int64 { return p.total }

// Used returns the bytes queries hold from the pool now.
func (p *MemoryPool) Used() int64 { return p.used.Load() }

// Peak returns the most bytes queries held from the pool at once.
func (p *MemoryPool) Peak() int64 { return p.peak.Load() }

// acquire takes n bytes if the pool has them.
func (p *MemoryPool) acquire(n int64) bool {
	for {
		u := p.used.Load()
		if p.total > 0 && u+n > p.total {
			return false
		}
		if p.used.CompareAndSwap(u, u+n) {
			raiseTo(&p.peak, u+n)
			return true
		}
	}
}

func (p *MemoryPool) release(n int64) { p.used.Add(-n) }

func (p *MemoryPool) limitError() error {
	return &MemoryLimitError{Shared: true, Limit: p.total, Setting: p.setting}
}

// raiseTo sets a to x if x is larger.
func raiseTo(a *atomic.Int64, x int64) {
	for {
		cur := a.Load()
		if x <= cur || a.CompareAndSwap(cur, x) {
			return
		}
	}
}

// poolStep is the most a query draws from its pool beyond what it needs
// at the moment, so that small reservations do not each touch the pool.
const poolStep = 1 << 20

// queryMemory is one query's accounting: what its operators charge now,
// the most they charged at once, and what the query holds from its pool.
type queryMemory struct {
	used    atomic.Int64
	peak    atomic.Int64
	limit   int64 // <= 0: none
	setting string
	pool    *MemoryPool
	poolMu  sync.Mutex
	granted atomic.Int64 // bytes held from the pool (>= used while a pool is set)
}

// reserve charges n bytes (n >= 0) to the query.
func (m *queryMemory) reserve(n int64) error {
	if n <= 0 {
		m.release(-n)
		return nil
	}
	u := m.used.Add(n)
	if m.limit > 0 && u > m.limit {
		m.used.Add(-n)
		return &MemoryLimitError{Limit: m.limit, Setting: m.setting}
	}
	if m.pool != nil && u > m.granted.Load() {
		if err := m.draw(u); err != nil {
			m.used.Add(-n)
			return err
		}
	}
	raiseTo(&m.peak, u)
	return nil
}

// draw takes from the pool enough to cover u bytes charged.
func (m *queryMemory) draw(u int64) error {
	m.poolMu.Lock()
	defer m.poolMu.Unlock()
	g := m.granted.Load()
	if u <= g {
		return nil
	}
	need := u - g
	want := need + poolStep
	if m.limit > 0 {
		want = min(want, m.limit-g)
	}
	if want < need || !m.pool.acquire(want) {
		if !m.pool.acquire(need) {
			return m.pool.limitError()
		}
		want = need
	}
	m.granted.Store(g + want)
	return nil
}

// release returns n bytes (n >= 0) charged earlier; past a few steps of
// surplus the query gives memory back to the pool.
func (m *queryMemory) release(n int64) {
	if n == 0 {
		return
	}
	u := m.used.Add(-n)
	if m.pool != nil && m.granted.Load()-u > 4*poolStep {
		m.poolMu.Lock()
		g := m.granted.Load()
		if keep := max(m.used.Load(), 0) + poolStep; g > keep {
			m.pool.release(g - keep)
			m.granted.Store(keep)
		}
		m.poolMu.Unlock()
	}
}

// returnAll gives everything the query holds from the pool back; the
// query charges nothing more after it.
func (m *queryMemory) returnAll() {
	if m.pool == nil {
		return
	}
	m.poolMu.Lock()
	m.pool.release(m.granted.Swap(0))
	m.poolMu.Unlock()
}

// memAccount is what one operator (or one part of the query) has charged:
// it grows and shrinks the query's charge and releases all of it at once.
// An account is used from one goroutine.
type memAccount struct {
	q *queryMemory
	n int64
}

// grow charges n more bytes.
func (a *memAccount) grow(n int64) error {
	if err := a.q.reserve(n); err != nil {
		return err
	}
	a.n += n
	return nil
}

// shrink releases n bytes (at most what is charged).
func (a *memAccount) shrink(n int64) {
	n = min(n, a.n)
	a.n -= n
	a.q.release(n)
}

// resize makes the charge total bytes.
func (a *memAccount) resize(total int64) error {
	if total > a.n {
		return a.grow(total - a.n)
	}
	a.shrink(a.n - total)
	return nil
}

// clear releases everything charged.
func (a *memAccount) clear() {
	if a.q != nil {
		a.q.release(a.n)
	}
	a.n = 0
}

// Heap estimates. A string header is 16 bytes, an interface 16; Go rounds
// allocations up to size classes, which the estimates leave out.
const (
	stringHeader = 16
	sliceHeader  = 24
	vectorHeader = int64(unsafe.Sizeof(vec.Vector{}))
)

// dictSet remembers the dictionaries already counted, so that batches
// sharing one (every batch of a segment column does) count it once.
type dictSet map[*string]struct{}

// batchBytes estimates the heap a batch holds (each dictionary counted once
// per dicts; nil counts every one).
func batchBytes(b *vec.Batch, dicts dictSet) int64 {
	n := int64(cap(b.Sel))*4 + int64(cap(b.Cols))*8 + 48
	for _, c := range b.Cols {
		n += vectorBytes(c, dicts)
	}
	return n
}

// vectorBytes estimates the heap a vector holds: its slices by capacity,
// the payload of its strings, its children.
func vectorBytes(v *vec.Vector, dicts dictSet) int64 {
	if v == nil {
		return 0
	}
	n := vectorHeader + int64(cap(v.Ints)*8+cap(v.Floats)*8+cap(v.Bools)+cap(v.Codes)*4+cap(v.Offsets)*4+cap(v.Nulls)*8)
	n += stringsBytes(v.Strs) + int64(cap(v.Bytes)) + 4*int64(cap(v.Offs))
	if len(v.Dict) > 0 {
		d := &v.Dict[0]
		if _, seen := dicts[d]; !seen {
			n += stringsBytes(v.Dict)
			if dicts != nil {
				dicts[d] = struct{}{}
			}
		}
	}
	if v.Elem != nil {
		n += vectorBytes(v.Elem, dicts)
	}
	for _, c := range v.Children {
		n += vectorBytes(c, dicts)
	}
	n += int64(cap(v.Children)) * 8
	return n
}

// stringsBytes is a string slice's headers and payloads.
func stringsBytes(ss []string) int64 {
	n := int64(cap(ss)) * stringHeader
	for _, s := range ss {
		n += int64(len(s))
	}
	return n
}

// resultCharge is the memory a Result keeps charged to the pool until it
// is released (by Release, or when the Result is garbage).
type resultCharge struct {
	pool *MemoryPool
	n    atomic.Int64
}

func (c *resultCharge) release() {
	if n := c.n.Swap(0); n > 0 {
		c.pool.release(n)
	}
}

// keepCharged moves n bytes of what q holds from its pool to res: the pool
// counts them until res.Release or until res is collected.
func (m *queryMemory) keepCharged(res *Result, n int64) {
	if m.pool == nil || n <= 0 {
		return
	}
	m.poolMu.Lock()
	g := m.granted.Load()
	n = min(n, g)
	m.granted.Store(g - n)
	m.poolMu.Unlock()
	c := &resultCharge{pool: m.pool}
	c.n.Store(n)
	res.charge = c
	runtime.AddCleanup(res, func(c *resultCharge) { c.release() }, c)
}

// Release gives back to the MemoryPool the memory the result is charged
// for (its rows, and as much again for their encoding). Call it once the
// result is encoded; a result never released is given back when it is
// garbage-collected. Release is idempotent.
func (r *Result) Release() {
	if r != nil && r.charge != nil {
		r.charge.release()
	}
}
