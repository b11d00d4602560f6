package engine

import (
	"time"
)

// Retention keeps a source's events for RetentionDays by event time
// (the timestamp field), whatever segment or head they are in:
//
//   - Queries never see an event older than the cutoff: every snapshot
//     carries the cutoff of the moment it was taken, and its scans read
//     from there (whole segments and blocks before it are skipped by their
//     time ranges).
//   - ApplyRetention deletes segments entirely older than the cutoff, and
//     rewrites a segment that straddles it once at least a quarter of its
//     rows have expired, keeping the rows at or after the cutoff (the
//     merge compaction uses). Below that share, rewriting a whole segment
//     to drop a few rows costs more disk writes than the space is worth;
//     queries hide those rows meanwhile.
//   - Compaction leaves expired rows out of the segments it writes.

// retentionRewriteShare is the share of a segment's rows that must have
// expired before retention rewrites it.
const retentionRewriteShare = 4 // one in four

// retentionCutoff returns the oldest event time (µs) the shard keeps now,
// or noCutoff when it keeps everything.
func (s *Shard) retentionCutoff() int64 {
	days := s.retentionDays.Load()
	if days <= 0 {
		return noCutoff
	}
	return s.opts.Now().Add(-time.Duration(days) * 24 * time.Hour).UnixMicro()
}

// ApplyRetention deletes the segments whose events are all older than the
// shard's retention and rewrites those that straddle the cutoff with a
// quarter or more of their rows expired. It returns how many segments it
// deleted or rewrote. A failure (or a panic, recovered) leaves the
// segments as they were and is retried by the background loop.
func (s *Shard) ApplyRetention() (int, error) {
	if s.opts.ReadOnly {
		return 0, ErrReadOnly
	}
	if s.replayFailed != nil {
		return 0, s.replayFailed
	}
	var n int
	err := s.supervised(taskRetention, func() (err error) {
		n, err = s.applyRetention()
		return err
	})
	return n, err
}

func (s *Shard) applyRetention() (int, error) {
	cutoff := s.retentionCutoff()
	if cutoff == noCutoff {
		return 0, nil
	}
	// Compaction replaces segments too: one of them at a time.
	s.compactMu.Lock()
	defer s.compactMu.Unlock()
	var expired, straddling []*segRef
	s.mu.RLock()
	for _, sg := range s.segs {
		minT, maxT := sg.r.TimeRange()
		switch {
		case maxT < cutoff:
			expired = append(expired, sg)
		case minT < cutoff:
			sg.acquire()
			straddling = append(straddling, sg)
		}
	}
	s.mu.RUnlock()
	defer func() {
		for _, sg := range straddling {
			sg.release()
		}
	}()
	done := 0
	if len(expired) > 0 {
		n, err := s.deleteSegments(expired, DeleteRetention, "retention_days", s.retentionDays.Load())
		done += n
		if err != nil {
			return done, err
		}
	}
	for _, sg := range straddling {
		ok, err := s.rewriteWithout(sg, cutoff)
		if err != nil {
			return done, err
		}
		if ok {
			done++
		}
	}
	return done, nil
}

// rewriteWithout replaces sg with a segment of its rows at or after
// cutoff, when at least a quarter of its rows are older.
func (s *Shard) rewriteWithout(sg *segRef, cutoff int64) (bool, error) {
	src, err := newMergeSource([]*segRef{sg}, cutoff, s.SortKey(), s.opts.BlockRows)
	if err != nil {
		return false, err
	}
	rows := sg.r.Rows()
	if (rows-src.rows())*retentionRewriteShare < rows {
		return false, nil
	}
	if err := s.eng.roomToRewrite([]*segRef{sg}, "retention"); err != nil {
		return false, err
	}
	replaces, err := s.replacesOf([]*segRef{sg})
	if err != nil {
		return false, err
	}
	meta := segMeta{walLast: sg.meta.walLast, created: s.opts.Now().UnixMicro(), replaces: replaces}
	s.mu.Lock()
	id := s.nextSeg
	s.nextSeg++
	s.mu.Unlock()
	var ref *segRef
	if src.rows() > 0 {
		if ref, err = s.writeSegment(id, src, meta, s.opts.CompactZstdLevel); err != nil {
			return false, err
		}
	}
	s.replaceSegments([]*segRef{sg}, ref)
	s.stats.segmentsRewritten.Add(1)
	s.stats.rowsExpired.Add(int64(rows - src.rows()))
	freed := sg.r.Size()
	if ref != nil {
		freed -= ref.r.Size()
	}
	s.countDeleted(DeleteRetention, int64(rows-src.rows()), freed)
	return true, nil
}
