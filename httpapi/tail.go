package httpapi

import (
	"bufio"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"runtime/debug"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/sediment/sediment/event"
	"github.com/sediment/sediment/query/search"
)

// Live tail: GET /api/sources/:token_or_name/tail?lql=... answers a
// Server-Sent Events stream (text/event-stream) of the source's new events
// that match the LQL filter (query/search.Tail):
//
//	: tail of <source name>          a comment, at once
//
//	event: log
//	data: {"event_message":"...","id":"...",...,"timestamp":1710498600123456}
//
//	event: dropped
//	data: {"count":1500}             events lost since the last notice
//
//	: keep-alive                     every TailKeepAlive without events
//
// An event's data is the event as stored, in one line of JSON: its
// top-level fields with nested objects as plain JSON objects (not
// BigQuery's one-element arrays, which a client rendering a stream has no
// use for), timestamp in unix microseconds — the shape of
// /api/sources/:token/recent.
//
// A tail has a bounded buffer (Options.TailBuffer batches): when the
// client reads slower than the source is written, the engine drops batches
// for this tail and the next frame says how many events were lost;
// ingestion never waits for a tail. The stream ends when the client goes
// away (noticed at the next write: an event or a keep-alive), when a write
// has waited TailWriteTimeout for the client, when the source's shard
// closes, and on server shutdown.

var (
	bodyTooManyTails = []byte(`{"error":"Too many live tails are open on this server; try again later"}`)
	errTailStopped   = errors.New("live tail stopped")
	errTailsFull     = errors.New("too many live tails")
)

// handleTail serves GET /api/sources/:token_or_name/tail.
func (s *Server) handleTail(ctx *fasthttp.RequestCtx, tokenOrName string) {
	setCORS(ctx, corsEndpoints)
	src := s.querySource(ctx, tokenOrName)
	if src == nil {
		return
	}
	match, err := search.ParseTailFilter(string(ctx.QueryArgs().Peek("lql")), s.opts.Now())
	if err != nil {
		sendError(ctx, fasthttp.StatusBadRequest, err.Error())
		return
	}
	shard, err := s.eng.Shard(src.Token)
	if err != nil {
		s.shardFailed(ctx, src, err)
		return
	}
	st := &tailStream{
		conn:         ctx.Conn(),
		stop:         make(chan struct{}),
		keepAlive:    s.opts.TailKeepAlive,
		writeTimeout: s.opts.TailWriteTimeout,
		registry:     &s.tails,
		hello:        ": tail of " + strconv.QuoteToASCII(src.Name) + "\n\n",
		log:          s.log,
		source:       src.Name,
	}
	switch s.tails.add(st, s.opts.MaxTails) {
	case errTailsFull:
		ctx.Response.Header.Set(fasthttp.HeaderRetryAfter, "10")
		sendStatic(ctx, fasthttp.StatusTooManyRequests, bodyTooManyTails)
		return
	case errTailStopped:
		sendStatic(ctx, fasthttp.StatusServiceUnavailable, bodyUnavailable)
		return
	}
	// Subscribe before answering: every event appended after the client
	// gets the response headers is delivered.
	st.tail = search.NewTail(shard, match, s.opts.TailBuffer)
	ctx.SetStatusCode(fasthttp.StatusOK)
	ctx.SetContentType("text/event-stream; charset=utf-8")
	ctx.Response.Header.Set(fasthttp.HeaderCacheControl, "no-cache")
	ctx.Response.Header.Set("X-Accel-Buffering", "no") // no proxy buffering (nginx)
	ctx.Response.ImmediateHeaderFlush = true
	ctx.SetBodyStreamWriter(st.run)
}

// tailStream is one open live tail.
type tailStream struct {
	tail         *search.Tail
	conn         net.Conn // the client's connection, to abort a stuck write
	stop         chan struct{}
	keepAlive    time.Duration
	writeTimeout time.Duration
	registry     *tailRegistry
	hello        string
	log          *slog.Logger
	source       string

	endOnce sync.Once
	// stopping and flushing implement the hand-off between end and a
	// write in progress: end sets stopping then looks at flushing; flush
	// sets flushing then looks at stopping. Whatever the interleaving, a
	// write that could block is either not started or aborted.
	stopping atomic.Bool
	flushing atomic.Bool
}

// run writes the stream; fasthttp calls it on its own goroutine and
// copies what it writes to the connection.
func (st *tailStream) run(w *bufio.Writer) {
	defer st.registry.remove(st)
	defer st.tail.Close()
	defer func() {
		// fasthttp runs this on a goroutine of its own, outside the
		// handler's recover: a bug here ends this stream, not the process.
		if r := recover(); r != nil {
			st.log.Error("tail panic", "source", st.source, "panic", fmt.Sprint(r), "stack", string(debug.Stack()))
		}
	}()
	buf := make([]byte, 0, 4096)
	buf = append(buf, st.hello...)
	if st.write(w, buf) != nil {
		return
	}
	keepAlive := time.NewTicker(st.keepAlive)
	defer keepAlive.Stop()
	for {
		buf = buf[:0]
		select {
		case batch, ok := <-st.tail.Batches():
			if !ok {
				return // the shard closed
			}
			buf = appendDropped(buf, st.tail.Dropped())
			st.tail.Each(batch, func(ev *event.Event) error {
				buf = append(buf, "event: log\ndata: "...)
				buf = event.AppendEventJSON(buf, *ev)
				buf = append(buf, "\n\n"...)
				return nil
			})
			if len(buf) == 0 {
				continue
			}
			keepAlive.Reset(st.keepAlive)
		case <-keepAlive.C:
			buf = appendDropped(buf, st.tail.Dropped())
			buf = append(buf, ": keep-alive\n\n"...)
		case <-st.stop:
			return
		}
		if st.write(w, buf) != nil {
			return
		}
	}
}

// appendDropped appends a dropped notice when n > 0.
func appendDropped(dst []byte, n int64) []byte {
	if n <= 0 {
		return dst
	}
	dst = append(dst, `event: dropped`+"\n"+`data: {"count":`...)
	dst = strconv.AppendInt(dst, n, 10)
	return append(dst, "}\n\n"...)
}

// write sends b to the client. A client that does not take it within
// writeTimeout (it stopped reading; TCP buffers are full) has its
// connection's write deadline moved to the past, which fails the write.
func (st *tailStream) write(w *bufio.Writer, b []byte) error {
	st.flushing.Store(true)
	defer st.flushing.Store(false)
	if st.stopping.Load() {
		return errTailStopped
	}
	if _, err := w.Write(b); err != nil {
		return err
	}
	abort := time.AfterFunc(st.writeTimeout, st.abort)
	defer abort.Stop()
	return w.Flush()
}

// end stops the stream (server shutdown), aborting a write in progress.
func (st *tailStream) end() {
	st.endOnce.Do(func() {
		st.stopping.Store(true)
		close(st.stop)
		if st.flushing.Load() {
			st.abort()
		}
	})
}

// abort fails the connection's pending and future writes. fasthttp then
// closes the body stream, which fails the stream's own write into it.
func (st *tailStream) abort() {
	if st.conn != nil {
		st.conn.SetWriteDeadline(time.Unix(1, 0))
	}
}

// tailRegistry tracks the open tails, to bound them and end them on
// shutdown.
type tailRegistry struct {
	mu      sync.Mutex
	streams map[*tailStream]struct{}
	closed  bool // shutting down: no new tails
}

// add registers st. It fails with errTailsFull when limit tails are open,
// with errTailStopped when the server is shutting down.
func (r *tailRegistry) add(st *tailStream, limit int) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	switch {
	case r.closed:
		return errTailStopped
	case len(r.streams) >= limit:
		return errTailsFull
	}
	if r.streams == nil {
		r.streams = make(map[*tailStream]struct{})
	}
	r.streams[st] = struct{}{}
	return nil
}

func (r *tailRegistry) remove(st *tailStream) {
	r.mu.Lock()
	delete(r.streams, st)
	r.mu.Unlock()
}

// open returns the number of open tails.
func (r *tailRegistry) open() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.streams)
}

// closeAll ends every tail and refuses new ones.
func (r *tailRegistry) closeAll() {
	r.mu.Lock()
	r.closed = true
	streams := make([]*tailStream, 0, len(r.streams))
	for st := range r.streams {
		streams = append(streams, st)
	}
	r.mu.Unlock()
	for _, st := range streams {
		st.end()
	}
}
