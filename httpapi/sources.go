package httpapi

import (
	"math"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/sediment/sediment/catalog"
)

// sourceView is a source as the management API shows it (Logflare's field
// names; unset optional fields are null).
type sourceView struct {
	ID                     int64   `json:"id"`
	Token                  string  `json:"token"`
	Name                   string  `json:"name"`
	Description            *string `json:"description"`
	RetentionDays          *int    `json:"retention_days"`
	BigqueryTableTTL       *int    `json:"bigquery_table_ttl"`
	DropLQLString          *string `json:"drop_lql_string"`
	CustomEventMessageKeys *string `json:"custom_event_message_keys"`
	SortKey                *string `json:"sort_key"`       // Sediment's own: rows ordered by it, then time
	MaxDiskBytes           *int64  `json:"max_disk_bytes"` // Sediment's own: its size cap in bytes
	InsertedAt             string  `json:"inserted_at"`
	UpdatedAt              string  `json:"updated_at"`
}

func viewSource(s *catalog.Source) sourceView {
	v := sourceView{
		ID: s.ID, Token: s.Token, Name: s.Name,
		Description:            nullable(s.Description),
		DropLQLString:          nullable(s.DropLQL),
		CustomEventMessageKeys: nullable(s.CustomEventMessageKeys),
		SortKey:                nullable(s.SortKey),
		InsertedAt:             naiveTime(s.InsertedAt),
		UpdatedAt:              naiveTime(s.UpdatedAt),
	}
	if s.RetentionDays > 0 {
		days := s.RetentionDays
		v.RetentionDays, v.BigqueryTableTTL = &days, &days
	}
	if s.MaxDiskBytes > 0 {
		n := s.MaxDiskBytes
		v.MaxDiskBytes = &n
	}
	return v
}

// sourceRequest is the body of POST/PUT/PATCH /api/sources.
// bigquery_table_ttl is an alias of retention_days.
type sourceRequest struct {
	Name                   *string `json:"name"`
	Description            *string `json:"description"`
	RetentionDays          *int    `json:"retention_days"`
	BigqueryTableTTL       *int    `json:"bigquery_table_ttl"`
	DropLQLString          *string `json:"drop_lql_string"`
	CustomEventMessageKeys *string `json:"custom_event_message_keys"`
	SortKey                *string `json:"sort_key"`
	MaxDiskBytes           *int64  `json:"max_disk_bytes"`
}

func (r *sourceRequest) params() catalog.SourceParams {
	p := catalog.SourceParams{
		Name: r.Name, Description: r.Description, RetentionDays: r.RetentionDays,
		DropLQL: r.DropLQLString, CustomEventMessageKeys: r.CustomEventMessageKeys,
		SortKey: r.SortKey, MaxDiskBytes: r.MaxDiskBytes,
	}
	if p.RetentionDays == nil {
		p.RetentionDays = r.BigqueryTableTTL
	}
	return p
}

// listSources answers GET /api/sources.
func (s *Server) listSources(ctx *fasthttp.RequestCtx) {
	if !s.authorizeManagement(ctx) {
		return
	}
	srcs := s.cat.Sources()
	out := make([]sourceView, len(srcs))
	for i, src := range srcs {
		out[i] = viewSource(src)
	}
	sendJSON(ctx, fasthttp.StatusOK, out)
}

// lookupSource returns the source of a URL token or name, answering 404
// if none.
func (s *Server) lookupSource(ctx *fasthttp.RequestCtx, token string) *catalog.Source {
	src := s.sourceByTokenOrName(token)
	if src == nil {
		sendStatic(ctx, fasthttp.StatusNotFound, bodyNotFound)
	}
	return src
}

// sourceDetailView is a source as GET /api/sources/:token shows it: the
// fields of sourceView and, Sediment additions that Logflare clients
// ignore, "dropped_events": the events of accepted ingest requests that
// were not stored since the server started, by reason (drops.go), e.g.
// {"future_timestamp": 3, "drop_rule": 120}; and "rejected_requests": the
// ingest requests answered 429 since the server started, by reason
// (rejects.go), e.g. {"frozen_heads": 2}; {} when there were none.
// "effective_retention_days" is the retention its events are kept for:
// its own retention_days, else the server's --retention-days (null:
// forever). "deleted_events" and "deleted_bytes" are the stored events
// (and their bytes) deleted since its storage opened, by reason
// (retention, source_size_cap, global_size_cap), e.g. {"retention": 500};
// {} when none were.
type sourceDetailView struct {
	sourceView
	DroppedEvents          map[DropReason]int64   `json:"dropped_events"`
	RejectedRequests       map[RejectReason]int64 `json:"rejected_requests"`
	EffectiveRetentionDays *int                   `json:"effective_retention_days"`
	DeletedEvents          map[string]int64       `json:"deleted_events"`
	DeletedBytes           map[string]int64       `json:"deleted_bytes"`
}

// getSource answers GET /api/sources/:token.
func (s *Server) getSource(ctx *fasthttp.RequestCtx, token string) {
	if !s.authorizeManagement(ctx) {
		return
	}
	src := s.lookupSource(ctx, token)
	if src == nil {
		return
	}
	v := sourceDetailView{sourceView: viewSource(src), DroppedEvents: s.stats.droppedByReason(src.Token),
		RejectedRequests: s.stats.rejectedByReason(src.Token),
		DeletedEvents:    map[string]int64{}, DeletedBytes: map[string]int64{}}
	if days := s.retentionDays(src); days > 0 {
		v.EffectiveRetentionDays = &days
	}
	if sh := s.eng.LookupShard(src.Token); sh != nil {
		for _, d := range sh.Deletions() {
			if d.Events > 0 || d.Bytes > 0 {
				v.DeletedEvents[d.Reason.String()] = d.Events
				v.DeletedBytes[d.Reason.String()] = d.Bytes
			}
		}
	}
	sendJSON(ctx, fasthttp.StatusOK, v)
}

// createSource answers POST /api/sources: 201 with the source.
func (s *Server) createSource(ctx *fasthttp.RequestCtx) {
	if !s.authorizeManagement(ctx) {
		return
	}
	var req sourceRequest
	if !decodeBody(ctx, &req) {
		return
	}
	src, err := s.cat.CreateSource(req.params())
	if err != nil {
		s.answerChangeError(ctx, err)
		return
	}
	sendJSON(ctx, fasthttp.StatusCreated, viewSource(src))
}

// updateSource answers PUT (200 with the source) and PATCH (204) on
// /api/sources/:token.
func (s *Server) updateSource(ctx *fasthttp.RequestCtx, token string, patch bool) {
	if !s.authorizeManagement(ctx) {
		return
	}
	var req sourceRequest
	if !decodeBody(ctx, &req) {
		return
	}
	src, err := s.cat.UpdateSource(s.sourceToken(token), req.params())
	if err != nil {
		s.answerChangeError(ctx, err)
		return
	}
	if patch {
		sendNoContent(ctx)
		return
	}
	sendJSON(ctx, fasthttp.StatusOK, viewSource(src))
}

// deleteSource answers DELETE /api/sources/:token: 204; the source's
// events are dropped with it.
func (s *Server) deleteSource(ctx *fasthttp.RequestCtx, token string) {
	if !s.authorizeManagement(ctx) {
		return
	}
	if _, err := s.cat.DeleteSource(s.sourceToken(token)); err != nil {
		s.answerChangeError(ctx, err)
		return
	}
	sendNoContent(ctx)
}

// recentEvents answers GET /api/sources/:token/recent: the source's last
// events (at most 100), newest first, as a JSON array of event bodies.
func (s *Server) recentEvents(ctx *fasthttp.RequestCtx, token string) {
	if !s.authorizeManagement(ctx) {
		return
	}
	src := s.lookupSource(ctx, token)
	if src == nil {
		return
	}
	ctx.SetStatusCode(fasthttp.StatusOK)
	ctx.SetContentType(contentTypeJSON)
	cutoff := int64(math.MinInt64)
	if src.RetentionDays > 0 {
		cutoff = s.opts.Now().Add(-time.Duration(src.RetentionDays) * 24 * time.Hour).UnixMicro()
	}
	ctx.SetBody(s.recent.appendJSON(nil, src.ID, cutoff))
}
