package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
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
	// Run runs q once and returns how many result rows it gave and how it
	// was sent (e.g. "logs.all lql=" or "search API"). nonce differs on
	// every call; it goes into a query with BustCache.
	Run(ctx context.Context, q Query, nonce string) (rows int, via string, err error)
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

// Run implements Target.
func (t *HTTPTarget) Run(ctx context.Context, q Query, nonce string) (int, string, error) {
	if q.Search != nil && t.searchAPI.Load() >= 0 {
		v := url.Values{"lql": {q.Search.LQL}, "from": {isoMillis(q.Search.Start)}, "to": {isoMillis(q.Search.End)}, "limit": {"100"}}
		u := t.URL + "/api/sources/" + url.PathEscape(q.Search.Source) + "/search?" + v.Encode()
		status, body, err := t.get(ctx, u)
		if err != nil {
			return 0, "", err
		}
		if status != http.StatusNotFound || t.searchAPI.Load() > 0 {
			t.searchAPI.Store(1)
			if status != http.StatusOK {
				return 0, "search API", fmt.Errorf("search API: HTTP %d: %s", status, snippet(body))
			}
			n, err := countResult(body)
			return n, "search API", err
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
		return 0, "", err
	}
	via := via(q)
	if status != http.StatusOK {
		return 0, via, fmt.Errorf("HTTP %d: %s", status, snippet(body))
	}
	n, err := countResult(body)
	return n, via, err
}

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

// Run implements Target. LQL searches go through logs.all (the search API
// is an HTTP route).
func (t *ServiceTarget) Run(ctx context.Context, q Query, nonce string) (int, string, error) {
	ep := t.Catalog.EndpointByName(q.Endpoint)
	if ep == nil {
		return 0, "", fmt.Errorf("no endpoint %q", q.Endpoint)
	}
	params := make(map[string]string, len(q.Params)+2)
	for k, v := range q.Params {
		params[k] = v
	}
	params["token_or_name"] = q.Endpoint
	if q.BustCache {
		params[bustParam] = nonce
	}
	n, err := countResult(t.Service.RunEndpoint(ctx, ep, params, false))
	return n, via(q), err
}

func via(q Query) string {
	switch {
	case q.Params["lql"] != "":
		return q.Endpoint + " lql="
	case q.Params["sql"] != "":
		return q.Endpoint + " sql="
	}
	return q.Endpoint
}

// countResult reads Logflare's answer: {"result": [...]} or {"error": ...}
// (sent with HTTP 200).
func countResult(body []byte) (int, error) {
	var r struct {
		Result []json.RawMessage `json:"result"`
		Error  json.RawMessage   `json:"error"`
	}
	if err := json.Unmarshal(body, &r); err != nil {
		return 0, fmt.Errorf("answer is not JSON: %s", snippet(body))
	}
	if len(r.Error) > 0 && string(r.Error) != "null" {
		return 0, fmt.Errorf("query error: %s", snippet(r.Error))
	}
	if r.Result == nil {
		return 0, fmt.Errorf("answer has no result: %s", snippet(body))
	}
	return len(r.Result), nil
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
	Error    string  `json:"error,omitempty"`
}

// RunQueries runs every query of suite once to warm up, then runs times,
// one query at a time, and returns each query's median and p99. A query
// that fails is reported with its error and not timed; the others go on.
// The error returned is the context's, or one naming the failed queries.
func RunQueries(ctx context.Context, t Target, suite []Query, runs int, p *Progress) ([]QueryStats, error) {
	runs = max(runs, 1)
	out := make([]QueryStats, 0, len(suite))
	p.Start("queries", int64(len(suite)*(runs+1)), "runs")
	defer p.Finish()
	nonce := strconv.FormatInt(time.Now().UnixNano(), 36)
	var failed []string
	for qi, q := range suite {
		st := QueryStats{Name: q.Name, Runs: runs}
		times := make([]time.Duration, 0, runs)
		for r := 0; r <= runs; r++ {
			if err := ctx.Err(); err != nil {
				return out, err
			}
			t0 := time.Now()
			rows, via, err := t.Run(ctx, q, nonce+"-"+strconv.Itoa(qi)+"-"+strconv.Itoa(r))
			d := time.Since(t0)
			p.Add(1)
			st.Via = via
			if err != nil {
				st.Error = err.Error()
				p.Add(int64(runs - r))
				break
			}
			st.Rows = rows
			if r > 0 { // run 0 warms up
				times = append(times, d)
			}
		}
		if st.Error != "" {
			failed = append(failed, q.Name)
			st.Runs = 0
		} else {
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
