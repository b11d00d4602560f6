package engine

import (
	"errors"
	"fmt"
	iofs "io/fs"
	"path/filepath"

	"github.com/sediment/sediment/internal/vfs"
	"github.com/sediment/sediment/segment"
)

// An on-disk snapshot is a data directory's shards as they were at one
// moment, written to another directory while the engine keeps running:
//
//	<dst>/sources/<source id>/segments/<id>.seg   hard links to sealed segments
//	<dst>/sources/<source id>/wal/<seq>.wal       copies of sealed log files
//
// For each shard, SnapshotTo freezes the head (so every event acknowledged
// before the call is in a sealed log file or a segment; the log file is
// synced as it is sealed), then, with flushes held off for an instant,
// takes the shard's segment list and the log files of its frozen heads
// from one consistent view: a segment that compaction replaced is never
// there together with its replacement, and an event is never in both a
// segment and a log file of the snapshot. Segments are immutable, so a
// hard link is a copy that costs no space; log files are copied, since
// nothing but their content is needed. Events that arrive after the
// freeze are not in the snapshot.
//
// Opened as a data directory (engine.Open), a snapshot replays its log
// files into heads like after a restart; the catalog is the caller's to
// copy beside it (see httpapi's snapshot route).

// SnapshotDirStats says what SnapshotTo wrote.
type SnapshotDirStats struct {
	// Shards is the number of shards written.
	Shards int
	// Segments and SegmentBytes count the segment files; SegmentsCopied
	// those that had to be copied because the destination could not hold
	// a hard link (another file system).
	Segments, SegmentsCopied int
	SegmentBytes             int64
	// WALFiles and WALBytes count the log files copied.
	WALFiles int
	WALBytes int64
	// SegmentsFetched counts the evicted segments read back from object
	// storage into the snapshot (SnapshotDirOptions.FetchEvicted); they
	// are counted in Segments and SegmentBytes too.
	SegmentsFetched int
}

// SnapshotDirOptions change what SnapshotToWith writes.
type SnapshotDirOptions struct {
	// FetchEvicted writes every evicted segment (an ingest node's segment
	// whose local file gave way to the copy in object storage) as a whole
	// segment file read back from the store, instead of its stub: the
	// snapshot then needs no store, so a server without one can run on it
	// (going back to one node). The snapshot fails if the store cannot
	// serve one of them.
	FetchEvicted bool
}

// SnapshotTo writes a consistent snapshot of the shards for which include
// returns true (nil includes all) under dst (see above): dst/sources must
// not exist yet. On error, what was written is left for the caller to
// remove.
func (e *Engine) SnapshotTo(dst string, include func(id string) bool) (SnapshotDirStats, error) {
	return e.SnapshotToWith(dst, include, SnapshotDirOptions{})
}

// SnapshotToWith is SnapshotTo with options.
func (e *Engine) SnapshotToWith(dst string, include func(id string) bool, o SnapshotDirOptions) (SnapshotDirStats, error) {
	var st SnapshotDirStats
	if e.opts.ReadOnly {
		return st, ErrReadOnly
	}
	fs := e.opts.FS
	root := filepath.Join(dst, "sources")
	if fs.Exists(root) {
		return st, fmt.Errorf("engine: snapshot: %s exists already", root)
	}
	if err := fs.MkdirAll(root); err != nil {
		return st, err
	}
	for _, s := range e.Shards() {
		if include != nil && !include(s.id) {
			continue
		}
		if err := s.snapshotTo(filepath.Join(root, s.id), o, &st); err != nil {
			return st, fmt.Errorf("engine: snapshot of shard %s: %w", s.id, err)
		}
		st.Shards++
	}
	return st, errors.Join(fs.SyncDir(root), fs.SyncDir(dst))
}

// snapshotTo writes the shard's sealed segments and sealed log files to
// dir (see SnapshotTo).
func (s *Shard) snapshotTo(dir string, o SnapshotDirOptions, st *SnapshotDirStats) error {
	// Seal the events acknowledged so far into a frozen head whose log
	// file is synced and closed.
	if err := s.rotateIfNotEmpty(); err != nil {
		return err
	}

	// One view: no flush may publish a segment and delete log files while
	// the list of segments and of frozen heads' log files is taken and the
	// files are opened. The segments are held by reference (not deleted
	// until released); the open log files stay readable after a flush
	// removes their names.
	type walFile struct {
		name string
		f    vfs.File
	}
	var wals []walFile
	defer func() {
		for _, w := range wals {
			w.f.Close()
		}
	}()
	s.flushMu.Lock()
	s.mu.RLock()
	segs := append([]*segRef(nil), s.segs...)
	for _, sg := range segs {
		sg.acquire()
	}
	frozen := append([]*head(nil), s.frozen...)
	// Evicted segments not opened yet: their stubs go too (the segments
	// themselves are in the store, as for the evicted ones in segs).
	var pendingStubs []string
	var pendingWhy string
	for _, p := range s.remotePending {
		pendingStubs = append(pendingStubs, p.path)
		pendingWhy = p.err
	}
	s.mu.RUnlock()
	var openErr error
	for _, fh := range frozen {
		fh.mu.RLock()
		first, last := fh.walFirst, fh.walLast
		fh.mu.RUnlock()
		for seq := first; seq <= last && openErr == nil; seq++ {
			name := walName(seq)
			f, err := s.opts.FS.Open(filepath.Join(s.walDir, name))
			switch {
			case err == nil:
				wals = append(wals, walFile{name, f})
			case errors.Is(err, iofs.ErrNotExist):
				// Removed when empty (see openShard).
			default:
				openErr = err
			}
		}
	}
	s.flushMu.Unlock()
	defer func() {
		for _, sg := range segs {
			sg.release()
		}
	}()
	if openErr != nil {
		return openErr
	}

	fs := s.opts.FS
	segDir, walDir := filepath.Join(dir, "segments"), filepath.Join(dir, "wal")
	if err := fs.MkdirAll(segDir); err != nil {
		return err
	}
	if err := fs.MkdirAll(walDir); err != nil {
		return err
	}
	if o.FetchEvicted && len(pendingStubs) > 0 {
		return fmt.Errorf("%d evicted segments cannot be fetched from the object store: %s", len(pendingStubs), pendingWhy)
	}
	for _, p := range pendingStubs {
		if _, err := vfs.LinkOrCopy(fs, p, filepath.Join(segDir, filepath.Base(p))); err != nil && !errors.Is(err, iofs.ErrNotExist) {
			return fmt.Errorf("evicted segment's stub %s: %w", filepath.Base(p), err)
		}
	}
	for _, sg := range segs {
		if sg.remote != nil && o.FetchEvicted {
			if err := fetchEvicted(fs, sg, filepath.Join(segDir, segName(sg.id))); err != nil {
				return fmt.Errorf("evicted segment %016x: %w", sg.id, err)
			}
			st.Segments++
			st.SegmentsFetched++
			st.SegmentBytes += sg.r.Size()
			continue
		}
		copied, err := vfs.LinkOrCopy(fs, sg.path, filepath.Join(segDir, filepath.Base(sg.path)))
		if err != nil {
			return fmt.Errorf("segment %d: %w", sg.id, err)
		}
		st.Segments++
		if copied {
			st.SegmentsCopied++
		}
		st.SegmentBytes += sg.r.Size()
	}
	for _, w := range wals {
		if err := vfs.CopyFile(fs, w.f, filepath.Join(walDir, w.name)); err != nil {
			return fmt.Errorf("log file %s: %w", w.name, err)
		}
		size, _ := w.f.Size()
		st.WALFiles++
		st.WALBytes += size
	}
	return errors.Join(fs.SyncDir(segDir), fs.SyncDir(walDir), fs.SyncDir(dir))
}

// fetchEvicted writes the whole of evicted segment sg, read from object
// storage (through the read-through cache, which checks each chunk), to
// the file dst, and checks that the written file is the same segment
// (size, events, time range) and reads back whole (every checksum).
func fetchEvicted(fs vfs.FS, sg *segRef, dst string) error {
	if err := vfs.CopyFile(fs, sg.remote.file, dst); err != nil {
		return fmt.Errorf("reading it from the object store: %w", err)
	}
	f, err := fs.Open(dst)
	if err != nil {
		return err
	}
	r, err := segment.Open(f, dst)
	if err != nil {
		f.Close()
		return fmt.Errorf("the copy read from the object store does not open: %w", err)
	}
	defer r.Close()
	lo, hi := r.TimeRange()
	wantMin, wantMax := sg.r.TimeRange()
	if r.Size() != sg.r.Size() || r.Rows() != sg.r.Rows() || lo != wantMin || hi != wantMax {
		return fmt.Errorf("the copy read from the object store has %d bytes and %d events, the segment %d and %d", r.Size(), r.Rows(), sg.r.Size(), sg.r.Rows())
	}
	if err := r.Check(); err != nil {
		return fmt.Errorf("the copy read from the object store is damaged: %w", err)
	}
	return nil
}
