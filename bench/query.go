package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/sediment/sediment/catalog"
	"github.com/sediment/sediment/query/endpoints"
)

// Target runs the queries of a suite: over HTTP against a server, or in
// process against an endpoints.Service.
type Target interface {
	// Run runs q once and returns the answer's body as the server sent it
	// and how it was sent (e.g. "logs.all sql=" or "search API"). nonce
	// differs on every call; it goes into a query with BustCache. Run is
	// what is timed: sending, the server's work, reading the whole answer.
	Run(ctx context.Context, q Query, nonce string) (body []byte, via string, err error)
	// Rows decodes an answer of q into rows (not timed), or returns the
	// error the server answered with.
	Rows(q Query, body []byte) ([]Row, error)
}

// bustParam is the parameter that defeats an endpoint's result cache: every
// parameter is part of the cache key, and the endpoint's SQL ignores it.
const bustParam = "bench_nonce"

// HTTPTarget queries a server as Studio's server does: GET
// /api/endpoints/query/<name>?<params> with the private key.
type HTTPTarget struct {
	URL    string
	Key    string
	Client *http.Client

	// searchAPI: 0 not probed yet, 1 the server has a source search API,
	// -1 it has none (LQL goes through logs.all).
	searchAPI atomic.Int32
}

// NewHTTPTarget returns a target for the server at baseURL.
func NewHTTPTarget(baseURL, key string) *HTTPTarget {
	return &HTTPTarget{URL: baseURL, Key: key, Client: &http.Client{Timeout: 5 * time.Minute}}
}

// Run implements Target: ad-hoc SQL through GET /api/query, LQL searches
// through the source search API (or logs.all lql= on a server without
// one), the rest through the query endpoint.
func (t *HTTPTarget) Run(ctx context.Context, q Query, nonce string) ([]byte, string, error) {
	if q.SQL != "" {
		const via = "/api/query sql="
		status, body, err := t.get(ctx, t.URL+"/api/query?"+url.Values{"sql": {q.SQL}}.Encode())
		if err == nil && status != http.StatusOK {
			err = fmt.Errorf("HTTP %d: %s", status, snippet(body))
		}
		return body, via, err
	}
	if q.Search != nil && t.searchAPI.Load() >= 0 {
		v := url.Values{"lql": {q.Search.LQL}, "from": {isoMillis(q.Search.Start)}, "to": {isoMillis(q.Search.End)}, "limit": {"100"}}
		u := t.URL + "/api/sources/" + url.PathEscape(q.Search.Source) + "/search?" + v.Encode()
		status, body, err := t.get(ctx, u)
		if err != nil {
			return nil, "", err
		}
		if status != http.StatusNotFound || t.searchAPI.Load() > 0 {
			t.searchAPI.Store(1)
			if status != http.StatusOK {
				return body, "search API", fmt.Errorf("search API: HTTP %d: %s", status, snippet(body))
			}
			return body, "search API", nil
		}
		t.searchAPI.Store(-1)
	}
	v := url.Values{}
	for k, x := range q.Params {
		v.Set(k, x)
	}
	if q.BustCache {
		v.Set(bustParam, nonce)
	}
	status, body, err := t.get(ctx, t.URL+"/api/endpoints/query/"+url.PathEscape(q.Endpoint)+"?"+v.Encode())
	if err != nil {
		return nil, "", err
	}
	via := via(q)
	if status != http.StatusOK {
		return body, via, fmt.Errorf("HTTP %d: %s", status, snippet(body))
	}
	return body, via, nil
}

// Rows implements Target: Logflare's {"result": [...]} or {"error": ...}.
func (t *HTTPTarget) Rows(_ Query, body []byte) ([]Row, error) { return logflareRows(body) }

func (t *HTTPTarget) get(ctx context.Context, u string) (int, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("X-Api-Key", t.Key)
	req.Header.Set("Accept", "application/json")
	res, err := t.Client.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	return res.StatusCode, body, err
}

// ServiceTarget runs queries in process through the endpoints service, the
// code the server's query routes call, without HTTP.
type ServiceTarget struct {
	Service *endpoints.Service
	Catalog *catalog.Catalog
}

// Run implements Target: ad-hoc SQL as GET /api/query runs it, LQL
// searches through logs.all (the search API is an HTTP route), the rest
// through the endpoint.
func (t *ServiceTarget) Run(ctx context.Context, q Query, nonce string) ([]byte, string, error) {
	if q.SQL != "" {
		return t.Service.RunSQL(ctx, q.SQL), "sql", nil
	}
	ep := t.Catalog.EndpointByName(q.Endpoint)
	if ep == nil {
		return nil, "", fmt.Errorf("no endpoint %q", q.Endpoint)
	}
	params := make(map[string]string, len(q.Params)+2)
	for k, v := range q.Params {
		params[k] = v
	}
	params["token_or_name"] = q.Endpoint
	if q.BustCache {
		params[bustParam] = nonce
	}
	return t.Service.RunEndpoint(ctx, ep, params, false), via(q), nil
}

// Rows implements Target.
func (t *ServiceTarget) Rows(_ Query, body []byte) ([]Row, error) { return logflareRows(body) }

func via(q Query) string {
	switch {
	case q.Params["lql"] != "":
		return q.Endpoint + " lql="
	case q.Params["sql"] != "":
		return q.Endpoint + " sql="
	}
	return q.Endpoint
}

func snippet(b []byte) string {
	const max = 300
	if len(b) > max {
		return string(b[:max]) + "…"
	}
	return string(b)
}

// QueryStats are one query's timings over a run of a suite.
type QueryStats struct {
	Name     string  `json:"name"`
	Via      string  `json:"via"`
	Runs     int     `json:"runs"`
	Rows     int     `json:"rows"` // result rows of the last run
	MedianMs float64 `json:"median_ms"`
	P99Ms    float64 `json:"p99_ms"`
	MinMs    float64 `json:"min_ms"`
	// SamplesMs are the timed runs in the order they ran (the warm-up run
	// excluded), for comparisons that weigh a change against the noise.
	SamplesMs []float64 `json:"samples_ms,omitempty"`
	// Checked says every answer (the warm-up's included) was compared with
	// the generator's truth and was right.
	Checked bool   `json:"checked,omitempty"`
	Error   string `json:"error,omitempty"`
}

// RunQueries runs every query of suite once to warm up, then runs times,
// one query at a time, and returns each query's median and p99. Only the
// request is timed; decoding the answer and checking it against the truth
// (for queries with a Check) follow untimed. A query that fails, or whose
// answer is wrong, is reported with its error and not timed; the others
// go on. The error returned is the context's, or one naming the failed
// queries.
func RunQueries(ctx context.Context, t Target, suite []Query, runs int, p *Progress) ([]QueryStats, error) {
	runs = max(runs, 1)
	out := make([]QueryStats, 0, len(suite))
	p.Start("queries", int64(len(suite)*(runs+1)), "runs")
	defer p.Finish()
	nonce := strconv.FormatInt(time.Now().UnixNano(), 36)
	var failed []string
	for qi, q := range suite {
		st := QueryStats{Name: q.Name, Runs: runs, Checked: q.Check != nil}
		times := make([]time.Duration, 0, runs)
		for r := 0; r <= runs; r++ {
			if err := ctx.Err(); err != nil {
				return out, err
			}
			t0 := time.Now()
			body, via, err := t.Run(ctx, q, nonce+"-"+strconv.Itoa(qi)+"-"+strconv.Itoa(r))
			d := time.Since(t0)
			p.Add(1)
			st.Via = via
			var rows []Row
			if err == nil {
				rows, err = t.Rows(q, body)
			}
			if err == nil && q.Check != nil {
				err = q.Check(rows)
			}
			if err != nil {
				st.Error = err.Error()
				p.Add(int64(runs - r))
				break
			}
			st.Rows = len(rows)
			if r > 0 { // run 0 warms up
				times = append(times, d)
			}
		}
		if st.Error != "" {
			failed = append(failed, q.Name)
			st.Runs, st.Checked = 0, false
		} else {
			st.SamplesMs = make([]float64, len(times))
			for i, d := range times {
				st.SamplesMs[i] = math.Round(ms(d)*1000) / 1000
			}
			st.MinMs = ms(Percentile(times, 0))
			st.MedianMs = ms(Median(times))
			st.P99Ms = ms(Percentile(times, 99))
		}
		out = append(out, st)
	}
	if len(failed) > 0 {
		return out, fmt.Errorf("%w: %q", ErrQueriesFailed, failed)
	}
	return out, nil
}

// ErrQueriesFailed is matched by the error RunQueries returns when queries
// failed (the results are still returned).
var ErrQueriesFailed = errors.New("bench: queries failed")
