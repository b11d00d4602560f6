package engine

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sediment/sediment/index"
	"github.com/sediment/sediment/internal/vfs"
)

// Evicted segments. With Options.Remote, a segment that object storage
// lists may give up its local file (EvictSegment): the shard keeps it in
// its list, reading it through Remote.OpenSegment (on a node with a
// store, a read-through cache of aligned chunks), and a stub
// segments/<id>.remote (remotestub.go) records that the segment is the
// shard's, so that a restart opens it remotely instead of taking it for
// lost. Which segments to evict, and when, is the caller's decision
// (remote.Segments keeps an ingest node's disk within --cache-size); the
// engine only checks that the store lists a copy of the same size before
// it deletes anything, since a local file not yet listed is the only copy
// of acknowledged events.
//
// Reading an evicted segment can fail because the store cannot be
// reached: such failures are never taken for damage (no damage record, no
// quarantine; the copy in the store is what it is). A query reports them
// as events it could not reach: a warning in the answer, or a
// PartialError where the query has no place for one. An evicted segment
// that cannot even be opened at startup (the store away) is pending: the
// shard counts it, answers say what they miss, and OpenRemoteSegments
// tries again.

// remoteCopy is what a segRef of an evicted segment holds besides the
// reader.
type remoteCopy struct {
	stub remoteStub
	file *storeFile
	// The index is opened under ixMu and kept only once read: unlike a
	// local file's, a failed read (the store away) is tried again.
	ixMu sync.Mutex
	ix   *index.Index
}

// storeFile is the file of an evicted segment; it remembers the last read
// failure, which is the store's (the segment reader reports every read
// failure as damage; this tells them apart).
type storeFile struct {
	vfs.File
	failures atomic.Int64
	last     atomic.Pointer[string]
}

func (f *storeFile) ReadAt(p []byte, off int64) (int, error) {
	n, err := f.File.ReadAt(p, off)
	if err != nil && !errors.Is(err, io.EOF) {
		f.failures.Add(1)
		msg := err.Error()
		f.last.Store(&msg)
	}
	return n, err
}

// pendingRemote is an evicted segment that could not be opened yet.
type pendingRemote struct {
	id   uint64
	path string // its stub
	stub remoteStub
	// known: the stub read back (else its time range and events are
	// unknown, and every answer may miss it).
	known bool
	err   string
}

// unit is what answers miss while the segment cannot be opened.
func (p *pendingRemote) unit() lostUnit {
	u := lostUnit{seg: p.id, kind: lossRemote, rows: p.stub.rows, minTime: p.stub.minTime, maxTime: p.stub.maxTime, timeKnown: p.known,
		cause: fmt.Sprintf("segment %016x is kept in the object store, which could not serve it (%s)", p.id, p.err)}
	if !p.known {
		u.rows, u.minTime, u.maxTime = -1, math.MinInt64, math.MaxInt64
	}
	return u
}

// remoteOpenTimeout bounds opening one evicted segment (its footer, from
// the cache or the store).
const remoteOpenTimeout = 30 * time.Second

// openRemote opens evicted segment id of the shard through
// Options.Remote, checking that the copy is the segment the stub
// describes.
func (s *Shard) openRemote(ctx context.Context, id uint64, stubPath string, st remoteStub, known bool) (*segRef, error) {
	if s.opts.Remote == nil {
		return nil, errors.New("this process has no object store to read it from")
	}
	ctx, cancel := context.WithTimeout(ctx, remoteOpenTimeout)
	defer cancel()
	f, err := s.opts.Remote.OpenSegment(ctx, s.id, id)
	if err != nil {
		return nil, err
	}
	sf := &storeFile{File: f}
	ref, err := s.segRefOf(id, stubPath, sf, filepath.Join("segments", segName(id)))
	if err != nil {
		if msg := sf.last.Load(); msg != nil {
			return nil, fmt.Errorf("%s (%w)", *msg, err)
		}
		return nil, err
	}
	if known && (ref.r.Size() != st.size || int64(ref.r.Rows()) != st.rows) {
		ref.r.Close()
		return nil, fmt.Errorf("the store's copy has %d bytes and %d events, the segment had %d and %d", ref.r.Size(), ref.r.Rows(), st.size, st.rows)
	}
	if !known {
		minT, maxT := ref.r.TimeRange()
		st = remoteStub{size: ref.r.Size(), rows: int64(ref.r.Rows()), minTime: minT, maxTime: maxT}
	}
	// The log generations it covers are the stub's: an adopted segment's
	// own meta names its first life's log, which has nothing to do with
	// this directory's (and must not make replay skip its files); an
	// unreadable stub's segment covers none (its log is long gone).
	ref.meta.walLast = st.walLast
	ref.remote = &remoteCopy{stub: st, file: sf}
	return ref, nil
}

// loadRemoteStubs opens the evicted segments whose stubs loadSegments
// found (ids with no local file), leaving those that do not open pending.
// After one fails, the rest are not tried (the store is likely away):
// OpenRemoteSegments tries again.
func (s *Shard) loadRemoteStubs(ids []uint64) {
	slices.Sort(ids)
	failed := ""
	for _, id := range ids {
		path := filepath.Join(s.segDir, remoteStubName(id))
		p := &pendingRemote{id: id, path: path}
		st, err := readRemoteStub(s.opts.FS, path)
		if err != nil {
			s.opts.Logger.Error("evicted segment's stub unreadable; the segment is opened from the store without it", "shard", s.id,
				"file", filepath.Join("segments", remoteStubName(id)), "err", err)
		} else {
			p.stub, p.known = st, true
		}
		if failed != "" || s.opts.ReadOnly {
			p.err = failed
			if failed == "" {
				p.err = "a read-only open does not read the object store"
			}
			s.remotePending = append(s.remotePending, p)
			continue
		}
		ref, err := s.openRemote(context.Background(), id, path, p.stub, p.known)
		if err != nil {
			failed = err.Error()
			p.err = failed
			s.remotePending = append(s.remotePending, p)
			s.opts.Logger.Warn("evicted segment could not be opened from the object store; answers say what they miss until it opens", "shard", s.id,
				"segment", segName(id), "err", err)
			continue
		}
		s.segs = append(s.segs, ref)
	}
}

// OpenRemoteSegments tries again to open the shard's evicted segments
// that could not be opened (the store was away at startup), returning how
// many are still pending. The engine calls it with its maintenance; a
// node calls it when the store answers again.
func (s *Shard) OpenRemoteSegments(ctx context.Context) (int, error) {
	s.mu.RLock()
	pend := slices.Clone(s.remotePending)
	s.mu.RUnlock()
	var errs []error
	for _, p := range pend {
		ref, err := s.openRemote(ctx, p.id, p.path, p.stub, p.known)
		if err != nil {
			errs = append(errs, fmt.Errorf("segment %016x: %w", p.id, err))
			s.mu.Lock()
			p.err = err.Error()
			s.mu.Unlock()
			break // the store is likely still away
		}
		s.mu.Lock()
		i := slices.Index(s.remotePending, p)
		if i < 0 { // retention dropped it meanwhile
			s.mu.Unlock()
			ref.r.Close()
			continue
		}
		s.remotePending = slices.Delete(s.remotePending, i, i+1)
		s.segs = append(s.segs, ref)
		s.sortSegs()
		s.mu.Unlock()
		s.opts.Logger.Info("evicted segment opened from the object store", "shard", s.id, "segment", segName(p.id))
	}
	s.mu.RLock()
	n := len(s.remotePending)
	s.mu.RUnlock()
	return n, errors.Join(errs...)
}

// pendingUnits are the losses answers report for pending segments.
// Callers hold s.mu.
func (s *Shard) pendingUnitsLocked() []lostUnit {
	out := make([]lostUnit, len(s.remotePending))
	for i, p := range s.remotePending {
		out[i] = p.unit()
	}
	return out
}

// LocalSegment is a segment whose file is on local disk.
type LocalSegment struct {
	ID               uint64
	Size             int64
	MinTime, MaxTime int64
}

// LocalSegments lists the shard's segments that have a local file and
// may be evicted (none set aside in part: those a compaction rewrites),
// in id order, and the bytes of all its local segment files.
func (s *Shard) LocalSegments() ([]LocalSegment, int64) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	var out []LocalSegment
	total := int64(0)
	for _, sg := range s.segs {
		if sg.remote != nil {
			continue
		}
		total += sg.r.Size()
		if sg.needsRewrite() {
			continue
		}
		minT, maxT := sg.r.TimeRange()
		out = append(out, LocalSegment{ID: sg.id, Size: sg.r.Size(), MinTime: minT, MaxTime: maxT})
	}
	slices.SortFunc(out, func(a, b LocalSegment) int { return cmp.Compare(a.ID, b.ID) })
	return out, total
}

// ErrNotEvictable is returned by EvictSegment for a segment the shard
// does not serve from a local file (gone, already evicted, or with
// damaged parts a compaction must rewrite first).
var ErrNotEvictable = errors.New("engine: segment not evictable")

// EvictSegment drops the local file of segment id, which from then on is
// read through Options.Remote. The caller says the store lists it; the
// engine checks it anyway: Remote.OpenSegment must open a copy of the
// same size, events and time range, or nothing changes. A stub
// (remotestub.go) is written and synced before the segment leaves the
// list; the file is deleted once no snapshot reads it. It returns the
// bytes freed.
func (s *Shard) EvictSegment(ctx context.Context, id uint64) (int64, error) {
	if s.opts.Remote == nil || s.opts.ReadOnly {
		return 0, fmt.Errorf("%w: no object store", ErrNotEvictable)
	}
	s.mu.RLock()
	var sg *segRef
	for _, x := range s.segs {
		if x.id == id {
			sg = x
			break
		}
	}
	if sg == nil || sg.remote != nil || sg.needsRewrite() {
		s.mu.RUnlock()
		return 0, fmt.Errorf("%w: %016x", ErrNotEvictable, id)
	}
	sg.acquire()
	s.mu.RUnlock()
	defer sg.release()

	minT, maxT := sg.r.TimeRange()
	st := remoteStub{size: sg.r.Size(), rows: int64(sg.r.Rows()), minTime: minT, maxTime: maxT, walLast: sg.meta.walLast}
	stubPath := filepath.Join(s.segDir, remoteStubName(id))
	ref, err := s.openRemote(ctx, id, stubPath, st, true)
	if err != nil {
		return 0, fmt.Errorf("segment %016x: the store's copy: %w", id, err)
	}
	if rmin, rmax := ref.r.TimeRange(); rmin != minT || rmax != maxT {
		ref.r.Close()
		return 0, fmt.Errorf("segment %016x: the store's copy covers %d..%d, the segment %d..%d", id, rmin, rmax, minT, maxT)
	}
	ref.meta = sg.meta
	// No compaction, retention rewrite or size cap may be working from
	// the ref being replaced (they hold compactMu while they do).
	s.compactMu.Lock()
	defer s.compactMu.Unlock()
	s.mu.RLock()
	live := slices.Contains(s.segs, sg)
	s.mu.RUnlock()
	if !live {
		ref.r.Close()
		return 0, fmt.Errorf("%w: %016x was replaced meanwhile", ErrNotEvictable, id)
	}
	if err := writeFileAtomic(s.opts.FS, s.segDir, remoteStubName(id), st.encode()); err != nil {
		ref.r.Close()
		s.opts.FS.Remove(stubPath)
		return 0, s.eng.noteNoSpace("writing an evicted segment's stub", err)
	}
	s.mu.Lock()
	i := slices.Index(s.segs, sg)
	if i < 0 { // set aside meanwhile (a query found damage): its stub must not outlive it
		s.mu.Unlock()
		ref.r.Close()
		s.opts.FS.Remove(stubPath)
		return 0, fmt.Errorf("%w: %016x was replaced meanwhile", ErrNotEvictable, id)
	}
	s.segs[i] = ref // same id and time range: the order holds
	sg.removed.Store(true)
	s.mu.Unlock()
	sg.release() // the list's reference: the file goes with the last reader
	s.stats.evicted.Add(1)
	return st.size, nil
}

// ListedSegment is one of this node's segments that object storage lists
// for the shard (remote.Segments reads them from the manifest).
type ListedSegment struct {
	ID               uint64
	Size, Rows       int64
	MinTime, MaxTime int64
}

// AdoptRemoteSegments settles segments the store lists as this node's
// that the shard does not serve (a replacement node on an empty data
// directory, or one whose directory lost them). It returns those it
// adopted, as evicted segments read through Options.Remote (pending when
// they cannot be opened now), and those it retires: replaced by one of
// its segments (a compaction whose manifest update never happened) or set
// aside here as damaged, which the caller delists. Segments it serves are
// left out of both.
func (s *Shard) AdoptRemoteSegments(ctx context.Context, listed []ListedSegment) (adopted, retired []uint64, err error) {
	if s.opts.Remote == nil || s.opts.ReadOnly {
		return nil, nil, errors.New("engine: adopting needs an object store and a writable shard")
	}
	s.adoptMu.Lock() // two adoptions at once would both take a segment
	defer s.adoptMu.Unlock()
	s.mu.RLock()
	known := map[uint64]bool{}
	replaced := map[uint64]bool{}
	for _, sg := range s.segs {
		known[sg.id] = true
		for _, id := range sg.meta.replaces {
			replaced[id] = true
		}
	}
	for _, p := range s.remotePending {
		known[p.id] = true
	}
	s.mu.RUnlock()
	var errs []error
	for _, l := range listed {
		switch {
		case known[l.ID]:
			continue
		case replaced[l.ID],
			s.opts.FS.Exists(filepath.Join(s.quarDir, segName(l.ID))),
			s.opts.FS.Exists(filepath.Join(s.quarDir, damageName(l.ID))):
			retired = append(retired, l.ID)
			continue
		}
		st := remoteStub{size: l.Size, rows: l.Rows, minTime: l.MinTime, maxTime: l.MaxTime}
		if st.minTime > st.maxTime || st.size < 0 || st.rows < 0 {
			errs = append(errs, fmt.Errorf("segment %016x: listed with size %d, rows %d, times %d..%d", l.ID, l.Size, l.Rows, l.MinTime, l.MaxTime))
			continue
		}
		stubPath := filepath.Join(s.segDir, remoteStubName(l.ID))
		if err := writeFileAtomic(s.opts.FS, s.segDir, remoteStubName(l.ID), st.encode()); err != nil {
			errs = append(errs, fmt.Errorf("segment %016x: %w", l.ID, err))
			break
		}
		ref, oerr := s.openRemote(ctx, l.ID, stubPath, st, true)
		s.mu.Lock()
		s.nextSeg = max(s.nextSeg, l.ID+1)
		if oerr != nil {
			s.remotePending = append(s.remotePending, &pendingRemote{id: l.ID, path: stubPath, stub: st, known: true, err: oerr.Error()})
		} else {
			s.segs = append(s.segs, ref)
			s.sortSegs()
		}
		s.mu.Unlock()
		adopted = append(adopted, l.ID)
	}
	if len(adopted) > 0 {
		s.opts.Logger.Info("segments listed in the object store adopted as this node's (read through the store)", "shard", s.id, "segments", len(adopted))
	}
	return adopted, retired, errors.Join(errs...)
}

// remoteLoss is the unit a failed read of block b (-1: the segment's
// index or footer) of evicted segment sg stands for: events the answer
// could not reach, never damage.
func (sg *segRef) remoteLoss(b int, err error) lostUnit {
	cause := err.Error()
	if msg := sg.remote.file.last.Load(); msg != nil {
		cause = *msg
	}
	u := lostUnit{seg: sg.id, kind: lossRemote, block: b, timeKnown: true,
		cause: fmt.Sprintf("segment %016x is kept in the object store, which could not serve it (%s)", sg.id, cause)}
	if b >= 0 && b < sg.r.NumBlocks() {
		bi := sg.r.Block(b)
		u.rows, u.minTime, u.maxTime = int64(bi.Rows), bi.MinTime, bi.MaxTime
	} else {
		u.rows = int64(sg.r.Rows())
		u.minTime, u.maxTime = sg.r.TimeRange()
	}
	return u
}

// remoteIndex is index() for an evicted segment: kept once read, tried
// again after a failure.
func (sg *segRef) remoteIndex() (*index.Index, error) {
	rc := sg.remote
	rc.ixMu.Lock()
	defer rc.ixMu.Unlock()
	if rc.ix != nil {
		return rc.ix, nil
	}
	dir, err := sg.r.Section(sectionIndex)
	if err != nil || dir == nil {
		return nil, err
	}
	ix, err := index.Open(dir, sg.r)
	if errors.Is(err, index.ErrUnsupportedVersion) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	rc.ix = ix
	return ix, nil
}

// hasPendingRemote reports whether evicted segments wait to be opened.
func (s *Shard) hasPendingRemote() bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return len(s.remotePending) > 0
}
