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
	SortKey                *string `json:"sort_key"` // Sediment's own: rows ordered by it, then time
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
}

func (r *sourceRequest) params() catalog.SourceParams {
	p := catalog.SourceParams{
		Name: r.Name, Description: r.Description, RetentionDays: r.RetentionDays,
		DropLQL: r.DropLQLString, CustomEventMessageKeys: r.CustomEventMessageKeys,
		SortKey: r.SortKey,
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
type sourceDetailView struct {
	sourceView
	DroppedEvents    map[DropReason]int64   `json:"dropped_events"`
	RejectedRequests map[RejectReason]int64 `json:"rejected_requests"`
}

// getSource answers GET /api/sources/:token.
func (s *Server) getSource(ctx *fasthttp.RequestCtx, token string) {
	if !s.authorizeManagement(ctx) {
		return
	}
	if src := s.lookupSource(ctx, token); src != nil {
		sendJSON(ctx, fasthttp.StatusOK, sourceDetailView{viewSource(src), s.stats.droppedByReason(src.Token), s.stats.rejectedByReason(src.Token)})
	}
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
