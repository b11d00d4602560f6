package httpapi

import (
	"context"
	"errors"
	"math"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/valyala/fasthttp"
)

// Admission control for queries. Every route that runs a query (query
// endpoints, ad-hoc SQL, LQL search, full=true included, and the web
// explorer's event lookup, /api/sources/:s/event) takes a slot of
// queryGate first: MaxConcurrentQueries run at once, MaxQueuedQueries more
// wait for a slot in arrival order, each for at most QueryQueueWait; past
// either bound the route answers 429 {"error": ...} with Retry-After at
// once. A cached endpoint answer runs no query and takes no slot.
//
// The routes that describe stored data without running a query take none,
// as each is bounded in another way: /api/access counts events and bytes
// from the segments' in-memory metadata (engine.Shard.Info; no block is
// read), /api/sources/:s/schema merges in-memory schemas, /recent reads
// the last 100 events kept in memory, a live tail filters new events only
// and is bounded by MaxTails, a snapshot copies files one snapshot at a
// time, /metrics reads counters.
//
// Why this keeps /health, /ready and ingest answering: fasthttp serves every
// connection on a goroutine of its worker pool, up to Server.Concurrency
// (256 Ki by default) at once, and runs the handler on that goroutine. A
// query holds its connection's goroutine while it runs or waits, so at most
// MaxConcurrentQueries + MaxQueuedQueries goroutines are tied up by queries
// however many arrive; the rest are answered 429 and let go. Every other
// request is served by goroutines of its own and never waits on this gate,
// and the running queries are few enough (by default one per core) that the
// scheduler and the collector keep time for them.

var (
	errQueryQueueFull = errors.New("query queue full")
	errQueryQueueWait = errors.New("no query slot within the queue wait")
)

// queryGate bounds the queries running and waiting.
type queryGate struct {
	slots    chan struct{} // one token per running query
	maxQueue int64
	wait     time.Duration
	queued   atomic.Int64
	// Queries refused because the queue was full, and because no slot
	// came within the queue wait (for metrics).
	rejectedFull, rejectedWait atomic.Int64
}

func newQueryGate(running, queued int, wait time.Duration) *queryGate {
	return &queryGate{slots: make(chan struct{}, running), maxQueue: int64(queued), wait: wait}
}

// acquire takes a slot, waiting in the queue if every slot is taken. It
// fails with errQueryQueueFull when the queue is full, errQueryQueueWait
// after the queue wait, or ctx's error when ctx ends first (the client went
// away, the server is shutting down). release must be called once the
// query is done.
func (g *queryGate) acquire(ctx context.Context) (release func(), err error) {
	select {
	case g.slots <- struct{}{}:
		return g.release, nil
	default:
	}
	if g.queued.Add(1) > g.maxQueue {
		g.queued.Add(-1)
		g.rejectedFull.Add(1)
		return nil, errQueryQueueFull
	}
	defer g.queued.Add(-1)
	t := time.NewTimer(g.wait)
	defer t.Stop()
	select {
	case g.slots <- struct{}{}:
		return g.release, nil
	case <-t.C:
		g.rejectedWait.Add(1)
		return nil, errQueryQueueWait
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (g *queryGate) release() { <-g.slots }

// running returns the number of queries holding a slot.
func (g *queryGate) running() int { return len(g.slots) }

// retryAfter is the Retry-After of a 429 from the gate: half the queue
// wait, at least a second. A slot frees as soon as any running query ends,
// so a client need not wait a whole queue wait to try again.
func (g *queryGate) retryAfter() string {
	return strconv.Itoa(max(1, int(math.Ceil(g.wait.Seconds()/2))))
}

// startQuery prepares a query route to run its query: a context that ends
// at QueryTimeout (queue wait included), when the server's base context
// ends, and when the client goes away; then a slot of the query gate. On
// success it returns the context and done, which the handler must call
// when the query has finished. Otherwise it has answered (429 when the
// gate refuses, 503 when shutting down) and returns a nil context.
func (s *Server) startQuery(ctx *fasthttp.RequestCtx) (qctx context.Context, done func()) {
	qctx, cancel := context.WithTimeout(s.baseCtx, s.opts.QueryTimeout)
	stopWatch := watchClient(ctx.Conn(), cancel)
	release, err := s.queries.acquire(qctx)
	if err != nil {
		stopWatch()
		cancel()
		switch {
		case errors.Is(err, errQueryQueueFull), errors.Is(err, errQueryQueueWait):
			ctx.Response.Header.Set(fasthttp.HeaderRetryAfter, s.queries.retryAfter())
			sendError(ctx, fasthttp.StatusTooManyRequests, "Too many queries are running on this server: "+err.Error()+
				". Retry in "+s.queries.retryAfter()+" seconds.")
		default:
			// The client went away (nobody reads this), the server is
			// shutting down, or the timeout passed in the queue.
			sendStatic(ctx, fasthttp.StatusServiceUnavailable, bodyUnavailable)
		}
		return nil, nil
	}
	return qctx, func() {
		release()
		stopWatch()
		cancel()
	}
}
