package httpapi

import (
	"bytes"

	"github.com/valyala/fasthttp"
)

// conflictingFraming reports whether a request carries both
// Content-Length and Transfer-Encoding. RFC 9112 §6.1: such a message may
// be an attempt at request smuggling (a proxy in front that trusts
// Content-Length sees other request boundaries than we do), and the server
// must at least close the connection after it. Like Go's net/http, we do not
// process it at all: 400, and the connection is closed.
//
// fasthttp reads the body by Transfer-Encoding and drops Content-Length
// from the parsed header, so the raw header lines are checked; only chunked
// requests (Content-Length -1) need it.
func conflictingFraming(h *fasthttp.RequestHeader) bool {
	if h.ContentLength() != -1 {
		return false
	}
	raw := h.RawHeaders()
	for len(raw) > 0 {
		line := raw
		if i := bytes.IndexByte(raw, '\n'); i >= 0 {
			line, raw = raw[:i], raw[i+1:]
		} else {
			raw = nil
		}
		name, _, ok := bytes.Cut(line, []byte{':'})
		if ok && bytes.EqualFold(bytes.TrimSpace(name), []byte(fasthttp.HeaderContentLength)) {
			return true
		}
	}
	return false
}

// rejectConflictingFraming answers a request with both Content-Length and
// Transfer-Encoding; its body is left unread and the connection closed.
func rejectConflictingFraming(ctx *fasthttp.RequestCtx) {
	sendDetail(ctx, fasthttp.StatusBadRequest, "request has both Content-Length and Transfer-Encoding")
	ctx.SetConnectionClose()
}
