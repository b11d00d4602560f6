package engine

import (
	"errors"
	"fmt"
	"path/filepath"

	"github.com/sediment/sediment/internal/vfs"
	"github.com/sediment/sediment/segment"
)

// segmentOut is a segment being written by a flush or a compaction: a
// temporary file next to where it will live, renamed into place and opened
// only once it is complete and synced. Until commit succeeds nothing of it
// is published: abortUnlessCommitted (deferred by every writer, so that it
// runs on errors and panics alike) removes the temporary file, and the
// final one if the rename happened but a later step failed.
type segmentOut struct {
	s          *Shard
	id         uint64
	tmp, final string
	f          vfs.File
	w          *segment.Writer
	// renamed: the file is at final; committed: commit returned it opened.
	renamed, committed bool
}

// createSegment starts segment id with the given columns.
func (s *Shard) createSegment(id uint64, cols []segment.ColumnDesc, zstdLevel int) (*segmentOut, error) {
	final := filepath.Join(s.segDir, segName(id))
	o := &segmentOut{s: s, id: id, tmp: final + ".tmp", final: final}
	f, err := s.opts.FS.Create(o.tmp)
	if err != nil {
		return nil, err
	}
	o.f = f
	if o.w, err = segment.NewWriter(f, cols, &segment.WriterOptions{PageBytes: s.opts.PageBytes, ZstdLevel: zstdLevel, HistoryBytes: s.opts.HistoryBytes,
		DeriveHints: s.deriveHints}); err != nil {
		o.abort()
		return nil, err
	}
	return o, nil
}

// abort closes and removes the file being written. A file already
// renamed into place is removed too: a restart would otherwise load it
// next to the rows the retried flush or compaction writes again.
func (o *segmentOut) abort() {
	fs := o.s.opts.FS
	o.f.Close() // may be closed already; the error says nothing new
	if err := fs.Remove(o.tmp); err != nil && fs.Exists(o.tmp) {
		o.s.opts.Logger.Warn("remove temporary segment", "shard", o.s.id, "segment", o.id, "err", err)
	}
	if o.renamed && fs.Exists(o.final) {
		err := fs.Remove(o.final)
		if err == nil {
			err = fs.SyncDir(o.s.segDir)
		}
		if err != nil {
			o.s.opts.Logger.Error("remove unpublished segment", "shard", o.s.id, "segment", o.id, "err", err)
		}
	}
}

// abortUnlessCommitted aborts a segment that commit did not return.
func (o *segmentOut) abortUnlessCommitted() {
	if !o.committed {
		o.abort()
	}
}

// commit adds the index (nil: none) and the metadata, finishes and syncs
// the file, renames it into place and opens it. A file that does not read
// back is moved aside, or a restart would load it next to the rows the
// retried flush or compaction writes again (the inputs stay until one
// succeeds).
func (o *segmentOut) commit(indexDir []byte, meta segMeta) (*segRef, error) {
	s, fs := o.s, o.s.opts.FS
	if indexDir != nil {
		if err := o.w.AddSection(sectionIndex, indexDir); err != nil {
			return nil, err
		}
	}
	if err := o.w.AddSection(sectionMeta, meta.encode()); err != nil {
		return nil, err
	}
	if err := o.w.Finish(); err != nil {
		return nil, err
	}
	if err := o.f.Close(); err != nil {
		return nil, err
	}
	if err := fs.Rename(o.tmp, o.final); err != nil {
		return nil, err
	}
	o.renamed = true
	if err := fs.SyncDir(s.segDir); err != nil {
		return nil, err
	}
	ref, err := s.openSegment(o.id, o.final)
	if err != nil && errors.Is(err, segment.ErrRead) {
		// The disk failed to read, which says nothing about the file:
		// abortUnlessCommitted removes it (its rows are still in the head
		// or the inputs), and the flush or compaction is retried.
		return nil, fmt.Errorf("segment %d just written: %w", o.id, err)
	}
	if err != nil {
		// Its rows are still in the head or the inputs: nothing is lost.
		s.setAside(o.id, o.final, err, []lostUnit{})
		if errors.Is(err, segment.ErrCorrupt) {
			return nil, fmt.Errorf("segment %d just written does not read back: %w", o.id, err)
		}
		return nil, err
	}
	o.committed = true
	return ref, nil
}

// textIndexPaths is the set of fields whose tokens are indexed.
func (s *Shard) textIndexPaths() map[string]bool {
	text := map[string]bool{}
	for _, p := range s.opts.TextIndexPaths {
		text[p] = true
	}
	return text
}
