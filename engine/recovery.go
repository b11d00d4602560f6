package engine

import (
	"errors"
	"fmt"
	iofs "io/fs"
	"math"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"

	"github.com/sediment/sediment/internal/vfs"
	"github.com/sediment/sediment/segment"
)

// openShard recovers a shard from its directory: opens segments (damaged
// ones are set aside), finishes interrupted compactions, drops WAL files
// already flushed, replays the rest into the head and starts a new WAL file.
// A damaged log does not stop it: the shard then serves what it read,
// refusing events until the log is repaired (openWALDamaged). With repair
// (Options.RepairWAL), damaged log files are first rewritten without their
// damage (repairWALFile). A panic while recovering does not stop it either:
// the shard then serves its segments, read-only (openReplayFailed).
func openShard(e *Engine, id, dir string, repair bool) (*Shard, error) {
	opts := e.opts
	s := &Shard{id: id, dir: dir, opts: opts, eng: e,
		walDir:    filepath.Join(dir, "wal"),
		segDir:    filepath.Join(dir, "segments"),
		quarDir:   filepath.Join(dir, "quarantine"),
		reqs:      make(chan *appendReq, 1024),
		stopping:  make(chan struct{}),
		flushKick: make(chan struct{}, 1),
	}
	// What one segment's writer learns about derived text, the next starts from.
	s.deriveHints = segment.NewDeriveHints()
	if opts.ReadOnly {
		return openShardReadOnlyGuarded(s)
	}
	for _, d := range []string{s.walDir, s.segDir, s.quarDir} {
		if err := opts.FS.MkdirAll(d); err != nil {
			return nil, err
		}
	}
	damage, next, err := s.recoverStoredGuarded(repair)
	var pe *PanicError
	switch {
	case errors.As(err, &pe):
		return s.openReplayFailed(pe), nil
	case err != nil:
		return nil, err
	case len(damage) > 0:
		return s.openWALDamaged(damage), nil
	}
	s.inheritSortKey()
	if opts.Remote != nil && s.nextSeg == 0 {
		// A shard with no segment yet numbers them from the clock (µs):
		// on a replacement node whose data directory is new, it must not
		// reuse the ids its predecessor published under the same node id,
		// even before it could read the store (AdoptRemoteSegments).
		s.nextSeg = uint64(max(opts.Now().UnixMicro(), 0))
	}
	if b := int64(s.head.bytes); b > 0 { // replayed events
		e.mem.active.Add(b)
		e.mem.activeHeads.Add(1)
		e.mem.total.Add(b)
	}
	for _, h := range s.frozen { // heads replay split (see replayWAL)
		e.mem.total.Add(int64(h.bytes))
		select {
		case s.flushKick <- struct{}{}:
		default:
		}
	}
	w, err := createWAL(opts.FS, s.walDir, next)
	switch {
	case err == nil:
		s.swapLog(w, next)
	case vfs.IsNoSpace(err):
		// Start anyway, serving what is stored: the first write after
		// space is back creates the file (see resumeLog).
		e.noteNoSpace("creating a write-ahead log file", err)
		s.walSeq = next - 1
		s.log.broken.Store(true)
		s.log.cut = true
	default:
		return nil, err
	}
	s.wg.Add(1)
	go s.committer()
	if opts.AckMode == AckBuffered {
		s.wg.Add(1)
		go s.syncer()
	}
	if !opts.DisableBackground {
		s.wg.Add(1)
		go s.flusher()
	}
	return s, nil
}

// recoverStored loads the shard's segments and replays its log files into
// the head (see openShard), returning the log damage replay found and the
// sequence number of the next log file. segsLoaded is set once the segment
// list is complete (compactions' leftovers removed).
func (s *Shard) recoverStored(repair bool, segsLoaded *bool) ([]*WALCorruptError, uint64, error) {
	opts, id := s.opts, s.id
	if err := s.loadSegments(); err != nil {
		return nil, 0, err
	}
	*segsLoaded = true
	s.raiseQuarantined() // data set aside earlier is still missing from answers
	covered := s.coveredWAL()
	names, err := opts.FS.List(s.walDir)
	if err != nil {
		return nil, 0, err
	}
	var seqs []uint64
	for _, n := range names {
		if seq, ok := parseSeqName(n, ".wal"); ok {
			seqs = append(seqs, seq)
		} else {
			// Leftover temporary files from an interrupted operation.
			opts.FS.Remove(filepath.Join(s.walDir, n))
		}
	}
	slices.Sort(seqs)
	first := covered + 1
	if len(seqs) > 0 {
		first = max(first, seqs[0])
	}
	s.head = s.startHead(opts.Now(), first)
	var replayed []uint64
	var damage []*WALCorruptError
	next := first
	for i, seq := range seqs {
		path := filepath.Join(s.walDir, walName(seq))
		if seq <= covered {
			if err := opts.FS.Remove(path); err != nil {
				return nil, 0, err
			}
			continue
		}
		// Only the newest file may end in a torn write: a sealed file was
		// synced whole before its successor was created.
		tail := tailError
		if i == len(seqs)-1 {
			tail = tailCut
		}
		if repair {
			rep, err := repairWALFile(opts.FS, path, s.quarDir, tail)
			if err != nil {
				return nil, 0, fmt.Errorf("shard %s: repair %s: %w", id, walRel(path), err)
			}
			if rep != nil {
				s.noteWALRepair(rep)
			}
		}
		var scratch []byte
		p, err := s.replayWAL(path, seq, tail, &scratch)
		if err != nil {
			return nil, 0, fmt.Errorf("shard %s: replay: %w", id, err)
		}
		if dropped := p.tornBytes(); dropped > 0 {
			s.stats.walBytesCut.Add(dropped)
			opts.Logger.Warn("wal torn tail cut (an interrupted write: never acknowledged)", "shard", id, "file", path, "offset", p.tornAt, "bytes", dropped)
		}
		for _, d := range p.damage {
			if d.Header || d.Recovered {
				// Every record read: the head holds them all, and the file
				// goes once the head is written out.
				opts.Logger.Warn("wal damage found, nothing lost", "shard", id, "file", path, "damage", d.Error())
				continue
			}
			damage = append(damage, d)
		}
		switch {
		case len(p.records) == 0 && len(p.damage) == 0:
			// Nothing to keep: an idle restart or a clean close.
			if err := opts.FS.Remove(path); err != nil {
				return nil, 0, err
			}
			if err := opts.FS.SyncDir(s.walDir); err != nil {
				return nil, 0, err
			}
		case len(replayed) == 0:
			s.head.walFirst = seq
			fallthrough
		default:
			replayed = append(replayed, seq)
		}
		next = max(next, seq+1)
	}
	s.head.walLast = next
	return damage, next, nil
}

// openWALDamaged finishes opening a shard whose log replay found damage
// that a repair would drop data for. The shard serves its segments and
// every record replay could read (before and after the damage), refuses
// events (ingest answers 503), and writes nothing: no new log file, no
// flush, so that the damaged files stay as they are for the repair. The
// condition on /ready and the log say what to run.
func (s *Shard) openWALDamaged(damage []*WALCorruptError) *Shard {
	s.walDamage = &WALDamagedError{Shard: s.id, Damage: damage}
	for _, d := range damage {
		s.walLost = append(s.walLost, walLoss(d))
	}
	s.failed = s.walDamage
	s.enqClosed = true
	close(s.stopping)
	var lost []string
	for _, d := range damage {
		lost = append(lost, fmt.Sprintf("%s at offset %d: %v (a repair drops %s)", d.File, d.Offset, d.Err, d.Lost()))
	}
	s.opts.Logger.Error("write-ahead log damaged: the source is read-only until repaired; acknowledged events may be lost",
		"shard", s.id, "source_dir", s.dir, "damage", strings.Join(lost, "; "), "events_replayed", s.head.rows,
		"repair", fmt.Sprintf("stop the server, then run: sediment fsck --data-dir %s --repair-wal --source %s (or restart with sediment serve --repair-wal)", s.eng.dir, s.id))
	s.raiseCondition(Condition{Kind: ConditionWALDamaged, RefusesIngest: true,
		Detail: fmt.Sprintf("write-ahead log damaged: %s. The source serves its segments and the %s events of the log that read, and refuses events. To repair, stop the server and run `sediment fsck --repair-wal --source %s` with its --data-dir, or restart it with --repair-wal; the damaged files are kept in quarantine/",
			strings.Join(lost, "; "), thousands(int64(s.head.rows)), s.id)})
	return s
}

// openShardReadOnlyGuarded is openShardReadOnly with a panic (a bug, perhaps
// one a single stored file triggers) turned into a problem of the shard, as
// openShard does for a writable open: fsck and `sediment query` then report
// it and go on with the other sources instead of stopping.
func openShardReadOnlyGuarded(s *Shard) (sh *Shard, err error) {
	defer func() {
		r := recover()
		if r == nil {
			return
		}
		pe := &PanicError{Task: taskNames[taskReplay], Value: r, Stack: debug.Stack()}
		for _, sg := range s.segs {
			sg.release()
		}
		s.segs, s.lost = nil, nil
		s.head = s.startHead(s.opts.Now(), 0)
		s.openProblems = append(s.openProblems, fmt.Errorf("opening the source panicked (an internal error; nothing was changed): %v", pe.Value))
		s.walLost = append(s.walLost, lostUnit{kind: lossReplay, rows: -1, minTime: math.MinInt64, maxTime: math.MaxInt64,
			cause: fmt.Sprintf("opening it read-only panicked: %v", pe.Value)})
		s.failed = ErrReadOnly
		s.enqClosed = true
		select {
		case <-s.stopping:
		default:
			close(s.stopping)
		}
		sh, err = s, nil
	}()
	return openShardReadOnly(s)
}

// openShardReadOnly loads a shard without changing its directory.
func openShardReadOnly(s *Shard) (*Shard, error) {
	opts := s.opts
	if err := s.loadSegments(); err != nil {
		return nil, err
	}
	covered := s.coveredWAL()
	s.head = s.startHead(opts.Now(), covered+1)
	names, _ := opts.FS.List(s.walDir)
	var scratch []byte
	lastSeq := uint64(0)
	for _, n := range names {
		if seq, ok := parseSeqName(n, ".wal"); ok {
			lastSeq = max(lastSeq, seq)
		}
	}
	for _, n := range names {
		seq, ok := parseSeqName(n, ".wal")
		if !ok || seq <= covered {
			continue
		}
		// The newest file may be mid-write by a running server.
		tail := tailError
		if seq == lastSeq {
			tail = tailKeep
		}
		p, err := s.replayWAL(filepath.Join(s.walDir, n), seq, tail, &scratch)
		if errors.Is(err, iofs.ErrNotExist) {
			continue // a running server flushed it meanwhile: its events are in a segment
		}
		if err != nil {
			return nil, err
		}
		for _, d := range p.damage {
			s.openProblems = append(s.openProblems, d)
			if !d.Header && !d.Recovered {
				s.walLost = append(s.walLost, walLoss(d))
			}
		}
	}
	s.failed = ErrReadOnly
	close(s.stopping)
	s.enqClosed = true
	return s, nil
}

// loadSegments opens every segment, setting damaged ones aside, attaches
// the records of damaged blocks kept beside segments in use, removes
// segments that a completed compaction replaced, and then reads what the
// shard has lost for good (loadLost). A read-only open changes nothing on
// disk: what it would set aside it only remembers.
func (s *Shard) loadSegments() error {
	fs := s.opts.FS
	if !fs.Exists(s.segDir) {
		s.loadLost()
		return nil // read-only open of a shard that never flushed
	}
	names, err := fs.List(s.segDir)
	if err != nil {
		return err
	}
	records := map[uint64]bool{}
	var ixMarks, stubs []uint64
	for _, n := range names {
		if id, ok := parseSeqName(n, damageExt); ok {
			records[id] = true
			continue
		}
		if id, ok := parseSeqName(n, remoteStubExt); ok {
			s.nextSeg = max(s.nextSeg, id+1)
			if !slices.Contains(names, segName(id)) {
				stubs = append(stubs, id)
			} else if !s.opts.ReadOnly {
				// Evicting it was interrupted before its file went: the
				// local file serves.
				fs.Remove(filepath.Join(s.segDir, n))
			}
			continue
		}
		if id, ok := parseSeqName(n, indexDamageExt); ok {
			ixMarks = append(ixMarks, id)
			continue
		}
		id, ok := parseSeqName(n, ".seg")
		if !ok {
			if !s.opts.ReadOnly { // a running server may be writing it
				fs.Remove(filepath.Join(s.segDir, n)) // interrupted write (.tmp)
			}
			continue
		}
		s.nextSeg = max(s.nextSeg, id+1)
		path := filepath.Join(s.segDir, n)
		ref, err := s.openSegment(id, path)
		if err != nil {
			if s.opts.ReadOnly && errors.Is(err, iofs.ErrNotExist) {
				continue // a running server's compaction removed it meanwhile
			}
			if errors.Is(err, segment.ErrCorrupt) {
				u := wholeSegmentLoss(id, err, s.footerOf(path), s.opts.Now().UnixMicro())
				if s.opts.ReadOnly {
					s.openProblems = append(s.openProblems, &SegmentDamageError{File: filepath.Join("segments", n), Unit: "segment", Events: u.rows, Err: err})
					u.pending = true
					s.lost = append(s.lost, u)
					continue
				}
				s.setAside(id, path, err, []lostUnit{u})
				continue
			}
			return err
		}
		s.segs = append(s.segs, ref)
	}
	s.loadRemoteStubs(stubs)
	if qn, err := fs.List(s.quarDir); err == nil {
		for _, n := range qn {
			id, ok := parseSeqName(n, ".seg")
			if !ok {
				id, ok = parseSeqName(n, damageExt) // its .seg may be deleted
			}
			if ok {
				s.nextSeg = max(s.nextSeg, id+1)
			}
		}
	}
	loaded := map[uint64]*segRef{}
	for _, sg := range s.segs {
		loaded[sg.id] = sg
	}
	s.loadIndexDamage(ixMarks, loaded)
	for id := range records {
		rp := filepath.Join(s.segDir, damageName(id))
		units, err := readDamageRecord(fs, rp, id)
		if err != nil {
			// The blocks it listed are still damaged on disk: readers find
			// them again. Only the record is lost.
			s.opts.Logger.Error("damage record unreadable; its blocks will be found again when read", "shard", s.id, "file", filepath.Join("segments", damageName(id)), "err", err)
			s.openProblems = append(s.openProblems, fmt.Errorf("damage record segments/%s: %w", damageName(id), err))
			if !s.opts.ReadOnly {
				fs.Remove(rp)
			}
			continue
		}
		if sg := loaded[id]; sg != nil {
			m := blockDamage{}
			for _, u := range units {
				if u.kind == lossBlock && u.block < sg.r.NumBlocks() {
					m[u.block] = u
				}
			}
			sg.dmg.Store(&m)
			continue
		}
		// The segment is gone (set aside whole, or a rewrite without its
		// damaged blocks finished): its blocks are lost for good.
		qp := filepath.Join(s.quarDir, damageName(id))
		switch {
		case s.opts.ReadOnly:
			if !fs.Exists(qp) {
				s.lost = append(s.lost, units...)
			}
		case fs.Exists(qp):
			fs.Remove(rp)
		default:
			if err := fs.Rename(rp, qp); err != nil {
				return err
			}
			if err := fs.SyncDir(s.quarDir); err != nil {
				return err
			}
		}
	}
	replaced := map[uint64]bool{}
	for _, sg := range s.segs {
		for _, id := range sg.meta.replaces {
			replaced[id] = true
		}
	}
	kept := s.segs[:0]
	for _, sg := range s.segs {
		if !replaced[sg.id] {
			kept = append(kept, sg)
			continue
		}
		switch blocks := sg.damagedBlocks(); {
		case len(blocks) > 0 && s.opts.ReadOnly:
			s.lost = append(s.lost, blocks...)
		case len(blocks) > 0:
			// A rewrite without the damaged blocks published its output:
			// keep the original for forensics, with what it lost.
			s.setAside(sg.id, sg.path, errors.New("rewritten without its damaged blocks"), blocks)
		case !s.opts.ReadOnly:
			sg.removed.Store(true)
		}
		sg.release()
	}
	s.segs = kept
	s.remotePending = slices.DeleteFunc(s.remotePending, func(p *pendingRemote) bool {
		if replaced[p.id] && !s.opts.ReadOnly {
			fs.Remove(p.path)
		}
		return replaced[p.id]
	})
	s.sortSegs()
	s.loadLost()
	return nil
}

// coveredWAL is the last write-ahead log generation the shard's segments
// cover (evicted ones not yet opened included).
func (s *Shard) coveredWAL() uint64 {
	covered := uint64(0)
	for _, sg := range s.segs {
		covered = max(covered, sg.meta.walLast)
	}
	for _, p := range s.remotePending {
		covered = max(covered, p.stub.walLast)
	}
	return covered
}

// footerOf opens a segment that failed to load, to learn its size and time
// range when its footer reads (the damage is elsewhere: the engine's
// metadata). nil when it does not. The reader is closed; its footer
// summary stays valid.
func (s *Shard) footerOf(path string) *segment.Reader {
	f, err := s.opts.FS.Open(path)
	if err != nil {
		return nil
	}
	r, err := segment.Open(f, path)
	if err != nil {
		f.Close()
		return nil
	}
	r.Close()
	return r
}

func (s *Shard) openSegment(id uint64, path string) (*segRef, error) {
	f, err := s.opts.FS.Open(path)
	if err != nil {
		return nil, err
	}
	// Errors name the file relative to the source's directory: they may
	// reach API clients, which must not learn the server's paths.
	name := filepath.Join(filepath.Base(filepath.Dir(path)), filepath.Base(path))
	return s.segRefOf(id, path, f, name)
}

// segRefOf reads segment id from f (named name in errors) and checks
// what the engine relies on; path is its file (or stub) in the shard.
func (s *Shard) segRefOf(id uint64, path string, f vfs.File, name string) (*segRef, error) {
	r, err := segment.Open(f, name)
	if err != nil {
		f.Close()
		return nil, err
	}
	// The engine always writes a timestamp column and relies on it (time
	// pruning, merging); a file without one is not ours or is damaged.
	if r.Column("timestamp", segment.TypeTimestamp) < 0 {
		r.Close()
		return nil, &segment.CorruptError{Path: name, Offset: -1, Section: "footer", Err: errors.New("no timestamp column")}
	}
	mb, err := r.Section(sectionMeta)
	if err != nil {
		r.Close()
		return nil, err
	}
	meta, err := decodeSegMeta(mb)
	if err == nil && meta.sortKey != "" && len(meta.blocks) != r.NumBlocks() {
		err = fmt.Errorf("%w: %d blocks described, the footer has %d", errBadMeta, len(meta.blocks), r.NumBlocks())
	}
	if err != nil {
		r.Close()
		return nil, &segment.CorruptError{Path: name, Offset: -1, Section: "meta", Err: err}
	}
	ref := &segRef{id: id, path: path, r: r, meta: meta, shard: s}
	ref.refs.Store(1)
	return ref, nil
}
