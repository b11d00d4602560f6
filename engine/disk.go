package engine

import (
	"errors"
	"fmt"
	"path/filepath"
	"sync/atomic"
	"time"

	"github.com/sediment/sediment/internal/vfs"
)

// ErrDiskFull is matched (errors.Is) by the errors of Append and Shard
// while the data directory's file system is full, or has less free space
// than Options.MinFreeDiskBytes. Queries keep working. Ingest resumes by
// itself once a probe write and fsync succeed and the floor is met again;
// callers answer 507 with Retry-After.
var ErrDiskFull = errors.New("engine: disk full")

// diskFullError is an ErrDiskFull with what happened.
type diskFullError struct {
	reason string
	err    error // the file system's error, if one
}

func (e *diskFullError) Error() string {
	if e.err != nil {
		return "engine: disk full: " + e.reason + ": " + e.err.Error()
	}
	return "engine: disk full: " + e.reason
}
func (e *diskFullError) Is(target error) bool { return target == ErrDiskFull }
func (e *diskFullError) Unwrap() error        { return e.err }

// diskGuard is the engine's view of its file system's space. Every shard
// lives on it, so a full disk refuses ingest for all of them at once: the
// condition is the engine's, and every shard reports it.
type diskGuard struct {
	full  atomic.Bool
	conds conditions // ConditionDiskFull while full
	// probeFailures counts probes in a row that did not clear the
	// condition, for the monitor's backoff.
	probeFailures atomic.Int64
}

// diskProbeBytes is written and fsynced to decide that space is back.
const diskProbeBytes = 64 << 10

// diskFullErr returns an ErrDiskFull while the disk is full, else nil.
func (e *Engine) diskFullErr() error {
	if !e.disk.full.Load() {
		return nil
	}
	reason := "no space left on device"
	for _, c := range e.disk.conds.list() {
		reason = c.Detail
	}
	return &diskFullError{reason: reason}
}

// setDiskFull refuses ingest on every shard until CheckDisk clears it.
func (e *Engine) setDiskFull(detail string) {
	c := Condition{Kind: ConditionDiskFull, RefusesIngest: true,
		Detail: detail + "; ingest is refused (507) until a probe write and fsync succeed, queries keep working"}
	if e.disk.conds.raise(c, e.opts.Now()) {
		e.opts.Logger.Error("disk full: every source refuses events until space is freed", "data_dir", e.dir, "detail", detail)
	}
	e.disk.full.Store(true)
}

// noteNoSpace turns a file-system error saying the disk is full into an
// ErrDiskFull, refusing ingest until space is back; other errors pass
// unchanged. what says what was being written.
func (e *Engine) noteNoSpace(what string, err error) error {
	if err == nil || !vfs.IsNoSpace(err) || errors.Is(err, ErrDiskFull) {
		return err
	}
	e.setDiskFull("no space left on device " + what)
	return &diskFullError{reason: what, err: err}
}

// freeBytes returns the free bytes of the data directory's file system,
// or false when the file system cannot tell.
func (e *Engine) freeBytes() (int64, bool) {
	u, err := e.opts.FS.DiskUsage(e.dir)
	if err != nil {
		return 0, false
	}
	return u.Free, true
}

// freeBytesUnderFloor returns the free bytes and true when they are below
// Options.MinFreeDiskBytes (never without a floor).
func (e *Engine) freeBytesUnderFloor() (int64, bool) {
	if e.opts.MinFreeDiskBytes <= 0 {
		return 0, false
	}
	free, ok := e.freeBytes()
	return free, ok && free < e.opts.MinFreeDiskBytes
}

// CheckDisk checks the data directory's free space against
// Options.MinFreeDiskBytes, refusing ingest below it, and while ingest is
// refused for lack of space it writes and fsyncs a probe file: when that
// succeeds (and the floor is met) ingest resumes. It returns nil when
// ingest is allowed. The background monitor calls it every
// DiskCheckInterval (backing off while the disk stays full); tests and
// engines without background work call it themselves.
func (e *Engine) CheckDisk() error {
	if e.opts.ReadOnly {
		return nil
	}
	if free, ok := e.freeBytesUnderFloor(); ok {
		e.setDiskFull(fmt.Sprintf("free disk space (%s) is below the floor of %s (MinFreeDiskBytes, --min-free-disk)",
			formatBytes(free), formatBytes(e.opts.MinFreeDiskBytes)))
		e.disk.probeFailures.Add(1)
		return e.diskFullErr()
	}
	if !e.disk.full.Load() {
		return nil
	}
	if err := e.probeDisk(); err != nil {
		e.disk.probeFailures.Add(1)
		if vfs.IsNoSpace(err) {
			return e.diskFullErr()
		}
		return fmt.Errorf("engine: disk probe: %w", err)
	}
	e.disk.probeFailures.Store(0)
	e.disk.full.Store(false)
	if e.disk.conds.clear(ConditionDiskFull) {
		e.opts.Logger.Info("disk space is back: sources accept events again", "data_dir", e.dir)
		// Flushes that failed for lack of space go now, not when their
		// backoff ends: their heads hold memory that ingest needs.
		for _, s := range e.Shards() {
			s.retrySoon(taskFlush)
		}
	}
	return nil
}

// probeDisk writes, fsyncs and removes a small file in the data directory.
func (e *Engine) probeDisk() (err error) {
	fs := e.opts.FS
	path := filepath.Join(e.dir, ".disk-probe")
	f, err := fs.Create(path)
	if err != nil {
		return err
	}
	defer func() {
		f.Close()
		if rerr := fs.Remove(path); err == nil && rerr != nil {
			err = rerr
		}
	}()
	if _, err := f.Write(make([]byte, diskProbeBytes)); err != nil {
		return err
	}
	return f.Sync()
}

// diskMonitor runs CheckDisk every DiskCheckInterval; while the disk is
// full, probes back off to 16 times that.
func (e *Engine) diskMonitor() {
	defer e.wg.Done()
	runLoop(e.opts, "disk monitor", e.stop, func() {
		t := time.NewTimer(e.opts.DiskCheckInterval)
		defer t.Stop()
		for {
			select {
			case <-e.stop:
				return
			case <-t.C:
			}
			if err := e.CheckDisk(); err != nil && !errors.Is(err, ErrDiskFull) {
				e.opts.Logger.Warn("disk check failed", "err", err)
			}
			next := e.opts.DiskCheckInterval
			for i := int64(0); i < min(e.disk.probeFailures.Load(), 4); i++ {
				next *= 2
			}
			t.Reset(next)
		}
	})
}

// roomToRewrite refuses a compaction or retention rewrite of group when
// the copy it writes (about the inputs' size) would take free space below
// the floor: it would fill the disk that ingest needs. The inputs go only
// once the output is complete, so both exist for a while.
func (e *Engine) roomToRewrite(group []*segRef, what string) error {
	free, ok := e.freeBytes()
	if !ok {
		return nil
	}
	need := int64(0)
	for _, g := range group {
		need += g.r.Size()
	}
	if free-need < e.opts.MinFreeDiskBytes {
		return fmt.Errorf("%s needs about %s of disk space and %s is free (the floor is %s): postponed",
			what, formatBytes(need), formatBytes(free), formatBytes(e.opts.MinFreeDiskBytes))
	}
	return nil
}

// formatBytes writes a size for operators: 1.5 MiB, 300 B.
func formatBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit && exp < 4; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTP"[exp])
}
