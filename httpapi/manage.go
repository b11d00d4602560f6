package httpapi

import (
	"errors"
	"time"

	json "github.com/goccy/go-json"
	"github.com/valyala/fasthttp"

	"github.com/sediment/sediment/catalog"
)

// decodeBody decodes a management request's JSON body into v (an empty
// body leaves v as it is). On failure it answers 400 for malformed JSON or
// 422 {"errors": {field: ["is invalid"]}} for a value of the wrong type,
// and returns false.
func decodeBody(ctx *fasthttp.RequestCtx, v any) bool {
	body := ctx.PostBody()
	if len(body) == 0 {
		return true
	}
	err := json.Unmarshal(body, v)
	if err == nil {
		return true
	}
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) && te.Field != "" {
		sendValidation(ctx, map[string][]string{te.Field: {"is invalid"}})
		return false
	}
	sendError(ctx, fasthttp.StatusBadRequest, "malformed JSON body: "+err.Error())
	return false
}

// answerChangeError answers a failed catalog change: 404 for an unknown
// token, 422 with the field errors, 507 with Retry-After when the disk is
// full (the catalog is unchanged, as for ingest on a full disk), 500
// otherwise.
func (s *Server) answerChangeError(ctx *fasthttp.RequestCtx, err error) {
	var ve *catalog.ValidationError
	switch {
	case errors.Is(err, catalog.ErrNotFound):
		sendStatic(ctx, fasthttp.StatusNotFound, bodyNotFound)
	case errors.As(err, &ve):
		sendValidation(ctx, ve.Fields)
	case errors.Is(err, catalog.ErrDiskFull):
		s.log.Error("catalog change refused: the disk is full", "err", err)
		ctx.Response.Header.Set(fasthttp.HeaderRetryAfter, diskFullRetryAfter)
		sendStatic(ctx, fasthttp.StatusInsufficientStorage, bodyCatalogDiskFull)
	default:
		s.log.Error("catalog change failed", "err", err)
		sendStatic(ctx, fasthttp.StatusInternalServerError, bodyInternal)
	}
}

// canonical returns the stored form of a token from a URL, or "" when it
// is not a UUID.
func canonical(token string) string {
	if c, ok := catalog.CanonicalToken(token); ok {
		return c
	}
	return ""
}

// naiveTime formats t as Logflare's JSON does (Ecto naive datetimes, UTC,
// second precision).
func naiveTime(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05") }

// nullable returns nil for an empty string, so that it encodes as null.
func nullable(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}
