//go:build soak && linux

package soak

import (
	"bytes"
	"compress/gzip"
	"context"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sediment/sediment/bench/gen"
)

// Ingest: several senders post batches of generated Supabase events, as
// Vector does, in sync acknowledgement mode. Each event carries an id the
// harness chose (ledger_test.go) and a timestamp of now, except a share
// of the retention source's events, stamped oldAge ago: retention must
// hide them. An answer of 429, 503 or 507 is honoured (Retry-After,
// capped so that the run keeps pressing) and the events are sent again
// under new ids; a request the harness broke by killing the server is
// sent again too. Anything else is a failure.

const (
	// oldAge is how old the retention source's old events are: twice its
	// retention of one day, so that the clock never matters.
	oldAge = 48 * time.Hour
	// oldShare is the share of the retention source's events stamped
	// oldAge ago: enough that retention rewrites the segments holding them
	// (it does at a quarter expired).
	oldShare = 0.3
	// retryAfterCap bounds how long a sender honours Retry-After, so that
	// ingest finds out soon that a full disk has space again.
	retryAfterCap = 3 * time.Second
)

// sourceWeights is how often each source gets a batch: the API gateway
// and Postgres log the most, as in a real project.
var sourceWeights = [...]int{
	gen.EdgeLogs: 30, gen.PostgresLogs: 20, gen.FunctionEdgeLogs: 6, gen.FunctionLogs: 6, gen.AuthLogs: 10,
	gen.RealtimeLogs: 6, gen.StorageLogs: 8, gen.PostgRESTLogs: 6, gen.PgBouncerLogs: 8,
}

// ingestStats counts what the senders did and what they were told.
type ingestStats struct {
	requests, sent                 atomic.Int64
	acked, ackedOld, ackedRequests atomic.Int64
	refused429, refused503, r507   atomic.Int64
	inDoubt, rejected              atomic.Int64
	lastAckNano, last507Nano       atomic.Int64
	ackedBySource                  [9]atomic.Int64
	gzipRequests, ndjsonRequests   atomic.Int64 // request variety
	noRetryAfter, droppedByServer  atomic.Int64
	maxAckLatencyNano, sumAckNanos atomic.Int64
}

// limiter paces the senders together to a rate of events per second.
type limiter struct {
	mu   sync.Mutex
	next time.Time
	per  time.Duration
}

func newLimiter(rate int) *limiter {
	return &limiter{per: time.Second / time.Duration(max(rate, 1))}
}

// wait blocks until n more events may be sent; false when ctx ends.
func (l *limiter) wait(ctx context.Context, n int) bool {
	l.mu.Lock()
	now := time.Now()
	if l.next.Before(now) {
		l.next = now
	}
	at := l.next
	l.next = l.next.Add(time.Duration(n) * l.per)
	l.mu.Unlock()
	return sleepCtx(ctx, time.Until(at))
}

// sleepCtx sleeps d; false when ctx ends first.
func sleepCtx(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// sender is one ingesting client with its own stream of ids.
type sender struct {
	h      *harness
	st     *stream
	rng    *rand.Rand
	shape  gen.Shape
	gens   map[gen.Source]*gen.Generator
	bodies [][]byte // the batch's events without id and timestamp
}

func (h *harness) newSender(i int) *sender {
	shape := gen.SelfHosted
	if i%2 == 1 {
		shape = gen.Platform // richer events, many project refs
	}
	return &sender{h: h, st: h.streams[i], rng: rand.New(rand.NewPCG(uint64(h.cfg.seed), uint64(i))), shape: shape, gens: map[gen.Source]*gen.Generator{}}
}

// Sources go quiet, as real ones do between bursts, so that their heads
// are written out by the idle flush (30 s without events) as small
// segments, which compaction then merges: every source but the two
// busiest is quiet for quietFor of every quietCycle, each at its own time.
const (
	quietCycle = 80 * time.Second
	quietFor   = 40 * time.Second
)

// quiet reports whether src is in its quiet time at t (since the run's start).
func quiet(src gen.Source, since time.Duration) bool {
	if src == gen.EdgeLogs || src == gen.PostgresLogs {
		return false
	}
	phase := (since + time.Duration(src)*13*time.Second) % quietCycle
	return phase < quietFor
}

func (s *sender) pickSource() gen.Source {
	since := time.Since(s.h.start)
	total := 0
	for i, w := range sourceWeights {
		if !quiet(gen.Source(i), since) {
			total += w
		}
	}
	n := s.rng.IntN(total)
	for i, w := range sourceWeights {
		if quiet(gen.Source(i), since) {
			continue
		}
		if n < w {
			return gen.Source(i)
		}
		n -= w
	}
	return gen.EdgeLogs
}

// makeBatch generates n events of src: JSON objects without their
// leading '{', id and timestamp, which each attempt writes anew.
func (s *sender) makeBatch(src gen.Source, n int) {
	g := s.gens[src]
	if g == nil {
		g = gen.New(src, gen.Options{Seed: s.h.cfg.seed*1000 + int64(s.st.id), Shape: s.shape, Timestamps: gen.TimestampOmitted, Projects: 8})
		s.gens[src] = g
	}
	s.bodies = s.bodies[:0]
	for range n {
		ev := g.AppendEvent(nil)
		// Platform edge events carry an id half of the time: ours wins.
		if i := bytes.Index(ev, []byte(`,"id":"`)); i >= 0 && len(ev) >= i+7+37 {
			ev = append(ev[:i], ev[i+7+37:]...)
		}
		s.bodies = append(s.bodies, ev[1:])
	}
}

// run sends batches until ctx ends.
func (s *sender) run(ctx context.Context) {
	retention := s.h.retentionSrc
	for ctx.Err() == nil {
		src := s.pickSource()
		s.makeBatch(src, 20+s.rng.IntN(s.h.cfg.batch))
		old := make([]bool, len(s.bodies))
		if src == retention {
			for i := range old {
				old[i] = s.rng.Float64() < oldShare
			}
		}
		for ctx.Err() == nil && !s.send(ctx, src, old) {
		}
	}
}

// send makes one attempt to send the batch; it reports whether the batch
// is done with (acknowledged, or rejected for good).
func (s *sender) send(ctx context.Context, src gen.Source, old []bool) bool {
	h := s.h
	base, epoch, ok := h.srv.waitUp(ctx)
	if !ok || !h.limiter.wait(ctx, len(old)) {
		return false
	}
	first := s.st.reserve(src, old)
	now := time.Now()
	ndjson := s.rng.IntN(4) == 0
	var body []byte
	if !ndjson {
		body = append(body, '[')
	}
	for i, ev := range s.bodies {
		if i > 0 && !ndjson {
			body = append(body, ',')
		}
		ts := now
		if old[i] {
			ts = now.Add(-oldAge)
		}
		body = append(body, `{"id":"`...)
		body = appendEventID(body, eventRef{run: h.run, stream: s.st.id, src: src, old: old[i], seq: first + uint64(i)})
		body = append(body, `","timestamp":`...)
		body = strconv.AppendInt(body, ts.UnixMicro(), 10)
		body = append(body, ',')
		body = append(body, ev...)
		if ndjson {
			body = append(body, '\n')
		}
	}
	if !ndjson {
		body = append(body, ']')
	}
	gz := s.rng.IntN(4) == 0
	if gz {
		var b bytes.Buffer
		zw := gzip.NewWriter(&b)
		zw.Write(body)
		zw.Close()
		body = b.Bytes()
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/api/logs?source_name="+url.QueryEscape(src.Name()), bytes.NewReader(body))
	if err != nil {
		panic(err)
	}
	req.Header.Set("X-API-KEY", h.publicKey)
	if ndjson {
		req.Header.Set("Content-Type", "application/x-ndjson")
		h.ingest.ndjsonRequests.Add(1)
	} else {
		req.Header.Set("Content-Type", "application/json")
	}
	if gz {
		req.Header.Set("Content-Encoding", "gzip")
		h.ingest.gzipRequests.Add(1)
	}
	h.ingest.requests.Add(1)
	h.ingest.sent.Add(int64(len(old)))
	start := time.Now()
	res, err := h.ingestClient.Do(req)
	var answer []byte
	if err == nil {
		answer, err = io.ReadAll(io.LimitReader(res.Body, 1<<20))
		res.Body.Close()
	}
	n := len(old)
	if err != nil {
		s.st.settle(first, n, stateInDoubt)
		h.ingest.inDoubt.Add(int64(n))
		if ctx.Err() == nil && h.srv.steady(epoch) {
			h.ingest.droppedByServer.Add(1)
			h.fails.add("ingest: connection dropped", "POST %s (%d events) failed while the server was up: %v", src.Name(), n, err)
		}
		return false
	}
	switch res.StatusCode {
	case http.StatusOK:
		s.st.settle(first, n, stateAcked)
		h.ingest.ackedRequests.Add(1)
		h.ingest.acked.Add(int64(n))
		h.ingest.ackedBySource[src].Add(int64(n))
		for _, o := range old {
			if o {
				h.ingest.ackedOld.Add(1)
			}
		}
		took := time.Since(start).Nanoseconds()
		h.ingest.sumAckNanos.Add(took)
		for m := h.ingest.maxAckLatencyNano.Load(); took > m && !h.ingest.maxAckLatencyNano.CompareAndSwap(m, took); m = h.ingest.maxAckLatencyNano.Load() {
		}
		h.ingest.lastAckNano.Store(time.Now().UnixNano())
		return true
	case http.StatusTooManyRequests, http.StatusServiceUnavailable, http.StatusInsufficientStorage:
		s.st.settle(first, n, stateRefused)
		switch res.StatusCode {
		case http.StatusTooManyRequests:
			h.ingest.refused429.Add(int64(n))
		case http.StatusServiceUnavailable:
			h.ingest.refused503.Add(int64(n))
		default:
			h.ingest.r507.Add(int64(n))
			h.ingest.last507Nano.Store(time.Now().UnixNano())
		}
		wait, ok := retryAfter(res.Header)
		if !ok {
			h.ingest.noRetryAfter.Add(1)
			h.fails.add("ingest: refusal without Retry-After", "POST %s: HTTP %d without a usable Retry-After (%q): %s",
				src.Name(), res.StatusCode, res.Header.Get("Retry-After"), snippet(answer))
			wait = time.Second
		}
		sleepCtx(ctx, min(wait, retryAfterCap))
		return false
	default:
		s.st.settle(first, n, stateRejected)
		h.ingest.rejected.Add(int64(n))
		h.fails.add("ingest: unexpected status", "POST %s (%d events): HTTP %d: %s", src.Name(), n, res.StatusCode, snippet(answer))
		return true
	}
}

// retryAfter reads a Retry-After of whole seconds.
func retryAfter(h http.Header) (time.Duration, bool) {
	v := strings.TrimSpace(h.Get("Retry-After"))
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		return 0, false
	}
	return time.Duration(n) * time.Second, true
}

// snippet shortens a response body for a message.
func snippet(b []byte) string {
	const max = 300
	s := strings.TrimSpace(string(b))
	if len(s) > max {
		return s[:max] + "…"
	}
	return s
}
