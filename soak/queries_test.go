//go:build soak && linux

package soak

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"time"

	"github.com/sediment/sediment/bench"
	"github.com/sediment/sediment/bench/gen"
)

// Queries: clients run what Supabase Studio sends (bench.StudioSuite:
// logs.all with sql= over its CTEs, usage.api-counts, LQL searches), and
// one client runs heavy queries over all the data, among them cross joins
// no budget can hold. Every answer must be well formed: 200 with a result
// or an error, 429 with Retry-After (admission control), 503 or 507 with
// Retry-After; never another status, never a dropped connection while the
// server is up, never an error that says the server hit a bug.

// queryStats counts answers by kind.
type queryStats struct {
	run, results, errors       atomic.Int64
	refusedMemory, refusedTime atomic.Int64
	admission429, unavail      atomic.Int64
	interrupted                atomic.Int64 // by a kill
	heavyRun, heavyResults     atomic.Int64
	heavyMemory, heavyTime     atomic.Int64
	crossJoinRefused           atomic.Int64
	crossJoinOther             atomic.Int64
	duringDiskFull             atomic.Int64
	maxLatencyNano             atomic.Int64
	errorTexts                 counter
	healthChecks, healthMaxNs  atomic.Int64
}

// queryKind classifies an answer.
type queryKind int

const (
	answerResult      queryKind = iota
	answerMemory                // 200 {"error"} naming a memory limit
	answerTime                  // 200 {"error"} naming the time limit
	answerError                 // 200 {"error"} of another kind
	answerAdmission             // 429 with Retry-After
	answerUnavailable           // 503/507 with Retry-After
	answerInterrupted           // no answer: the harness killed the server
	answerBad                   // anything else: recorded as a failure
)

// soakQuery is one request: an endpoint call with parameters, or an LQL
// search of a source.
type soakQuery struct {
	name     string
	endpoint string            // logs.all, usage.api-counts
	adhoc    string            // GET /api/query?sql= (private key)
	params   map[string]string // endpoint parameters
	search   *bench.Search
	heavy    bool
	// mustRefuse: the query cannot fit any budget once edge_logs holds
	// crossJoinRows events; a result is a failure, and so is a refusal
	// that does not name memory.
	mustRefuse bool
}

// crossJoinRows is the size of edge_logs from which a distinct cross join
// of it with itself (crossJoinRows² pairs of ids, tens of gigabytes)
// cannot be answered within any memory budget.
const crossJoinRows = 20000

// studioQueries returns Studio's queries over the last hour and day.
func studioQueries() []soakQuery {
	suite := bench.StudioSuite(bench.SuiteOptions{Project: "default", Now: time.Now().Add(time.Minute), Sources: gen.AllSources()})
	out := make([]soakQuery, 0, len(suite))
	for _, q := range suite {
		sq := soakQuery{name: q.Name, endpoint: q.Endpoint, params: q.Params, search: q.Search}
		if q.BustCache {
			sq.params = map[string]string{}
			for k, v := range q.Params {
				sq.params[k] = v
			}
			sq.params["soak_nonce"] = fmt.Sprint(rand.Int64())
		}
		out = append(out, sq)
	}
	return out
}

// heavyQueries are queries over all the data that a budget must bound.
func heavyQueries() []soakQuery {
	all := func(sql string) map[string]string {
		return map[string]string{"project": "default", "iso_timestamp_start": "", "iso_timestamp_end": "", "sql": sql}
	}
	return []soakQuery{
		{name: "group by id, all edge events", heavy: true,
			adhoc: "select id, count(*) as n from `cloudflare.logs.prod` group by id order by n desc limit 10"},
		{name: "group by message, all postgres events", heavy: true, endpoint: "logs.all",
			params: all("select event_message, count(*) as n from postgres_logs group by event_message order by n desc limit 10")},
		{name: "group by path and status, all edge events", heavy: true, endpoint: "logs.all",
			params: all("select request.path as path, response.status_code as status, count(*) as n from edge_logs cross join unnest(metadata) as m cross join unnest(m.request) as request cross join unnest(m.response) as response group by path, status order by n desc limit 20")},
		{name: "sort every message, all auth events", heavy: true, adhoc: "select id, event_message from `gotrue.logs.prod` order by event_message, id limit 1000"},
		{name: "cross join count", heavy: true, endpoint: "logs.all",
			params: all("select count(*) as n from edge_logs a cross join edge_logs b")},
		{name: "cross join distinct pairs", heavy: true, mustRefuse: true, endpoint: "logs.all",
			params: all("select count(distinct concat(a.id, b.id)) as n from edge_logs a cross join edge_logs b")},
	}
}

// runQuery sends q and classifies the answer; a malformed answer is
// recorded as a failure.
func (h *harness) runQuery(ctx context.Context, q soakQuery) (queryKind, string) {
	base, epoch, ok := h.srv.waitUp(ctx)
	if !ok {
		return answerInterrupted, ""
	}
	var u string
	switch {
	case q.search != nil:
		v := url.Values{"lql": {q.search.LQL}, "from": {isoMillis(q.search.Start)}, "to": {isoMillis(q.search.End)}, "limit": {"100"}}
		u = base + "/api/sources/" + url.PathEscape(q.search.Source) + "/search?" + v.Encode()
	case q.adhoc != "":
		u = base + "/api/query?" + url.Values{"sql": {q.adhoc}}.Encode()
	default:
		v := url.Values{}
		for k, x := range q.params {
			v.Set(k, x)
		}
		u = base + "/api/endpoints/query/" + url.PathEscape(q.endpoint) + "?" + v.Encode()
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		panic(err)
	}
	req.Header.Set("X-API-KEY", h.privateKey)
	req.Header.Set("Accept", "application/json")
	h.queries.run.Add(1)
	if q.heavy {
		h.queries.heavyRun.Add(1)
	}
	start := time.Now()
	res, err := h.queryClient.Do(req)
	var body []byte
	if err == nil {
		body, err = io.ReadAll(res.Body)
		res.Body.Close()
	}
	took := time.Since(start)
	for m := h.queries.maxLatencyNano.Load(); took.Nanoseconds() > m && !h.queries.maxLatencyNano.CompareAndSwap(m, took.Nanoseconds()); m = h.queries.maxLatencyNano.Load() {
	}
	if err != nil {
		if ctx.Err() != nil || !h.srv.steady(epoch) {
			h.queries.interrupted.Add(1)
			return answerInterrupted, ""
		}
		if errors.Is(err, context.DeadlineExceeded) || strings.Contains(err.Error(), "Client.Timeout") {
			h.fails.add("query: no answer", "%s: no answer within %s", q.name, h.queryClient.Timeout)
		} else {
			h.fails.add("query: connection dropped", "%s: %v (after %s)", q.name, err, took.Round(time.Millisecond))
		}
		return answerBad, ""
	}
	switch res.StatusCode {
	case http.StatusOK:
		var ans struct {
			Result json.RawMessage `json:"result"`
			Error  json.RawMessage `json:"error"`
		}
		if err := json.Unmarshal(body, &ans); err != nil {
			h.fails.add("query: malformed answer", "%s: 200 with a body that is not a JSON object: %v: %s", q.name, err, snippet(body))
			return answerBad, ""
		}
		switch {
		case len(ans.Error) > 0 && string(ans.Error) != "null":
			h.queries.errors.Add(1)
			msg := errorText(ans.Error)
			lower := strings.ToLower(msg)
			switch {
			case strings.Contains(lower, "internal error") || strings.Contains(lower, "panic") || strings.Contains(lower, "a bug"):
				h.fails.add("query: internal error", "%s: %s", q.name, msg)
				return answerBad, msg
			case strings.Contains(lower, "memory"):
				h.queries.refusedMemory.Add(1)
				h.queries.errorTexts.add("memory: " + shorten(msg, 160))
				return answerMemory, msg
			case strings.Contains(lower, "timed out") || strings.Contains(lower, "time limit") || strings.Contains(lower, "deadline"):
				h.queries.refusedTime.Add(1)
				h.queries.errorTexts.add("time: " + shorten(msg, 160))
				return answerTime, msg
			}
			h.queries.errorTexts.add("other: " + q.name + ": " + shorten(msg, 160))
			return answerError, msg
		case len(ans.Result) > 0 && ans.Result[0] == '[':
			h.queries.results.Add(1)
			return answerResult, ""
		}
		h.fails.add("query: malformed answer", "%s: 200 without a result array or an error: %s", q.name, snippet(body))
		return answerBad, ""
	case http.StatusTooManyRequests, http.StatusServiceUnavailable, http.StatusInsufficientStorage:
		if _, ok := retryAfter(res.Header); !ok {
			h.fails.add("query: refusal without Retry-After", "%s: HTTP %d without a usable Retry-After (%q): %s", q.name, res.StatusCode, res.Header.Get("Retry-After"), snippet(body))
			return answerBad, ""
		}
		if res.StatusCode == http.StatusTooManyRequests {
			h.queries.admission429.Add(1)
			return answerAdmission, ""
		}
		h.queries.unavail.Add(1)
		return answerUnavailable, ""
	case http.StatusBadRequest:
		// An LQL search names fields from the source's schema; the schema
		// of a source that has not been sent such an event yet lacks them.
		if q.search != nil && strings.Contains(string(body), "not present in source schema") {
			h.queries.errorTexts.add("schema not yet known: " + q.name)
			return answerError, ""
		}
	}
	h.fails.add("query: unexpected status", "%s: HTTP %d: %s", q.name, res.StatusCode, snippet(body))
	return answerBad, ""
}

// errorText returns a JSON error value as text.
func errorText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	return string(raw)
}

func shorten(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}

// isoMillis formats t as Studio does.
func isoMillis(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }

// studioClient runs Studio's queries one after another until ctx ends.
func (h *harness) studioClient(ctx context.Context, seed uint64) {
	rng := rand.New(rand.NewPCG(uint64(h.cfg.seed), seed))
	for ctx.Err() == nil {
		qs := studioQueries()
		q := qs[rng.IntN(len(qs))]
		if kind, _ := h.runQuery(ctx, q); kind == answerAdmission || kind == answerUnavailable {
			sleepCtx(ctx, time.Second)
		}
		sleepCtx(ctx, time.Duration(rng.IntN(500))*time.Millisecond)
	}
}

// heavyClient runs the heavy queries in turn, with pauses, until ctx ends.
func (h *harness) heavyClient(ctx context.Context) {
	qs := heavyQueries()
	rng := rand.New(rand.NewPCG(uint64(h.cfg.seed), 99))
	for i := 0; ctx.Err() == nil; i++ {
		q := qs[i%len(qs)]
		edgeRows := h.ingest.ackedBySource[gen.EdgeLogs].Load()
		kind, msg := h.runQuery(ctx, q)
		switch kind {
		case answerResult:
			h.queries.heavyResults.Add(1)
			if q.mustRefuse && edgeRows >= crossJoinRows {
				h.queries.crossJoinOther.Add(1)
				h.fails.add("query: cross join not refused", "%s answered a result with %d edge events acknowledged (%d² pairs): the memory budget must refuse it", q.name, edgeRows, edgeRows)
			}
		case answerMemory:
			h.queries.heavyMemory.Add(1)
			if q.mustRefuse {
				h.queries.crossJoinRefused.Add(1)
			}
		case answerTime:
			h.queries.heavyTime.Add(1)
			if q.mustRefuse && edgeRows >= crossJoinRows {
				h.queries.crossJoinOther.Add(1)
				h.fails.add("query: cross join refused by time, not memory", "%s ran into the time limit (%s) with %d edge events: what it buffers is not charged to its memory budget", q.name, msg, edgeRows)
			}
		case answerError:
			if q.mustRefuse && edgeRows >= crossJoinRows {
				h.queries.crossJoinOther.Add(1)
				h.fails.add("query: cross join refused by time, not memory", "%s failed otherwise: %s", q.name, msg)
			}
		}
		sleepCtx(ctx, time.Duration(2000+rng.IntN(4000))*time.Millisecond)
	}
}

// healthProber asks /health every second and records the slowest 200; a
// /health that does not answer 200 while the server is up is a failure.
func (h *harness) healthProber(ctx context.Context) {
	c := &http.Client{Timeout: 30 * time.Second}
	for sleepCtx(ctx, time.Second) {
		base, epoch, ok := h.srv.waitUp(ctx)
		if !ok {
			return
		}
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+"/health", nil)
		start := time.Now()
		res, err := c.Do(req)
		took := time.Since(start)
		if err != nil {
			if ctx.Err() == nil && h.srv.steady(epoch) {
				h.fails.add("health: no answer", "/health: %v after %s", err, took.Round(time.Millisecond))
			}
			continue
		}
		io.Copy(io.Discard, res.Body)
		res.Body.Close()
		if res.StatusCode != http.StatusOK {
			if h.srv.steady(epoch) {
				h.fails.add("health: not 200", "/health answered %d while the server was up", res.StatusCode)
			}
			continue
		}
		h.queries.healthChecks.Add(1)
		for m := h.queries.healthMaxNs.Load(); took.Nanoseconds() > m && !h.queries.healthMaxNs.CompareAndSwap(m, took.Nanoseconds()); m = h.queries.healthMaxNs.Load() {
		}
	}
}
