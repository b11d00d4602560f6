package engine

import (
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"sync"
	"sync/atomic"

	"github.com/sediment/sediment/index"
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

	// headParts keeps the heads' parts encoded for query nodes (headparts.go).
	headParts headPartCache

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

	// deriveHints are shared by the shard's segment writers (flushes
	// and compactions): see segment.DeriveHints. Nil: none.
	deriveHints *segment.DeriveHints

	// mu guards the head pointer, frozen heads and the segment list.
	mu      sync.RWMutex
	head    *head
	frozen  []*head
	segs    []*segRef // sorted by minTime, then id
	nextSeg uint64
	remote  remoteQueue // changes of segs for Options.Remote
	// remotePending are evicted segments not opened yet (remoteseg.go).
	remotePending []*pendingRemote
	adoptMu       sync.Mutex // one AdoptRemoteSegments at a time
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
	// replayFailed is set when recovering the shard at open panicked: the
	// shard serves its segments and writes nothing (replayguard.go).
	replayFailed *ReplayFailedError

	flushKick chan struct{}
	flushMu   sync.Mutex // one flush at a time
	compactMu sync.Mutex // one compaction at a time
	// skipEvictedUntil (unix µs, Options.Now's clock) is set when a
	// compaction failed with an evicted input: until then, runs are cut at
	// evicted segments so that the store being away holds up no merge of
	// local ones (compact.go).
	skipEvictedUntil atomic.Int64

	// Retention in days; 0 keeps everything.
	retentionDays atomic.Int64
	// maxDiskBytes caps the bytes of the shard's segments (0: no cap), and
	// deleted counts what retention and the size caps deleted (sizecap.go).
	maxDiskBytes atomic.Int64
	deleted      deletionCounters
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

	// recentPreds are the text predicates queries used lately, warmed on
	// new segments (predwarm.go).
	recentPreds recentPreds
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
	evicted           atomic.Int64 // local files dropped for their copy in object storage
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
	// Text fields whose token index a merge took from its inputs' indexes
	// (see mergeindex.go).
	textIndexMerges atomic.Int64
	// Inputs whose text values such a merge read again to recover tokens'
	// rows, its recovery not having found them as the merge went by.
	textValuesReread atomic.Int64
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

	// ixMu guards the index, opened on first use (ixDone).
	ixMu   sync.Mutex
	ixDone bool
	ix     *index.Index
	ixErr  error
	// ixBroken: the index failed to read; scans go without it.
	ixBroken atomic.Bool
	// dmg is the set of the segment's blocks found damaged (nil: none).
	dmg atomic.Pointer[blockDamage]

	colsOnce sync.Once
	byPath   map[string][]colRef

	// cacheID is the segment's number in the predicate cache
	// (predcache.go).
	cacheID atomic.Uint64

	// extRelease, set for a segment of Options.External, replaces the
	// close and removal of a local file (external.go).
	extRelease func()
	// remote is set for an evicted segment: r reads its copy in object
	// storage and path is its stub (remoteseg.go).
	remote *remoteCopy
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
		if s.ixBroken.Load() {
			s.shard.removeIndexDamage(s.id)
		}
	}
}

// index returns the segment's index (nil if it has none), opened once.
// A read failure (segment.ErrRead: the disk or the store did not answer)
// is returned without being kept, so the next query reads it again;
// anything else the index says is kept for the segment's life.
func (s *segRef) index() (*index.Index, error) {
	if s.remote != nil {
		return s.remoteIndex()
	}
	s.ixMu.Lock()
	defer s.ixMu.Unlock()
	if s.ixDone {
		return s.ix, s.ixErr
	}
	dir, err := s.r.Section(sectionIndex)
	var ix *index.Index
	if err == nil && dir != nil {
		ix, err = index.Open(dir, s.r)
	}
	switch {
	case errors.Is(err, segment.ErrRead):
		return nil, err
	case errors.Is(err, index.ErrUnsupportedVersion):
		// Queries scan this segment instead; a compaction rewrites it.
		s.shard.opts.Logger.Warn("segment index in an unknown format version; scanning instead", "shard", s.shard.id, "segment", s.id, "err", err)
		ix, err = nil, nil
	case err != nil && !errors.Is(err, segment.ErrCorrupt):
		err = &segment.CorruptError{Path: filepath.Join("segments", segName(s.id)), Offset: -1, Section: "index", Err: err}
	}
	s.ix, s.ixErr, s.ixDone = ix, err, true
	return s.ix, s.ixErr
}

func segName(id uint64) string { return fmt.Sprintf("%016x.seg", id) }

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

// SetRetentionDays sets how long events are kept (0 = forever).
func (s *Shard) SetRetentionDays(days int) { s.retentionDays.Store(int64(days)) }

// ID returns the shard's source id.
func (s *Shard) ID() string { return s.id }
