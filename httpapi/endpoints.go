package httpapi

import (
	"github.com/valyala/fasthttp"

	"github.com/sediment/sediment/catalog"
)

// endpointView is an endpoint as the management API shows it (the fields
// of docs/compat/logflare.md §5.3).
type endpointView struct {
	ID                         int64             `json:"id"`
	Token                      string            `json:"token"`
	Name                       string            `json:"name"`
	Description                *string           `json:"description"`
	Query                      string            `json:"query"`
	Language                   string            `json:"language"`
	SourceMapping              map[string]string `json:"source_mapping"`
	Sandboxable                bool              `json:"sandboxable"`
	CacheDurationSeconds       int               `json:"cache_duration_seconds"`
	ProactiveRequeryingSeconds int               `json:"proactive_requerying_seconds"`
	MaxLimit                   int               `json:"max_limit"`
	EnableAuth                 bool              `json:"enable_auth"`
	Labels                     *string           `json:"labels"`
	RedactPII                  bool              `json:"redact_pii"`
	EnableDynamicReservation   bool              `json:"enable_dynamic_reservation"`
	BackendID                  *int64            `json:"backend_id"`
	InsertedAt                 string            `json:"inserted_at"`
	UpdatedAt                  string            `json:"updated_at"`
}

func viewEndpoint(e *catalog.Endpoint) endpointView {
	mapping := e.SourceMapping
	if mapping == nil {
		mapping = map[string]string{}
	}
	return endpointView{
		ID: e.ID, Token: e.Token, Name: e.Name, Description: nullable(e.Description),
		Query: e.Query, Language: e.Language, SourceMapping: mapping,
		Sandboxable: e.Sandboxable, CacheDurationSeconds: e.CacheDurationSeconds,
		ProactiveRequeryingSeconds: e.ProactiveRequeryingSeconds, MaxLimit: e.MaxLimit,
		EnableAuth: e.EnableAuth, Labels: nullable(e.Labels), RedactPII: e.RedactPII,
		EnableDynamicReservation: e.EnableDynamicReservation,
		InsertedAt:               naiveTime(e.InsertedAt), UpdatedAt: naiveTime(e.UpdatedAt),
	}
}

// endpointRequest is the body of POST/PUT/PATCH /api/endpoints.
type endpointRequest struct {
	Name                       *string           `json:"name"`
	Query                      *string           `json:"query"`
	Description                *string           `json:"description"`
	Language                   *string           `json:"language"`
	SourceMapping              map[string]string `json:"source_mapping"`
	Sandboxable                *bool             `json:"sandboxable"`
	CacheDurationSeconds       *int              `json:"cache_duration_seconds"`
	ProactiveRequeryingSeconds *int              `json:"proactive_requerying_seconds"`
	MaxLimit                   *int              `json:"max_limit"`
	EnableAuth                 *bool             `json:"enable_auth"`
	RedactPII                  *bool             `json:"redact_pii"`
	EnableDynamicReservation   *bool             `json:"enable_dynamic_reservation"`
	Labels                     *string           `json:"labels"`
}

func (r *endpointRequest) params() catalog.EndpointParams {
	return catalog.EndpointParams{
		Name: r.Name, Query: r.Query, Description: r.Description, Language: r.Language,
		SourceMapping: r.SourceMapping, Sandboxable: r.Sandboxable,
		CacheDurationSeconds: r.CacheDurationSeconds, ProactiveRequeryingSeconds: r.ProactiveRequeryingSeconds,
		MaxLimit: r.MaxLimit, EnableAuth: r.EnableAuth, RedactPII: r.RedactPII,
		EnableDynamicReservation: r.EnableDynamicReservation, Labels: r.Labels,
	}
}

// listEndpoints answers GET /api/endpoints.
func (s *Server) listEndpoints(ctx *fasthttp.RequestCtx) {
	if !s.authorizeManagement(ctx) {
		return
	}
	eps := s.cat.Endpoints()
	out := make([]endpointView, len(eps))
	for i, e := range eps {
		out[i] = viewEndpoint(e)
	}
	sendJSON(ctx, fasthttp.StatusOK, out)
}

// getEndpoint answers GET /api/endpoints/:token.
func (s *Server) getEndpoint(ctx *fasthttp.RequestCtx, token string) {
	if !s.authorizeManagement(ctx) {
		return
	}
	e := s.cat.EndpointByToken(canonical(token))
	if e == nil {
		sendStatic(ctx, fasthttp.StatusNotFound, bodyNotFound)
		return
	}
	sendJSON(ctx, fasthttp.StatusOK, viewEndpoint(e))
}

// createEndpoint answers POST /api/endpoints: 201 with the endpoint, 422
// when a field (or the SQL) is invalid.
func (s *Server) createEndpoint(ctx *fasthttp.RequestCtx) {
	if !s.authorizeManagement(ctx) {
		return
	}
	var req endpointRequest
	if !decodeBody(ctx, &req) {
		return
	}
	e, err := s.cat.CreateEndpoint(req.params())
	if err != nil {
		s.answerChangeError(ctx, err)
		return
	}
	sendJSON(ctx, fasthttp.StatusCreated, viewEndpoint(e))
}

// updateEndpoint answers PUT (200 with the endpoint) and PATCH (204) on
// /api/endpoints/:token.
func (s *Server) updateEndpoint(ctx *fasthttp.RequestCtx, token string, patch bool) {
	if !s.authorizeManagement(ctx) {
		return
	}
	var req endpointRequest
	if !decodeBody(ctx, &req) {
		return
	}
	e, err := s.cat.UpdateEndpoint(canonical(token), req.params())
	if err != nil {
		s.answerChangeError(ctx, err)
		return
	}
	if patch {
		sendNoContent(ctx)
		return
	}
	sendJSON(ctx, fasthttp.StatusOK, viewEndpoint(e))
}

// deleteEndpoint answers DELETE /api/endpoints/:token: 204.
func (s *Server) deleteEndpoint(ctx *fasthttp.RequestCtx, token string) {
	if !s.authorizeManagement(ctx) {
		return
	}
	if _, err := s.cat.DeleteEndpoint(canonical(token)); err != nil {
		s.answerChangeError(ctx, err)
		return
	}
	sendNoContent(ctx)
}
