package engine

import (
	"context"
	"log/slog"
	"sync/atomic"
	"time"
)

// Stored events leave a shard for good for three reasons an operator
// chose: retention (events older than the source's retention, by event
// time), the source's size cap and the engine's global size cap (see
// sizecap.go). None is silent: every segment deleted is logged (retention
// at info level, the size caps at warn level, since they delete events
// the retention would keep) with its events, bytes and time range, and
// counted per reason (Shard.Deletions): segments, events and bytes.

// DeleteReason says why stored events were deleted.
type DeleteReason int

const (
	// DeleteRetention: older than the source's retention.
	DeleteRetention DeleteReason = iota
	// DeleteSourceSizeCap: the source's segments were over its size cap
	// (Shard.SetMaxDiskBytes).
	DeleteSourceSizeCap
	// DeleteGlobalSizeCap: all sources' segments together were over
	// Options.MaxDiskBytes.
	DeleteGlobalSizeCap
	numDeleteReasons
)

var deleteReasonNames = [numDeleteReasons]string{"retention", "source_size_cap", "global_size_cap"}

// String returns the reason as metrics and the API name it.
func (r DeleteReason) String() string {
	if r < 0 || r >= numDeleteReasons {
		return "unknown"
	}
	return deleteReasonNames[r]
}

// Deleted is what one reason deleted from a shard since the shard opened.
type Deleted struct {
	Reason DeleteReason
	// Segments deleted whole; retention's rewrites of a segment without
	// its expired rows delete none, but their events and bytes count.
	Segments int64
	Events   int64
	// Bytes of segment files freed.
	Bytes int64
}

// deletionCounters count a shard's deletions per reason.
type deletionCounters struct {
	segments, events, bytes [numDeleteReasons]atomic.Int64
}

// Deletions returns what each reason deleted since the shard opened, one
// entry per reason (zero when it deleted nothing), in DeleteReason order.
func (s *Shard) Deletions() []Deleted {
	out := make([]Deleted, numDeleteReasons)
	for r := range numDeleteReasons {
		out[r] = Deleted{Reason: r, Segments: s.deleted.segments[r].Load(),
			Events: s.deleted.events[r].Load(), Bytes: s.deleted.bytes[r].Load()}
	}
	return out
}

// countDeleted adds events and bytes deleted for reason without a segment
// deleted whole (retention rewriting a segment without its expired rows).
func (s *Shard) countDeleted(reason DeleteReason, events, bytes int64) {
	s.deleted.events[reason].Add(events)
	s.deleted.bytes[reason].Add(max(bytes, 0))
}

// deleteSegments removes victims from the shard for reason, in one step
// for queries (snapshots holding them keep reading them; each file goes
// with its last reader), then logs and counts each one that was still
// published (one a quarantine set aside meanwhile is not). attrs are added
// to each log line (the cap and what was stored). The caller holds
// compactMu, so that no compaction is reading them. It returns how many
// it deleted, and the error of making the deletion durable.
func (s *Shard) deleteSegments(victims []*segRef, reason DeleteReason, attrs ...any) (int, error) {
	if len(victims) == 0 {
		return 0, nil
	}
	gone := s.replaceSegments(victims, nil)
	level, msg := slog.LevelWarn, "size cap deleted a segment: its events are no longer stored"
	if reason == DeleteRetention {
		level, msg = slog.LevelInfo, "retention deleted a segment: all its events are older than the retention"
	}
	for _, sg := range gone {
		rows, bytes := int64(sg.r.Rows()), sg.r.Size()
		minT, maxT := sg.r.TimeRange()
		s.deleted.segments[reason].Add(1)
		s.deleted.events[reason].Add(rows)
		s.deleted.bytes[reason].Add(bytes)
		if reason == DeleteRetention {
			// Retention's own counters (ShardInfo.SegmentsPurged, RowsExpired).
			s.stats.segmentsPurged.Add(1)
			s.stats.rowsExpired.Add(rows)
		}
		s.opts.Logger.Log(context.Background(), level, msg, append([]any{"shard", s.id, "reason", reason.String(), "segment", segName(sg.id),
			"events", rows, "bytes", bytes,
			"min_time", time.UnixMicro(minT).UTC().Format(time.RFC3339Nano),
			"max_time", time.UnixMicro(maxT).UTC().Format(time.RFC3339Nano)}, attrs...)...)
	}
	if len(gone) == 0 {
		return 0, nil
	}
	return len(gone), s.opts.FS.SyncDir(s.segDir)
}
