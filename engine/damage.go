package engine

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/sediment/sediment/internal/vfs"
	"github.com/sediment/sediment/segment"
)

// Damage records: what of a segment's events answers no longer include.
//
// A segment found damaged loses the smallest unit the format allows: one
// block when a data page or a dictionary of that block fails its checksum
// or does not decode; the whole segment when its header, trailer, footer or
// engine metadata is damaged (nothing of it can be placed). A damaged index
// loses nothing: queries scan the segment without it.
//
// A record <id>.dmg lists the lost units of segment <id>. It lives
//
//   - in segments/, beside a segment still in use whose damaged blocks
//     readers skip (they honour it after a restart too);
//   - in quarantine/, beside the original file of a segment set aside
//     whole, or rewritten by a compaction without its damaged blocks. An
//     empty record there says nothing was lost (a freshly written segment
//     that did not read back: its rows were still in the WAL or in the
//     compaction inputs).
//
// Every answer whose time range (and, for a block, whose filters as far as
// the footer's statistics and the index tell) overlaps a lost unit carries a
// warning naming it, until an operator deletes the record.
//
//	+--------------------------------------------------------------+
//	| magic "SDDM" | version u8 = 1 | reserved (3)                  |  8 B
//	+--------------------------------------------------------------+
//	| count uvarint                                                 |
//	| entry: kind u8 (1 block, 2 whole segment)                     |
//	|        block uvarint (0 for a whole segment)                  |
//	|        flags u8 (bit 0: rows known, bit 1: time range known)  |
//	|        [rows uvarint]              when rows are known        |
//	|        [minTime varint, maxTime varint] when the range is     |
//	|        found varint (unix µs)                                 |
//	|        cause: uvarint length + bytes (at most 1 KiB)          |
//	+--------------------------------------------------------------+
//	| crc32c u32 LE over every byte before it                      |  4 B
//	+--------------------------------------------------------------+
//
// These constants are part of the on-disk format and must not change.
const (
	damageMagic      = "SDDM"
	damageVersion    = 1
	damageHeaderSize = 8
	damageExt        = ".dmg"

	lossBlock   = 1
	lossSegment = 2
	// lossWAL is never persisted: see walLoss.
	lossWAL = 3
	// lossReplay is never persisted either: the log of a shard whose
	// replay panicked (openReplayFailed), not served until a restart.
	lossReplay = 4
	// lossRemote is never persisted: events a query node could not reach
	// (external.go).
	lossRemote = 5

	lossRowsKnown = 1 << 0
	lossTimeKnown = 1 << 1

	// maxDamageCause bounds a cause's text.
	maxDamageCause = 1 << 10
	// maxDamageEntries bounds a record: a segment has at most that many
	// blocks (segment's maxBlocks), plus one whole-segment entry.
	maxDamageEntries = 1<<20 + 1
	// maxDamageRecord bounds the file read back.
	maxDamageRecord = 64 << 20
)

// lostUnit is stored data that answers no longer include.
type lostUnit struct {
	seg   uint64
	kind  uint8 // lossBlock or lossSegment
	block int
	// rows is the number of events lost, -1 when unknown (a segment whose
	// footer is unreadable).
	rows int64
	// minTime, maxTime bound the lost events' timestamps; unknown: the
	// whole range (every query overlaps it).
	minTime, maxTime int64
	timeKnown        bool
	found            int64 // unix µs
	cause            string
	// pending: found by a read-only open, which records nothing; queries
	// still say the answer misses it, but it is not yet set aside.
	pending bool
}

// walLoss is a lost unit for damage in a write-ahead log that a repair
// would drop: replay could not read it, so answers miss its events (how
// many, and when, the damaged record cannot be trusted to say). It lives
// in memory only, while the log stays damaged.
func walLoss(d *WALCorruptError) lostUnit {
	return lostUnit{kind: lossWAL, rows: -1, minTime: math.MinInt64, maxTime: math.MaxInt64,
		cause: fmt.Sprintf("%s at offset %d: %s", d.File, d.Offset, d.Lost())}
}

// where names the unit for people: "segment 000000000000002a (block 3)".
func (u *lostUnit) where() string {
	if u.kind == lossBlock {
		return fmt.Sprintf("segment %016x (block %d)", u.seg, u.block)
	}
	return fmt.Sprintf("segment %016x (the whole segment)", u.seg)
}

// warning is the text an answer that misses u carries. partial says some
// of the unit's rows were read before its damage showed.
func (u *lostUnit) warning(source string, partial bool) string {
	switch {
	case u.kind == lossWAL:
		return fmt.Sprintf("source %s: the write-ahead log is damaged and its unreadable part is not in this answer (%s)", source, u.cause)
	case u.kind == lossReplay:
		return fmt.Sprintf("source %s: the events of its write-ahead log are not in this answer (%s; the server log has the details)", source, u.cause)
	case u.kind == lossRemote:
		return fmt.Sprintf("source %s: this answer may miss events: %s", source, u.cause)
	case u.rows < 0:
		return fmt.Sprintf("source %s: segment %016x is quarantined and not in this answer (how many events it held is unknown: %s)", source, u.seg, u.cause)
	case partial:
		return fmt.Sprintf("source %s: some of the %s events in %s are quarantined and not in this answer", source, thousands(u.rows), u.where())
	}
	return fmt.Sprintf("source %s: %s events in %s are quarantined and not in this answer", source, thousands(u.rows), u.where())
}

// overlaps reports whether u may hold events in [lo, hi].
func (u *lostUnit) overlaps(lo, hi int64) bool {
	return !u.timeKnown || (u.maxTime >= lo && u.minTime <= hi)
}

// thousands formats n with commas: 50000 → "50,000".
func thousands(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	if neg {
		s = s[1:]
	}
	var b strings.Builder
	if neg {
		b.WriteByte('-')
	}
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// encodeDamageRecord returns the record of units (all of one segment).
func encodeDamageRecord(units []lostUnit) []byte {
	b := []byte{damageMagic[0], damageMagic[1], damageMagic[2], damageMagic[3], damageVersion, 0, 0, 0}
	b = binary.AppendUvarint(b, uint64(len(units)))
	for _, u := range units {
		b = append(b, u.kind)
		b = binary.AppendUvarint(b, uint64(max(u.block, 0)))
		flags := byte(0)
		if u.rows >= 0 {
			flags |= lossRowsKnown
		}
		if u.timeKnown {
			flags |= lossTimeKnown
		}
		b = append(b, flags)
		if u.rows >= 0 {
			b = binary.AppendUvarint(b, uint64(u.rows))
		}
		if u.timeKnown {
			b = binary.AppendVarint(b, u.minTime)
			b = binary.AppendVarint(b, u.maxTime)
		}
		b = binary.AppendVarint(b, u.found)
		cause := u.cause
		if len(cause) > maxDamageCause {
			cause = cause[:maxDamageCause]
		}
		b = binary.AppendUvarint(b, uint64(len(cause)))
		b = append(b, cause...)
	}
	return binary.LittleEndian.AppendUint32(b, crc32.Checksum(b, castagnoli))
}

// decodeDamageRecord reads a record of segment seg. It never panics and
// allocates in proportion to len(data).
func decodeDamageRecord(data []byte, seg uint64) ([]lostUnit, error) {
	if len(data) < damageHeaderSize+1+4 {
		return nil, errors.New("damage record too short")
	}
	body, sum := data[:len(data)-4], binary.LittleEndian.Uint32(data[len(data)-4:])
	if crc32.Checksum(body, castagnoli) != sum {
		return nil, errors.New("damage record: crc mismatch")
	}
	if string(body[:4]) != damageMagic || body[4] != damageVersion {
		return nil, fmt.Errorf("damage record: bad header %q v%d", body[:4], body[4])
	}
	d := body[damageHeaderSize:]
	bad := errors.New("damage record: malformed entry")
	uv := func() (uint64, bool) {
		x, n := binary.Uvarint(d)
		if n <= 0 {
			return 0, false
		}
		d = d[n:]
		return x, true
	}
	sv := func() (int64, bool) {
		x, n := binary.Varint(d)
		if n <= 0 {
			return 0, false
		}
		d = d[n:]
		return x, true
	}
	count, ok := uv()
	// An entry takes at least 5 bytes: kind, block, flags, found, cause length.
	if !ok || count > maxDamageEntries || count > uint64(len(d))/5 {
		return nil, errors.New("damage record: bad entry count")
	}
	out := make([]lostUnit, 0, count)
	for range count {
		if len(d) < 1 {
			return nil, bad
		}
		u := lostUnit{seg: seg, kind: d[0], rows: -1, minTime: math.MinInt64, maxTime: math.MaxInt64}
		d = d[1:]
		if u.kind != lossBlock && u.kind != lossSegment {
			return nil, fmt.Errorf("damage record: unknown kind %d", u.kind)
		}
		blk, ok := uv()
		if !ok || blk >= 1<<20 {
			return nil, bad
		}
		u.block = int(blk)
		if len(d) < 1 {
			return nil, bad
		}
		flags := d[0]
		d = d[1:]
		if flags&^(lossRowsKnown|lossTimeKnown) != 0 {
			return nil, bad
		}
		if flags&lossRowsKnown != 0 {
			rows, ok := uv()
			if !ok || rows > math.MaxUint32 {
				return nil, bad
			}
			u.rows = int64(rows)
		}
		if flags&lossTimeKnown != 0 {
			lo, ok1 := sv()
			hi, ok2 := sv()
			if !ok1 || !ok2 || lo > hi {
				return nil, bad
			}
			u.minTime, u.maxTime, u.timeKnown = lo, hi, true
		}
		if u.found, ok = sv(); !ok {
			return nil, bad
		}
		cl, ok := uv()
		if !ok || cl > maxDamageCause || cl > uint64(len(d)) {
			return nil, bad
		}
		u.cause = string(d[:cl])
		d = d[cl:]
		out = append(out, u)
	}
	if len(d) != 0 {
		return nil, errors.New("damage record: trailing bytes")
	}
	return out, nil
}

// readDamageRecord reads path's record; absent is no error (nil units).
func readDamageRecord(fs vfs.FS, path string, seg uint64) ([]lostUnit, error) {
	if !fs.Exists(path) {
		return nil, nil
	}
	f, err := fs.Open(path)
	if err != nil {
		return nil, err
	}
	size, err := f.Size()
	if err == nil && size > maxDamageRecord {
		err = fmt.Errorf("damage record of %d bytes exceeds %d", size, maxDamageRecord)
	}
	var data []byte
	if err == nil {
		data = make([]byte, size)
		var n int
		n, err = f.ReadAt(data, 0)
		if n == len(data) {
			err = nil
		}
	}
	f.Close()
	if err != nil {
		return nil, err
	}
	return decodeDamageRecord(data, seg)
}

// writeFileAtomic replaces dir/name with data: a temporary file, fsync,
// rename, fsync of the directory.
func writeFileAtomic(fs vfs.FS, dir, name string, data []byte) error {
	tmp := filepath.Join(dir, name+".tmp")
	f, err := fs.Create(tmp)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		fs.Remove(tmp)
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		fs.Remove(tmp)
		return err
	}
	if err := f.Close(); err != nil {
		fs.Remove(tmp)
		return err
	}
	if err := fs.Rename(tmp, filepath.Join(dir, name)); err != nil {
		return err
	}
	return fs.SyncDir(dir)
}

func damageName(id uint64) string { return fmt.Sprintf("%016x%s", id, damageExt) }

// blockDamage is the set of damaged blocks of a segment in use, by block.
// It is replaced, never changed, so that scans read it without a lock.
type blockDamage map[int]lostUnit

// damaged reports whether block b of the segment is set aside.
func (s *segRef) damaged(b int) (lostUnit, bool) {
	m := s.dmg.Load()
	if m == nil {
		return lostUnit{}, false
	}
	u, ok := (*m)[b]
	return u, ok
}

// damagedBlocks returns the segment's damaged blocks, sorted.
func (s *segRef) damagedBlocks() []lostUnit {
	m := s.dmg.Load()
	if m == nil {
		return nil
	}
	out := make([]lostUnit, 0, len(*m))
	for _, u := range *m {
		out = append(out, u)
	}
	slices.SortFunc(out, func(a, b lostUnit) int { return a.block - b.block })
	return out
}

// causeText describes damage without paths or event contents.
func causeText(err error) string {
	var ce *segment.CorruptError
	if errors.As(err, &ce) {
		if ce.Offset >= 0 {
			return fmt.Sprintf("%s at offset %d: %v", ce.Section, ce.Offset, ce.Err)
		}
		return fmt.Sprintf("%s: %v", ce.Section, ce.Err)
	}
	return err.Error()
}

// markBlockDamaged sets block b of sg aside: scans skip it from now on (and
// say so), the segment's damage record in segments/ lists it (so that
// readers skip it after a restart too), and a compaction rewrites the
// segment without it. A read-only engine only remembers it in memory.
// It returns the lost unit.
func (s *Shard) markBlockDamaged(sg *segRef, b int, cause error) lostUnit {
	if sg.remote != nil {
		return sg.remoteLoss(b, cause) // never recorded: see remoteseg.go
	}
	s.damageMu.Lock()
	defer s.damageMu.Unlock()
	if u, ok := sg.damaged(b); ok {
		return u
	}
	bi := sg.r.Block(b)
	u := lostUnit{seg: sg.id, kind: lossBlock, block: b, rows: int64(bi.Rows),
		minTime: bi.MinTime, maxTime: bi.MaxTime, timeKnown: true,
		found: s.opts.Now().UnixMicro(), cause: causeText(cause)}
	next := blockDamage{}
	if m := sg.dmg.Load(); m != nil {
		for k, v := range *m {
			next[k] = v
		}
	}
	next[b] = u
	sg.dmg.Store(&next)
	file := filepath.Join("segments", segName(sg.id))
	s.mu.RLock()
	live := slices.Contains(s.segs, sg)
	s.mu.RUnlock()
	if !live {
		// A query on an older snapshot read a segment that a compaction
		// has since replaced (the rewrite read the block fine, from the
		// cache or before the damage): nothing current is lost.
		s.opts.Logger.Warn("damage found in a segment already replaced", "shard", s.id, "file", file, "block", b, "cause", u.cause)
		return u
	}
	var perr error
	if !s.opts.ReadOnly {
		units := make([]lostUnit, 0, len(next))
		for _, v := range next {
			units = append(units, v)
		}
		slices.SortFunc(units, func(a, b lostUnit) int { return a.block - b.block })
		perr = writeFileAtomic(s.opts.FS, s.segDir, damageName(sg.id), encodeDamageRecord(units))
	}
	s.opts.Logger.Error("damaged segment block set aside: its events are no longer in answers",
		"shard", s.id, "source_dir", s.dir, "file", file, "block", b, "events", bi.Rows,
		"cause", u.cause, "record_err", perr)
	s.raiseQuarantined()
	return u
}

// noteIndexDamage remembers that sg's index is damaged: queries scan the
// segment without it (nothing is lost) and a compaction rebuilds it.
func (s *Shard) noteIndexDamage(sg *segRef, cause error) {
	if sg.remote != nil {
		return // read from the store: tried again by the next read
	}
	if sg.ixBroken.Swap(true) {
		return
	}
	s.stats.indexesDamaged.Add(1)
	s.recordIndexDamage(sg, cause)
	s.opts.Logger.Error("segment index damaged; queries scan the segment without it (nothing is lost)",
		"shard", s.id, "source_dir", s.dir, "file", filepath.Join("segments", segName(sg.id)), "cause", causeText(cause))
}

// lossCounts sums what the shard has set aside: whole segments, blocks,
// the events in them where known, and segments of unknown size.
func (s *Shard) lossCounts() (segs, blocks, events, unknown int64) {
	s.mu.RLock()
	lost := s.lost
	live := slices.Clone(s.segs)
	s.mu.RUnlock()
	add := func(u lostUnit) {
		if u.pending {
			return
		}
		if u.kind == lossSegment {
			segs++
		} else {
			blocks++
		}
		if u.rows < 0 {
			unknown++
		} else {
			events += u.rows
		}
	}
	for _, u := range lost {
		add(u)
	}
	for _, sg := range live {
		for _, u := range sg.damagedBlocks() {
			add(u)
		}
	}
	return
}

// raiseQuarantined (re)raises ConditionQuarantined with the current totals.
func (s *Shard) raiseQuarantined() {
	segs, blocks, events, unknown := s.lossCounts()
	if segs+blocks == 0 {
		return
	}
	var parts []string
	if blocks > 0 {
		parts = append(parts, fmt.Sprintf("%d damaged block(s)", blocks))
	}
	if segs > 0 {
		parts = append(parts, fmt.Sprintf("%d damaged segment(s)", segs))
	}
	detail := strings.Join(parts, " and ") + fmt.Sprintf(" set aside, %s events", thousands(events))
	if unknown > 0 {
		detail += fmt.Sprintf(" plus %d segment(s) of unknown size", unknown)
	}
	detail += `; answers that would include them carry a "warnings" entry. The records are segments/*.dmg and quarantine/; deleting a quarantine/<id>.dmg (and its .seg) accepts the loss and ends the warnings`
	s.raiseCondition(Condition{Kind: ConditionQuarantined, Detail: detail})
}

// setAside moves a segment file to quarantine/ with the record of what of
// it is lost (units; none when its rows live on elsewhere, as for a fresh
// segment that did not read back). The record is written first, so that a
// crash never leaves the segment gone without it; a record of damaged
// blocks kept beside the segment in segments/ is removed last. Errors are
// logged: the shard goes on without the segment either way. The caller
// adds units to the shard's list of lost units (at open, loadLost reads
// them back from the record).
func (s *Shard) setAside(id uint64, path string, cause error, units []lostUnit) {
	s.stats.quarantined.Add(1)
	fs := s.opts.FS
	dst := filepath.Join(s.quarDir, filepath.Base(path))
	err := writeFileAtomic(fs, s.quarDir, damageName(id), encodeDamageRecord(units))
	if err == nil {
		err = fs.Rename(path, dst)
	}
	if err == nil {
		err = fs.SyncDir(s.quarDir)
	}
	if err == nil {
		err = fs.SyncDir(s.segDir)
	}
	if live := filepath.Join(s.segDir, damageName(id)); err == nil && fs.Exists(live) {
		if err = fs.Remove(live); err == nil {
			err = fs.SyncDir(s.segDir)
		}
	}
	if err == nil {
		s.removeIndexDamage(id) // a rewrite rebuilt the index, or the segment is gone
	}
	lost := int64(0)
	for _, u := range units {
		lost += max(u.rows, 0)
	}
	s.opts.Logger.Error("segment set aside in quarantine/", "shard", s.id, "source_dir", s.dir,
		"file", filepath.Join("segments", filepath.Base(path)), "moved_to", dst, "cause", causeText(cause),
		"lost_units", len(units), "lost_events", lost, "err", err)
}

// loadLost reads the records of what the shard lost: quarantine/<id>.dmg,
// and for a quarantined segment without a record (set aside by an earlier
// version) what its footer says, if it opens. Called at open, before the
// segments are loaded.
func (s *Shard) loadLost() {
	fs := s.opts.FS
	names, err := fs.List(s.quarDir)
	if err != nil {
		return
	}
	have := map[uint64]bool{}
	for _, n := range names {
		id, ok := parseSeqName(n, damageExt)
		if !ok {
			continue
		}
		have[id] = true
		units, err := readDamageRecord(fs, filepath.Join(s.quarDir, n), id)
		if err != nil {
			// The record is damaged: what it listed is unknown.
			s.opts.Logger.Error("damage record unreadable; treating its segment as lost, size unknown", "shard", s.id, "file", filepath.Join("quarantine", n), "err", err)
			units = []lostUnit{{seg: id, kind: lossSegment, rows: -1, minTime: math.MinInt64, maxTime: math.MaxInt64, cause: "its damage record is unreadable"}}
			s.openProblems = append(s.openProblems, fmt.Errorf("damage record quarantine/%s: %w", n, err))
		}
		s.lost = append(s.lost, units...)
	}
	for _, n := range names {
		id, ok := parseSeqName(n, ".seg")
		if !ok || have[id] {
			continue
		}
		s.lost = append(s.lost, s.legacyLoss(id, filepath.Join(s.quarDir, n)))
	}
}

// legacyLoss describes a quarantined segment that has no damage record.
func (s *Shard) legacyLoss(id uint64, path string) lostUnit {
	u := lostUnit{seg: id, kind: lossSegment, rows: -1, minTime: math.MinInt64, maxTime: math.MaxInt64,
		cause: "set aside without a record of its size; its footer does not read"}
	f, err := s.opts.FS.Open(path)
	if err != nil {
		return u
	}
	r, err := segment.Open(f, filepath.Join("quarantine", filepath.Base(path)))
	if err != nil {
		f.Close()
		return u
	}
	defer r.Close()
	u.rows = int64(r.Rows())
	u.minTime, u.maxTime = r.TimeRange()
	u.timeKnown = true
	u.cause = "set aside whole"
	return u
}

// wholeSegmentLoss describes a segment that cannot be read at all. info,
// when the footer was read, gives its size and time range.
func wholeSegmentLoss(id uint64, cause error, info *segment.Reader, now int64) lostUnit {
	u := lostUnit{seg: id, kind: lossSegment, rows: -1, minTime: math.MinInt64, maxTime: math.MaxInt64,
		found: now, cause: causeText(cause)}
	if info != nil {
		u.rows = int64(info.Rows())
		u.minTime, u.maxTime = info.TimeRange()
		u.timeKnown = true
	}
	return u
}

// DamageError is a query failure caused by damaged stored data. It names
// the source and the file relative to the source's directory, never a
// server path; the server's log has the full path.
type DamageError struct {
	Source string // the source's name as the query wrote it
	File   string // e.g. segments/000000000000002a.seg
	Block  int    // the damaged block, -1 when the damage is not in one
	Cause  string // section, offset and what failed
	// Fresh says this query found the damage (and set the block aside), so
	// running it again gives an answer without the block, marked as such.
	Fresh bool
}

func (e *DamageError) Error() string {
	switch {
	case e.Block >= 0 && e.Fresh:
		return fmt.Sprintf("source %s: %s block %d is damaged (%s); it has been set aside: run the query again for an answer without its events, marked as partial",
			e.Source, e.File, e.Block, e.Cause)
	case e.Block >= 0:
		return fmt.Sprintf("source %s: %s block %d is quarantined (%s) and this answer cannot be marked as missing it", e.Source, e.File, e.Block, e.Cause)
	}
	return fmt.Sprintf("source %s: %s is damaged (%s)", e.Source, e.File, e.Cause)
}

// Is makes errors.Is(err, segment.ErrCorrupt) hold.
func (e *DamageError) Is(target error) bool { return target == segment.ErrCorrupt }
