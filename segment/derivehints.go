package segment

import "sync"

// DeriveHints carries what writers learned about derived text
// (encDerived) from one segment to the next of the same source: for each
// text column, which columns its values were assembled from, or how long
// to wait before looking again when templates gained nothing. Without
// hints every writer starts over: it fetches every string and int64
// column of its first block to sample them, and searches each text
// column's sampled values for templates, although the segment before
// found the same answer. A writer given hints (WriterOptions.DeriveHints)
// starts from them and, once finished, leaves what it learned for the
// next one; the bytes written stay what its own trials decide, so stale
// hints cost a search, never a wrong value. Safe for concurrent use by
// writers of the same source (a flush and a compaction); the last writer
// to finish has the last word for a column.
type DeriveHints struct {
	mu   sync.Mutex
	cols map[string]deriveHint // by the derived column's path
}

// deriveHint is what a writer learned about one text column.
type deriveHint struct {
	refs []colKey // the columns its templates used (nil: look again)
	// skip is how many blocks to wait before the next attempt, and wait
	// how many to wait after the next attempt that gains nothing
	// (deriveMemo's skipUntil and wait, counted from the next writer's
	// first block).
	skip, wait int
}

// maxDeriveHints bounds the columns a DeriveHints remembers (a source
// whose field names keep changing would otherwise grow it without end):
// past it, what is learned about new columns is forgotten.
const maxDeriveHints = 4096

// NewDeriveHints returns empty hints.
func NewDeriveHints() *DeriveHints { return &DeriveHints{cols: map[string]deriveHint{}} }

// seed returns the memo a writer starts column ci with (cols is its
// directory; byPath indexes it by path and type), or nil when there is
// no hint for the column.
func (h *DeriveHints) seed(ci int, cols []ColumnDesc, byPath map[colKey]int) *deriveMemo {
	if h == nil {
		return nil
	}
	h.mu.Lock()
	hint, ok := h.cols[cols[ci].Path]
	h.mu.Unlock()
	if !ok {
		return nil
	}
	// The writer's first block is block 1.
	m := &deriveMemo{skipUntil: 1 + hint.skip, wait: max(hint.wait, deriveRetryBlocks)}
	for _, ref := range hint.refs {
		k, ok := byPath[ref]
		if !ok || k == ci {
			// A column the templates used is not in this segment: look
			// again rather than derive from fewer.
			m.cols = nil
			break
		}
		m.cols = append(m.cols, k)
	}
	m.hinted = m.cols != nil
	return m
}

// learn records the writer's memos (by column of cols) after its blocks
// 1..blocks, so that the next writer continues where this one stopped.
func (h *DeriveHints) learn(memo map[int]*deriveMemo, cols []ColumnDesc, blocks int) {
	if h == nil || len(memo) == 0 {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	for ci, m := range memo {
		path := cols[ci].Path
		if _, known := h.cols[path]; !known && len(h.cols) >= maxDeriveHints {
			continue
		}
		// Blocks left to skip, counted from the next block.
		hint := deriveHint{skip: max(0, m.skipUntil-(blocks+1)), wait: m.wait}
		for _, c := range m.cols {
			hint.refs = append(hint.refs, colKey{cols[c].Path, cols[c].Type})
		}
		h.cols[path] = hint
	}
}
