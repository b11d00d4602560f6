package engine

import (
	"context"
	"errors"
	"fmt"
	iofs "io/fs"
	"path/filepath"
	"runtime/debug"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sediment/sediment/event"
	"github.com/sediment/sediment/index"
	"github.com/sediment/sediment/internal/vfs"
	"github.com/sediment/sediment/segment"
)

// ErrBackpressure is returned by Append when flushing cannot keep up and
// the shard refuses more events for now; callers answer 429.
var ErrBackpressure = errors.New("engine: ingest buffer full")

// ErrClosed is returned by operations on a closed shard or engine.
var ErrClosed = errors.New("engine: closed")

// ErrReadOnly is returned by changes to an engine opened read-only.
var ErrReadOnly = errors.New("engine: opened read-only")

// Shard holds the events of one source: a write-ahead log, the head, heads
// being flushed, and sealed segments, each under its own directory:
//
//	<dir>/wal/<seq>.wal
//	<dir>/segments/<id>.seg
//	<dir>/segments/<id>.dmg     blocks of a segment found damaged (damage.go)
//	<dir>/quarantine/<id>.seg   segments set aside, with <id>.dmg: what is lost
//	<dir>/quarantine/<seq>.wal  write-ahead log files as they were before a repair
type Shard struct {
	id   string
	dir  string
	opts *Options
	eng  *Engine

	walDir, segDir, quarDir string

	// Write path: Append hands records to the committer goroutine, which
	// writes them (one write and one fsync per group), inserts the events
	// into the head and acknowledges.
	reqs chan *appendReq
	// enqMu orders enqueues against close: senders hold it shared, close
	// takes it exclusively before stopping the committer, so no request is
	// queued after the committer's final drain. The committer never takes
	// it, so a sender blocked on a full queue cannot deadlock close.
	enqMu     sync.RWMutex
	enqClosed bool
	walMu     sync.Mutex // guards wal for the buffered-mode syncer
	wal       *walWriter
	walSeq    uint64
	stopping  chan struct{}
	wg        sync.WaitGroup

	// mu guards the head pointer, frozen heads and the segment list.
	mu      sync.RWMutex
	head    *head
	frozen  []*head
	segs    []*segRef // sorted by minTime, then id
	nextSeg uint64
	remote  remoteQueue // changes of segs for Options.Remote
	// failed is set when the log could not be written: the shard then
	// refuses events, since it cannot promise durability.
	failed error
	// openProblems are problems an open found and left alone (a read-only
	// open: what it would have set aside or repaired; any open: damage
	// records it could not read), for fsck.
	openProblems []error
	// lost lists stored data set aside for good (quarantine/ records, and
	// in a read-only open what it would set aside); it grows by copy.
	lost []lostUnit
	// walLost is the damage in the write-ahead log that replay could not
	// read (walLoss), while the shard is read-only for it.
	walLost []lostUnit
	// damageMu serialises marking blocks damaged (and their records).
	damageMu sync.Mutex
	// walDamage is set when replay found the write-ahead log damaged: the
	// shard serves what it has and refuses events until it is repaired.
	walDamage *WALDamagedError
	// repairs are what repairing the log at open did.
	repairs []*WALRepair

	flushKick chan struct{}
	flushMu   sync.Mutex // one flush at a time
	compactMu sync.Mutex // one compaction at a time

	// Retention in days; 0 keeps everything.
	retentionDays atomic.Int64
	// sortKey is set by SetSortKey (nil: Options.SortKey); see sortkey.go.
	sortKey atomic.Pointer[string]

	stats     shardCounters
	admission admissionCounters
	// tasks supervises the background work (see supervised).
	tasks [numTasks]taskState
	// log is the state of the log file being written (see writeLog).
	log logState
	// conds is what is currently wrong with the shard (see Conditions).
	conds conditions

	subsMu sync.Mutex
	subs   map[*Subscription]struct{}
}

type shardCounters struct {
	appended       atomic.Int64
	flushes        atomic.Int64
	compactions    atomic.Int64
	concatenated   atomic.Int64 // compactions done by copying blocks
	segmentsPurged atomic.Int64 // deleted whole by retention
	// Segments retention rewrote without their expired rows, and the rows
	// it dropped so.
	segmentsRewritten atomic.Int64
	rowsExpired       atomic.Int64
	quarantined       atomic.Int64 // segment files moved to quarantine/
	indexesDamaged    atomic.Int64
	walBytesCut       atomic.Int64
	// What repairs of the write-ahead log dropped (damaged spans, their
	// bytes, the events they said they held).
	walRecordsDropped atomic.Int64
	walBytesDropped   atomic.Int64
	walEventsDropped  atomic.Int64
	droppedFields     atomic.Int64 // values not stored: path too long, or one event wider than a head
	// Events cut to MaxEventFields, and the fields they lost.
	eventsOverFieldCap atomic.Int64
	fieldsOverEventCap atomic.Int64
}

type appendReq struct {
	rec    []byte
	batch  *Batch // nil for a rotation
	rotate bool   // freeze the head (no events)
	done   chan error
}

// events returns the number of events the request carries.
func (r *appendReq) events() int {
	if r.batch == nil {
		return 0
	}
	return r.batch.Len()
}

// segRef is a segment with reference counting: the shard's list holds one
// reference and every snapshot one more; the file is deleted only when a
// removed segment's last reference goes.
type segRef struct {
	id      uint64
	path    string
	r       *segment.Reader
	meta    segMeta
	refs    atomic.Int32
	removed atomic.Bool
	shard   *Shard

	ixOnce sync.Once
	ix     *index.Index
	ixErr  error
	// ixBroken: the index failed to read; scans go without it.
	ixBroken atomic.Bool
	// dmg is the set of the segment's blocks found damaged (nil: none).
	dmg atomic.Pointer[blockDamage]

	colsOnce sync.Once
	byPath   map[string][]colRef

	// extRelease, set for a segment of Options.External, replaces the
	// close and removal of a local file (external.go).
	extRelease func()
}

func (s *segRef) acquire() { s.refs.Add(1) }

func (s *segRef) release() {
	if s.refs.Add(-1) != 0 {
		return
	}
	if s.extRelease != nil {
		s.extRelease()
		return
	}
	s.r.Close()
	if s.removed.Load() {
		if err := s.shard.opts.FS.Remove(s.path); err != nil {
			s.shard.opts.Logger.Warn("remove segment", "shard", s.shard.id, "segment", s.id, "err", err)
		}
		// Dropped whole (retention): its record of damaged blocks goes too,
		// or a restart would take it for a loss.
		if dp := filepath.Join(s.shard.segDir, damageName(s.id)); s.dmg.Load() != nil && s.shard.opts.FS.Exists(dp) {
			s.shard.opts.FS.Remove(dp)
		}
	}
}

// index returns the segment's index (nil if it has none), opened once.
func (s *segRef) index() (*index.Index, error) {
	s.ixOnce.Do(func() {
		dir, err := s.r.Section(sectionIndex)
		if err != nil || dir == nil {
			s.ixErr = err
			return
		}
		s.ix, s.ixErr = index.Open(dir, s.r)
		if errors.Is(s.ixErr, index.ErrUnsupportedVersion) {
			// Queries scan this segment instead; a compaction rewrites it.
			s.shard.opts.Logger.Warn("segment index in an unknown format version; scanning instead", "shard", s.shard.id, "segment", s.id, "err", s.ixErr)
			s.ix, s.ixErr = nil, nil
			return
		}
		if s.ixErr != nil && !errors.Is(s.ixErr, segment.ErrCorrupt) {
			s.ixErr = &segment.CorruptError{Path: filepath.Join("segments", segName(s.id)), Offset: -1, Section: "index", Err: s.ixErr}
		}
	})
	return s.ix, s.ixErr
}

func segName(id uint64) string { return fmt.Sprintf("%016x.seg", id) }

// openShard recovers a shard from its directory: opens segments (damaged
// ones are set aside), finishes interrupted compactions, drops WAL files
// already flushed, replays the rest into the head and starts a new WAL file.
// A damaged log does not stop it: the shard then serves what it read,
// refusing events until the log is repaired (openWALDamaged). With repair
// (Options.RepairWAL), damaged log files are first rewritten without their
// damage (repairWALFile).
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
	if opts.ReadOnly {
		return openShardReadOnly(s)
	}
	for _, d := range []string{s.walDir, s.segDir, s.quarDir} {
		if err := opts.FS.MkdirAll(d); err != nil {
			return nil, err
		}
	}
	if err := s.loadSegments(); err != nil {
		return nil, err
	}
	s.raiseQuarantined() // data set aside earlier is still missing from answers
	covered := uint64(0)
	for _, sg := range s.segs {
		covered = max(covered, sg.meta.walLast)
	}
	names, err := opts.FS.List(s.walDir)
	if err != nil {
		return nil, err
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
	s.head = newHead(opts.Now(), first, opts.MaxColumns)
	var replayed []uint64
	var damage []*WALCorruptError
	next := first
	for i, seq := range seqs {
		path := filepath.Join(s.walDir, walName(seq))
		if seq <= covered {
			if err := opts.FS.Remove(path); err != nil {
				return nil, err
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
				return nil, fmt.Errorf("shard %s: repair %s: %w", id, walRel(path), err)
			}
			if rep != nil {
				s.noteWALRepair(rep)
			}
		}
		var scratch []byte
		p, err := s.replayWAL(path, seq, tail, &scratch)
		if err != nil {
			return nil, fmt.Errorf("shard %s: replay: %w", id, err)
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
				return nil, err
			}
			if err := opts.FS.SyncDir(s.walDir); err != nil {
				return nil, err
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
	if len(damage) > 0 {
		return s.openWALDamaged(damage), nil
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

// openShardReadOnly loads a shard without changing its directory.
func openShardReadOnly(s *Shard) (*Shard, error) {
	opts := s.opts
	if err := s.loadSegments(); err != nil {
		return nil, err
	}
	covered := uint64(0)
	for _, sg := range s.segs {
		covered = max(covered, sg.meta.walLast)
	}
	s.head = newHead(opts.Now(), covered+1, opts.MaxColumns)
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
	for _, n := range names {
		if id, ok := parseSeqName(n, damageExt); ok {
			records[id] = true
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
	s.sortSegs()
	s.loadLost()
	return nil
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

func (s *Shard) sortSegs() {
	sort.Slice(s.segs, func(i, j int) bool {
		a, b := s.segs[i], s.segs[j]
		amin, _ := a.r.TimeRange()
		bmin, _ := b.r.TimeRange()
		if amin != bmin {
			return amin < bmin
		}
		return a.id < b.id
	})
}

// Append makes events durable (per the ack mode) and visible to queries.
// The events may alias the caller's buffers; they are copied. An event
// with more than Options.MaxEventFields fields is stored with its first
// ones (event.CapFields) and counted (FieldDrops); events are not changed.
// AppendBatch does the same for events encoded as they were decoded.
func (s *Shard) Append(ctx context.Context, events []event.Event) error {
	if len(events) == 0 {
		return nil
	}
	b, _ := batches.Get().(*Batch)
	if b == nil {
		b = new(Batch)
	}
	b.Reset()
	b.maxFields = s.opts.MaxEventFields // pooled batches serve every engine
	for i := range events {
		b.Add(&events[i])
	}
	err := s.AppendBatch(ctx, b)
	batches.Put(b)
	return err
}

// AppendBatch makes the events of b durable (per the ack mode) and
// visible to queries, as Append does. b must have been made by this
// shard's engine (Engine.NewBatch) and must not change until AppendBatch
// returns; the caller may Reset and reuse it then.
func (s *Shard) AppendBatch(ctx context.Context, b *Batch) error {
	if b.Len() == 0 {
		return nil
	}
	if b.maxFields != s.opts.MaxEventFields {
		return errForeignBatch
	}
	s.mu.RLock()
	failed := s.failed
	s.mu.RUnlock()
	if failed != nil {
		return failed
	}
	if err := s.eng.diskFullErr(); err != nil {
		return fmt.Errorf("shard %s: %w", s.id, err)
	}
	// The record is encoded before waiting for admission: the wait is for
	// the disk, and the CPU is better spent meanwhile.
	b.rec = b.appendRecords(b.rec[:0])
	if err := s.admit(ctx); err != nil {
		return err
	}
	req := &appendReq{rec: b.rec, batch: b, done: make(chan error, 1)}
	if err := s.enqueue(ctx, req); err != nil {
		return err
	}
	// Once queued, the batch will be committed; wait for it even if ctx
	// ends so the caller learns the outcome (and the batch is not reused
	// while the committer reads it).
	err := <-req.done
	if err == nil && b.cut > 0 {
		s.countEventFieldCap(b.cut, b.lost, b.firstCut)
	}
	return err
}

func (s *Shard) enqueue(ctx context.Context, req *appendReq) error {
	s.enqMu.RLock()
	defer s.enqMu.RUnlock()
	if s.enqClosed {
		return ErrClosed
	}
	select {
	case s.reqs <- req:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// committer serialises the write path: one write and (in sync mode) one
// fsync per group of queued batches, then head insertion in log order.
func (s *Shard) committer() {
	defer s.wg.Done()
	var buf []byte
	var group []*appendReq
	for {
		group = group[:0]
		select {
		case r := <-s.reqs:
			group = append(group, r)
		case <-s.stopping:
			// Drain what was queued before the stop: nothing more can come.
			for len(s.reqs) > 0 {
				group = append(group, <-s.reqs)
			}
			if len(group) > 0 {
				s.commitGuarded(group, &buf)
			}
			return
		}
		size := len(group[0].rec)
	drain:
		for size < 8<<20 {
			select {
			case r := <-s.reqs:
				group = append(group, r)
				size += len(r.rec)
			default:
				break drain
			}
		}
		s.commitGuarded(group, &buf)
	}
}

// commitGuarded runs commit, recovering a panic: the group is answered
// with an error and the shard refuses events from then on, since its log
// and head may no longer agree. The process and the other sources go on.
func (s *Shard) commitGuarded(group []*appendReq, bufp *[]byte) {
	defer func() {
		r := recover()
		if r == nil {
			return
		}
		perr := &PanicError{Task: taskNames[taskCommit], Value: r, Stack: debug.Stack()}
		s.recordTask(taskCommit, perr)
		err := fmt.Errorf("shard %s: internal error committing events: %w", s.id, perr)
		s.failWith(err, "committing events panicked (see the log for the stack); the source refuses events until the server restarts")
		for _, req := range group {
			select {
			case req.done <- err:
			default: // already answered
			}
		}
	}()
	s.commit(group, bufp)
}

func (s *Shard) commit(group []*appendReq, bufp *[]byte) {
	rotate := false
	for _, r := range group {
		rotate = rotate || r.rotate
	}
	now := s.opts.Now()
	s.mu.RLock()
	h := s.head
	s.mu.RUnlock()
	// Stage the events in the head first: that finds the events that need
	// a new head (see headcap.go), whose records must go to a new log file.
	plan, err := s.stage(h, group)
	if err != nil {
		// A batch that does not decode (a bug: Batch.Add encodes them):
		// nothing of the group is logged or kept.
		s.opts.Logger.Error("ingest: staging events failed; the requests are refused", "shard", s.id, "err", err)
		h.mu.Lock()
		h.truncate(plan.marks[0])
		h.mu.Unlock()
		for _, r := range group {
			r.done <- err
		}
		return
	}
	var dropped int64
	var published []eventRange
	done := 0 // heads whose records are logged and rows visible
	for k, hk := range plan.heads {
		if k > 0 {
			// Freezes the full head (its log file synced first) and makes
			// hk the shard's head, with a new log file.
			if err = s.rotate(now, false, hk); err != nil {
				break
			}
		}
		buf := plan.appendRecords((*bufp)[:0], k)
		*bufp = buf
		if len(buf) > 0 {
			// Refused while the disk is full; a failure other than a full
			// disk fails the shard (writeLog). Either way nothing of this
			// head's records may be acknowledged.
			err = s.writeLog(buf)
		}
		if err != nil {
			break
		}
		dropped += s.publishStaged(hk, plan.marks[k], now)
		published = append(published, plan.pieces[k]...)
		done = k + 1
	}
	if done < len(plan.heads) {
		// Take back the rows staged in the head that failed; heads after
		// it were never the shard's.
		hk := plan.heads[done]
		hk.mu.Lock()
		hk.truncate(plan.marks[done])
		hk.mu.Unlock()
	}
	s.countDroppedFields(dropped)
	n := 0
	for _, er := range published {
		n += er.to - er.from
	}
	s.stats.appended.Add(int64(n))
	if n > 0 {
		s.publish(published)
	}
	var rerr error
	if done == len(plan.heads) {
		h = plan.heads[done-1]
		h.mu.RLock()
		full := h.rows >= s.opts.HeadMaxRows || h.bytes >= s.opts.HeadMaxBytes
		mem := &s.eng.mem
		if active := mem.active.Load(); active > s.opts.HeadMemoryBudget && h.bytes >= s.opts.HeadIdleMinBytes &&
			int64(h.bytes)*mem.activeHeads.Load() >= active {
			// Over the engine's budget: freeze this head if it is at least
			// as big as the average, so the largest go first.
			full = true
		}
		old := h.rows > 0 && now.Sub(h.created) >= s.opts.HeadMaxAge
		rows := h.rows
		h.mu.RUnlock()
		if (full || old || rotate) && rows > 0 {
			rerr = s.rotate(now, full, nil)
		}
	}
	for i, r := range group {
		switch {
		case plan.last[i] >= done:
			// Not (wholly) logged. Events of it in earlier heads are
			// durable and visible: a retry may store them twice, which is
			// better than acknowledging what is not durable.
			r.done <- err
		case r.rotate && err != nil:
			r.done <- err
		case r.rotate:
			r.done <- rerr
		default:
			r.done <- nil
		}
	}
}

// publishStaged makes the rows staged in h visible and accounts for the
// memory they hold; m is h's state before the group. It returns the
// fields left out because they could not be stored.
func (s *Shard) publishStaged(h *head, m headMark, now time.Time) int64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := h.staged - m.staged
	h.publish()
	if n > 0 {
		h.updated = now
	}
	mem := &s.eng.mem
	if grown := int64(h.bytes - m.bytes); grown > 0 {
		if m.bytes == 0 {
			mem.activeHeads.Add(1)
		}
		mem.active.Add(grown)
		mem.total.Add(grown)
	}
	return h.droppedFields - m.droppedFields
}

// rotate freezes the head and starts a new WAL file for the next one,
// which is next when given (events staged for it by the committer) and
// else a new head. Called by the committer only. A head that filled up
// passes its column sizes on, so that the next one allocates once; one
// frozen for age or idleness does not, or a trickle would allocate for a
// flood.
func (s *Shard) rotate(now time.Time, full bool, next *head) error {
	s.mu.RLock()
	failed := s.failed
	s.mu.RUnlock()
	if failed != nil {
		// The log may end in a partial write: keep it the newest file, so
		// that only replay's torn-tail rule ever applies to it.
		return failed
	}
	if s.log.broken.Load() {
		// The head goes on in the file the next write creates.
		if err := s.eng.diskFullErr(); err != nil {
			return err
		}
		if err := s.resumeLog(); err != nil {
			return err
		}
	}
	seq := s.walSeq + 1
	// The frozen head's log becomes durable (buffered mode) before the next
	// file exists: only the newest log file may ever hold a torn tail.
	if err := s.wal.f.Sync(); err != nil {
		s.fail(fmt.Errorf("shard %s: write-ahead log sync: %w", s.id, err))
		return err
	}
	w, err := s.createLog(seq)
	if err != nil {
		return s.eng.noteNoSpace("creating a write-ahead log file", err)
	}
	err = s.swapLog(w, seq)
	s.mu.Lock()
	h := s.head
	h.mu.Lock()
	h.frozen = true
	h.walLast = seq - 1
	if h.bytes > 0 {
		s.eng.mem.active.Add(-int64(h.bytes))
		s.eng.mem.activeHeads.Add(-1)
	}
	h.mu.Unlock()
	s.frozen = append(s.frozen, h)
	if next == nil {
		next = newHead(now, seq, s.opts.MaxColumns)
		if full {
			next.sizes = h.sizeHints()
		}
	}
	next.created, next.walFirst, next.walLast = now, seq, seq
	s.head = next
	s.mu.Unlock()
	select {
	case s.flushKick <- struct{}{}:
	default:
	}
	return err
}

// fail stops the shard accepting events after a log write or sync failed:
// the log is in an unknown state, and nothing more may be acknowledged.
func (s *Shard) fail(err error) {
	s.failWith(err, "the write-ahead log could not be written or synced; the source refuses events until the server restarts")
}

// failWith is fail with the condition's detail for operators.
func (s *Shard) failWith(err error, detail string) {
	s.opts.Logger.Error("write-ahead log failed; shard stops accepting events", "shard", s.id, "err", err)
	s.mu.Lock()
	if s.failed == nil {
		s.failed = err
	}
	s.mu.Unlock()
	s.raiseCondition(Condition{Kind: ConditionWALFailed, RefusesIngest: true, Detail: detail})
}

// flusher writes frozen heads to segments, and freezes heads that got
// old. A failed flush is retried when its backoff ends.
func (s *Shard) flusher() {
	defer s.wg.Done()
	runLoop(s.opts, "flusher "+s.id, s.stopping, s.flushLoop)
}

func (s *Shard) flushLoop() {
	t := time.NewTimer(time.Second)
	defer t.Stop()
	for {
		select {
		case <-s.flushKick:
		case <-t.C:
			s.mu.RLock()
			h := s.head
			s.mu.RUnlock()
			now := s.opts.Now()
			h.mu.RLock()
			old := h.rows > 0 && now.Sub(h.created) >= s.opts.HeadMaxAge
			idle := h.bytes >= s.opts.HeadIdleMinBytes && now.Sub(h.updated) >= s.opts.HeadIdleFlush
			h.mu.RUnlock()
			if old || idle {
				s.requestRotate()
			}
		case <-s.stopping:
			return
		}
		if s.taskDue(taskFlush) {
			s.supervised(taskFlush, s.flushFrozen)
		}
		// Wake at the next second, or sooner for a retry.
		next := time.Second
		if d, failing := s.taskRetryIn(taskFlush); failing {
			next = min(next, max(d, time.Millisecond))
		}
		if !t.Stop() {
			select {
			case <-t.C:
			default:
			}
		}
		t.Reset(next)
	}
}

// requestRotate asks the committer to freeze the head; it waits for it.
func (s *Shard) requestRotate() error {
	req := &appendReq{rotate: true, done: make(chan error, 1)}
	if err := s.enqueue(context.Background(), req); err != nil {
		return err
	}
	return <-req.done
}

// Flush freezes the head (if it holds events) and writes every frozen head
// to a segment, returning when they are durable.
func (s *Shard) Flush() error {
	if s.opts.ReadOnly {
		return ErrReadOnly
	}
	if s.walDamage != nil {
		return s.walDamage
	}
	return s.supervised(taskFlush, func() error {
		s.mu.RLock()
		h := s.head
		s.mu.RUnlock()
		h.mu.RLock()
		rows := h.rows
		h.mu.RUnlock()
		if rows > 0 {
			if err := s.requestRotate(); err != nil {
				return err
			}
		}
		return s.flushFrozen()
	})
}

// flushFrozen writes the frozen heads, oldest first.
func (s *Shard) flushFrozen() error {
	s.flushMu.Lock()
	defer s.flushMu.Unlock()
	for {
		s.mu.RLock()
		if len(s.frozen) == 0 {
			s.mu.RUnlock()
			return nil
		}
		h := s.frozen[0]
		s.mu.RUnlock()
		if err := s.flushHead(h); err != nil {
			return err
		}
	}
}

// flushHead writes one frozen head as a segment, publishes it, and removes
// the head and its WAL files.
func (s *Shard) flushHead(h *head) error {
	v := h.view()
	s.mu.Lock()
	id := s.nextSeg
	s.nextSeg++
	s.mu.Unlock()
	meta := segMeta{walLast: h.walLast, created: s.opts.Now().UnixMicro()}
	var ref *segRef
	if v.rows > 0 {
		var err error
		ref, err = s.writeFlushSegment(id, v, meta)
		if err != nil {
			// The head stays frozen and in the log; the flush is retried.
			return s.eng.noteNoSpace("writing a segment", err)
		}
	}
	s.mu.Lock()
	if ref != nil {
		s.segs = append(s.segs, ref)
		s.sortSegs()
	}
	s.frozen = slices.DeleteFunc(s.frozen, func(x *head) bool { return x == h })
	s.noteRemoteLocked(ref, nil)
	s.mu.Unlock()
	s.deliverRemote()
	h.mu.RLock()
	s.eng.mem.total.Add(-int64(h.bytes))
	h.mu.RUnlock()
	s.eng.freed.release() // appends waiting for room (admission.go)
	s.stats.flushes.Add(1)
	for seq := h.walFirst; seq <= h.walLast; seq++ {
		p := filepath.Join(s.walDir, walName(seq))
		if s.opts.FS.Exists(p) {
			if err := s.opts.FS.Remove(p); err != nil {
				return err
			}
		}
	}
	return s.opts.FS.SyncDir(s.walDir)
}

// writeFlushSegment writes a frozen head's rows as segment id, holding
// one of the engine's flush slots (released however the write ends).
func (s *Shard) writeFlushSegment(id uint64, v *headView, meta segMeta) (*segRef, error) {
	s.eng.flushSlots <- struct{}{}
	defer func() { <-s.eng.flushSlots }()
	return s.writeSegment(id, newHeadSource(v, s.SortKey(), s.opts.BlockRows), meta, s.opts.ZstdLevel)
}

// close stops the goroutines; with flush it first writes the head out.
func (s *Shard) close(flush bool) error {
	if s.opts.ReadOnly || s.walDamage != nil {
		if s.walDamage != nil {
			s.closeSubs()
		}
		s.mu.Lock()
		for _, sg := range s.segs {
			sg.release()
		}
		s.segs = nil
		s.mu.Unlock()
		return nil
	}
	var err error
	if flush {
		err = s.Flush()
	}
	s.enqMu.Lock()
	already := s.enqClosed
	s.enqClosed = true
	s.enqMu.Unlock()
	if already {
		return err
	}
	close(s.stopping)
	s.wg.Wait()
	s.closeSubs()
	s.walMu.Lock()
	if s.wal != nil && s.log.broken.Load() {
		// Cut the partial write now rather than at the next start.
		if cerr := s.cutLog(); cerr != nil {
			s.opts.Logger.Warn("write-ahead log: cutting the partial write at close failed; the next start cuts it", "shard", s.id, "err", cerr)
		}
	}
	if s.wal != nil {
		if serr := s.wal.f.Sync(); err == nil && serr != nil {
			err = serr
		}
		if cerr := s.wal.close(); err == nil && cerr != nil {
			err = cerr
		}
		s.wal = nil
	}
	s.walMu.Unlock()
	s.mu.Lock()
	for _, sg := range s.segs {
		sg.release()
	}
	s.segs = nil
	// Heads not written out (a dropped shard, a failed flush) leave the
	// engine's accounting with the shard.
	mem := &s.eng.mem
	for _, h := range append([]*head{s.head}, s.frozen...) {
		h.mu.RLock()
		if b := int64(h.bytes); b > 0 {
			if !h.frozen {
				mem.active.Add(-b)
				mem.activeHeads.Add(-1)
			}
			mem.total.Add(-b)
		}
		h.mu.RUnlock()
	}
	s.head = newHead(s.opts.Now(), s.walSeq, s.opts.MaxColumns)
	s.frozen = nil
	s.mu.Unlock()
	s.eng.freed.release() // other shards' appends may fit now
	return err
}

// SetRetentionDays sets how long events are kept (0 = forever).
func (s *Shard) SetRetentionDays(days int) { s.retentionDays.Store(int64(days)) }

// ID returns the shard's source id.
func (s *Shard) ID() string { return s.id }
