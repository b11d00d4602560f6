package segment

import "sync"

// A query that finds a few rows and then returns them whole (the newest
// events with a rare word, every field) reads the pages of those rows
// twice: the scan reads the columns it selects (a derived message reads
// the URL, the status, the client address it is built from), then the
// records are materialised from every column under them, the same URL and
// status among them. Each read of a few rows decompresses a whole page,
// and a scan of much data does not keep its pages in the page cache. A
// UnitMemo is the query's own short-lived cache of such pages: the reads
// that go through it keep the pages they decompressed for a few of their
// rows, and later reads through it find them decoded.

// UnitMemo keeps data pages decompressed by reads of a few of their rows
// of the columns it is told to keep, for later reads through the same
// memo, up to a budget of bytes. It is safe for concurrent use. Its pages
// are dropped (left to the collector, never given back to the buffer
// pool: a read may still be decoding one) by Release or when the memo is
// no longer referenced.
type UnitMemo struct {
	keep func(path string) bool

	mu sync.Mutex
	// frozen: the memo takes no more pages (Freeze, Release).
	frozen bool
	max    int64
	used   int64
	pages  map[pageKey][]byte
}

// NewUnitMemo returns an empty memo that keeps at most maxBytes of pages
// of the columns whose path keep accepts (the fields of the records a
// query will read whole; nil: every column). keep is called from the
// reading goroutines at once.
func NewUnitMemo(maxBytes int64, keep func(path string) bool) *UnitMemo {
	if keep == nil {
		keep = func(string) bool { return true }
	}
	return &UnitMemo{max: maxBytes, keep: keep}
}

// Freeze makes the memo take no more pages: the reads that fill it are
// over, those left only find what it holds (a query materialising its
// records, which reads each of their pages once).
func (m *UnitMemo) Freeze() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.frozen = true
}

// keeps reports whether the memo may take pages of column path.
func (m *UnitMemo) keeps(path string) bool {
	m.mu.Lock()
	open := !m.frozen && m.used < m.max
	m.mu.Unlock()
	return open && m.keep(path)
}

// memoSparseRows: a page read for at most 1/memoSparseRows of its rows (a
// record or a few) is one whose rows a later read may want again; a read
// of most of a page (a predicate over a block) is not kept.
const memoSparseRows = 16

// wants reports whether a read of n rows of a page of rows rows keeps
// the page.
func memoWants(n, rows int) bool { return n*memoSparseRows <= max(rows, memoSparseRows) }

// get returns the body of the unit at off of r, if the memo holds it.
func (m *UnitMemo) get(r *Reader, off int64) ([]byte, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	b, ok := m.pages[pageKey{r: r, off: off}]
	return b, ok
}

// put keeps body as the unit at off of r and reports whether it did (the
// memo is full, or released, or holds the unit already: it did not).
// A kept body belongs to the memo: the caller must not give it back.
func (m *UnitMemo) put(r *Reader, off int64, body []byte) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	k := pageKey{r: r, off: off}
	size := int64(cap(body)) + 64
	if m.frozen || m.used+size > m.max || m.pages[k] != nil {
		return false
	}
	if m.pages == nil {
		m.pages = map[pageKey][]byte{}
	}
	m.pages[k] = body
	m.used += size
	return true
}

// Bytes returns the bytes of the pages the memo holds.
func (m *UnitMemo) Bytes() int64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.used
}

// Release drops the memo's pages; reads through it afterwards keep
// nothing.
func (m *UnitMemo) Release() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.pages, m.used, m.frozen = nil, 0, true
}
