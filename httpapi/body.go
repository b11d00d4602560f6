package httpapi

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"sync/atomic"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/sediment/sediment/httpapi/ingest"
)

// Request bodies. fasthttp runs the handler as soon as a request's headers
// are in (Server.StreamRequestBody), so a handler checks the key, and the
// source when the URL names it, before any of the body is read
// (docs/compat/logflare.md §3.2: auth before body parsing). Only then does it call
// readBody, which holds the body in memory within two bounds:
// MaxBodyBytes per request (413) and MaxInflightBodyBytes over every request
// being read or processed at once (429 with Retry-After). Until readBody,
// ctx.PostBody is still bounded by the bodyGuard handle installs, so a
// handler that reads the body without readBody cannot be made to hold more
// than MaxBodyBytes either; it just answers less precisely.
//
// The in-flight budget counts what a request holds because of its body,
// not only the body as received: an ingest route gets a charge function
// with the body (takeBody) and hands it to its decoder
// (ingest.Request.Charge), which charges the decompressed body as it is
// produced and, for OTLP, the decoded size before decoding. A charge the
// budget refuses fails the request as the budget does, 429 with
// Retry-After. Everything charged is given back when the handler returns.
// A route whose protocol has its own error shape (OTLP's google.rpc.Status,
// Elasticsearch's error object) answers takeBody's refusal in that shape.
//
// A body left unread is dealt with when the handler returns: on an answer
// of 400 or more the connection is closed without reading it (see
// lingerClose); otherwise fasthttp discards up to 256 KiB of it to keep the
// connection, and closes it past that.

var (
	errBodyTooLarge = errors.New("request body too large")
	errBodyBudget   = errors.New("too many request body bytes in flight")

	bodyBodiesInFlight = []byte(`{"error":"Buffer Full: Too Many Requests"}`)
)

const (
	// guardReadChunk is the most the guard reads (and charges to the
	// budget) at once, so that a nearly spent budget still admits small
	// reads and a large buffer does not over-charge.
	guardReadChunk = 64 << 10
	// retryAfterBodies is the Retry-After of a 429 for the in-flight body
	// budget: bodies are read and processed within moments.
	retryAfterBodies = "1"
	// lingerTimeout and lingerMaxBytes bound how long, and how much, a
	// connection closed with an unread body keeps discarding what the client
	// still sends (see lingerClose). Discarded bytes are not held: the cost
	// is one goroutine and the bandwidth.
	lingerTimeout  = 2 * time.Second
	lingerMaxBytes = 16 << 20
	// lingerWriteTimeout bounds writing the answer of such a connection.
	lingerWriteTimeout = 10 * time.Second
)

// byteBudget is a count of bytes reserved by requests that hold them; it
// never blocks.
type byteBudget struct {
	limit int64
	used  atomic.Int64
}

// tryAcquire reserves n more bytes for a holder that has own bytes
// reserved already. It fails when the total would pass the limit, unless
// nothing but the holder's own bytes is reserved: a body larger than the
// whole budget is let through alone, so that the budget never refuses a
// request for good (MaxBodyBytes bounds it).
func (b *byteBudget) tryAcquire(n, own int64) bool {
	for {
		cur := b.used.Load()
		if cur > own && cur+n > b.limit {
			return false
		}
		if b.used.CompareAndSwap(cur, cur+n) {
			return true
		}
	}
}

func (b *byteBudget) release(n int64) {
	if n != 0 {
		b.used.Add(-n)
	}
}

// bodyGuard wraps fasthttp's stream of one request body: it stops past
// limit bytes and charges what it reads to the server's in-flight budget
// until finish. Its err says why reading stopped early. It is not pooled:
// fasthttp keeps a reference to it in the request until the request is
// reset.
type bodyGuard struct {
	src      io.Reader
	limit    int
	declared int // Content-Length, or -1 when chunked
	budget   *byteBudget
	read     int
	charged  int64
	err      error
}

// Read implements io.Reader.
func (g *bodyGuard) Read(p []byte) (int, error) {
	if g.err != nil {
		return 0, g.err
	}
	if room := g.limit + 1 - g.read; len(p) > room {
		p = p[:room] // one byte past the limit tells "too large" from "at the limit"
	}
	if g.declared >= 0 && len(p) > g.declared-g.read {
		// Never charge past the declared length; at its end the stream
		// answers io.EOF to an empty read.
		p = p[:max(0, g.declared-g.read)]
	}
	if len(p) > guardReadChunk {
		p = p[:guardReadChunk]
	}
	if !g.reserve(g.read + len(p)) {
		return 0, g.err
	}
	n, err := g.src.Read(p)
	g.read += n
	switch {
	case g.read > g.limit:
		g.err = errBodyTooLarge
		return n, g.err
	case err != nil && err != io.EOF:
		g.err = err
	}
	return n, err
}

// reserve makes sure total bytes are charged to the budget; it fails (and
// sets err) when the budget is spent.
func (g *bodyGuard) reserve(total int) bool {
	need := int64(total) - g.charged
	if need <= 0 {
		return true
	}
	if !g.budget.tryAcquire(need, g.charged) {
		g.err = errBodyBudget
		return false
	}
	g.charged += need
	return true
}

// charge charges n more bytes the handler holds for this request (what
// decoding its body takes beyond the body) until the request ends. Like the
// body's own bytes it fails when the budget would pass its limit, unless
// nothing but this request's bytes is reserved.
func (g *bodyGuard) charge(n int64) bool {
	if n <= 0 {
		return true
	}
	if !g.budget.tryAcquire(n, g.charged) {
		return false
	}
	g.charged += n
	return true
}

// guardBody puts a bodyGuard between the request and its body stream, for
// a request that has a body; nil otherwise (no body, or a body fasthttp read
// already, as with a Server other than ours serving Handler).
func (s *Server) guardBody(ctx *fasthttp.RequestCtx) *bodyGuard {
	src := ctx.RequestBodyStream()
	cl := ctx.Request.Header.ContentLength()
	if src == nil || cl == 0 {
		return nil
	}
	g := &bodyGuard{src: src, limit: s.opts.MaxBodyBytes, declared: max(cl, -1), budget: &s.bodies}
	// The original stream stays fasthttp's to drain after the handler;
	// SetBodyStream only changes what the handler reads through.
	ctx.Request.SetBodyStream(g, cl)
	return g
}

// finish releases the guard's budget when the handler is done, and closes
// the connection without reading a body left unread under an error answer.
func (g *bodyGuard) finish(ctx *fasthttp.RequestCtx) {
	unread := ctx.RequestBodyStream() == g && g.err == nil
	failed := g.err != nil
	g.budget.release(g.charged)
	g.charged = 0
	switch {
	case failed:
		// Reading stopped mid-body: the rest of it is still on the wire.
		lingerClose(ctx)
	case unread && ctx.Response.StatusCode() >= 400:
		lingerClose(ctx)
	}
}

// bodyRefusal says why a request's body cannot be had or held, for a
// route to answer in its protocol's shape: Status 413 past MaxBodyBytes,
// 429 (RetryAfter set) when the in-flight budget is spent, 408 or 400 when
// the client does not send the body whole.
type bodyRefusal struct {
	Status     int
	RetryAfter string
	Detail     string
}

// budgetRefusal is the refusal of a request the in-flight budget cannot
// take (its body, or what decoding it holds).
var budgetRefusal = bodyRefusal{Status: fasthttp.StatusTooManyRequests, RetryAfter: retryAfterBodies, Detail: "Buffer Full: Too Many Requests"}

// send answers the refusal in Logflare's shapes: 429 {"error": ...} with
// Retry-After, the others {"errors":{"detail": ...}}.
func (r bodyRefusal) send(ctx *fasthttp.RequestCtx) {
	if r.RetryAfter != "" {
		ctx.Response.Header.Set(fasthttp.HeaderRetryAfter, r.RetryAfter)
	}
	if r.Status == fasthttp.StatusTooManyRequests {
		sendStatic(ctx, r.Status, bodyBodiesInFlight)
		return
	}
	sendDetail(ctx, r.Status, r.Detail)
}

// readBody reads the request body into memory, after the handler has
// checked what the headers allow it to check; ctx.PostBody then returns
// it, until the handler returns. It answers and returns false when the body
// cannot be had: 413 past MaxBodyBytes (at once when Content-Length says
// so), 429 with Retry-After when the in-flight budget is spent, 408 or 400
// when the client does not send it whole. A request without a body, or one
// read already, returns true at once.
func (s *Server) readBody(ctx *fasthttp.RequestCtx) bool {
	_, refusal, ok := s.takeBody(ctx)
	if !ok {
		refusal.send(ctx)
	}
	return ok
}

// takeBody is readBody for a route that answers in its own shape, and that
// holds more than the body because of it: it returns the refusal instead
// of answering it (the connection is marked to close, as the rest of the
// body may be on the wire), and, with the body, a charge function for the
// in-flight budget (ingest.Request.Charge); nil when the request has no
// guarded body, whose decoding then charges nothing.
func (s *Server) takeBody(ctx *fasthttp.RequestCtx) (charge func(int64) bool, refusal bodyRefusal, ok bool) {
	g, guarded := ctx.RequestBodyStream().(*bodyGuard)
	if !guarded {
		return nil, bodyRefusal{}, true
	}
	cl := ctx.Request.Header.ContentLength()
	switch {
	case cl > s.opts.MaxBodyBytes:
		g.err = errBodyTooLarge
	case cl > 0:
		g.reserve(cl)
	}
	if g.err == nil {
		ctx.PostBody() // reads through g; g.err says how it ended
	}
	switch err := g.err; {
	case err == nil:
		return g.charge, bodyRefusal{}, true
	case errors.Is(err, errBodyTooLarge):
		refusal = bodyRefusal{Status: fasthttp.StatusRequestEntityTooLarge, Detail: fmt.Sprintf("request body exceeds %d bytes", s.opts.MaxBodyBytes)}
	case errors.Is(err, errBodyBudget):
		src, _ := s.sourceNamedInURL(ctx)
		s.countRejected(src, RejectRequestBodies, fmt.Sprintf("request bodies in memory at once reached %d bytes", s.opts.MaxInflightBodyBytes))
		refusal = budgetRefusal
	case isTimeout(err):
		refusal = bodyRefusal{Status: fasthttp.StatusRequestTimeout, Detail: "request timeout"}
	default:
		refusal = bodyRefusal{Status: fasthttp.StatusBadRequest, Detail: "request body could not be read: " + err.Error()}
	}
	ctx.SetConnectionClose()
	return nil, refusal, false
}

// decodeRefusal maps a decoding error to the refusal it means, when it is
// the in-flight budget's (ingest.ErrBudget); ok is false for the others,
// which each route answers as its protocol says.
func decodeRefusal(err error) (r bodyRefusal, ok bool) {
	if errors.Is(err, ingest.ErrBudget) {
		return budgetRefusal, true
	}
	return bodyRefusal{}, false
}

// lingerClose answers and closes a connection whose request body is left
// (partly) unread. Closing a socket with unread data makes the kernel send
// a reset, which can destroy the answer before the client reads it; a
// client still sending would see "connection reset" instead of its 401. So
// the answer is written, the sending side shut, and what the client still
// sends read and discarded for up to lingerTimeout (or lingerMaxBytes)
// before the close, as Go's net/http does. It runs on its own goroutine
// (a fasthttp hijack), not on a server worker.
func lingerClose(ctx *fasthttp.RequestCtx) {
	raw := ctx.Conn()
	ctx.Response.SetConnectionClose()
	ctx.HijackSetNoResponse(true) // the hijack handler writes the answer itself
	ctx.Hijack(func(c net.Conn) {
		_ = c.SetWriteDeadline(time.Now().Add(lingerWriteTimeout))
		w := bufio.NewWriterSize(c, 4<<10)
		if ctx.Response.Write(w) != nil || w.Flush() != nil {
			return
		}
		if cw, ok := raw.(interface{ CloseWrite() error }); ok {
			_ = cw.CloseWrite()
		}
		_ = c.SetReadDeadline(time.Now().Add(lingerTimeout))
		_, _ = io.CopyN(io.Discard, c, lingerMaxBytes)
	})
}
