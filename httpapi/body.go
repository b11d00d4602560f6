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
)

// Request bodies. fasthttp runs the handler as soon as a request's headers
// are in (Server.StreamRequestBody), so a handler checks the key, and the
// source when the URL names it, before any of the body is read
// (logflare-compat §1.2: auth before body parsing). Only then does it call
// readBody, which holds the body in memory within two bounds:
// MaxBodyBytes per request (413) and MaxInflightBodyBytes over every request
// being read or processed at once (429 with Retry-After). Until readBody,
// ctx.PostBody is still bounded by the bodyGuard handle installs, so a
// handler that reads the body without readBody cannot be made to hold more
// than MaxBodyBytes either; it just answers less precisely.
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

// readBody reads the request body into memory, after the handler has
// checked what the headers allow it to check; ctx.PostBody then returns
// it, until the handler returns. It answers and returns false when the body
// cannot be had: 413 past MaxBodyBytes (at once when Content-Length says
// so), 429 with Retry-After when the in-flight budget is spent, 408 or 400
// when the client does not send it whole. A request without a body, or one
// read already, returns true at once.
func (s *Server) readBody(ctx *fasthttp.RequestCtx) bool {
	g, ok := ctx.RequestBodyStream().(*bodyGuard)
	if !ok {
		return true
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
		return true
	case errors.Is(err, errBodyTooLarge):
		sendDetail(ctx, fasthttp.StatusRequestEntityTooLarge, fmt.Sprintf("request body exceeds %d bytes", s.opts.MaxBodyBytes))
	case errors.Is(err, errBodyBudget):
		src, _ := s.sourceNamedInURL(ctx)
		s.countRejected(src, RejectRequestBodies, fmt.Sprintf("request bodies in memory at once reached %d bytes", s.opts.MaxInflightBodyBytes))
		ctx.Response.Header.Set(fasthttp.HeaderRetryAfter, retryAfterBodies)
		sendStatic(ctx, fasthttp.StatusTooManyRequests, bodyBodiesInFlight)
	case isTimeout(err):
		sendDetail(ctx, fasthttp.StatusRequestTimeout, "request timeout")
	default:
		sendDetail(ctx, fasthttp.StatusBadRequest, "request body could not be read: "+err.Error())
	}
	ctx.SetConnectionClose()
	return false
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
