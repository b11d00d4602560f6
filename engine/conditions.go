package engine

import (
	"slices"
	"strings"
	"sync"
	"time"
)

// ConditionKind names a way one source's storage is degraded. The values
// are shown to operators (/ready, logs, metrics labels): keep them stable.
type ConditionKind string

const (
	// ConditionDiskFull: a write failed for lack of space, or free space is
	// below the configured floor. Ingest is refused until a probe write and
	// fsync succeed again; queries keep working.
	ConditionDiskFull ConditionKind = "disk_full"
	// ConditionWALFailed: the write-ahead log could not be written or
	// synced for another reason; ingest is refused.
	ConditionWALFailed ConditionKind = "wal_failed"
	// ConditionWALDamaged: replay found a damaged write-ahead log. The
	// source serves what it has, read-only, until an operator repairs it.
	ConditionWALDamaged ConditionKind = "wal_damaged"
	// ConditionReplayFailed: recovering the source at startup panicked
	// (a bug). The source serves its segments, read-only, without its
	// log's events; the log is kept unchanged for the next start.
	ConditionReplayFailed ConditionKind = "replay_failed"
	// ConditionQuarantined: stored data was found damaged and set aside;
	// answers over the source miss it and say so.
	ConditionQuarantined ConditionKind = "quarantined"
	// ConditionBackgroundFailing: flush, compaction or retention failed and
	// is being retried.
	ConditionBackgroundFailing ConditionKind = "background_failing"
)

// Condition is one thing wrong with a source's storage.
type Condition struct {
	Kind ConditionKind
	// RefusesIngest is set while the source does not accept events.
	RefusesIngest bool
	// Detail says what happened and what to do, for operators. It names
	// files relative to the source's directory, never absolute paths.
	Detail string
	// Since is when the condition was first raised; Count how many times
	// it was raised since (a failure retried is raised again).
	Since time.Time
	Count int64
}

// conditions is a shard's set of current conditions, one per kind.
type conditions struct {
	mu   sync.Mutex
	byKd map[ConditionKind]*Condition
}

// raise sets (or refreshes) the condition of c.Kind. It returns true when
// the condition is new, so that callers log its first occurrence loudly.
func (cs *conditions) raise(c Condition, now time.Time) bool {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if cs.byKd == nil {
		cs.byKd = map[ConditionKind]*Condition{}
	}
	if old := cs.byKd[c.Kind]; old != nil {
		old.Count++
		old.Detail = c.Detail
		old.RefusesIngest = c.RefusesIngest
		return false
	}
	c.Since, c.Count = now, 1
	cs.byKd[c.Kind] = &c
	return true
}

// clear removes the condition of kind k, returning whether it was set.
func (cs *conditions) clear(k ConditionKind) bool {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if cs.byKd[k] == nil {
		return false
	}
	delete(cs.byKd, k)
	return true
}

// list returns the current conditions sorted by kind.
func (cs *conditions) list() []Condition {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	out := make([]Condition, 0, len(cs.byKd))
	for _, c := range cs.byKd {
		out = append(out, *c)
	}
	slices.SortFunc(out, func(a, b Condition) int {
		switch {
		case a.Kind < b.Kind:
			return -1
		case a.Kind > b.Kind:
			return 1
		}
		return 0
	})
	return out
}

// Conditions returns what is currently wrong with the shard's storage
// (nothing for a healthy shard), including what is wrong with the whole
// engine's disk (ConditionDiskFull), which every shard shares.
func (s *Shard) Conditions() []Condition {
	out := s.conds.list()
	if s.eng == nil {
		return out
	}
	if disk := s.eng.disk.conds.list(); len(disk) > 0 {
		out = append(out, disk...)
		slices.SortFunc(out, func(a, b Condition) int { return strings.Compare(string(a.Kind), string(b.Kind)) })
	}
	return out
}

// raiseCondition records a condition and logs it at error level the first
// time it is raised.
func (s *Shard) raiseCondition(c Condition) {
	if s.conds.raise(c, s.opts.Now()) {
		s.opts.Logger.Error("source degraded", "shard", s.id, "condition", string(c.Kind), "refuses_ingest", c.RefusesIngest, "detail", c.Detail)
	}
}

// clearCondition ends a condition and logs that it ended.
func (s *Shard) clearCondition(k ConditionKind) {
	if s.conds.clear(k) {
		s.opts.Logger.Info("source recovered", "shard", s.id, "condition", string(k))
	}
}

// ShardCondition is a condition with the shard it belongs to.
type ShardCondition struct {
	Shard string
	Condition
}

// Conditions returns the conditions of every shard, sorted by shard id.
func (e *Engine) Conditions() []ShardCondition {
	var out []ShardCondition
	for _, s := range e.Shards() {
		for _, c := range s.Conditions() {
			out = append(out, ShardCondition{Shard: s.id, Condition: c})
		}
	}
	return out
}
