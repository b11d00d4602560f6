package httpapi

import (
	"errors"
	"strconv"
	"strings"
	"time"

	json "github.com/goccy/go-json"
	"github.com/valyala/fasthttp"

	"github.com/sediment/sediment/catalog"
)

// The access token management API, as Logflare's /api/access-tokens
// (private key only):
//
//	GET    /api/access-tokens          200 [token, ...]
//	POST   /api/access-tokens          201 token, its key revealed this once
//	DELETE /api/access-tokens/:token   204; 404 for an unknown token
//
// A token is {"id", "token", "description", "scopes", "inserted_at"} with
// scopes space-separated ("ingest query") and inserted_at RFC 3339 in UTC;
// Sediment adds "origin" (env:public, generated:private, api, ...). Keys
// are stored as digests, so "token" is null in listings (Logflare reveals
// public tokens there; Sediment cannot) and only the create answer carries
// it. The create body (JSON, or the query string) takes "scopes" (a
// space-separated string, or an array; default "public") and
// "description"; a "token" in it is ignored: keys are always generated.
// An unknown scope is 422 {"errors":{"scopes":["contains unrecognized
// scope"]}}. DELETE takes the key, or (Sediment's addition, for keys it no
// longer shows) the token's numeric id; the last token with scope private
// cannot be revoked (422). Tokens from the environment come back at the
// next start.

// accessTokenView is a token as the API shows it.
type accessTokenView struct {
	ID          int64   `json:"id"`
	Token       *string `json:"token"`
	Description *string `json:"description"`
	Scopes      string  `json:"scopes"`
	InsertedAt  string  `json:"inserted_at"`
	Origin      string  `json:"origin,omitempty"`
}

func viewAccessToken(t *catalog.AccessToken, key string) accessTokenView {
	return accessTokenView{
		ID: t.ID, Token: nullable(key), Description: nullable(t.Description),
		Scopes: strings.Join(t.Scopes, " "), InsertedAt: t.InsertedAt.UTC().Format(time.RFC3339),
		Origin: t.Origin,
	}
}

// listAccessTokens answers GET /api/access-tokens.
func (s *Server) listAccessTokens(ctx *fasthttp.RequestCtx) {
	if !s.authorizeManagement(ctx) {
		return
	}
	toks := s.cat.AccessTokens()
	out := make([]accessTokenView, len(toks))
	for i, t := range toks {
		out[i] = viewAccessToken(t, "")
	}
	sendJSON(ctx, fasthttp.StatusOK, out)
}

// scopesParam is the "scopes" of a create: Logflare's space-separated
// string, or a JSON array of strings.
type scopesParam struct {
	set    bool
	scopes []string
}

func (p *scopesParam) UnmarshalJSON(b []byte) error {
	p.set = true
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		p.scopes = strings.Fields(s)
		return nil
	}
	var list []string
	if err := json.Unmarshal(b, &list); err != nil {
		return errors.New("scopes must be a string or an array of strings")
	}
	for _, e := range list {
		p.scopes = append(p.scopes, strings.Fields(e)...)
	}
	return nil
}

// createAccessToken answers POST /api/access-tokens: 201 with the new
// token and its key.
func (s *Server) createAccessToken(ctx *fasthttp.RequestCtx) {
	if !s.authorizeManagement(ctx) {
		return
	}
	var req struct {
		Scopes      scopesParam `json:"scopes"`
		Description *string     `json:"description"`
	}
	if body := ctx.PostBody(); len(body) > 0 {
		if err := json.Unmarshal(body, &req); err != nil {
			var te *json.UnmarshalTypeError
			switch {
			case errors.As(err, &te) && te.Field != "":
				sendValidation(ctx, map[string][]string{te.Field: {"is invalid"}})
			case strings.Contains(err.Error(), "scopes must be"):
				sendValidation(ctx, map[string][]string{"scopes": {"is invalid"}})
			default:
				sendError(ctx, fasthttp.StatusBadRequest, "malformed JSON body: "+err.Error())
			}
			return
		}
	}
	args := ctx.QueryArgs()
	if !req.Scopes.set && args.Has("scopes") {
		req.Scopes = scopesParam{set: true, scopes: strings.Fields(string(args.Peek("scopes")))}
	}
	if req.Description == nil && args.Has("description") {
		d := string(args.Peek("description"))
		req.Description = &d
	}
	scopes := req.Scopes.scopes
	if !req.Scopes.set {
		scopes = []string{catalog.ScopePublic}
	}
	desc := ""
	if req.Description != nil {
		desc = *req.Description
	}
	key, err := catalog.NewKey()
	if err != nil {
		s.log.Error("generate an access key", "err", err)
		sendStatic(ctx, fasthttp.StatusInternalServerError, bodyInternal)
		return
	}
	tok, err := s.cat.CreateAccessToken(key, scopes, catalog.OriginAPI, desc)
	if err != nil {
		s.answerChangeError(ctx, err)
		return
	}
	sendJSON(ctx, fasthttp.StatusCreated, viewAccessToken(tok, key))
}

// revokeAccessToken answers DELETE /api/access-tokens/:token: 204, 404
// for a key or id no token has.
func (s *Server) revokeAccessToken(ctx *fasthttp.RequestCtx, keyOrID string) {
	if !s.authorizeManagement(ctx) {
		return
	}
	tok := s.cat.Authenticate(keyOrID)
	if tok == nil {
		if id, err := strconv.ParseInt(keyOrID, 10, 64); err == nil && id > 0 {
			for _, t := range s.cat.AccessTokens() {
				if t.ID == id {
					tok = t
				}
			}
		}
	}
	if tok == nil {
		sendStatic(ctx, fasthttp.StatusNotFound, bodyNotFound)
		return
	}
	if err := s.cat.RevokeAccessToken(tok.ID); err != nil {
		s.answerChangeError(ctx, err)
		return
	}
	sendNoContent(ctx)
}
