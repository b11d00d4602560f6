package engine

import (
	"errors"
	"fmt"
	"path/filepath"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// A shard's background work (flushing heads, compaction, retention, the
// log's periodic fsync, committing batches) runs supervised: a failure or
// a panic is recovered, logged (with the stack for a panic), counted per
// task, and retried later with exponential backoff, while
// ConditionBackgroundFailing says so; the next success clears it. Each
// task leaves the shard's published files as they were when it fails: a
// segment being written is a temporary file until it is complete, and is
// removed when the task fails or panics.

// backgroundTask is a kind of work a shard does in the background.
type backgroundTask int

const (
	taskFlush backgroundTask = iota
	taskCompaction
	taskRetention
	taskSizeCap // the source's and the global size caps (sizecap.go)
	taskWALSync // buffered mode's periodic fsync: not retried, a failure stops ingest
	taskCommit  // the write path's committer: not retried, a panic stops ingest
	taskReplay  // recovery at open: not retried, a panic makes the shard read-only (replayguard.go)
	numTasks
)

var taskNames = [numTasks]string{"flush", "compaction", "retention", "size_cap", "wal_sync", "commit", "replay"}

// PanicError is a panic recovered in a shard's work, with its stack.
type PanicError struct {
	Task  string
	Value any
	Stack []byte
}

func (e *PanicError) Error() string { return fmt.Sprintf("%s panicked: %v", e.Task, e.Value) }

// TaskStats describes one kind of a shard's background work since the
// shard opened.
type TaskStats struct {
	Task string // flush, compaction, retention, size_cap, wal_sync, commit or replay
	// Failures counts failed runs, panics included; Panics the panics.
	Failures int64
	Panics   int64
	// Consecutive is the failures since the last success (0: healthy);
	// RetryAt is when the next attempt is due while failing.
	Consecutive int64
	RetryAt     time.Time
	LastError   string
}

// taskState is the supervision record of one task of one shard.
type taskState struct {
	failures, panics atomic.Int64
	mu               sync.Mutex
	consecutive      int64
	retryAt          time.Time
	lastErr          string
}

// supervised runs fn as task t, recovering a panic into a *PanicError,
// and records the outcome. Every entry point of background work goes
// through it: the background loops and the exported Flush, Compact and
// ApplyRetention alike.
func (s *Shard) supervised(t backgroundTask, fn func() error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = &PanicError{Task: taskNames[t], Value: r, Stack: debug.Stack()}
		}
		s.recordTask(t, err)
	}()
	return fn()
}

// recordTask counts a task's outcome, schedules its retry and raises or
// clears ConditionBackgroundFailing.
func (s *Shard) recordTask(t backgroundTask, err error) {
	st := &s.tasks[t]
	if err == nil {
		st.mu.Lock()
		was := st.consecutive
		st.consecutive, st.retryAt = 0, time.Time{}
		st.mu.Unlock()
		if was > 0 {
			s.opts.Logger.Info("background task recovered", "shard", s.id, "task", taskNames[t], "after_failures", was)
			s.updateBackgroundCondition()
		}
		return
	}
	if errors.Is(err, ErrClosed) || errors.Is(err, ErrReadOnly) {
		return // not a failure of the work: the shard is going away
	}
	st.failures.Add(1)
	var pe *PanicError
	panicked := errors.As(err, &pe)
	if panicked {
		st.panics.Add(1)
	}
	st.mu.Lock()
	st.consecutive++
	delay := s.retryDelay(st.consecutive)
	st.retryAt = time.Now().Add(delay)
	st.lastErr = s.relativePaths(err.Error())
	n := st.consecutive
	st.mu.Unlock()
	if t >= taskWALSync {
		// Not retried: the caller stops the shard's ingest (Shard.fail,
		// openReplayFailed), which logs and raises a condition.
		if panicked && t != taskReplay {
			s.opts.Logger.Error("write path panicked; recovered", "shard", s.id, "task", taskNames[t],
				"panic", fmt.Sprint(pe.Value), "stack", string(pe.Stack))
		}
		return
	}
	if panicked {
		s.opts.Logger.Error("background task panicked; recovered, the source's files are unchanged", "shard", s.id, "task", taskNames[t],
			"panic", fmt.Sprint(pe.Value), "failures_in_a_row", n, "retry_in", delay, "stack", string(pe.Stack))
	} else {
		s.opts.Logger.Error("background task failed; the source's files are unchanged", "shard", s.id, "task", taskNames[t],
			"err", err, "failures_in_a_row", n, "retry_in", delay)
	}
	s.updateBackgroundCondition()
}

// retryDelay is the backoff after n failures in a row: BackgroundRetryMin
// doubling up to BackgroundRetryMax.
func (s *Shard) retryDelay(n int64) time.Duration {
	d := s.opts.BackgroundRetryMin
	for i := int64(1); i < n && d < s.opts.BackgroundRetryMax; i++ {
		d *= 2
	}
	return min(d, s.opts.BackgroundRetryMax)
}

// taskDue reports whether task t may run now: it is healthy, or its retry
// time has come.
func (s *Shard) taskDue(t backgroundTask) bool {
	st := &s.tasks[t]
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.consecutive == 0 || !time.Now().Before(st.retryAt)
}

// retrySoon ends task t's backoff: its next attempt may run at once
// (the cause of its failures is gone). The flusher is woken for it.
func (s *Shard) retrySoon(t backgroundTask) {
	st := &s.tasks[t]
	st.mu.Lock()
	st.retryAt = time.Time{}
	st.mu.Unlock()
	if t == taskFlush {
		select {
		case s.flushKick <- struct{}{}:
		default:
		}
	}
}

// taskRetryIn returns how long until task t's retry, or false when it is
// not failing.
func (s *Shard) taskRetryIn(t backgroundTask) (time.Duration, bool) {
	st := &s.tasks[t]
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.consecutive == 0 {
		return 0, false
	}
	return max(0, time.Until(st.retryAt)), true
}

// updateBackgroundCondition raises ConditionBackgroundFailing naming the
// failing tasks, or clears it when none is.
func (s *Shard) updateBackgroundCondition() {
	var parts []string
	for t := range taskWALSync { // the retried tasks; the others stop ingest instead
		st := &s.tasks[t]
		st.mu.Lock()
		if st.consecutive > 0 {
			parts = append(parts, fmt.Sprintf("%s failed %d time(s) in a row (last: %s)", taskNames[t], st.consecutive, st.lastErr))
		}
		st.mu.Unlock()
	}
	if len(parts) == 0 {
		s.clearCondition(ConditionBackgroundFailing)
		return
	}
	s.raiseCondition(Condition{Kind: ConditionBackgroundFailing,
		Detail: strings.Join(parts, "; ") + "; retrying with backoff, stored data is unchanged"})
}

// taskStats returns the supervision counters of every task.
func (s *Shard) taskStats() []TaskStats {
	out := make([]TaskStats, 0, numTasks)
	for t := range numTasks {
		st := &s.tasks[t]
		st.mu.Lock()
		out = append(out, TaskStats{Task: taskNames[t], Failures: st.failures.Load(), Panics: st.panics.Load(),
			Consecutive: st.consecutive, RetryAt: st.retryAt, LastError: st.lastErr})
		st.mu.Unlock()
	}
	return out
}

// relativePaths removes the shard's directory from a message, so that
// what operators and clients see names files within the source.
func (s *Shard) relativePaths(msg string) string {
	return strings.ReplaceAll(msg, s.dir+string(filepath.Separator), "")
}

// runLoop runs a background loop, restarting it after a panic (logged
// with its stack) until stop is closed: no goroutine of the engine may
// take the process down.
func runLoop(o *Options, name string, stop <-chan struct{}, loop func()) {
	delay := o.BackgroundRetryMin
	for {
		panicked := func() (panicked bool) {
			defer func() {
				if r := recover(); r != nil {
					panicked = true
					o.Logger.Error("background loop panicked; restarting it", "loop", name, "panic", fmt.Sprint(r), "stack", string(debug.Stack()))
				}
			}()
			loop()
			return false
		}()
		if !panicked {
			return
		}
		select {
		case <-stop:
			return
		case <-time.After(delay):
		}
		delay = min(2*delay, o.BackgroundRetryMax)
	}
}
