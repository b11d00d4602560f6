package httpapi

import (
	"strings"

	"github.com/sediment/sediment/catalog"
	"github.com/sediment/sediment/engine"
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
// which the caller started) and its drops. fates, when not nil, receives
// one fate per raw event.
func (s *Server) store(w *ingestWorker, src *catalog.Source, raws []event.Value, fates []eventFate) error {
	_, err := s.storeEach(w, src, 0, func(fn func(event.Value) error, _ func(*event.Parser) bool) error {
		for i := range raws {
			if err := fn(raws[i]); err != nil {
				return err
			}
		}
		return nil
	}, fates)
	return err
}

// decodeError is an error of the raw events' source in storeEach: the
// request's body is at fault (4xx), not the engine.
type decodeError struct{ err error }

func (e *decodeError) Error() string { return e.err.Error() }
func (e *decodeError) Unwrap() error { return e.err }

// storeEach is store for raw events that each yields one at a time, each
// valid only during its call (a body parsed as it is read, see
// ingest.Decoder.Each): every event is normalised and encoded into the
// worker's batch as soon as it comes, so no request ever holds more than
// one event's value tree. Nothing is appended unless each returns nil; its
// error comes back as a *decodeError. sizeHint is about how many bytes of
// JSON the events take, when known (0 when not). It returns the number of
// raw events. When no rule of the source needs an event's value tree,
// storeEach hands each a take function too, which stores an event straight
// from the parser's text (engine.Batch.AddJSON) when it can: each offers it
// every event it parses before making a Value of it.
func (s *Server) storeEach(w *ingestWorker, src *catalog.Source, sizeHint int, each func(fn func(event.Value) error, take func(*event.Parser) bool) error, fates []eventFate) (int, error) {
	shard, err := s.eng.Shard(src.Token)
	if err != nil {
		return 0, err
	}
	rules := s.rules.get(s.cat, src, s.log)
	now := s.opts.Now()
	b := w.batchFor(s.eng)
	b.Grow(sizeHint)
	var n, future, dropped int
	// take stores an event straight from its JSON when no rule needs its
	// tree (Batch.AddJSON); each may offer it the events it parses.
	var take func(p *event.Parser) bool
	if rules.drop == nil && len(rules.messageKeys) == 0 {
		take = func(p *event.Parser) bool {
			w.norm.Reset()
			outcome, ok := b.AddJSON(p, &w.norm, now, event.NormalizeOptions{})
			if !ok {
				return false
			}
			fate := fateStored
			if outcome == event.OutcomeDroppedFuture {
				fate = fateFuture
				future++
			}
			if fates != nil {
				fates[n] = fate
			}
			n++
			return true
		}
	}
	err = each(func(raw event.Value) error {
		// The previous event is encoded: its memory can be reused.
		w.norm.Reset()
		fate := fateStored
		if rules.drop == nil && len(rules.messageKeys) == 0 {
			// No rule needs the event's tree: encode it from raw.
			if b.AddRaw(&w.norm, raw, now, event.NormalizeOptions{}) == event.OutcomeDroppedFuture {
				fate = fateFuture
				future++
			}
			if fates != nil {
				fates[n] = fate
			}
			n++
			return nil
		}
		ev, outcome := w.norm.Normalize(raw, now, event.NormalizeOptions{})
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
			b.Add(&ev)
		}
		if fates != nil {
			fates[n] = fate
		}
		n++
		return nil
	}, take)
	w.norm.Reset()
	if err != nil {
		return n, &decodeError{err}
	}
	if err := shard.AppendBatch(s.baseCtx, b); err != nil {
		return n, err
	}
	s.recent.recordBatch(src.ID, b, &w.recent)
	s.stats.accepted(src, w.meter.route, b.Len(), w.meter.take(n))
	s.countDrops(src, DropFutureTimestamp, future, "timestamps more than an hour ahead of the server clock")
	s.countDrops(src, DropRule, dropped, "the source's drop_lql_string matched")
	return n, nil
}

// batchFor returns the worker's batch for eng, emptied.
func (w *ingestWorker) batchFor(eng *engine.Engine) *engine.Batch {
	if w.batch == nil || w.batchEng != eng {
		w.batch, w.batchEng = eng.NewBatch(), eng
	}
	w.batch.Reset()
	return w.batch
}

// storedID returns the id of the j-th event the worker's last store kept.
func (w *ingestWorker) storedID(j int) string {
	e, _, err := w.idDec.Decode(w.batch.Event(j))
	if err != nil {
		return "" // not possible: the batch encoded it
	}
	return strings.Clone(e.ID)
}
