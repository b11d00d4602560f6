package engine

import (
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/sediment/sediment/index"
	"github.com/sediment/sediment/segment"
)

// Compact merges runs of small segments (under a quarter of SegmentMaxRows)
// that are adjacent in time into one segment of at most SegmentMaxRows, and
// returns how many segments it merged. Rows older than the retention
// cutoff are left out of the merged segment. Queries keep reading the
// inputs until the merged segment is published; the inputs' files go when
// the last query using them ends. A failure (or a panic, recovered) leaves
// the inputs as they were and is retried by the background loop with
// backoff (see supervised).
func (s *Shard) Compact() (int, error) {
	if s.opts.ReadOnly {
		return 0, ErrReadOnly
	}
	if s.replayFailed != nil {
		return 0, s.replayFailed
	}
	var n int
	err := s.supervised(taskCompaction, func() (err error) {
		n, err = s.compact()
		return err
	})
	return n, err
}

func (s *Shard) compact() (int, error) {
	s.compactMu.Lock()
	defer s.compactMu.Unlock()
	// A segment with blocks set aside (or a damaged index) is rewritten
	// without them first; it takes part in no other merge until then.
	if n, err := s.rewriteDamaged(); n > 0 || err != nil {
		return n, err
	}
	group := s.pickCompaction()
	if len(group) == 0 {
		return 0, nil
	}
	for _, g := range group {
		g.acquire()
	}
	defer func() {
		for _, g := range group {
			g.release()
		}
	}()
	if err := s.eng.roomToRewrite(group, "compaction"); err != nil {
		return 0, err
	}
	cutoff := s.retentionCutoff()
	meta := segMeta{created: s.opts.Now().UnixMicro()}
	var err error
	if meta.replaces, err = s.replacesOf(group); err != nil {
		return 0, err
	}
	expired := false
	for _, g := range group {
		meta.walLast = max(meta.walLast, g.meta.walLast)
		if minT, _ := g.r.TimeRange(); minT < cutoff {
			expired = true
		}
	}
	s.mu.Lock()
	id := s.nextSeg
	s.nextSeg++
	s.mu.Unlock()
	var ref *segRef
	if !expired && s.canConcatenate(group) {
		ref, err = s.concatSegments(id, group, meta)
		if err == nil {
			s.stats.concatenated.Add(1)
		}
	} else {
		var src *mergeSource
		if src, err = newMergeSource(group, cutoff, s.SortKey(), s.opts.BlockRows); err == nil && src.rows() > 0 {
			// (with no rows every input expired: the inputs just go)
			ref, err = s.writeSegment(id, src, meta, s.opts.CompactZstdLevel)
		}
	}
	if err != nil {
		s.noteReadDamage(group, err)
		for _, g := range group {
			if g.remote != nil {
				// Most likely the store is away: merge the local segments
				// meanwhile, and try the evicted ones again later.
				s.skipEvictedUntil.Store(s.opts.Now().Add(evictedRetryAfter).UnixMicro())
				break
			}
		}
		return 0, err
	}
	s.replaceSegments(group, ref)
	s.stats.compactions.Add(1)
	return len(group), nil
}

// replacesOf returns what a segment written in place of group replaces,
// for recovery (loadSegments) to remove: the group's segments, and the
// segments they replace in turn whose files are still there (a query
// still reads them, or a crash came before their deletion): the relation
// is transitive over files not yet reclaimed. Without that, a crash after
// an input's file was deleted durably but before the files it replaced
// were would bring those back beside the new segment, which holds their
// rows too. The deletions of those already gone are made durable before
// the new segment can count (a directory sync), so that a crash cannot
// bring them back either.
func (s *Shard) replacesOf(group []*segRef) ([]uint64, error) {
	var ids []uint64
	gone := false
	for _, g := range group {
		ids = append(ids, g.id)
	}
	for _, g := range group {
		for _, id := range g.meta.replaces {
			switch {
			case slices.Contains(ids, id):
			case s.opts.FS.Exists(filepath.Join(s.segDir, segName(id))),
				s.opts.FS.Exists(filepath.Join(s.segDir, remoteStubName(id))):
				ids = append(ids, id)
			default:
				gone = true
			}
		}
	}
	if gone {
		if err := s.opts.FS.SyncDir(s.segDir); err != nil {
			return nil, err
		}
	}
	return ids, nil
}

// replaceSegments publishes ref (nil: nothing) in place of the segments of
// group, in one step for queries. The replaced files are deleted when the
// last snapshot holding them lets go; a restart before that deletes them
// too, since ref's metadata names them. It returns the segments of group
// it removed (those still published).
func (s *Shard) replaceSegments(group []*segRef, ref *segRef) []*segRef {
	var gone []*segRef // an input quarantined meanwhile has left already
	s.mu.Lock()
	s.segs = slices.DeleteFunc(s.segs, func(x *segRef) bool {
		// By id: an evicted segment's ref replaced the one a size cap
		// planned with (EvictSegment); it is the same segment.
		if slices.ContainsFunc(group, func(g *segRef) bool { return g.id == x.id }) {
			gone = append(gone, x)
			return true
		}
		return false
	})
	if ref != nil {
		s.segs = append(s.segs, ref)
		s.sortSegs()
	}
	s.noteRemoteLocked(ref, group)
	s.mu.Unlock()
	s.deliverRemote()
	s.warmSegment(ref) // the predicate cache, in the background (predwarm.go)
	for _, g := range gone {
		g.removed.Store(true)
		g.release() // the list's reference
	}
	return gone
}

// pickCompaction returns the first run of at least CompactionMinInputs
// small, time-adjacent segments whose rows fit in SegmentMaxRows. For a
// shard with a sort key, whose merges rewrite every row, a run must also
// be worth it: hold at least a quarter of SegmentMaxRows (so
// that its output is not small and is never merged again), or
// keyedRunSegments segments (a quiet source's).
func (s *Shard) pickCompaction() []*segRef {
	s.mu.RLock()
	defer s.mu.RUnlock()
	var first []*segRef
	s.compactionRuns(func(run []*segRef) bool {
		first = run
		return false
	})
	return first
}

// compactionBacklog counts the segments compaction would rewrite if it ran
// now, one run after another: those waiting to be rewritten without
// damaged blocks, and those in every run pickCompaction would pick.
func (s *Shard) compactionBacklog() int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	n := 0
	for _, sg := range s.segs {
		if sg.needsRewrite() {
			n++
		}
	}
	s.compactionRuns(func(run []*segRef) bool {
		n += len(run)
		return true
	})
	return n
}

// compactionRuns calls yield with each run of at least CompactionMinInputs
// small, time-adjacent segments whose rows fit in SegmentMaxRows, in time
// order, until yield returns false. The caller holds s.mu (read); a run
// is not reused after yield returns.
func (s *Shard) compactionRuns(yield func(run []*segRef) bool) {
	small := s.opts.SegmentMaxRows / 4
	keyed := s.SortKey() != ""
	enough := func(run []*segRef, rows int) bool {
		if len(run) < s.opts.CompactionMinInputs {
			return false
		}
		return !keyed || rows >= small || len(run) >= keyedRunSegments*s.opts.CompactionMinInputs
	}
	skipEvicted := s.opts.Now().UnixMicro() < s.skipEvictedUntil.Load()
	var run []*segRef
	rows := 0
	// The merged segment holds the union of the inputs' columns, which
	// must stay within what a segment may have.
	type colKey struct {
		path string
		typ  segment.ColType
	}
	union := map[colKey]bool{}
	wouldAdd := func(sg *segRef) int {
		n := 0
		for _, c := range sg.r.Columns() {
			if !union[colKey{c.Path, c.Type}] {
				n++
			}
		}
		return n
	}
	for _, sg := range s.segs {
		n := sg.r.Rows()
		if sg.needsRewrite() || (skipEvicted && sg.remote != nil) {
			// never merged as it is (rewriteDamaged takes it), or not now
			n = small
		}
		if n >= small || rows+n > s.opts.SegmentMaxRows || len(union)+wouldAdd(sg) > segment.MaxColumns {
			if enough(run, rows) && !yield(run) {
				return
			}
			run, rows = nil, 0
			clear(union)
			if n >= small {
				continue
			}
		}
		run = append(run, sg)
		rows += n
		for _, c := range sg.r.Columns() {
			union[colKey{c.Path, c.Type}] = true
		}
	}
	if enough(run, rows) {
		yield(run)
	}
}

// evictedRetryAfter is how long compaction leaves evicted segments out of
// its runs after a merge with one failed.
const evictedRetryAfter = 5 * time.Minute

// keyedRunSegments is how many times CompactionMinInputs small segments a
// run of a shard with a sort key may hold before it is merged whatever
// its size: merges by key rewrite every row, so they wait for enough rows
// to make a segment that is not merged again, but a quiet source must not
// pile up segments for ever.
const keyedRunSegments = 4

// canConcatenate reports whether a group can be compacted by copying its
// blocks: they are not so small that re-cutting them would pay. Segments
// whose times overlap (late events) concatenate too: each block stays
// sorted, only some block ranges overlap.
func (s *Shard) canConcatenate(group []*segRef) bool {
	rows, blocks := 0, 0
	for _, g := range group {
		rows += g.r.Rows()
		blocks += g.r.NumBlocks()
	}
	return rows/blocks >= s.opts.BlockRows/4
}

// concatSegments compacts time-ordered segments by copying their blocks
// and merging their indexes, without decoding any column. The blocks'
// units are copied as they are, those written by flushes at the flush
// level included, unless the compaction level was raised above the
// default (recompressOnConcat).
func (s *Shard) concatSegments(id uint64, group []*segRef, meta segMeta) (*segRef, error) {
	cols, colIn := unionColumns(group)
	out, err := s.createSegment(id, cols, s.opts.CompactZstdLevel)
	if err != nil {
		return nil, err
	}
	defer out.abortUnlessCommitted()
	w := out.w
	var inputs []index.MergeInput
	offset := uint32(0)
	// The blocks keep what they hold of the sort key; those of inputs
	// ordered otherwise count as mixed.
	if meta.sortKey = s.SortKey(); meta.sortKey != "" {
		for _, g := range group {
			for b := 0; b < g.r.NumBlocks(); b++ {
				var bk blockKey
				if g.meta.sortKey == meta.sortKey {
					bk = g.meta.blocks[b]
				}
				meta.blocks = append(meta.blocks, bk)
			}
		}
	}
	for gi, g := range group {
		colMap := make([]int, len(g.r.Columns()))
		for i := range colMap {
			colMap[i] = -1
		}
		for oc := range cols {
			if ic := colIn[oc][gi]; ic >= 0 {
				colMap[ic] = oc
			}
		}
		// Segments written by a flush are at the flush level; those written
		// by compaction already at this one.
		recompress := len(g.meta.replaces) == 0 && s.recompressOnConcat()
		for b := 0; b < g.r.NumBlocks(); b++ {
			if err := w.CopyBlock(g.r, b, colMap, recompress); err != nil {
				return nil, err
			}
		}
		ix, err := g.index()
		if err != nil {
			return nil, err
		}
		r := g.r
		inputs = append(inputs, index.MergeInput{Index: ix, Offset: offset, Rows: uint32(r.Rows()), Has: func(path string, kind index.Kind) bool {
			switch kind {
			case index.KindInt:
				return r.Column(path, segment.TypeInt64) >= 0
			case index.KindBool:
				return r.Column(path, segment.TypeBool) >= 0
			case index.KindToken:
				// Whether or not path is a text field now: a segment
				// written while it was not has no tokens of it.
				return r.Column(path, segment.TypeString) >= 0
			}
			return path != "id" && r.Column(path, segment.TypeString) >= 0
		}})
		offset += uint32(r.Rows())
	}
	dir, err := index.Merge(inputs, w, &index.BuilderOptions{MaxValueTerms: s.opts.IndexMaxValueTerms})
	if err != nil {
		return nil, err
	}
	return out.commit(dir, meta)
}

// DefaultCompactZstdLevel is Options.CompactZstdLevel's default.
const DefaultCompactZstdLevel = 2

// recompressOnConcat reports whether concatSegments recompresses the
// units it copies at the compaction level (Writer.CopyBlock): only when
// the compaction level was raised above the default, a choice of disk
// over CPU. At the default it copies them as they are: BenchmarkStoreCPU
// in time order (700,000 edge events, flushes at level 1, compaction at
// level 2; medians of 6 runs) took 2.3 CPU-s per 1M events to compact
// with the flushes' units recompressed, 1.7 with them copied as they
// are, for 88.77 and 89.41 bytes an event on disk.
func (s *Shard) recompressOnConcat() bool {
	return s.opts.CompactZstdLevel > DefaultCompactZstdLevel && s.opts.CompactZstdLevel > s.opts.ZstdLevel
}

// unionColumns is the column directory of several segments, sorted, and
// for each output column the input column index per segment (-1 absent).
func unionColumns(group []*segRef) ([]segment.ColumnDesc, [][]int) {
	type key struct {
		path string
		typ  segment.ColType
	}
	elems := map[key]map[segment.ElemField]bool{}
	var keys []key
	for _, g := range group {
		for _, c := range g.r.Columns() {
			k := key{c.Path, c.Type}
			if elems[k] == nil {
				elems[k] = map[segment.ElemField]bool{}
				keys = append(keys, k)
			}
			for _, e := range c.Elem {
				elems[k][e] = true
			}
		}
	}
	slices.SortFunc(keys, func(a, b key) int {
		if c := strings.Compare(a.path, b.path); c != 0 {
			return c
		}
		return int(a.typ) - int(b.typ)
	})
	var cols []segment.ColumnDesc
	var colIn [][]int
	for _, k := range keys {
		var el []segment.ElemField
		for e := range elems[k] {
			el = append(el, e)
		}
		slices.SortFunc(el, func(a, b segment.ElemField) int {
			if c := strings.Compare(a.Path, b.Path); c != 0 {
				return c
			}
			return int(a.Type) - int(b.Type)
		})
		el = el[:min(len(el), maxElemFields)]
		cols = append(cols, segment.ColumnDesc{Path: k.path, Type: k.typ, Elem: el})
		in := make([]int, len(group))
		for i, g := range group {
			in[i] = g.r.Column(k.path, k.typ)
		}
		colIn = append(colIn, in)
	}
	return cols, colIn
}
