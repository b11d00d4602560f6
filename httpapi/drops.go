package httpapi

import (
	"maps"
	"sync"
	"sync/atomic"

	"github.com/sediment/sediment/catalog"
)

// DropReason says why ingest dropped events of a request it answered 200
// (Logflare's status for these cases, docs/compat/logflare.md §3.8). Nothing is
// dropped silently: every drop is counted per source and reason, shown by
// GET /api/sources/:token as "dropped_events", and the first drop of each
// reason for a source is logged at warn level.
//
// The set is open: code that drops events for a reason of its own declares
// a DropReason constant (lower_snake_case, stable: it is part of the API)
// next to these and counts it with Server.countDrops.
type DropReason string

const (
	// DropFutureTimestamp: the event's timestamp is more than an hour
	// ahead of the server's clock (Logflare drops these too).
	DropFutureTimestamp DropReason = "future_timestamp"
	// DropRule: the event matched its source's drop_lql_string.
	DropRule DropReason = "drop_rule"
	// DropUnparseableLine: a line of a logplex, syslog or Cloudflare
	// Logpush body did not parse and was skipped.
	DropUnparseableLine DropReason = "unparseable_line"
	// DropEmptyBatch: the request held no event at all (an empty body,
	// {"batch": []}, [], a body of blank lines). It counts requests, one
	// each, since there is no event to count.
	DropEmptyBatch DropReason = "empty_batch"
	// DropRejected: an OTLP record, Loki entry, bulk item or syslog
	// message that a protocol route refused with a per-record answer (no
	// source for it, a value that cannot be stored).
	DropRejected DropReason = "rejected"
)

// noSource is the token under which drops are counted that no source
// could be chosen for (a protocol record routed nowhere).
const noSource = ""

// ingestCounters are the server's ingest totals, overall and per source.
type ingestCounters struct {
	requests, events atomic.Int64

	mu      sync.RWMutex
	sources map[string]*sourceCounters // by source token
}

// sourceCounters are one source's totals.
type sourceCounters struct {
	requests, events atomic.Int64

	mu      sync.Mutex
	dropped map[DropReason]int64
	routes  map[string]*routeCounts // by route name (metricroute.go)
	// rejected counts requests answered 429 (rejects.go), by reason, and
	// rejectLog paces the log lines about them.
	rejected  map[RejectReason]int64
	rejectLog map[RejectReason]*rejectLogState
}

// routeCounts are what one route stored in one source: events, and the
// request body bytes that brought them (see ingestMeter).
type routeCounts struct{ events, bytes int64 }

// source returns the counters of the source with token, creating them.
func (c *ingestCounters) source(token string) *sourceCounters {
	c.mu.RLock()
	sc := c.sources[token]
	c.mu.RUnlock()
	if sc != nil {
		return sc
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if sc = c.sources[token]; sc == nil {
		if c.sources == nil {
			c.sources = make(map[string]*sourceCounters)
		}
		sc = &sourceCounters{}
		c.sources[token] = sc
	}
	return sc
}

// forget drops a deleted source's counters.
func (c *ingestCounters) forget(token string) {
	c.mu.Lock()
	delete(c.sources, token)
	c.mu.Unlock()
}

// accepted counts one request of route that stored events in src, how
// many it stored, and its body bytes' share for src (a protocol request
// that spans sources counts once per source).
func (c *ingestCounters) accepted(src *catalog.Source, route string, events int, bytes int64) {
	c.requests.Add(1)
	c.events.Add(int64(events))
	sc := c.source(src.Token)
	sc.requests.Add(1)
	sc.events.Add(int64(events))
	if route == "" {
		route = routeOther // a caller that did not start its meter
	}
	sc.mu.Lock()
	defer sc.mu.Unlock()
	rc := sc.routes[route]
	if rc == nil {
		if sc.routes == nil {
			sc.routes = make(map[string]*routeCounts)
		}
		rc = &routeCounts{}
		sc.routes[route] = rc
	}
	rc.events += int64(events)
	rc.bytes += bytes
}

// drop adds n drops of reason to the source's counts and reports whether
// they are the first of that reason for the source.
func (sc *sourceCounters) drop(reason DropReason, n int64) (first bool) {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	if sc.dropped == nil {
		sc.dropped = make(map[DropReason]int64)
	}
	_, seen := sc.dropped[reason]
	sc.dropped[reason] += n
	return !seen
}

// droppedByReason returns a copy of the source's drop counts (empty, not
// nil, when there are none).
func (c *ingestCounters) droppedByReason(token string) map[DropReason]int64 {
	c.mu.RLock()
	sc := c.sources[token]
	c.mu.RUnlock()
	out := map[DropReason]int64{}
	if sc != nil {
		sc.mu.Lock()
		maps.Copy(out, sc.dropped)
		sc.mu.Unlock()
	}
	return out
}

// countDrops records n events of src dropped for reason; src is nil when
// no source could be chosen for them (they are counted under noSource).
// The first drop of a reason for a source is logged at warn level, with
// detail saying more when there is more to say; later ones are only
// counted.
func (s *Server) countDrops(src *catalog.Source, reason DropReason, n int, detail string) {
	if n <= 0 {
		return
	}
	token, name := noSource, "(no source)"
	if src != nil {
		token, name = src.Token, src.Name
	}
	if s.stats.source(token).drop(reason, int64(n)) {
		attrs := []any{"source", name, "source_token", token, "reason", string(reason), "count", n}
		if detail != "" {
			attrs = append(attrs, "detail", detail)
		}
		s.log.Warn("ingest dropped events of a request it accepted; further drops of this reason for this source are counted in GET /api/sources/:token (dropped_events), not logged", attrs...)
	}
}

// Stats are running totals since the server started.
type Stats struct {
	// IngestRequests counts ingest requests answered 200.
	IngestRequests int64
	// Events counts events stored.
	Events int64
	// Sources holds the totals of each source that has had an accepted
	// ingest request or a drop, by source token; drops no source could be
	// chosen for are under the empty token.
	Sources map[string]SourceStats
}

// SourceStats are one source's ingest totals.
type SourceStats struct {
	IngestRequests int64
	Events         int64
	// Dropped counts events answered 200 but not stored, by reason.
	Dropped map[DropReason]int64
	// Rejected counts requests answered 429, by reason (rejects.go).
	Rejected map[RejectReason]int64
}

// Dropped returns the drops of reason over every source.
func (st Stats) Dropped(reason DropReason) int64 {
	var n int64
	for _, src := range st.Sources {
		n += src.Dropped[reason]
	}
	return n
}

// Stats returns the running totals.
func (s *Server) Stats() Stats {
	c := &s.stats
	st := Stats{IngestRequests: c.requests.Load(), Events: c.events.Load(), Sources: map[string]SourceStats{}}
	c.mu.RLock()
	sources := maps.Clone(c.sources)
	c.mu.RUnlock()
	for tok, sc := range sources {
		sc.mu.Lock()
		dropped := maps.Clone(sc.dropped)
		rejected := maps.Clone(sc.rejected)
		sc.mu.Unlock()
		if dropped == nil {
			dropped = map[DropReason]int64{}
		}
		if rejected == nil {
			rejected = map[RejectReason]int64{}
		}
		st.Sources[tok] = SourceStats{IngestRequests: sc.requests.Load(), Events: sc.events.Load(), Dropped: dropped, Rejected: rejected}
	}
	return st
}
