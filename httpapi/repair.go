package httpapi

import (
	"errors"

	"github.com/valyala/fasthttp"

	"github.com/sediment/sediment/engine"
)

// repairWAL answers POST /api/sources/:token_or_name/repair-wal (a
// private key): it repairs the damaged write-ahead log of one source while
// the server runs, without a restart (engine.RepairShardWAL: only the
// damaged records are dropped; the files as they were are kept in the
// source's quarantine/). 200 {"repaired": [...]} says, per log file, what
// was dropped and kept; 409 when the source's log is not damaged; 404 for
// an unknown source.
func (s *Server) repairWAL(ctx *fasthttp.RequestCtx, tokenOrName string) {
	if !s.authorizeManagement(ctx) {
		return
	}
	src := s.cat.SourceByName(tokenOrName)
	if src == nil {
		if src = s.lookupSource(ctx, tokenOrName); src == nil {
			return
		}
	}
	reps, err := s.eng.RepairShardWAL(src.Token)
	switch {
	case errors.Is(err, engine.ErrWALNotDamaged):
		sendError(ctx, fasthttp.StatusConflict, "the write-ahead log of source "+src.Name+" is not damaged: nothing to repair")
		return
	case errors.Is(err, engine.ErrClosed):
		sendStatic(ctx, fasthttp.StatusServiceUnavailable, bodyUnavailable)
		return
	case err != nil:
		s.log.Error("repair of a write-ahead log failed", "source_id", src.ID, "err", err)
		sendStatic(ctx, fasthttp.StatusInternalServerError, bodyInternal)
		return
	}
	type repaired struct {
		File          string `json:"file"`
		DroppedBytes  int64  `json:"dropped_bytes"`
		DroppedEvents int64  `json:"dropped_events"`
		// UnknownSpans counts dropped spans whose event count is unreadable.
		UnknownSpans int    `json:"dropped_spans_of_unknown_count"`
		KeptRecords  int    `json:"kept_records"`
		KeptEvents   int    `json:"kept_events"`
		SavedAs      string `json:"original_kept_as"`
		Summary      string `json:"summary"`
	}
	out := []repaired{}
	for _, r := range reps {
		out = append(out, repaired{File: r.File, DroppedBytes: r.BytesDropped, DroppedEvents: r.EventsDropped,
			UnknownSpans: r.UnknownDropped, KeptRecords: r.RecordsKept, KeptEvents: r.EventsKept, SavedAs: r.SavedAs, Summary: r.String()})
	}
	s.log.Warn("write-ahead log repaired on request", "source_id", src.ID, "files", len(out))
	sendJSON(ctx, fasthttp.StatusOK, struct {
		Repaired []repaired `json:"repaired"`
	}{out})
}
