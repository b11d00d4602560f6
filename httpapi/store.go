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

// store is the ingest pipeline every route shares once it has raw events
// for a source: normalise them (Logflare's rules), apply the source's drop
// filter and message keys, append them to the source's shard (durable when
// store returns nil), keep them for /recent, and count the request,
// its stored events (per route, with its body bytes: the worker's meter,
// which the caller started) and its drops. fates, when not
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
	s.stats.accepted(src, w.meter.route, len(w.events), w.meter.take(len(raws)))
	s.countDrops(src, DropFutureTimestamp, future, "timestamps more than an hour ahead of the server clock")
	s.countDrops(src, DropRule, dropped, "the source's drop_lql_string matched")
	return nil
}
