package engine

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strings"

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

// keyClass is a run of output rows with one place in the order: the rows
// of one key value, or the mixed rows (which sort last).
type keyClass struct {
	key   string
	mixed bool
	rows  int
}

// pickKeyClasses decides which key values get blocks of their own, given
// their row counts (mixedRows: rows already known to be mixed), and
// returns the classes in output order: single keys by value, then mixed.
// classOf maps a key value to its index in the result (absent: mixed).
func pickKeyClasses(counts map[string]int, mixedRows int) (classes []keyClass, classOf map[string]int) {
	type kc struct {
		key string
		n   int
	}
	var big []kc
	for k, n := range counts {
		if n >= minKeyBlockRows {
			big = append(big, kc{k, n})
		} else {
			mixedRows += n
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
			mixedRows += x.n
		}
		big = big[:maxKeyBlocks]
	}
	slices.SortFunc(big, func(a, b kc) int { return strings.Compare(a.key, b.key) })
	classOf = make(map[string]int, len(big))
	for i, x := range big {
		classes = append(classes, keyClass{key: x.key, rows: x.n})
		classOf[x.key] = i
	}
	if mixedRows > 0 {
		classes = append(classes, keyClass{mixed: true, rows: mixedRows})
	}
	return classes, classOf
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
