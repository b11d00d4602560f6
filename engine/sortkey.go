package engine

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/sediment/sediment/segment"
)

// Clustering by a sort key (issue 14): a source may name a low-cardinality
// string field, its sort key (Supabase's edge logs: project). Segments of
// such a source hold their rows ordered by that field, then time, cut
// into blocks at key boundaries, so that every block holds the rows of one
// key value in time order and a filter on the key reads only that key's
// blocks: the footer's statistics of the key's column (its minimum and
// maximum, its dictionary) and the index prune the others. Key values
// with few rows in a segment share mixed blocks, in time order. Blocks
// stay sorted by time, as the segment format requires, so everything
// that reads blocks (time pruning, newest-first reads, retention, the
// merge) works on them unchanged.
//
// Where rows get their order:
//   - the flush sorts a head's rows by (key, time) (headSource);
//   - the compaction merge takes each input block whose rows all have one
//     key value as a run of that key, and merges runs by (key, time)
//     (mergeSource); other blocks (mixed ones, and those of segments
//     written in time order or under another key) are merged by time into
//     mixed blocks;
//   - compaction by block copy keeps the input blocks as they are.
//
// Segments record their key and what each block holds in the meta
// section (segmeta.go); segments written before, in time order, are read
// and merged as blocks of mixed keys.

// minKeyBlockRows is the fewest rows of one key value in a segment that
// get blocks of their own; fewer go to mixed blocks. Small blocks cost
// footer space and compress less, but a key of a few rows in a mixed block
// costs a read of the whole block.
const minKeyBlockRows = 64

// flushKeyShare bounds the blocks of one flushed segment: a key value gets
// blocks of its own at a flush only if it has at least 1/flushKeyShare of
// the head's rows. A head holds a few minutes of events, and every query
// over them (the freshest, most queried) reads each of its blocks that
// overlaps its time range: one block per key value would make a query
// over the last minutes of every key read a hundred small blocks per
// flushed segment. The biggest key values (each at least 3% of the
// events) are clustered from the flush on; the others stay in mixed
// blocks, in time order, for good (compaction merges blocks of one key
// value by key, and mixed blocks by time).
const flushKeyShare = 32

// maxKeyBlocks bounds the key values with blocks of their own in one
// segment (the biggest win; the rest go to mixed blocks), so that a
// source whose key turns out not to be low-cardinality does not write a
// block per row.
const maxKeyBlocks = 512

// blockSpec is one block a rowSource will produce: its rows and what they
// hold of the sort key.
type blockSpec struct {
	rows int
	key  blockKey
}

// Time slabs. Ordered by key alone, every block of a segment would span
// the segment's whole time range, and a query over the last hour of every
// key (a per-minute chart, the newest rows without a filter) would read
// the timestamps of every block. So each key's rows are also cut at time
// edges counted back from the segment's newest event: its last hour, the
// 3 hours before, the 12 before those, and so on by fours; a window of the
// last T reads at most about 4T of each key's rows. Pieces of a key too
// small for a block of their own join the next older piece.
const (
	numSlabs  = 6
	slabFirst = int64(time.Hour / time.Microsecond) // the newest slab's span
	slabRatio = 4
)

// slabOf returns the slab of a row at ts in a segment whose newest row is
// at maxTime: numSlabs-1 for the newest hour, down to 0 for the oldest.
func slabOf(ts, maxTime int64) int {
	age, span := maxTime-ts, slabFirst
	for s := numSlabs - 1; s > 0; s-- {
		if age < span {
			return s
		}
		span *= slabRatio
	}
	return 0
}

// slabStart returns the oldest time of slab s (s > 0) in a segment whose
// newest row is at maxTime.
func slabStart(s int, maxTime int64) int64 {
	span := slabFirst
	for i := numSlabs - 1; i > s; i-- {
		span *= slabRatio
	}
	return maxTime - span + 1
}

// slabCounts are one key value's rows per slab.
type slabCounts [numSlabs]int

// keyClass is a run of output rows with one place in the order: the rows
// of one key value in a range of slabs, or the mixed rows (last).
type keyClass struct {
	key   string
	mixed bool
	rows  int
}

// keyPlan is the order of a segment's rows: its classes, and for each key
// value with blocks of its own, and for the mixed rows, the class of each
// slab.
type keyPlan struct {
	classes []keyClass
	slabs   map[string]*[numSlabs]int32
	mixed   *[numSlabs]int32 // nil when no row is mixed
}

// classOf returns the class of a row of key value key (ok false: none)
// in slab s.
func (p *keyPlan) classOf(key string, ok bool, s int) int32 {
	if ok {
		if t := p.slabs[key]; t != nil {
			return t[s]
		}
	}
	return p.mixed[s]
}

// planKeys decides, from the rows per key value and slab (mixed: rows
// known to be mixed, by slab), which key values get blocks of their own
// (those with at least minRows rows, minKeyBlockRows at least), and how
// the slabs of each, and of the mixed rows, group into classes. The
// classes come in output order: key values in order, each's slabs oldest
// first, then the mixed rows' slabs oldest first (mixed blocks are in time
// order and cut at slab edges too, so that the newest mixed block holds
// the last hour).
func planKeys(counts map[string]*slabCounts, mixed slabCounts, minRows int) *keyPlan {
	minRows = max(minRows, minKeyBlockRows)
	type kc struct {
		key string
		n   int
	}
	var big []kc
	demote := func(c *slabCounts) {
		for s, x := range c {
			mixed[s] += x
		}
	}
	for k, c := range counts {
		n := 0
		for _, x := range c {
			n += x
		}
		if n >= minRows {
			big = append(big, kc{k, n})
		} else {
			demote(c)
		}
	}
	if len(big) > maxKeyBlocks {
		slices.SortFunc(big, func(a, b kc) int {
			if c := cmp.Compare(b.n, a.n); c != 0 {
				return c
			}
			return strings.Compare(a.key, b.key)
		})
		for _, x := range big[maxKeyBlocks:] {
			demote(counts[x.key])
		}
		big = big[:maxKeyBlocks]
	}
	slices.SortFunc(big, func(a, b kc) int { return strings.Compare(a.key, b.key) })
	p := &keyPlan{slabs: make(map[string]*[numSlabs]int32, len(big))}
	for _, x := range big {
		p.slabs[x.key] = p.addSlabClasses(x.key, false, counts[x.key])
	}
	p.mixed = p.addSlabClasses("", true, &mixed)
	return p
}

// addSlabClasses adds the classes of one key value's rows (or the mixed
// rows), given per slab, and returns the class of each slab (nil when
// there are no rows). Pieces are made from the newest slab back: a piece
// is closed once it has rows enough for a block of its own; what is left
// at the oldest end joins the last piece closed (the next newer one).
func (p *keyPlan) addSlabClasses(key string, mixed bool, c *slabCounts) *[numSlabs]int32 {
	var pieces []int
	var pieceOf [numSlabs]int // newest-first piece index
	open := 0
	for s := numSlabs - 1; s >= 0; s-- {
		open += c[s]
		pieceOf[s] = len(pieces)
		if open >= minKeyBlockRows {
			pieces = append(pieces, open)
			open = 0
		}
	}
	switch {
	case len(pieces) > 0:
		pieces[len(pieces)-1] += open
	case open > 0:
		pieces = append(pieces, open) // too few rows for two pieces
	default:
		return nil
	}
	t := new([numSlabs]int32)
	first := len(p.classes)
	for s := range t {
		pc := min(pieceOf[s], len(pieces)-1)
		t[s] = int32(first + len(pieces) - 1 - pc) // classes oldest first
	}
	for i := len(pieces) - 1; i >= 0; i-- {
		p.classes = append(p.classes, keyClass{key: key, mixed: mixed, rows: pieces[i]})
	}
	return t
}

// planBlocks cuts classes into blocks of at most blockRows rows: each
// class into as few blocks as it needs, of nearly equal size, so that a
// key's rows do not end in a sliver of a block.
func planBlocks(classes []keyClass, blockRows int) []blockSpec {
	var out []blockSpec
	for _, c := range classes {
		key := blockKey{single: !c.mixed, key: c.key}
		n := (c.rows + blockRows - 1) / blockRows
		for i := 0; i < n; i++ {
			// Blocks i*rows/n .. (i+1)*rows/n.
			out = append(out, blockSpec{rows: (i+1)*c.rows/n - i*c.rows/n, key: key})
		}
	}
	return out
}

// timeBlocks is the plan of rows in time order only: blocks of blockRows,
// the last one shorter.
func timeBlocks(rows, blockRows int) []blockSpec {
	var out []blockSpec
	for from := 0; from < rows; from += blockRows {
		out = append(out, blockSpec{rows: min(blockRows, rows-from)})
	}
	return out
}

// CheckSortKey reports whether path can be a sort key: a field path
// ("" means time order only). The key is read from the field's string
// values; rows where it is absent or not a string go to mixed blocks.
func CheckSortKey(path string) error {
	switch {
	case path == "":
		return nil
	case len(path) > segment.MaxPathLen:
		return fmt.Errorf("a sort key is a field path of at most %d bytes", segment.MaxPathLen)
	case path == "timestamp":
		return errors.New("rows are always ordered by timestamp; leave the sort key empty for time order only")
	case strings.HasPrefix(path, ".") || strings.HasSuffix(path, ".") || strings.Contains(path, ".."):
		return fmt.Errorf("sort key %q is not a field path", path)
	}
	for i := 0; i < len(path); i++ {
		c := path[i]
		if !(c == '.' || c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
			return fmt.Errorf("sort key %q is not a field path (letters, digits, _ and . only)", path)
		}
	}
	return nil
}

// SetSortKey sets the field the shard's segments are ordered by before
// time ("" for time order only), from the next flush or compaction on.
// Segments already written keep their order until compaction merges them.
// An invalid path (see CheckSortKey) is an error and changes nothing.
func (s *Shard) SetSortKey(path string) error {
	if err := CheckSortKey(path); err != nil {
		return err
	}
	s.sortKey.Store(&path)
	return nil
}

// SortKey returns the shard's sort key ("" for time order only).
func (s *Shard) SortKey() string {
	if p := s.sortKey.Load(); p != nil {
		return *p
	}
	return s.opts.SortKey
}

// inheritSortKey gives a shard just opened the sort key its newest
// segment was written with, until SetSortKey says otherwise. The server
// applies each source's key from its catalog only after the engine has
// opened (and replayed) the shards, and tools open the engine without a
// catalog (bench's settle, snapshot): a flush of replayed heads or a
// merge that ran before would write its rows in time order, and a merged
// segment that big is never merged again, so a project filter would read
// every block of it for good.
func (s *Shard) inheritSortKey() {
	var newest *segRef
	for _, sg := range s.segs {
		if newest == nil || sg.id > newest.id {
			newest = sg
		}
	}
	if newest != nil && newest.meta.sortKey != "" {
		key := newest.meta.sortKey
		s.sortKey.Store(&key)
	}
}
