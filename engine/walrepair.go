package engine

import (
	"encoding/binary"
	"errors"
	"fmt"
	"path/filepath"
	"slices"

	"github.com/sediment/sediment/event"
	"github.com/sediment/sediment/internal/vfs"
)

// ErrWALDamaged is matched by the error a source whose write-ahead log is
// damaged answers events with: it serves what it has, read-only, until an
// operator repairs the log.
var ErrWALDamaged = errors.New("engine: write-ahead log damaged; the source is read-only until it is repaired")

// WALDamagedError is what Append returns on a shard whose log replay found
// damage that a repair would drop data for.
type WALDamagedError struct {
	Shard  string
	Damage []*WALCorruptError
}

func (e *WALDamagedError) Error() string {
	return fmt.Sprintf("source %s is read-only: its write-ahead log is damaged (%s); an operator must repair it", e.Shard, e.Damage[0].Error())
}

// Is makes errors.Is(err, ErrWALDamaged) hold.
func (e *WALDamagedError) Is(target error) bool { return target == ErrWALDamaged }

// WALRepair is what repairing one log file did.
type WALRepair struct {
	File string // relative to the source's directory
	// Damage is what the file held: each is dropped, except a damaged
	// header or length field (rewritten; nothing lost).
	Damage []*WALCorruptError
	// RecordsKept and EventsKept are what the repaired file holds.
	RecordsKept, EventsKept int
	// BytesDropped counts the bytes of dropped records (and of a torn tail
	// of a sealed file).
	BytesDropped int64
	// EventsDropped sums the counts the dropped records say they held
	// (unverified); UnknownDropped counts dropped spans whose count could
	// not be read.
	EventsDropped  int64
	UnknownDropped int
	// SavedAs is where the file as it was is kept, relative to the
	// source's directory (quarantine/...).
	SavedAs string
}

// String describes the repair for operators.
func (r *WALRepair) String() string {
	lost := "nothing was lost"
	switch {
	case r.BytesDropped > 0 && r.UnknownDropped == 0:
		lost = fmt.Sprintf("dropped %d bytes holding %s events (as the damaged records say)", r.BytesDropped, thousands(r.EventsDropped))
	case r.BytesDropped > 0 && r.EventsDropped > 0:
		lost = fmt.Sprintf("dropped %d bytes holding %s events as the damaged records say, and %d span(s) whose event count is unreadable", r.BytesDropped, thousands(r.EventsDropped), r.UnknownDropped)
	case r.BytesDropped > 0:
		lost = fmt.Sprintf("dropped %d bytes in %d span(s) whose event count is unreadable", r.BytesDropped, r.UnknownDropped)
	}
	return fmt.Sprintf("%s repaired: %s; kept %d records (%s events); the file as it was is %s", r.File, lost, r.RecordsKept, thousands(int64(r.EventsKept)), r.SavedAs)
}

// repairWALFile rewrites one log file without its damage: the header, then
// every record that checks out, in order (a record whose length field
// alone was damaged is written with the length its neighbours give). The
// file as it was is first copied to quarDir. A file without damage is left
// alone (nil): a torn tail of the newest file (tail tailCut) is not damage,
// startup cuts it. A file whose header names a newer format version is
// not touched (*WALVersionError).
func repairWALFile(fs vfs.FS, path, quarDir string, tail tailMode) (*WALRepair, error) {
	data, err := vfs.ReadFile(fs, path)
	if err != nil {
		return nil, err
	}
	out, rep, err := repairWALBytes(data, walRel(path), tail)
	if err != nil || rep == nil {
		return nil, err
	}
	if err := fs.MkdirAll(quarDir); err != nil {
		return nil, err
	}
	saved := filepath.Base(path)
	for i := 1; fs.Exists(filepath.Join(quarDir, saved)); i++ {
		saved = fmt.Sprintf("%s.%d", filepath.Base(path), i)
	}
	if err := writeFileAtomic(fs, quarDir, saved, data); err != nil {
		return nil, err
	}
	rep.SavedAs = filepath.Join(filepath.Base(quarDir), saved)
	if err := writeFileAtomic(fs, filepath.Dir(path), filepath.Base(path), out); err != nil {
		return nil, err
	}
	return rep, nil
}

// repairWALBytes is repairWALFile on bytes: the repaired file and what was
// done, or nil and no error when there is nothing to repair.
func repairWALBytes(data []byte, file string, tail tailMode) ([]byte, *WALRepair, error) {
	p, err := parseWAL(data, file, tail, func([]event.Event) error { return nil })
	if err != nil {
		return nil, nil, err
	}
	if len(p.damage) == 0 {
		return nil, nil, nil
	}
	rep := &WALRepair{File: file, Damage: p.damage, RecordsKept: len(p.records)}
	size := walHeaderSize
	for _, r := range p.records {
		size += int(r.n)
	}
	out := make([]byte, 0, size)
	out = append(out, walMagic[0], walMagic[1], walMagic[2], walMagic[3], walVersion, 0, 0, 0)
	for _, r := range p.records {
		rec := data[r.off : r.off+r.n]
		start := len(out)
		out = append(out, rec...)
		if r.fixLen {
			binary.LittleEndian.PutUint32(out[start:], uint32(r.n-walRecHeaderSize))
		}
	}
	for _, d := range p.damage {
		if d.Header || d.Recovered {
			continue
		}
		rep.BytesDropped += d.Length
		if d.FramingIntact && d.Events >= 0 {
			rep.EventsDropped += d.Events
		} else {
			rep.UnknownDropped++
		}
	}
	// What the repaired file holds: replay it (this also proves it clean).
	q, err := parseWAL(out, file, tailError, func(evs []event.Event) error {
		rep.EventsKept += len(evs)
		return nil
	})
	if err != nil || len(q.damage) > 0 {
		return nil, nil, fmt.Errorf("wal %s: the repaired file does not read back clean", file)
	}
	return out, rep, nil
}

// RepairWALBytes is the log repair on one file's bytes, as a sealed file
// (a torn tail is damage): the repaired file (nil when there is nothing to
// repair) and what was dropped. For fuzzing and tests.
func RepairWALBytes(data []byte) ([]byte, *WALRepair, error) {
	return repairWALBytes(data, "f.wal", tailError)
}

// noteWALRepair logs a repair and counts what it dropped.
func (s *Shard) noteWALRepair(rep *WALRepair) {
	s.repairs = append(s.repairs, rep)
	s.stats.walRecordsDropped.Add(int64(len(rep.Damage)))
	s.stats.walBytesDropped.Add(rep.BytesDropped)
	s.stats.walEventsDropped.Add(rep.EventsDropped)
	level := s.opts.Logger.Warn
	msg := "write-ahead log repaired; nothing was lost"
	if rep.BytesDropped > 0 {
		level = s.opts.Logger.Error
		msg = "write-ahead log repaired: acknowledged data dropped"
	}
	level(msg, "shard", s.id, "source_dir", s.dir, "file", rep.File, "bytes_dropped", rep.BytesDropped,
		"events_dropped", rep.EventsDropped, "spans_of_unknown_count", rep.UnknownDropped,
		"records_kept", rep.RecordsKept, "original_kept_as", rep.SavedAs, "repair", rep.String())
}

// RepairWAL repairs the write-ahead log of one source on a stopped server
// (`sediment fsck --repair-wal`): every log file not yet written out to a
// segment is rewritten without its damaged records (repairWALFile), the
// original kept in the source's quarantine/. The newest file's torn tail
// is left for startup to cut. It returns what it did, one entry per file
// repaired. The caller must hold the data directory's lock.
func RepairWAL(dataDir, shardID string, opts *Options) ([]*WALRepair, error) {
	o, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	if !validShardID(shardID) {
		return nil, fmt.Errorf("engine: invalid source id %q", shardID)
	}
	dir := filepath.Join(dataDir, "sources", shardID)
	if !o.FS.Exists(dir) {
		return nil, fmt.Errorf("engine: no data for source %s", shardID)
	}
	// Which files segments cover: read the segments without changing them.
	ro := *o
	ro.ReadOnly = true
	s := &Shard{id: shardID, dir: dir, opts: &ro,
		walDir: filepath.Join(dir, "wal"), segDir: filepath.Join(dir, "segments"), quarDir: filepath.Join(dir, "quarantine")}
	if err := s.loadSegments(); err != nil {
		return nil, err
	}
	covered := uint64(0)
	for _, sg := range s.segs {
		covered = max(covered, sg.meta.walLast)
		sg.release()
	}
	names, err := o.FS.List(s.walDir)
	if err != nil {
		return nil, err
	}
	var seqs []uint64
	for _, n := range names {
		if seq, ok := parseSeqName(n, ".wal"); ok && seq > covered {
			seqs = append(seqs, seq)
		}
	}
	slices.Sort(seqs)
	var out []*WALRepair
	for i, seq := range seqs {
		tail := tailError
		if i == len(seqs)-1 {
			tail = tailCut
		}
		rep, err := repairWALFile(o.FS, filepath.Join(s.walDir, walName(seq)), s.quarDir, tail)
		if err != nil {
			return out, err
		}
		if rep != nil {
			out = append(out, rep)
		}
	}
	return out, nil
}

// RepairShardWAL repairs the damaged write-ahead log of source id while the
// server runs, without a restart: the shard (read-only since its log was
// found damaged, so nothing writes its files) is closed, reopened with its
// log files rewritten without their damage (as Options.RepairWAL does at
// startup), and takes events again. Queries running on the old shard
// finish on their snapshot. It returns what was repaired; an error if the
// source's log is not damaged.
func (e *Engine) RepairShardWAL(id string) ([]*WALRepair, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return nil, ErrClosed
	}
	if e.opts.ReadOnly {
		return nil, ErrReadOnly
	}
	old := e.shards[id]
	if old == nil || old.walDamage == nil {
		return nil, ErrWALNotDamaged
	}
	// No compaction or retention may be running on the old shard when the
	// new one lists the files.
	old.compactMu.Lock()
	old.close(false)
	old.compactMu.Unlock()
	delete(e.shards, id) // a failed reopen leaves the next use to open it again
	s, err := openShard(e, id, old.dir, true)
	if err != nil {
		return nil, err
	}
	e.shards[id] = s
	return s.repairs, nil
}

// ErrWALNotDamaged is returned by RepairShardWAL for a source whose log
// needs no repair.
var ErrWALNotDamaged = errors.New("engine: the source's write-ahead log is not damaged")
