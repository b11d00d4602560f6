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
// only once it is complete and synced.
type segmentOut struct {
	s          *Shard
	id         uint64
	tmp, final string
	f          vfs.File
	w          *segment.Writer
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
	if o.w, err = segment.NewWriter(f, cols, &segment.WriterOptions{PageBytes: s.opts.PageBytes, ZstdLevel: zstdLevel}); err != nil {
		o.abort()
		return nil, err
	}
	return o, nil
}

// abort closes and removes the temporary file.
func (o *segmentOut) abort() {
	o.f.Close()
	o.s.opts.FS.Remove(o.tmp)
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
	if err := fs.SyncDir(s.segDir); err != nil {
		return nil, err
	}
	ref, err := s.openSegment(o.id, o.final)
	if err != nil {
		// Its rows are still in the head or the inputs: nothing is lost.
		s.setAside(o.id, o.final, err, []lostUnit{})
		if errors.Is(err, segment.ErrCorrupt) {
			return nil, fmt.Errorf("segment %d just written does not read back: %w", o.id, err)
		}
		return nil, err
	}
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
