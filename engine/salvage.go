package engine

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"

	"github.com/sediment/sediment/segment"
)

// needsRewrite reports whether the segment has blocks set aside or a
// damaged index: rewriteDamaged replaces it, and no merge takes it as it
// is (a block copy would copy the damage, a merge would read it).
func (s *segRef) needsRewrite() bool {
	m := s.dmg.Load()
	return (m != nil && len(*m) > 0) || s.ixBroken.Load()
}

// rewriteDamaged rewrites the first segment that needsRewrite without its
// damaged blocks and with a fresh index, publishes the result in its place
// and moves the original to quarantine/ for forensics, with the record of
// the blocks it lost. Called by Compact (under compactMu). It returns the
// number of segments rewritten (0 or 1).
func (s *Shard) rewriteDamaged() (int, error) {
	s.mu.RLock()
	var sg *segRef
	for _, x := range s.segs {
		if x.needsRewrite() {
			sg = x
			break
		}
	}
	if sg != nil {
		sg.acquire()
	}
	s.mu.RUnlock()
	if sg == nil {
		return 0, nil
	}
	defer sg.release()
	lost := sg.damagedBlocks()
	kept := sg.r.Rows()
	for _, u := range lost {
		kept -= int(u.rows)
	}
	var ref *segRef
	if kept > 0 {
		s.mu.Lock()
		id := s.nextSeg
		s.nextSeg++
		s.mu.Unlock()
		replaces, err := s.replacesOf([]*segRef{sg})
		if err != nil {
			return 0, err
		}
		meta := segMeta{walLast: sg.meta.walLast, created: s.opts.Now().UnixMicro(), replaces: replaces}
		src, err := newMergeSource([]*segRef{sg}, noCutoff, s.SortKey(), s.opts.BlockRows)
		if err == nil {
			ref, err = s.writeSegment(id, src, meta, s.opts.CompactZstdLevel)
		}
		if err != nil {
			// More damage found on the way: set it aside too; the next
			// compaction tries again without it.
			s.noteReadDamage([]*segRef{sg}, err)
			return 0, fmt.Errorf("rewrite segment %016x without its damaged blocks: %w", sg.id, err)
		}
	}
	s.mu.Lock()
	i := slices.Index(s.segs, sg)
	if i < 0 { // retention dropped it meanwhile
		s.mu.Unlock()
		if ref != nil {
			ref.removed.Store(true)
			ref.release()
		}
		return 0, nil
	}
	s.segs = slices.Delete(s.segs, i, i+1)
	if ref != nil {
		s.segs = append(s.segs, ref)
		s.sortSegs()
	}
	s.lost = append(slices.Clip(s.lost), lost...)
	s.noteRemoteLocked(ref, []*segRef{sg})
	s.mu.Unlock()
	s.deliverRemote()
	cause := errors.New("rewritten without its damaged blocks")
	if len(lost) == 0 {
		cause = errors.New("rewritten with a new index (the old one was damaged; nothing lost)")
	}
	s.setAside(sg.id, sg.path, cause, lost)
	sg.release() // the list's reference; the file was moved, not deleted
	s.stats.compactions.Add(1)
	newID := "none (every block was damaged)"
	if ref != nil {
		newID = segName(ref.id)
	}
	s.opts.Logger.Info("segment rewritten without its damaged parts", "shard", s.id,
		"file", filepath.Join("segments", segName(sg.id)), "blocks_lost", len(lost), "events_kept", kept, "new_segment", newID)
	return 1, nil
}

// noteReadDamage sets aside what a read of a compaction's inputs found
// damaged: the block holding the damaged unit, or the segment's index.
func (s *Shard) noteReadDamage(group []*segRef, err error) {
	var ce *segment.CorruptError
	if !errors.As(err, &ce) {
		return
	}
	for _, sg := range group {
		if ce.Path != filepath.Join("segments", segName(sg.id)) {
			continue
		}
		if sg.remote != nil {
			// Read from the store: a failure to reach it is no damage
			// here, and the store's copy cannot be set aside. The
			// compaction fails and is retried.
			return
		}
		if b := sg.r.BlockAt(ce.Offset); b >= 0 {
			s.markBlockDamaged(sg, b, err)
		} else if ce.Section == "index" || ce.Section == "section "+sectionIndex || ce.Section == "unit" {
			s.noteIndexDamage(sg, err)
		}
		return
	}
}
