package engine

import (
	"errors"
	"fmt"
	"math"
	"runtime/debug"
)

// A panic while a shard recovers at open (loading its segments, replaying
// its write-ahead log into the head) is a bug, perhaps one that a single
// stored event triggers. It must not stop the engine from opening, or the
// server crash-loops and every source is down: the panic is recovered per
// shard, logged with its stack, counted (the "replay" task of Info's
// Background), and the shard opens degraded, like a shard whose log is
// damaged: it serves the segments it loaded, refuses events, runs no
// background work and changes no file, so that its log files are there,
// unchanged, for the next start (with the bug fixed) to replay. Answers
// over it say that the log's events are missing.

// ErrReplayFailed is matched (errors.Is) by the errors of a shard whose
// recovery at open panicked: it is read-only until the server restarts.
var ErrReplayFailed = errors.New("engine: recovering the source at startup failed")

// ReplayFailedError is what Append, Flush, Compact and ApplyRetention
// return on a shard whose recovery at open panicked.
type ReplayFailedError struct {
	Shard string
	Panic *PanicError
}

func (e *ReplayFailedError) Error() string {
	return fmt.Sprintf("source %s is read-only: replaying its write-ahead log at startup failed (%v); its log files are kept unchanged for the next start", e.Shard, e.Panic.Value)
}

// Is makes errors.Is(err, ErrReplayFailed) hold.
func (e *ReplayFailedError) Is(target error) bool { return target == ErrReplayFailed }

// recoverStoredGuarded runs recoverStored, turning a panic into a
// *PanicError. When the panic came before the segment list was complete,
// the segments loaded so far are let go: without the removal of
// compactions' inputs, they could hold rows twice.
func (s *Shard) recoverStoredGuarded(repair bool) (damage []*WALCorruptError, next uint64, err error) {
	segsLoaded := false
	defer func() {
		r := recover()
		if r == nil {
			return
		}
		err = &PanicError{Task: taskNames[taskReplay], Value: r, Stack: debug.Stack()}
		if !segsLoaded {
			for _, sg := range s.segs {
				sg.release()
			}
			s.segs, s.lost = nil, nil
		}
	}()
	return s.recoverStored(repair, &segsLoaded)
}

// openReplayFailed finishes opening a shard whose recovery panicked (pe):
// what replay put in the head is dropped (the panic may have left it
// half-written), and the shard serves its segments read-only, as
// openWALDamaged does, with ConditionReplayFailed on /ready.
func (s *Shard) openReplayFailed(pe *PanicError) *Shard {
	s.recordTask(taskReplay, pe)
	s.head = s.startHead(s.opts.Now(), 0)
	s.frozen = nil
	s.replayFailed = &ReplayFailedError{Shard: s.id, Panic: pe}
	s.walLost = append(s.walLost, lostUnit{kind: lossReplay, rows: -1, minTime: math.MinInt64, maxTime: math.MaxInt64,
		cause: fmt.Sprintf("replaying it at startup panicked: %v", pe.Value)})
	s.failed = s.replayFailed
	s.enqClosed = true
	close(s.stopping)
	s.opts.Logger.Error("recovering the source at startup panicked; recovered: the source serves its segments read-only, its write-ahead log is kept unchanged for the next start",
		"shard", s.id, "panic", fmt.Sprint(pe.Value), "segments", len(s.segs), "stack", string(pe.Stack))
	s.raiseCondition(Condition{Kind: ConditionReplayFailed, RefusesIngest: true,
		Detail: fmt.Sprintf("replaying the write-ahead log at startup failed (an internal error: %v; the server log has the stack). The source serves its %d segment(s) without the log's events and refuses events; the log files are kept unchanged, and a restart replays them again",
			s.relativePaths(fmt.Sprint(pe.Value)), len(s.segs))})
	return s
}
