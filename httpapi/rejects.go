package httpapi

import (
	"errors"
	"maps"
	"time"

	"github.com/sediment/sediment/catalog"
	"github.com/sediment/sediment/engine"
)

// RejectReason says why an ingest request was answered 429 (Too Many
// Requests, with Retry-After): which budget was spent. Every such request
// is counted per source and reason, shown by GET /api/sources/:token as
// "rejected_requests", and logged at warn level: the first of a reason for
// a source at once, later ones at most once per rejectLogEvery, with how
// many there were since the last line.
type RejectReason string

const (
	// RejectFrozenHeads: the source's heads waiting to be written to disk
	// reached their bound (engine.Options.MaxFrozenHeads) and none was
	// written within the admission wait: the disk does not keep up.
	RejectFrozenHeads RejectReason = engine.BackpressureFrozenHeads
	// RejectHeadMemory: the heads of every source held twice the engine's
	// head memory budget and none was written within the admission wait.
	RejectHeadMemory RejectReason = engine.BackpressureHeadMemory
	// RejectRequestBodies: the request bodies held in memory at once
	// reached Options.MaxInflightBodyBytes.
	RejectRequestBodies RejectReason = "request_bodies"
)

// rejectLogEvery paces the log lines about 429s of one reason for one
// source.
const rejectLogEvery = 30 * time.Second

// rejectLogState is when a reason's last line was logged and how many
// rejects came since.
type rejectLogState struct {
	last     time.Time
	unlogged int64
}

// rejectReason returns the reason of an engine error that answers 429.
func rejectReason(err error) RejectReason {
	var bp *engine.BackpressureError
	if errors.As(err, &bp) {
		return RejectReason(bp.Reason)
	}
	return RejectFrozenHeads
}

// countRejected counts one request of src (nil: no source known) answered
// 429 for reason, and logs it as rejectLogState allows; detail says more.
func (s *Server) countRejected(src *catalog.Source, reason RejectReason, detail string) {
	token, name := noSource, "(no source)"
	if src != nil {
		token, name = src.Token, src.Name
	}
	sc := s.stats.source(token)
	now := time.Now()
	sc.mu.Lock()
	if sc.rejected == nil {
		sc.rejected = make(map[RejectReason]int64)
		sc.rejectLog = make(map[RejectReason]*rejectLogState)
	}
	sc.rejected[reason]++
	total := sc.rejected[reason]
	st := sc.rejectLog[reason]
	if st == nil {
		st = &rejectLogState{}
		sc.rejectLog[reason] = st
	}
	st.unlogged++
	since := st.unlogged
	log := st.last.IsZero() || now.Sub(st.last) >= rejectLogEvery
	if log {
		st.last, st.unlogged = now, 0
	}
	sc.mu.Unlock()
	if log {
		s.log.Warn("ingest request refused with 429 (Too Many Requests): a budget is spent; counted in GET /api/sources/:token (rejected_requests), logged at most every 30s per source and reason",
			"source", name, "source_token", token, "reason", string(reason), "detail", detail,
			"rejected_since_last_line", since, "rejected_total", total)
	}
}

// rejectedByReason returns a copy of the source's 429 counts (empty, not
// nil, when there are none).
func (c *ingestCounters) rejectedByReason(token string) map[RejectReason]int64 {
	c.mu.RLock()
	sc := c.sources[token]
	c.mu.RUnlock()
	out := map[RejectReason]int64{}
	if sc != nil {
		sc.mu.Lock()
		maps.Copy(out, sc.rejected)
		sc.mu.Unlock()
	}
	return out
}

// Rejected returns the requests answered 429 for reason over every source.
func (st Stats) Rejected(reason RejectReason) int64 {
	var n int64
	for _, src := range st.Sources {
		n += src.Rejected[reason]
	}
	return n
}
