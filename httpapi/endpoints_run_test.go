package httpapi

import (
	"fmt"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	json "github.com/goccy/go-json"

	"github.com/sediment/sediment/query/endpoints"
)

// These tests run query endpoints for real (SQL engine, cache, sandbox,
// redaction) through the HTTP server, on events ingested the way Vector
// sends them.

// clock is a settable test clock.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *clock) advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

var studioNow = time.Date(2025, 7, 10, 12, 30, 0, 0, time.UTC)

func runServer(t *testing.T) (*testServer, *clock) {
	clk := &clock{now: studioNow}
	ts := startServer(t, serverConfig{
		opts:    Options{Now: clk.Now},
		service: &endpoints.Options{Now: clk.Now, DisableBackground: true},
	})
	return ts, clk
}

// edgeBatch is a Vector-style array of Kong access events.
func edgeBatch(n int, start time.Time, project string) []byte {
	var b strings.Builder
	b.WriteString("[")
	paths := []string{"/rest/v1/todos?select=*", "/auth/v1/token", "/storage/v1/object/a.png", "/realtime/v1/websocket", "/rest/v1/rpc/f"}
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteString(",")
		}
		ts := start.Add(time.Duration(i) * time.Minute).Format(time.RFC3339Nano)
		status := 200
		if i%7 == 3 {
			status = 500
		}
		ip := fmt.Sprintf("172.18.0.%d", i%5+1)
		fmt.Fprintf(&b, `{"appname":"supabase-kong","event_message":"%s - - \"GET %s HTTP/1.1\" %d 44","metadata":{"request":{"headers":{"cf_connecting_ip":"%s","referer":null},"method":"GET","path":"%s","protocol":"HTTP/1.1"},"response":{"status_code":%d}},"project":"%s","timestamp":"%s"}`,
			ip, paths[i%len(paths)], status, ip, paths[i%len(paths)], status, project, ts)
	}
	b.WriteString("]")
	return []byte(b.String())
}

func (ts *testServer) ingestEdge(body []byte) {
	ts.t.Helper()
	ts.do("POST", "/api/logs?source_name=cloudflare.logs.prod", body, "x-api-key", pubKey, "Content-Type", "application/json").
		expect(ts.t, 200, `{"message":"Logged!"}`)
}

// studio calls an endpoint as Studio's server does: GET, everything in the
// URL-encoded query string (empty values kept), x-api-key private.
func (ts *testServer) studio(name string, params [][2]string) map[string]any {
	ts.t.Helper()
	q := url.Values{}
	for _, p := range params {
		q.Add(p[0], p[1])
	}
	r := ts.do("GET", "/api/endpoints/query/"+name+"?"+q.Encode(), nil, "x-api-key", privKey, "Content-Type", "application/json", "Accept", "application/json")
	if r.status != 200 {
		ts.t.Fatalf("status %d: %s", r.status, r.body)
	}
	var out map[string]any
	if err := json.Unmarshal([]byte(r.body), &out); err != nil {
		ts.t.Fatalf("body %q: %v", r.body, err)
	}
	return out
}

func rows(t testing.TB, body map[string]any) []map[string]any {
	t.Helper()
	if e, ok := body["error"]; ok {
		t.Fatalf("query error: %v", e)
	}
	res, ok := body["result"].([]any)
	if !ok {
		t.Fatalf("no result in %v", body)
	}
	out := make([]map[string]any, len(res))
	for i, r := range res {
		out[i] = r.(map[string]any)
	}
	return out
}

func errorOf(t testing.TB, body map[string]any) string {
	t.Helper()
	e, ok := body["error"].(string)
	if !ok {
		t.Fatalf("want an error, got %v", body)
	}
	if _, has := body["result"]; has {
		t.Fatalf("an error body must not carry a result: %v", body)
	}
	return e
}

func TestLogsAllAsStudioCallsIt(t *testing.T) {
	ts, _ := runServer(t)
	ts.ingestEdge(edgeBatch(90, studioNow.Add(-89*time.Minute), "default"))
	ts.ingestEdge(edgeBatch(5, studioNow.Add(-30*time.Minute), "another"))

	// The default final select: newest 100 edge logs of the project, the
	// metadata as BigQuery's nested arrays, timestamps in microseconds.
	all := rows(t, ts.studio("logs.all", [][2]string{{"project", "default"}, {"iso_timestamp_start", ""}, {"iso_timestamp_end", ""}}))
	if len(all) != 90 {
		t.Fatalf("%d rows, want 90", len(all))
	}
	newest := all[0]
	if newest["timestamp"].(float64) != float64(studioNow.Add(time.Minute*0).UnixMicro()) {
		t.Fatalf("first row timestamp %v, want the newest %d", newest["timestamp"], studioNow.UnixMicro())
	}
	md := newest["metadata"].([]any)[0].(map[string]any)
	req := md["request"].([]any)[0].(map[string]any)
	if _, ok := req["headers"].([]any); !ok || req["method"] != "GET" {
		t.Fatalf("metadata not in BigQuery's shape: %v", newest["metadata"])
	}

	// Studio's list query for the edge logs page, last hour, URL-encoded.
	list := `select id, edge_logs.timestamp, event_message, request.method, request.path, response.status_code
from edge_logs
cross join unnest(metadata) as m
cross join unnest(m.request) as request
cross join unnest(m.response) as response
where (response.status_code >= 500)
order by timestamp desc
limit 100`
	got := rows(t, ts.studio("logs.all", [][2]string{{"project", "default"}, {"iso_timestamp_start", "2025-07-10T11:30:00.000Z"}, {"iso_timestamp_end", ""}, {"sql", list}}))
	// Events 0..89 at one-minute steps from 11:01; the last hour (after
	// 11:30) holds minutes 30..89 of which every 7th from 3 is a 500.
	want := 0
	for i := 30; i < 90; i++ {
		if i%7 == 3 {
			want++
		}
	}
	if len(got) != want {
		t.Fatalf("%d error rows, want %d", len(got), want)
	}
	for i, r := range got {
		if r["status_code"].(float64) != 500 || r["method"] != "GET" {
			t.Fatalf("row %d: %v", i, r)
		}
		if i > 0 && r["timestamp"].(float64) > got[i-1]["timestamp"].(float64) {
			t.Fatal("not newest first")
		}
	}
	// The new-rows counter and the chart.
	cnt := rows(t, ts.studio("logs.all", [][2]string{{"project", "default"}, {"iso_timestamp_start", "2025-07-10T12:00:00.000Z"}, {"iso_timestamp_end", ""}, {"sql", "select count(*) as count from edge_logs"}}))
	if cnt[0]["count"].(float64) != 30 {
		t.Fatalf("count %v, want 30", cnt[0]["count"])
	}
	chart := rows(t, ts.studio("logs.all", [][2]string{{"project", "default"}, {"iso_timestamp_start", "2025-07-10T11:30:00.000Z"}, {"iso_timestamp_end", "2025-07-10T12:00:00.000Z"},
		{"sql", "select timestamp_trunc(t.timestamp, minute) as timestamp, count(t.timestamp) as count from edge_logs t group by timestamp order by timestamp asc"}}))
	if len(chart) != 30 || chart[0]["count"].(float64) != 1 {
		t.Fatalf("chart %d buckets: %v", len(chart), chart[:1])
	}
	// Single log by id, bounds empty.
	id := all[3]["id"].(string)
	one := rows(t, ts.studio("logs.all", [][2]string{{"project", "default"}, {"iso_timestamp_start", ""}, {"iso_timestamp_end", ""},
		{"sql", "select id, timestamp, event_message, metadata from edge_logs where id = '" + id + "' limit 1"}}))
	if len(one) != 1 || one[0]["id"] != id {
		t.Fatalf("single log: %v", one)
	}
	// Another project's events are not edge logs of this one.
	other := rows(t, ts.studio("logs.all", [][2]string{{"project", "another"}, {"sql", "select count(*) as c from edge_logs"}}))
	if other[0]["c"].(float64) != 5 {
		t.Fatalf("other project count %v", other[0]["c"])
	}
	// A missing project parameter is NULL: no project matches.
	none := rows(t, ts.studio("logs.all", [][2]string{{"sql", "select count(*) as c from edge_logs"}}))
	if none[0]["c"].(float64) != 0 {
		t.Fatalf("no project: %v", none)
	}
}

func TestSandboxErrors(t *testing.T) {
	ts, _ := runServer(t)
	ts.ingestEdge(edgeBatch(3, studioNow.Add(-time.Minute), "default"))
	for _, tc := range []struct{ sql, want string }{
		{"select a from `cloudflare.logs.prod`", "Table not found in CTE"},
		{"select a from nothing_here", "can't find source nothing_here"},
		{"insert into edge_logs (id) values ('x')", "Only SELECT queries allowed in sandboxed queries"},
		{"select * from edge_logs", "restricted wildcard (*) in a result column"},
		{"select 1 as a; select 2 as b", "Only singular query allowed"},
		{"select session_user() as u from edge_logs", "Restricted function session_user"},
		{"select nope_fn(id) as x from edge_logs", "Function not found: nope_fn"},
		{"select missing_col from edge_logs", "Unrecognized name: missing_col"},
		{"select id from edge_logs where", "sql parser error"},
	} {
		e := errorOf(t, ts.studio("logs.all", [][2]string{{"project", "default"}, {"sql", tc.sql}}))
		if !strings.Contains(e, tc.want) {
			t.Errorf("%q: error %q, want it to contain %q", tc.sql, e, tc.want)
		}
	}
	// A consumer WITH nests over the endpoint's CTEs.
	rs := rows(t, ts.studio("logs.all", [][2]string{{"project", "default"}, {"sql",
		"with recent as (select id, timestamp from edge_logs), counted as (select count(*) as n from recent) select n from counted"}}))
	if rs[0]["n"].(float64) != 3 {
		t.Fatalf("nested WITH: %v", rs)
	}
	// UNION ALL and joins between CTEs are allowed.
	rs = rows(t, ts.studio("logs.all", [][2]string{{"project", "default"}, {"sql",
		"select count(*) as n from (select id from edge_logs union all select id from postgres_logs) u"}}))
	if rs[0]["n"].(float64) != 3 {
		t.Fatalf("union: %v", rs)
	}
}

func TestLQLOnSandboxedEndpoint(t *testing.T) {
	ts, _ := runServer(t)
	ts.ingestEdge(edgeBatch(14, studioNow.Add(-20*time.Minute), "default"))
	rs := rows(t, ts.studio("logs.all", [][2]string{{"project", "default"}, {"lql", "f:edge_logs m.response.status_code:500"}}))
	if len(rs) != 2 {
		t.Fatalf("lql rows %v, want 2 (events 3 and 10)", rs)
	}
	e := errorOf(t, ts.studio("logs.all", [][2]string{{"project", "default"}, {"lql", "m.response.status_code:500"}}))
	if !strings.Contains(e, "Multiple CTEs available") {
		t.Fatalf("lql without f: %q", e)
	}
	// sql wins over lql.
	rs = rows(t, ts.studio("logs.all", [][2]string{{"project", "default"}, {"lql", "f:edge_logs m.response.status_code:500"}, {"sql", "select count(*) as c from edge_logs"}}))
	if rs[0]["c"].(float64) != 14 {
		t.Fatalf("sql over lql: %v", rs)
	}
}

// createEndpoint makes an endpoint through the management API.
func (ts *testServer) createEndpoint(fields map[string]any) map[string]any {
	ts.t.Helper()
	b, _ := json.Marshal(fields)
	r := ts.do("POST", "/api/endpoints", b, "Authorization", "Bearer "+privKey, "Content-Type", "application/json")
	if r.status != 201 {
		ts.t.Fatalf("create endpoint: %d %s", r.status, r.body)
	}
	var ep map[string]any
	json.Unmarshal([]byte(r.body), &ep)
	return ep
}

func TestEndpointParamsLimitsAndErrors(t *testing.T) {
	ts, _ := runServer(t)
	ts.ingestEdge(edgeBatch(10, studioNow.Add(-10*time.Minute), "default"))
	ep := ts.createEndpoint(map[string]any{"name": "by-status", "max_limit": 3, "cache_duration_seconds": 0,
		"query": "select id, @status as asked, @missing is null as missing_is_null from `cloudflare.logs.prod` t cross join unnest(t.metadata) m cross join unnest(m.response) r where cast(r.status_code as string) = @status order by t.timestamp"})
	token := ep["token"].(string)
	// Query string, by token; max_limit truncates 8 rows to 3.
	rs := rows(t, ts.studio(token, [][2]string{{"status", "200"}, {"extra", "ignored"}}))
	if len(rs) != 3 || rs[0]["asked"] != "200" || rs[0]["missing_is_null"] != true {
		t.Fatalf("rows %v", rs)
	}
	// JSON body of a POST, by name; numbers become their text.
	r := ts.do("POST", "/api/endpoints/query/by-status", []byte(`{"status":500}`), "x-api-key", privKey, "Content-Type", "application/json")
	var body map[string]any
	json.Unmarshal([]byte(r.body), &body)
	if rs := rows(t, body); len(rs) != 1 || rs[0]["asked"] != "500" {
		t.Fatalf("POST body params: %s", r.body)
	}
	// The public token may not query; an unknown endpoint is 401 too.
	ts.do("GET", "/api/endpoints/query/by-status?status=200", nil, "x-api-key", pubKey).expect(t, 401, `{"error":"Unauthorized"}`)
	ts.do("GET", "/api/endpoints/query/no-such-endpoint", nil, "x-api-key", privKey).expect(t, 401, `{"error":"Unauthorized"}`)
	// A failing query is HTTP 200 with an error body naming the problem.
	bad := ts.createEndpoint(map[string]any{"name": "bad-cast", "query": "select cast(@v as int64) as n"})
	e := errorOf(t, ts.studio(bad["token"].(string), [][2]string{{"v", "not-a-number"}}))
	if !strings.Contains(e, "not-a-number") {
		t.Fatalf("error %q does not name the bad value", e)
	}
}

func TestEndpointCache(t *testing.T) {
	ts, clk := runServer(t)
	ts.ingestEdge(edgeBatch(5, studioNow.Add(-10*time.Minute), "default"))
	ep := ts.createEndpoint(map[string]any{"name": "cached-count", "cache_duration_seconds": 60, "proactive_requerying_seconds": 10,
		"query": "select count(*) as c from `cloudflare.logs.prod`"})
	count := func() float64 {
		return rows(t, ts.studio("cached-count", nil))[0]["c"].(float64)
	}
	execs := ts.service.Executions
	if c := count(); c != 5 || execs() != 1 {
		t.Fatalf("first: %v after %d runs", c, execs())
	}
	ts.ingestEdge(edgeBatch(3, studioNow.Add(-5*time.Minute), "default"))
	if c := count(); c != 5 || execs() != 1 {
		t.Fatalf("cache hit should give the stored result: %v after %d runs", c, execs())
	}
	// Proactive refresh after 10s, in the background tick.
	clk.advance(11 * time.Second)
	ts.service.Tick()
	if execs() != 2 {
		t.Fatalf("refresh did not run: %d runs", execs())
	}
	if c := count(); c != 8 || execs() != 2 {
		t.Fatalf("after refresh: %v after %d runs", c, execs())
	}
	// Unread for a whole lifetime: it expires instead of refreshing.
	clk.advance(61 * time.Second)
	ts.service.Tick()
	if execs() != 2 {
		t.Fatalf("an unread result was refreshed: %d runs", execs())
	}
	ts.ingestEdge(edgeBatch(1, studioNow.Add(-time.Minute), "default"))
	if c := count(); c != 9 || execs() != 3 {
		t.Fatalf("after expiry: %v after %d runs", c, execs())
	}
	// Other parameters are another cache entry.
	rows(t, ts.studio("cached-count", [][2]string{{"x", "1"}}))
	if execs() != 4 {
		t.Fatalf("different params shared a cache entry: %d runs", execs())
	}
	// Changing the endpoint drops its cache.
	r := ts.do("PATCH", "/api/endpoints/"+ep["token"].(string), []byte(`{"query":"select count(*) + 1000 as c from `+"`cloudflare.logs.prod`"+`"}`), "Authorization", "Bearer "+privKey, "Content-Type", "application/json")
	if r.status != 204 {
		t.Fatalf("patch: %d %s", r.status, r.body)
	}
	if c := count(); c != 1009 {
		t.Fatalf("after the endpoint changed: %v", c)
	}
	// Concurrent identical requests on a cold entry run the query once.
	before := execs()
	var wg sync.WaitGroup
	var bad atomic.Int32
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if rows(t, ts.studio("cached-count", [][2]string{{"cold", "yes"}}))[0]["c"].(float64) != 1009 {
				bad.Add(1)
			}
		}()
	}
	wg.Wait()
	if bad.Load() != 0 || execs()-before != 1 {
		t.Fatalf("concurrent cold requests ran %d queries", execs()-before)
	}
	// A failing first run is not cached.
	ts.createEndpoint(map[string]any{"name": "flaky", "cache_duration_seconds": 60, "query": "select cast(@v as int64) as n"})
	errorOf(t, ts.studio("flaky", [][2]string{{"v", "x"}}))
	errorOf(t, ts.studio("flaky", [][2]string{{"v", "x"}}))
	if n := execs() - before; n != 3 {
		t.Fatalf("failed runs: %d executions, want both failures run (2 + the cold one)", n)
	}
}

func TestPIIRedaction(t *testing.T) {
	ts, _ := runServer(t)
	ts.ingestEdge(edgeBatch(2, studioNow.Add(-time.Minute), "default"))
	q := "select 'User 10.0.0.1 connected ::1' as a, 'IPv6: 2001:0db8:85a3::8a2e:0370:7334' as b, '192.168.1.1' as c, 'fe80::1%eth0 and ::ffff:10.1.2.3 then 999.1.1.1 or 1.2.3' as d, ['x 8.8.8.8', 'ok'] as arr, t.metadata as md, 42 as n, t.id as `10.0.0.9` from `cloudflare.logs.prod` t order by t.timestamp limit 1"
	ts.createEndpoint(map[string]any{"name": "pii", "redact_pii": true, "query": q})
	ts.createEndpoint(map[string]any{"name": "pii-off", "query": q})
	check := func(body map[string]any, redacted bool) {
		t.Helper()
		r := rows(t, body)[0]
		want := map[string]string{"a": "User REDACTED connected REDACTED", "b": "IPv6: REDACTED", "c": "REDACTED",
			"d": "REDACTED and REDACTED then 999.1.1.1 or 1.2.3"}
		for k, v := range want {
			if redacted && r[k] != v {
				t.Errorf("%s: %q, want %q", k, r[k], v)
			}
			if !redacted && r[k] == v {
				t.Errorf("%s redacted without asking", k)
			}
		}
		arr := r["arr"].([]any)
		ip := r["md"].([]any)[0].(map[string]any)["request"].([]any)[0].(map[string]any)["headers"].([]any)[0].(map[string]any)["cf_connecting_ip"]
		if redacted && (arr[0] != "x REDACTED" || ip != "REDACTED") {
			t.Errorf("nested values not redacted: %v %v", arr, ip)
		}
		if r["n"].(float64) != 42 || r["10.0.0.9"] == nil {
			t.Errorf("non-strings or keys changed: %v", r)
		}
	}
	check(ts.studio("pii", nil), true)
	check(ts.studio("pii-off", nil), false)
	// The header overrides the setting both ways.
	get := func(name, h string) map[string]any {
		r := ts.do("GET", "/api/endpoints/query/"+name, nil, "x-api-key", privKey, "LF-ENDPOINT-REDACT-PII", h)
		var m map[string]any
		json.Unmarshal([]byte(r.body), &m)
		return m
	}
	check(get("pii-off", "TRUE"), true)
	check(get("pii", "false"), false)
}
