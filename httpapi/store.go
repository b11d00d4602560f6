package httpapi

import (
	"github.com/sediment/sediment/catalog"
	"github.com/sediment/sediment/event"
)

// eventFate is what became of one raw event handed to store.
type eventFate uint8

const (
	// fateStored: appended (durable once store returns nil).
	fateStored eventFate = iota
	// fateFuture: dropped, its timestamp more than event.FutureLimit ahead.
	fateFuture
	// fateFiltered: dropped by the source's drop_lql_string.
	fateFiltered
)

// dropReason names why events were not stored, for the drop counters.
type dropReason uint8

const (
	// dropFuture: a timestamp more than event.FutureLimit ahead.
	dropFuture dropReason = iota
	// dropLQL: matched the source's drop_lql_string.
	dropLQL
	// dropUnparsed: a syslog line (or Cloudflare NDJSON line) that did not
	// parse.
	dropUnparsed
	// dropRejected: an OTLP record, Loki entry or bulk item that a
	// protocol route refused (no source for it, a value it cannot store);
	// the client was told, per record.
	dropRejected
)

// countDropped adds n events of src (nil when no source was chosen) to the
// drop counter of reason. Every route counts its drops here, so that
// per-source counters need one change.
func (s *Server) countDropped(_ *catalog.Source, reason dropReason, n int) {
	if n <= 0 {
		return
	}
	switch reason {
	case dropFuture:
		s.stats.droppedFuture.Add(int64(n))
	case dropLQL:
		s.stats.droppedLQL.Add(int64(n))
	case dropUnparsed:
		s.stats.skippedLines.Add(int64(n))
	case dropRejected:
		s.stats.rejected.Add(int64(n))
	}
}

// store is the ingest pipeline every route shares once it has raw events
// for a source: normalise them (Logflare's rules), apply the source's drop
// filter and message keys, append them to the source's shard (durable when
// store returns nil), keep them for /recent, and count. fates, when not
// nil, receives one fate per raw event; the stored events are w.events,
// valid until the worker is reused.
func (s *Server) store(w *ingestWorker, src *catalog.Source, raws []event.Value, fates []eventFate) error {
	shard, err := s.eng.Shard(src.Token)
	if err != nil {
		return err
	}
	rules := s.rules.get(s.cat, src, s.log)
	now := s.opts.Now()
	w.norm.Reset()
	w.events = w.events[:0]
	var future, dropped int
	for i := range raws {
		ev, outcome := w.norm.Normalize(raws[i], now, event.NormalizeOptions{})
		fate := fateStored
		switch {
		case outcome == event.OutcomeDroppedFuture:
			fate = fateFuture
			future++
		case rules.drop != nil && rules.drop.Match(&ev):
			fate = fateFiltered
			dropped++
		default:
			if len(rules.messageKeys) > 0 {
				w.msg = rules.applyMessageKeys(&ev, w.msg[:0])
			}
			w.events = append(w.events, ev)
		}
		if fates != nil {
			fates[i] = fate
		}
	}
	// Append copies what it keeps, so the events may alias the request
	// body and the worker's buffers, which are reused after this returns.
	if err := shard.Append(s.baseCtx, w.events); err != nil {
		return err
	}
	s.recent.record(src.ID, w.events, &w.recent)
	s.stats.events.Add(int64(len(w.events)))
	s.countDropped(src, dropFuture, future)
	s.countDropped(src, dropLQL, dropped)
	return nil
}
