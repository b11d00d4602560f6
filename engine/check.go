package engine

import (
	"errors"
	"fmt"
	iofs "io/fs"
	"path/filepath"

	"github.com/RoaringBitmap/roaring/v2"

	"github.com/sediment/sediment/event"
	"github.com/sediment/sediment/index"
	"github.com/sediment/sediment/internal/vec"
	"github.com/sediment/sediment/segment"
)

// Check verifies a shard: every segment unit's checksum and decoding, time
// bounds, that each index agrees exactly with the columns it indexes, and
// that every WAL record still decodes (only the newest log file may end in
// a torn record). Segment metadata was decoded when the segment opened.
// It returns all problems found, joined.
func (s *Shard) Check() error {
	sn := s.Snapshot()
	defer sn.Release()
	var errs []error
	seen := map[uint64]bool{}
	for _, sg := range sn.segs {
		if seen[sg.id] {
			errs = append(errs, fmt.Errorf("segment %d listed twice", sg.id))
		}
		seen[sg.id] = true
		if err := checkSegment(sg); err != nil {
			errs = append(errs, err)
		}
	}
	names, err := s.opts.FS.List(s.walDir)
	if err != nil {
		errs = append(errs, err)
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
		_, err := walReplay(s.opts.FS, filepath.Join(s.walDir, n), tail, func([]event.Event) error { return nil })
		if err != nil && !errors.Is(err, iofs.ErrNotExist) { // flushed and removed meanwhile
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

func checkSegment(sg *segRef) error {
	r := sg.r
	if err := r.Check(); err != nil {
		return err
	}
	fail := func(format string, args ...any) error {
		return &segment.CorruptError{Path: sg.path, Offset: -1, Section: "check", Err: fmt.Errorf(format, args...)}
	}
	minT, maxT := r.TimeRange()
	lo, hi := r.Block(0).MinTime, r.Block(0).MaxTime
	for b := 0; b < r.NumBlocks(); b++ {
		bi := r.Block(b)
		if bi.MinTime < minT || bi.MaxTime > maxT {
			return fail("block %d time range outside the segment's", b)
		}
		lo, hi = min(lo, bi.MinTime), max(hi, bi.MaxTime)
	}
	if lo != minT || hi != maxT {
		return fail("segment time range does not match its blocks")
	}
	ix, err := sg.index()
	if err != nil {
		return err
	}
	if ix == nil {
		return nil
	}
	for _, f := range ix.Fields() {
		if err := checkIndexField(sg, ix, f); err != nil {
			return err
		}
	}
	return nil
}

// checkIndexField recomputes a field's postings from its column and
// compares them with the index.
func checkIndexField(sg *segRef, ix *index.Index, f index.FieldInfo) error {
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
		return &segment.CorruptError{Path: sg.path, Offset: -1, Section: "index", Err: fmt.Errorf("index field %s(%s) has no column", f.Path, f.Kind)}
	}
	want := map[any]*roaring.Bitmap{}
	long := roaring.New()
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
					case len(tok) > index.MaxTokenLen:
						long.Add(row)
					case !index.IsOpaqueToken(tok):
						add(tok, row)
					}
				})
			}
		}
	}
	got := 0
	err := ix.ForEachTerm(f.Path, f.Kind, func(term any, rows *roaring.Bitmap) error {
		got++
		w := want[term]
		if rows == nil && w != nil {
			return nil // a frequent token: no postings kept
		}
		if w == nil || !w.Equals(rows) {
			return &segment.CorruptError{Path: sg.path, Offset: -1, Section: "index",
				Err: fmt.Errorf("field %s(%s): postings of a term disagree with the column", f.Path, f.Kind)}
		}
		return nil
	})
	if err != nil {
		return err
	}
	if got != len(want) {
		return &segment.CorruptError{Path: sg.path, Offset: -1, Section: "index",
			Err: fmt.Errorf("field %s(%s): %d terms indexed, column has %d", f.Path, f.Kind, got, len(want))}
	}
	if f.Kind == index.KindToken {
		lr, err := ix.LongRows(f.Path)
		if err != nil {
			return err
		}
		if lr == nil {
			lr = roaring.New()
		}
		if !lr.Equals(long) {
			return &segment.CorruptError{Path: sg.path, Offset: -1, Section: "index", Err: fmt.Errorf("field %s: long-token rows disagree", f.Path)}
		}
	}
	return nil
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
	ID           string
	Segments     int
	SegmentRows  int
	SegmentBytes int64
	HeadRows     int // events in memory (head and heads being flushed)
	MinTime      int64
	MaxTime      int64
	Quarantined  int64 // segments moved aside since the shard opened
	WALBytesCut  int64 // torn-tail bytes cut at startup
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
	LogSync  LogSyncStats
	Warnings []string
}

// Info describes the shard as it is now.
func (s *Shard) Info() ShardInfo {
	sn := s.Snapshot()
	defer sn.Release()
	s.mu.RLock()
	warnings := append([]string(nil), s.readOnlyWarnings...)
	s.mu.RUnlock()
	in := ShardInfo{ID: s.id, Quarantined: s.stats.quarantined.Load(), WALBytesCut: s.stats.walBytesCut.Load(),
		Warnings:       warnings,
		SegmentsPurged: s.stats.segmentsPurged.Load(), SegmentsRewritten: s.stats.segmentsRewritten.Load(),
		RowsExpired: s.stats.rowsExpired.Load(), Background: s.taskStats(), LogSync: s.logSyncStats()}
	fd := s.FieldDrops()
	in.DroppedFields, in.EventsOverFieldCap, in.FieldsOverEventCap = fd.Unstorable, fd.EventsOverCap, fd.FieldsOverCap
	first := true
	note := func(lo, hi int64) {
		if first || lo < in.MinTime {
			in.MinTime = lo
		}
		if first || hi > in.MaxTime {
			in.MaxTime = hi
		}
		first = false
	}
	for _, sg := range sn.segs {
		in.Segments++
		in.SegmentRows += sg.r.Rows()
		in.SegmentBytes += sg.r.Size()
		note(sg.r.TimeRange())
	}
	for _, h := range sn.heads {
		in.HeadRows += h.rows
		if h.rows > 0 {
			note(h.minTime, h.maxTime)
		}
	}
	return in
}
