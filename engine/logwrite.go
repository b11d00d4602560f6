package engine

import (
	"fmt"
	"path/filepath"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sediment/sediment/internal/vfs"
)

// The committer's side of the write-ahead log: writing a group, what
// happens when the disk is full, and buffered mode's periodic fsync.
//
// A write that fails for lack of space leaves the log file with a partial
// record at its end. Nothing more is written to that file: it is cut back
// to the last complete record and synced (truncating frees space, so this
// usually works at once), and the next write, once the disk has room
// again, goes to a fresh file. Only then may the old file stop being the
// newest one: replay cuts a torn tail only in the newest file and reports
// it as damage in any other.

// logState is the committer's record of the current log file's health,
// and buffered mode's sync accounting.
type logState struct {
	// broken: a write to the current file failed for lack of space; it
	// gets no more writes. Set and cleared by the committer, read by the
	// syncer.
	broken atomic.Bool
	cut    bool  // the broken file was cut back to good and synced
	good   int64 // the broken file's size before the failed write

	// syncMu is held by the syncer around its fsync and by whoever closes
	// a log file, so that a file is never closed under a running fsync.
	syncMu sync.Mutex
	// lag accounts buffered mode's unsynced writes (under lagMu): the
	// file written to, its size, and when it first held bytes not yet
	// synced (zero: none). maxLag is the longest an acknowledged write
	// waited for its fsync.
	lagMu       sync.Mutex
	lagFile     *walWriter
	lagSize     int64
	dirtySince  time.Time
	maxLag      time.Duration
	loggedLag   time.Duration // the largest lag logged so far
	syncsTotal  int64
	syncsFailed int64
}

// writeLog writes a group's records to the log, one after the other from
// the buffers they were encoded in (no copy into one buffer), then
// fsyncs once in sync mode. It
// refuses while the disk is full, and moves to a fresh file first when the
// last write failed for lack of space. An error means nothing of the group
// may be acknowledged.
func (s *Shard) writeLog(recs [][]byte) error {
	if err := s.eng.diskFullErr(); err != nil {
		return err
	}
	if s.log.broken.Load() {
		if err := s.resumeLog(); err != nil {
			return err
		}
	}
	s.walMu.Lock()
	w := s.wal
	good := w.size
	var err error
	for _, rec := range recs {
		if err = w.write(rec); err != nil {
			break
		}
	}
	if err == nil && s.opts.AckMode == AckSync {
		err = s.syncTimed(w.f)
	}
	s.walMu.Unlock()
	if err == nil {
		if s.opts.AckMode == AckBuffered {
			s.noteUnsynced(w)
		}
		return nil
	}
	if vfs.IsNoSpace(err) {
		// Everything before good was acknowledged and is kept; the
		// partial group after it (unacknowledged) goes. In buffered mode
		// the bytes before good were written whole and are synced by
		// cutLog or resumeLog.
		s.log.broken.Store(true)
		s.log.cut, s.log.good = false, good
		derr := s.eng.noteNoSpace("writing the write-ahead log", err)
		if cerr := s.cutLog(); cerr != nil {
			s.opts.Logger.Warn("write-ahead log: cutting the partial write failed; retried before the next write", "shard", s.id, "err", cerr)
		}
		return fmt.Errorf("shard %s: %w", s.id, derr)
	}
	// The log is in an unknown state: refuse more writes rather than
	// acknowledge anything not durable.
	err = fmt.Errorf("shard %s: write-ahead log: %w", s.id, err)
	s.fail(err)
	return err
}

// cutLog truncates the broken log file back to its last complete record
// and syncs it.
func (s *Shard) cutLog() error {
	if s.log.cut || s.wal == nil {
		return nil
	}
	if err := s.wal.f.Truncate(s.log.good); err != nil {
		return err
	}
	if err := s.wal.f.Sync(); err != nil {
		return err
	}
	s.wal.size = s.log.good
	s.log.cut = true
	return nil
}

// resumeLog moves writing to a fresh log file after a write failed for
// lack of space: the old file is cut back and synced first.
func (s *Shard) resumeLog() error {
	if err := s.cutLog(); err != nil {
		return fmt.Errorf("shard %s: %w", s.id, s.eng.noteNoSpace("cutting the write-ahead log", err))
	}
	next := s.walSeq + 1
	w, err := s.createLog(next)
	if err != nil {
		return fmt.Errorf("shard %s: %w", s.id, s.eng.noteNoSpace("creating a write-ahead log file", err))
	}
	s.swapLog(w, next)
	s.log.broken.Store(false)
	s.log.cut = false
	s.opts.Logger.Info("write-ahead log resumed in a new file after the disk was full", "shard", s.id, "file", walName(next))
	return nil
}

// createLog creates log file seq. One that could not be created whole is
// removed again: writing goes on in the current file, which must stay the
// newest, the only one whose torn tail replay may cut.
func (s *Shard) createLog(seq uint64) (*walWriter, error) {
	w, err := createWAL(s.opts.FS, s.walDir, seq)
	if err != nil {
		path := filepath.Join(s.walDir, walName(seq))
		if s.opts.FS.Exists(path) {
			if rerr := s.opts.FS.Remove(path); rerr == nil {
				s.opts.FS.SyncDir(s.walDir)
			}
		}
	}
	return w, err
}

// swapLog makes w (sequence seq) the log file written to and closes the
// previous one, which must be synced already.
func (s *Shard) swapLog(w *walWriter, seq uint64) error {
	s.walMu.Lock()
	old := s.wal
	s.wal, s.walSeq = w, seq
	s.walMu.Unlock()
	s.log.lagMu.Lock()
	s.log.lagFile, s.log.lagSize, s.log.dirtySince = w, w.size, time.Time{}
	s.log.lagMu.Unlock()
	if old == nil {
		return nil
	}
	s.log.syncMu.Lock()
	defer s.log.syncMu.Unlock()
	return old.close()
}

// noteUnsynced records, in buffered mode, that w holds acknowledged bytes
// not yet synced.
func (s *Shard) noteUnsynced(w *walWriter) {
	s.log.lagMu.Lock()
	defer s.log.lagMu.Unlock()
	if s.log.lagFile != w {
		s.log.lagFile, s.log.dirtySince = w, time.Time{}
	}
	s.log.lagSize = w.size
	if s.log.dirtySince.IsZero() {
		s.log.dirtySince = time.Now()
	}
}

// syncer fsyncs the log in buffered mode: a sync starts
// BufferedSyncInterval after the previous one started, or at once when
// that one took longer. It never waits for the committer: the fsync runs
// while further writes go on, so an acknowledged write waits at most the
// interval plus the fsync in progress plus its own fsync.
func (s *Shard) syncer() {
	defer s.wg.Done()
	t := time.NewTimer(s.opts.BufferedSyncInterval)
	defer t.Stop()
	for {
		select {
		case <-t.C:
		case <-s.stopping:
			return
		}
		start := time.Now()
		if err := s.syncLogOnce(); err != nil {
			// Events acknowledged since the last sync may not be on
			// disk: stop acknowledging more until an operator looks.
			s.fail(fmt.Errorf("shard %s: write-ahead log sync: %w", s.id, err))
			return
		}
		t.Reset(max(0, s.opts.BufferedSyncInterval-time.Since(start)))
	}
}

// syncLogOnce fsyncs the log file if it holds unsynced writes, recording
// how long the oldest of them waited. A panic is recovered into an error.
func (s *Shard) syncLogOnce() (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = &PanicError{Task: taskNames[taskWALSync], Value: r, Stack: debug.Stack()}
			s.recordTask(taskWALSync, err)
		}
	}()
	s.log.syncMu.Lock()
	defer s.log.syncMu.Unlock()
	s.log.lagMu.Lock()
	w, size, since := s.log.lagFile, s.log.lagSize, s.log.dirtySince
	s.log.lagMu.Unlock()
	if w == nil || since.IsZero() || s.log.broken.Load() {
		return nil // nothing new, or a file resumeLog syncs itself
	}
	start := time.Now()
	if err := s.syncTimed(w.f); err != nil {
		s.log.lagMu.Lock()
		s.log.syncsFailed++
		s.log.lagMu.Unlock()
		return err
	}
	end := time.Now()
	s.log.lagMu.Lock()
	defer s.log.lagMu.Unlock()
	s.log.syncsTotal++
	lag := end.Sub(since)
	s.log.maxLag = max(s.log.maxLag, lag)
	if lag > 2*s.opts.BufferedSyncInterval && lag > 2*s.log.loggedLag {
		// Each new doubling once: the loss window a power failure would
		// have had, for the operator who chose buffered acks.
		s.log.loggedLag = lag
		s.opts.Logger.Warn("buffered-mode fsync lag: acknowledged events waited this long to be durable", "shard", s.id,
			"lag", lag, "fsync", end.Sub(start), "interval", s.opts.BufferedSyncInterval)
	}
	if s.log.lagFile == w {
		if s.log.lagSize == size {
			s.log.dirtySince = time.Time{}
		} else {
			// Written meanwhile: those bytes are at most this old.
			s.log.dirtySince = start
		}
	}
	return nil
}

// syncTimed fsyncs a log file, reporting how long a successful fsync took
// to Options.ObserveWALSync when set.
func (s *Shard) syncTimed(f vfs.File) error {
	obs := s.opts.ObserveWALSync
	if obs == nil {
		return f.Sync()
	}
	start := time.Now()
	err := f.Sync()
	if err == nil {
		obs(time.Since(start))
	}
	return err
}

// LogSyncStats describes buffered mode's fsyncs since the shard opened.
type LogSyncStats struct {
	Syncs, Failed int64
	// MaxLag is the longest an acknowledged write waited for the fsync
	// that made it durable: the loss window a power failure could have
	// had, as measured on this machine.
	MaxLag time.Duration
}

func (s *Shard) logSyncStats() LogSyncStats {
	s.log.lagMu.Lock()
	defer s.log.lagMu.Unlock()
	return LogSyncStats{Syncs: s.log.syncsTotal, Failed: s.log.syncsFailed, MaxLag: s.log.maxLag}
}
