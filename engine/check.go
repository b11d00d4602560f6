package engine

import (
	"errors"
	"fmt"
	iofs "io/fs"
	"path/filepath"
	"strings"
	"time"

	"github.com/RoaringBitmap/roaring/v2"

	"github.com/sediment/sediment/event"
	"github.com/sediment/sediment/index"
	"github.com/sediment/sediment/internal/vec"
	"github.com/sediment/sediment/internal/vfs"
	"github.com/sediment/sediment/segment"
)

// Check verifies a shard: every segment unit's checksum and decoding, time
// bounds, that each index agrees exactly with the columns it indexes, and
// that every WAL record still decodes (only the newest log file may end in
// a torn record). Segment metadata was decoded when the segment opened.
// It returns all problems found, joined (see CheckProblems).
func (s *Shard) Check() error { return errors.Join(s.CheckProblems()...) }

// CheckProblems is Check's problems one by one, each naming files relative
// to the source's directory: *SegmentDamageError for segments,
// *WALCorruptError and *WALVersionError for the log, and what a read-only
// open found (the same damage is listed once). Blocks already set aside
// are not problems: they are in the shard's record of lost data
// (ShardInfo.Lost).
func (s *Shard) CheckProblems() (problems []error) {
	// A panic while checking (a bug a damaged file may trigger) is a
	// problem of this source, not the end of fsck's run over the others.
	defer func() {
		if r := recover(); r != nil {
			problems = append(problems, fmt.Errorf("checking the source panicked (an internal error): %v", r))
		}
	}()
	return s.checkProblems()
}

func (s *Shard) checkProblems() []error {
	sn := s.ownSnapshot()
	defer sn.Release()
	var errs []error
	seen := map[string]bool{}
	add := func(err error) {
		if err != nil && !seen[err.Error()] {
			seen[err.Error()] = true
			errs = append(errs, err)
		}
	}
	s.mu.RLock()
	for _, err := range s.openProblems {
		add(err)
	}
	s.mu.RUnlock()
	ids := map[uint64]bool{}
	for _, sg := range sn.segs {
		if ids[sg.id] {
			add(fmt.Errorf("segment %d listed twice", sg.id))
		}
		ids[sg.id] = true
		if sg.remote != nil {
			// Evicted: its copy in the store was checked (CRC-32C) when
			// it was uploaded; checking it here would fetch it whole.
			continue
		}
		for _, err := range checkSegment(sg) {
			add(err)
		}
	}
	names, err := s.opts.FS.List(s.walDir)
	if err != nil && !errors.Is(err, iofs.ErrNotExist) {
		add(err)
	}
	lastSeq, covered := uint64(0), uint64(0)
	for _, n := range names {
		if seq, ok := parseSeqName(n, ".wal"); ok {
			lastSeq = max(lastSeq, seq)
		}
	}
	for _, sg := range sn.segs {
		covered = max(covered, sg.meta.walLast)
	}
	for _, n := range names {
		seq, ok := parseSeqName(n, ".wal")
		if !ok || seq <= covered {
			continue // written out to segments: startup deletes it unread
		}
		// The newest file may end mid-group while being written, which is
		// not damage; a sealed file was synced whole before the next began.
		tail := tailError
		if seq == lastSeq {
			tail = tailKeep
		}
		data, err := vfs.ReadFile(s.opts.FS, filepath.Join(s.walDir, n))
		if errors.Is(err, iofs.ErrNotExist) {
			continue // flushed and removed meanwhile
		}
		if err != nil {
			add(err)
			continue
		}
		p, err := parseWAL(data, filepath.Join("wal", n), tail, func([]event.Event) error { return nil })
		if err != nil {
			add(err)
			continue
		}
		for _, d := range p.damage {
			add(d)
		}
	}
	return errs
}

// SegmentReadError is a segment (or a block of it) that could not be read
// while checking it (an I/O error, segment.ErrRead): not known to be
// damaged, and nothing is set aside for it.
type SegmentReadError struct {
	File  string // relative to the source's directory: segments/<id>.seg
	Block int    // the block, or -1 for the segment's other sections
	Err   error
}

func (e *SegmentReadError) Error() string {
	what := e.File
	if e.Block >= 0 {
		what = fmt.Sprintf("%s: block %d", e.File, e.Block)
	}
	return fmt.Sprintf("%s could not be read (%v); it is not known to be damaged: check the disk, then run the check again", what, e.Err)
}

func (e *SegmentReadError) Unwrap() error { return e.Err }

// readFailure reports whether err is a failed read rather than damage.
func readFailure(err error) bool {
	return errors.Is(err, segment.ErrRead) && !errors.Is(err, segment.ErrCorrupt)
}

// SegmentDamageError is damage found in a segment: what unit, and what
// setting it aside loses.
type SegmentDamageError struct {
	File string // relative to the source's directory: segments/<id>.seg
	// Unit is what is damaged: "block" (a data page or dictionary),
	// "index" (nothing is lost: queries scan the segment without it),
	// "segment" (header, trailer, footer or metadata: all of it), or
	// "check" (a consistency check across units failed).
	Unit          string
	Block, Blocks int   // the block, for Unit "block"
	Events        int64 // what setting the unit aside loses; -1 unknown
	Err           error
}

func (e *SegmentDamageError) Error() string {
	switch e.Unit {
	case "block":
		return fmt.Sprintf("%s: block %d of %d (%s events): %s", e.File, e.Block, e.Blocks, thousands(e.Events), causeText(e.Err))
	case "index":
		return fmt.Sprintf("%s: index: %s", e.File, causeText(e.Err))
	case "segment":
		if e.Events < 0 {
			return fmt.Sprintf("%s: unreadable (%s); how many events it holds is unknown", e.File, causeText(e.Err))
		}
		return fmt.Sprintf("%s: unreadable (%s); it holds %s events", e.File, causeText(e.Err), thousands(e.Events))
	}
	return fmt.Sprintf("%s: %s", e.File, causeText(e.Err))
}

func (e *SegmentDamageError) Unwrap() error { return e.Err }

// checkSegment checks every block not already set aside, the sections,
// the time bounds and the index.
func checkSegment(sg *segRef) []error {
	r := sg.r
	file := filepath.Join("segments", segName(sg.id))
	var errs []error
	var skip roaring.Bitmap // rows of blocks set aside or found damaged now
	for b := 0; b < r.NumBlocks(); b++ {
		bi := r.Block(b)
		if _, ok := sg.damaged(b); ok {
			skip.AddRange(uint64(bi.FirstRow), uint64(bi.FirstRow+bi.Rows))
			continue
		}
		if err := r.CheckBlock(b); readFailure(err) {
			errs = append(errs, &SegmentReadError{File: file, Block: b, Err: err})
			skip.AddRange(uint64(bi.FirstRow), uint64(bi.FirstRow+bi.Rows))
		} else if err != nil {
			errs = append(errs, &SegmentDamageError{File: file, Unit: "block", Block: b, Blocks: r.NumBlocks(), Events: int64(bi.Rows), Err: err})
			skip.AddRange(uint64(bi.FirstRow), uint64(bi.FirstRow+bi.Rows))
		}
	}
	if err := r.CheckSections(); readFailure(err) {
		errs = append(errs, &SegmentReadError{File: file, Block: -1, Err: err})
	} else if err != nil {
		unit := "segment"
		if ce := (*segment.CorruptError)(nil); errors.As(err, &ce) && ce.Section == "section "+sectionIndex {
			unit = "index"
		}
		errs = append(errs, &SegmentDamageError{File: file, Unit: unit, Events: int64(r.Rows()), Err: err})
	}
	fail := func(format string, args ...any) error {
		return &SegmentDamageError{File: file, Unit: "check", Err: &segment.CorruptError{Path: file, Offset: -1, Section: "check", Err: fmt.Errorf(format, args...)}}
	}
	minT, maxT := r.TimeRange()
	lo, hi := r.Block(0).MinTime, r.Block(0).MaxTime
	for b := 0; b < r.NumBlocks(); b++ {
		bi := r.Block(b)
		if bi.MinTime < minT || bi.MaxTime > maxT {
			return append(errs, fail("block %d time range outside the segment's", b))
		}
		lo, hi = min(lo, bi.MinTime), max(hi, bi.MaxTime)
	}
	if lo != minT || hi != maxT {
		return append(errs, fail("segment time range does not match its blocks"))
	}
	if err := checkBlockKeys(sg, &skip); readFailure(err) {
		return append(errs, &SegmentReadError{File: file, Block: -1, Err: err})
	} else if err != nil {
		var ce *segment.CorruptError
		if errors.As(err, &ce) && r.BlockAt(ce.Offset) >= 0 {
			return errs // a column failed to read: that block is reported
		}
		return append(errs, fail("%v", err))
	}
	ix, err := sg.index()
	if readFailure(err) {
		return append(errs, &SegmentReadError{File: file, Block: -1, Err: err})
	} else if err != nil {
		return append(errs, &SegmentDamageError{File: file, Unit: "index", Err: err})
	}
	if ix == nil {
		return errs
	}
	for _, f := range ix.Fields() {
		if err := checkIndexField(sg, ix, f, &skip); readFailure(err) {
			return append(errs, &SegmentReadError{File: file, Block: -1, Err: err})
		} else if err != nil {
			var ce *segment.CorruptError
			if errors.As(err, &ce) && r.BlockAt(ce.Offset) >= 0 {
				return errs // a column failed to read: that block is reported
			}
			return append(errs, &SegmentDamageError{File: file, Unit: "index", Err: err})
		}
	}
	return errs
}

// checkBlockKeys verifies what the meta section says of the blocks of a
// segment ordered by a sort key: every row of a block of one key value
// has that value.
func checkBlockKeys(sg *segRef, skip *roaring.Bitmap) error {
	r, m := sg.r, &sg.meta
	if m.sortKey == "" {
		return nil
	}
	col := r.Column(m.sortKey, segment.TypeString)
	var v vec.Vector
	for b, bk := range m.blocks {
		bi := r.Block(b)
		if !bk.single || skip.Contains(uint32(bi.FirstRow)) {
			continue
		}
		if col < 0 {
			return fmt.Errorf("block %d: said to hold key %s values only, but there is no %s column", b, m.sortKey, m.sortKey)
		}
		if err := r.ReadColumnOnce(b, col, 0, bi.Rows, &v); err != nil {
			return err
		}
		for i := 0; i < bi.Rows; i++ {
			if v.IsNull(i) || v.StringAt(i) != bk.key {
				return fmt.Errorf("block %d: row %d is not of the one key value the meta section gives", b, i)
			}
		}
	}
	return nil
}

// errIndexDisagrees marks an index whose postings differ from its column.
var errIndexDisagrees = errors.New("index disagrees with the column")

// checkIndexField recomputes a field's postings from its column and
// compares them with the index.
func checkIndexField(sg *segRef, ix *index.Index, f index.FieldInfo, skip *roaring.Bitmap) error {
	r := sg.r
	var ct segment.ColType
	switch f.Kind {
	case index.KindInt:
		ct = segment.TypeInt64
	case index.KindBool:
		ct = segment.TypeBool
	default:
		ct = segment.TypeString
	}
	col := r.Column(f.Path, ct)
	if col < 0 {
		return &segment.CorruptError{Path: filepath.Join("segments", segName(sg.id)), Offset: -1, Section: "index", Err: fmt.Errorf("index field %s(%s) has no column: %w", f.Path, f.Kind, errIndexDisagrees)}
	}
	want := map[any]*roaring.Bitmap{}
	// Tokens longer than index.MaxTokenLen: each row holding one is in the
	// postings of its term or, past the index's cap on such terms, in the
	// long rows; so are the rows of long tokens of hex digits only.
	wantLong := map[string]*roaring.Bitmap{}
	long, anyLong := roaring.New(), roaring.New()
	add := func(term any, row uint32) {
		bm := want[term]
		if bm == nil {
			bm = roaring.New()
			want[term] = bm
		}
		bm.Add(row)
	}
	var v vec.Vector
	for b := 0; b < r.NumBlocks(); b++ {
		bi := r.Block(b)
		if skip.Contains(uint32(bi.FirstRow)) {
			continue // set aside: the index may list its rows
		}
		if err := r.ReadColumnOnce(b, col, 0, bi.Rows, &v); err != nil {
			return err
		}
		for i := 0; i < bi.Rows; i++ {
			if v.IsNull(i) {
				continue
			}
			row := uint32(bi.FirstRow + i)
			switch f.Kind {
			case index.KindInt:
				add(v.Ints[i], row)
			case index.KindBool:
				add(v.Bools[i], row)
			case index.KindString:
				add(v.StringAt(i), row)
			case index.KindToken:
				index.Tokenize(v.StringAt(i), func(tok string) {
					switch {
					case len(tok) > index.MaxTokenLen && index.IsOpaqueToken(tok):
						long.Add(row)
						anyLong.Add(row)
					case len(tok) > index.MaxTokenLen:
						bm := wantLong[tok]
						if bm == nil {
							bm = roaring.New()
							wantLong[strings.Clone(tok)] = bm
						}
						bm.Add(row)
						anyLong.Add(row)
					case !index.IsOpaqueToken(tok):
						add(tok, row)
					}
				})
			}
		}
	}
	got := 0
	file := filepath.Join("segments", segName(sg.id))
	disagree := func(format string, args ...any) error {
		return &segment.CorruptError{Path: file, Offset: -1, Section: "index",
			Err: fmt.Errorf("%s: %w", fmt.Sprintf(format, args...), errIndexDisagrees)}
	}
	covered := map[string]*roaring.Bitmap{} // rows of long tokens their terms hold
	err := ix.ForEachTerm(f.Path, f.Kind, func(term any, rows *roaring.Bitmap) error {
		if s, ok := term.(string); ok && f.Kind == index.KindToken && len(s) > index.MaxTokenLen {
			w := wantLong[s]
			if w == nil {
				if skip.IsEmpty() {
					return disagree("field %s: a long term the column lacks is indexed", f.Path)
				}
				return nil
			}
			if rows == nil { // frequent: holds every row of the token
				covered[s] = w
				return nil
			}
			rows = roaring.AndNot(rows, skip)
			if !roaring.AndNot(rows, w).IsEmpty() {
				return disagree("field %s: postings of a long term list rows without it", f.Path)
			}
			covered[s] = rows
			return nil
		}
		w := want[term]
		if rows == nil { // a frequent token: no postings kept
			switch {
			case w != nil:
				got++
			case skip.IsEmpty():
				return disagree("field %s(%s): a term the column lacks is indexed", f.Path, f.Kind)
			}
			return nil
		}
		if !skip.IsEmpty() {
			rows = roaring.AndNot(rows, skip)
			if rows.IsEmpty() && w == nil {
				return nil // only rows set aside held it
			}
		}
		got++
		if w == nil || !w.Equals(rows) {
			return disagree("field %s(%s): postings of a term disagree with the column", f.Path, f.Kind)
		}
		return nil
	})
	if err != nil {
		return err
	}
	if got != len(want) {
		return disagree("field %s(%s): %d terms indexed, column has %d", f.Path, f.Kind, got, len(want))
	}
	if f.Kind == index.KindToken {
		lr, err := ix.LongRows(f.Path)
		if err != nil {
			return err
		}
		if lr == nil {
			lr = roaring.New()
		}
		lr = roaring.AndNot(lr, skip)
		// Every row of a long token its term does not hold is a long row,
		// and long rows hold a long token.
		for tok, w := range wantLong {
			long.Or(roaring.AndNot(w, coveredOrEmpty(covered[tok])))
		}
		if !roaring.AndNot(long, lr).IsEmpty() || !roaring.AndNot(lr, anyLong).IsEmpty() {
			return disagree("field %s: long-token rows disagree", f.Path)
		}
	}
	return nil
}

func coveredOrEmpty(bm *roaring.Bitmap) *roaring.Bitmap {
	if bm == nil {
		return roaring.New()
	}
	return bm
}

// Check verifies every shard (see Shard.Check).
func (e *Engine) Check() error {
	var errs []error
	for _, s := range e.Shards() {
		if err := s.Check(); err != nil {
			errs = append(errs, fmt.Errorf("shard %s: %w", s.id, err))
		}
	}
	return errors.Join(errs...)
}

// ShardInfo summarises a shard for operators (fsck, status).
type ShardInfo struct {
	ID       string
	Segments int
	// SegmentRows and HeadRows (events in memory: the head and heads
	// being flushed) count the events within the source's retention, and
	// MinTime and MaxTime bound their times (unix µs): what queries see.
	// ExpiredRows are the events past retention still stored, until
	// retention removes them; nothing shows them.
	SegmentRows  int
	SegmentBytes int64
	HeadRows     int
	MinTime      int64
	MaxTime      int64
	ExpiredRows  int
	// EvictedSegments and EvictedBytes are the segments (of Segments and
	// SegmentBytes) whose local file was evicted, read from object
	// storage (remoteseg.go); PendingRemote those not opened yet (the
	// store away), which answers say they miss. Evictions counts
	// evictions since the shard opened.
	EvictedSegments int
	EvictedBytes    int64
	PendingRemote   int
	Evictions       int64

	// HeadBytes is the memory the HeadRows events take (the figure the heads'
	// size bounds and the engine's head memory budget count).
	HeadBytes int64
	// Flushes and Compactions count heads written out and compactions
	// done since the shard opened. CompactionBacklog is the segments
	// compaction would rewrite if it ran now: those in runs it would merge
	// and those waiting to be rewritten without damaged blocks.
	Flushes           int64
	Compactions       int64
	CompactionBacklog int
	// Quarantined counts segment files moved to quarantine/ since the
	// shard opened.
	Quarantined int64
	// What answers no longer include, as recorded on disk (segments/*.dmg
	// and quarantine/): whole segments and blocks set aside, the events
	// they held where known, and the segments whose size is unknown. Lost
	// lists them.
	QuarantinedSegments int64
	QuarantinedBlocks   int64
	QuarantinedEvents   int64
	QuarantinedUnknown  int64
	Lost                []LostData
	// DamagedIndexes counts segment indexes found damaged since the shard
	// opened (queries scan those segments without them; nothing is lost).
	DamagedIndexes int64
	WALBytesCut    int64 // torn-tail bytes cut at startup
	// WALDamage is the damage that keeps the source read-only until its
	// log is repaired (nil when none); the WAL counters say what repairs
	// dropped since the shard opened.
	WALDamage         []*WALCorruptError
	WALRecordsDropped int64
	WALBytesDropped   int64
	WALEventsDropped  int64
	// Fields not stored since the shard opened (see FieldDrops).
	DroppedFields      int64
	EventsOverFieldCap int64
	FieldsOverEventCap int64
	// Retention since the shard opened: segments deleted whole, segments
	// rewritten without their expired rows, and the rows so dropped.
	SegmentsPurged    int64
	SegmentsRewritten int64
	RowsExpired       int64
	// Background counts each background task's failures and panics since
	// the shard opened, and says which are failing now.
	Background []TaskStats
	// LogSync describes buffered mode's periodic fsyncs (zero in sync
	// mode, where every acknowledged batch was fsynced first).
	LogSync LogSyncStats
	// Warnings are problems an open found and left alone (a read-only
	// open: damage it did not set aside or repair).
	Warnings []string
}

// headBytes returns the bytes held by the shard's heads: the one taking
// events and those waiting to be flushed.
func (s *Shard) headBytes() int64 {
	s.mu.RLock()
	heads := make([]*head, 0, len(s.frozen)+1)
	heads = append(append(heads, s.frozen...), s.head)
	s.mu.RUnlock()
	var n int64
	for _, h := range heads {
		h.mu.RLock()
		n += int64(h.bytes)
		h.mu.RUnlock()
	}
	return n
}

// LostData is one unit of stored data set aside as damaged.
type LostData struct {
	Segment string // the segment's file name, <id>.seg
	Block   int    // -1 for the whole segment
	Events  int64  // -1 when unknown
	// MinTime and MaxTime bound its events (unix µs); both 0 when unknown.
	MinTime, MaxTime int64
	Found            time.Time
	Cause            string
	// InUse: the segment is still in use with the block skipped (a
	// compaction rewrites it without); otherwise it is in quarantine/.
	InUse bool
}

// Info describes the shard as it is now.
func (s *Shard) Info() ShardInfo {
	sn := s.ownSnapshot()
	defer sn.Release()
	s.mu.RLock()
	var warnings []string
	for _, err := range s.openProblems {
		warnings = append(warnings, err.Error())
	}
	s.mu.RUnlock()
	in := ShardInfo{ID: s.id, Quarantined: s.stats.quarantined.Load(), WALBytesCut: s.stats.walBytesCut.Load(),
		Warnings: warnings, DamagedIndexes: s.stats.indexesDamaged.Load(),
		WALRecordsDropped: s.stats.walRecordsDropped.Load(), WALBytesDropped: s.stats.walBytesDropped.Load(),
		WALEventsDropped: s.stats.walEventsDropped.Load(),
		SegmentsPurged:   s.stats.segmentsPurged.Load(), SegmentsRewritten: s.stats.segmentsRewritten.Load(),
		RowsExpired: s.stats.rowsExpired.Load(), Background: s.taskStats(), LogSync: s.logSyncStats(),
		Flushes: s.stats.flushes.Load(), Compactions: s.stats.compactions.Load(),
		HeadBytes: s.headBytes(), CompactionBacklog: s.compactionBacklog()}
	fd := s.FieldDrops()
	in.DroppedFields, in.EventsOverFieldCap, in.FieldsOverEventCap = fd.Unstorable, fd.EventsOverCap, fd.FieldsOverCap
	if s.walDamage != nil {
		in.WALDamage = s.walDamage.Damage
	}
	in.QuarantinedSegments, in.QuarantinedBlocks, in.QuarantinedEvents, in.QuarantinedUnknown = s.lossCounts()
	addLost := func(u lostUnit, inUse bool) {
		if u.pending {
			return // not set aside: a read-only open found it (a problem of Check)
		}
		ld := LostData{Segment: segName(u.seg), Block: -1, Events: u.rows, Found: time.UnixMicro(u.found).UTC(), Cause: u.cause, InUse: inUse}
		if u.kind == lossBlock {
			ld.Block = u.block
		}
		if u.timeKnown {
			ld.MinTime, ld.MaxTime = u.minTime, u.maxTime
		}
		in.Lost = append(in.Lost, ld)
	}
	for _, u := range sn.lost {
		addLost(u, false)
	}
	for _, sg := range sn.segs {
		for _, u := range sg.damagedBlocks() {
			addLost(u, true)
		}
	}
	for _, sg := range sn.segs {
		in.Segments++
		in.SegmentBytes += sg.r.Size()
		if sg.remote != nil {
			in.EvictedSegments++
			in.EvictedBytes += sg.r.Size()
		}
	}
	s.mu.RLock()
	in.PendingRemote = len(s.remotePending)
	s.mu.RUnlock()
	in.Evictions = s.stats.evicted.Load()
	lr := sn.liveRows()
	in.SegmentRows, in.HeadRows, in.ExpiredRows = lr.segRows, lr.headRows, lr.expired
	if lr.ok {
		in.MinTime, in.MaxTime = lr.minTime, lr.maxTime
	}
	return in
}
