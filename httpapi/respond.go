package httpapi

import (
	json "github.com/goccy/go-json"
	"github.com/valyala/fasthttp"
)

const contentTypeJSON = "application/json; charset=utf-8"

// Fixed response bodies (docs/compat/logflare.md §1.5, §3.8, §10).
var (
	bodyLogged       = []byte(`{"message":"Logged!"}`)
	bodyUnauthorized = []byte(`{"error":"Unauthorized"}`)
	bodyNotFound     = []byte(`{"error":"Not Found"}`)
	bodyBufferFull   = []byte(`{"error":"Buffer Full: Too Many Requests"}`)
	bodyHealthOK     = []byte(`{"status":"ok"}`)
	bodyComingUp     = []byte(`{"status":"coming_up"}`)
	bodyNotReady     = []byte(`{"status":"not_ready"}`)
	bodyNoQuery      = []byte(`{"error":"No query params provided. Supported query params are sql=, bq_sql=, ch_sql=, and pg_sql="}`)
	bodyNoRunner     = []byte(`{"error":"Query execution is not available on this server"}`)
	bodyUnavailable  = []byte(`{"error":"Service Unavailable"}`)
	bodyInternal     = []byte(`{"error":"Internal Server Error"}`)
	bodyDiskFull     = []byte(`{"error":"Insufficient Storage: the server's disk is full (or below its free-space floor, --min-free-disk), so events are not stored; retry later"}`)
	// bodyCatalogDiskFull answers a source, endpoint or token change that
	// could not be saved for lack of space.
	bodyCatalogDiskFull = []byte(`{"error":"Insufficient Storage: the server's disk is full, so the change was not saved and nothing changed; retry once space is freed"}`)
)

// diskFullRetryAfter is the Retry-After of a 507: the engine probes a full
// disk every few seconds, and space comes back by an operator's hand.
const diskFullRetryAfter = "30"

// sendStatic answers with a fixed JSON body.
func sendStatic(ctx *fasthttp.RequestCtx, status int, body []byte) {
	ctx.SetStatusCode(status)
	ctx.SetContentType(contentTypeJSON)
	ctx.Response.SetBodyRaw(body)
}

// sendJSON answers with v encoded as JSON.
func sendJSON(ctx *fasthttp.RequestCtx, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		sendStatic(ctx, fasthttp.StatusInternalServerError, bodyInternal)
		return
	}
	ctx.SetStatusCode(status)
	ctx.SetContentType(contentTypeJSON)
	ctx.SetBody(b)
}

// sendError answers {"error": msg}.
func sendError(ctx *fasthttp.RequestCtx, status int, msg string) {
	sendJSON(ctx, status, struct {
		Error string `json:"error"`
	}{msg})
}

// sendDetail answers in the shape of Phoenix's default error view,
// {"errors":{"detail": msg}}, which Logflare gives for 400, 413 and 415 on
// ingest; msg says what was wrong.
func sendDetail(ctx *fasthttp.RequestCtx, status int, msg string) {
	type detail struct {
		Detail string `json:"detail"`
	}
	sendJSON(ctx, status, struct {
		Errors detail `json:"errors"`
	}{detail{msg}})
}

// sendValidation answers 422 {"errors": {field: [messages]}}.
func sendValidation(ctx *fasthttp.RequestCtx, fields map[string][]string) {
	sendJSON(ctx, fasthttp.StatusUnprocessableEntity, struct {
		Errors map[string][]string `json:"errors"`
	}{fields})
}

func sendNoContent(ctx *fasthttp.RequestCtx) {
	ctx.SetStatusCode(fasthttp.StatusNoContent)
	ctx.Response.ResetBody()
}
