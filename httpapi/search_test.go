package httpapi

import (
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	json "github.com/goccy/go-json"
)

// Search tests: a real server (SQL engine included) over events ingested
// through /api/logs, the clock injected (studioNow, 12:30 UTC).

// searchStart is the time of the first event of searchServer's data: 30
// events a minute apart, 12:00 to 12:29, each minute twice (projects
// "default" and "other").
var searchStart = studioNow.Add(-30 * time.Minute)

const searchEvents = 30

func searchServer(t *testing.T) *testServer {
	ts, _ := runServer(t)
	ts.ingestEdge(edgeBatch(searchEvents, searchStart, "default"))
	ts.ingestEdge(edgeBatch(searchEvents, searchStart, "other"))
	return ts
}

// edgeRow is what edgeBatch generated for event i.
type edgeRow struct {
	status int
	path   string
	ip     string
}

func edgeRowOf(i int) edgeRow {
	paths := []string{"/rest/v1/todos?select=*", "/auth/v1/token", "/storage/v1/object/a.png", "/realtime/v1/websocket", "/rest/v1/rpc/f"}
	r := edgeRow{status: 200, path: paths[i%len(paths)], ip: "172.18.0." + string(rune('1'+i%5))}
	if i%7 == 3 {
		r.status = 500
	}
	return r
}

// searchBody is a decoded search answer.
type searchBody struct {
	Result []map[string]any `json:"result"`
	Chart  []map[string]any `json:"chart"`
	Error  *string          `json:"error"`
}

// search calls the search route with GET; params alternate name, value.
func (ts *testServer) search(source, key string, params ...string) (int, searchBody, string) {
	ts.t.Helper()
	q := url.Values{}
	for i := 0; i+1 < len(params); i += 2 {
		q.Set(params[i], params[i+1])
	}
	r := ts.do("GET", "/api/sources/"+url.PathEscape(source)+"/search?"+q.Encode(), nil, "x-api-key", key)
	var b searchBody
	if err := json.Unmarshal([]byte(r.body), &b); err != nil {
		ts.t.Fatalf("search body %q: %v", r.body, err)
	}
	return r.status, b, r.body
}

// found returns the events of a successful search.
func (ts *testServer) found(lql string, params ...string) searchBody {
	ts.t.Helper()
	status, b, raw := ts.search("cloudflare.logs.prod", privKey, append([]string{"lql", lql}, params...)...)
	if status != 200 || b.Error != nil || b.Result == nil {
		ts.t.Fatalf("search %q: %d %s", lql, status, raw)
	}
	return b
}

// sqlIDs runs ad-hoc SQL through /api/query and returns the id column.
func (ts *testServer) sqlIDs(sql string) []string {
	ts.t.Helper()
	r := ts.do("GET", "/api/query?sql="+url.QueryEscape(sql), nil, "x-api-key", privKey)
	var b searchBody
	if err := json.Unmarshal([]byte(r.body), &b); err != nil || r.status != 200 || b.Error != nil {
		ts.t.Fatalf("sql %s: %d %s", sql, r.status, r.body)
	}
	return searchIDs(b.Result)
}

func searchIDs(rows []map[string]any) []string {
	out := make([]string, len(rows))
	for i, r := range rows {
		out[i], _ = r["id"].(string)
	}
	return out
}

// countEvents counts the ingested events that pass pred.
func countEvents(pred func(i int, r edgeRow, project string) bool) int {
	n := 0
	for _, project := range []string{"default", "other"} {
		for i := 0; i < searchEvents; i++ {
			if pred(i, edgeRowOf(i), project) {
				n++
			}
		}
	}
	return n
}

// TestSearchLQLMatchesSQL runs each kind of LQL clause through the search
// route and the same filter written in SQL through /api/query; both must
// return the same events, newest first, and as many as the data holds.
func TestSearchLQLMatchesSQL(t *testing.T) {
	ts := searchServer(t)
	const from = "SELECT t.id FROM `cloudflare.logs.prod` AS t "
	const unnest = "CROSS JOIN UNNEST(t.metadata) AS m CROSS JOIN UNNEST(m.request) AS req CROSS JOIN UNNEST(m.response) AS res "
	const order = " ORDER BY t.timestamp DESC, t.id DESC LIMIT 1000"
	at := func(min int) int64 { return searchStart.Add(time.Duration(min) * time.Minute).UnixMicro() }
	cases := []struct {
		name, lql, sql string
		pred           func(i int, r edgeRow, project string) bool
	}{
		{"int equality", `m.response.status_code:500`,
			unnest + "WHERE res.status_code = 500",
			func(_ int, r edgeRow, _ string) bool { return r.status == 500 }},
		{"string equality", `m.request.path:"/auth/v1/token"`,
			unnest + "WHERE req.path = '/auth/v1/token'",
			func(_ int, r edgeRow, _ string) bool { return r.path == "/auth/v1/token" }},
		{"top-level field", `project:other`,
			"WHERE t.project = 'other'",
			func(_ int, _ edgeRow, project string) bool { return project == "other" }},
		{"deep path", `m.request.headers.cf_connecting_ip:"172.18.0.2"`,
			unnest + "CROSS JOIN UNNEST(req.headers) AS h WHERE h.cf_connecting_ip = '172.18.0.2'",
			func(_ int, r edgeRow, _ string) bool { return r.ip == "172.18.0.2" }},
		{"range", `m.response.status_code:201..500`,
			unnest + "WHERE res.status_code BETWEEN 201 AND 500",
			func(_ int, r edgeRow, _ string) bool { return r.status == 500 }},
		{"comparison", `m.response.status_code:<500`,
			unnest + "WHERE res.status_code < 500",
			func(_ int, r edgeRow, _ string) bool { return r.status < 500 }},
		{"negation", `-m.request.path:~^/rest`,
			unnest + "WHERE NOT REGEXP_CONTAINS(req.path, '^/rest')",
			func(_ int, r edgeRow, _ string) bool { return !strings.HasPrefix(r.path, "/rest") }},
		{"regex on a field", `m.request.path:~"(auth|storage)/v1"`,
			unnest + "WHERE REGEXP_CONTAINS(req.path, '(auth|storage)/v1')",
			func(_ int, r edgeRow, _ string) bool {
				return strings.Contains(r.path, "auth/v1") || strings.Contains(r.path, "storage/v1")
			}},
		{"regex on the message", `~"HTTP/1\.1\" 5\d\d"`,
			`WHERE REGEXP_CONTAINS(t.event_message, 'HTTP/1\\.1" 5\\d\\d')`,
			func(_ int, r edgeRow, _ string) bool { return r.status == 500 }},
		{"bare word", `websocket`,
			"WHERE STRPOS(t.event_message, 'websocket') > 0",
			func(_ int, r edgeRow, _ string) bool { return strings.Contains(r.path, "websocket") }},
		{"quoted phrase", `"GET /auth/v1/token"`,
			"WHERE STRPOS(t.event_message, 'GET /auth/v1/token') > 0",
			func(_ int, r edgeRow, _ string) bool { return r.path == "/auth/v1/token" }},
		{"t: range", `t:2025-07-10T12:05:00Z..2025-07-10T12:10:00Z`,
			"WHERE t.timestamp BETWEEN TIMESTAMP_MICROS(" + itoa(at(5)) + ") AND TIMESTAMP_MICROS(" + itoa(at(10)) + ")",
			func(i int, _ edgeRow, _ string) bool { return i >= 5 && i <= 10 }},
		{"t: shorthand", `t:last@10m m.response.status_code:200`,
			unnest + "WHERE res.status_code = 200 AND t.timestamp >= TIMESTAMP_MICROS(" + itoa(at(20)) + ")",
			func(i int, r edgeRow, _ string) bool { return i >= 20 && r.status == 200 }},
		{"t: unix", "t:<" + itoa(searchStart.Add(5*time.Minute).Unix()),
			"WHERE t.timestamp < TIMESTAMP_MICROS(" + itoa(at(5)) + ")",
			func(i int, _ edgeRow, _ string) bool { return i < 5 }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := searchIDs(ts.found(tc.lql, "limit", "1000").Result)
			exp := ts.sqlIDs(from + tc.sql + order)
			if n := countEvents(tc.pred); len(exp) != n {
				t.Fatalf("SQL found %d events, the data has %d", len(exp), n)
			}
			if !slices.Equal(got, exp) {
				t.Fatalf("LQL %s\n got %v\nSQL %v", tc.lql, got, exp)
			}
		})
	}
}

func itoa(v int64) string { return strconv.FormatInt(v, 10) }

// TestSearchByNameAndToken: a source is found by name and by token (any
// UUID spelling); both give the same events, newest first, timestamps in
// microseconds.
func TestSearchByNameAndToken(t *testing.T) {
	ts := searchServer(t)
	src := ts.source("cloudflare.logs.prod")
	var results [][]string
	for _, ref := range []string{"cloudflare.logs.prod", src.Token, strings.ToUpper(src.Token)} {
		status, b, raw := ts.search(ref, privKey, "lql", "m.response.status_code:500", "limit", "3")
		if status != 200 || len(b.Result) != 3 {
			t.Fatalf("%s: %d %s", ref, status, raw)
		}
		results = append(results, searchIDs(b.Result))
		newest := b.Result[0]
		// Minute 24 is the last 500 (24%7 == 3).
		if newest["timestamp"].(float64) != float64(searchStart.Add(24*time.Minute).UnixMicro()) {
			t.Fatalf("newest %v", newest)
		}
		if !strings.Contains(newest["event_message"].(string), `" 500 44`) || len(newest) != 3 {
			t.Fatalf("row %v", newest)
		}
		for i := 1; i < len(b.Result); i++ {
			if b.Result[i]["timestamp"].(float64) > b.Result[i-1]["timestamp"].(float64) {
				t.Fatal("not newest first")
			}
		}
	}
	if !slices.Equal(results[0], results[1]) || !slices.Equal(results[0], results[2]) {
		t.Fatalf("by name %v, by token %v %v", results[0], results[1], results[2])
	}
	// The query scope may search; POST with a JSON body, gateway prefix.
	r := ts.do("POST", "/analytics/v1/api/sources/cloudflare.logs.prod/search", []byte(`{"lql":"websocket","limit":2,"from":"2025-07-10T12:00:00Z"}`),
		"x-api-key", queryKey, "Content-Type", "application/json")
	var b searchBody
	if err := json.Unmarshal([]byte(r.body), &b); err != nil || r.status != 200 || len(b.Result) != 2 {
		t.Fatalf("POST: %d %s", r.status, r.body)
	}
	if r.header.Get("Access-Control-Allow-Origin") != "*" {
		t.Fatal("no CORS header")
	}
}

// TestSearchRangeLimitSelects covers from/to, the limit and s: selects.
func TestSearchRangeLimitSelects(t *testing.T) {
	ts := searchServer(t)
	// from/to in ISO-8601 and in microseconds, inclusive.
	b := ts.found("project:default", "from", "2025-07-10T12:10:00Z", "to", itoa(searchStart.Add(12*time.Minute).UnixMicro()))
	if len(b.Result) != 3 {
		t.Fatalf("range: %d events", len(b.Result))
	}
	b = ts.found("", "limit", "7")
	if len(b.Result) != 7 {
		t.Fatalf("limit: %d events", len(b.Result))
	}
	b = ts.found("")
	if len(b.Result) != 2*searchEvents {
		t.Fatalf("default limit: %d events", len(b.Result))
	}
	b = ts.found("s:m.response.status_code@status s:m.request.path s:project m.response.status_code:500 project:default", "limit", "1")
	row := b.Result[0]
	if len(row) != 6 || row["status"].(float64) != 500 || row["metadata_request_path"] != edgeRowOf(24).path || row["project"] != "default" || row["id"] == nil {
		t.Fatalf("selects: %v", row)
	}
}

// TestSearchChartBuckets: c:count(*) per minute over the filtered events,
// and the default bucket when no c:group_by is given.
func TestSearchChartBuckets(t *testing.T) {
	ts := searchServer(t)
	b := ts.found("c:count(*) c:group_by(t::minute) m.response.status_code:500", "limit", "1")
	var want []float64
	for i := 0; i < searchEvents; i++ {
		if edgeRowOf(i).status == 500 {
			want = append(want, float64(searchStart.Add(time.Duration(i)*time.Minute).UnixMicro()))
		}
	}
	if len(b.Chart) != len(want) || len(b.Result) != 1 {
		t.Fatalf("chart %v, %d events", b.Chart, len(b.Result))
	}
	for k, c := range b.Chart {
		if c["timestamp"].(float64) != want[k] || c["count"].(float64) != 2 {
			t.Fatalf("bucket %d: %v, want timestamp %v count 2", k, c, want[k])
		}
	}
	// No group_by: 30 minutes of data make minute buckets.
	b = ts.found("c:count(*)")
	if len(b.Chart) != searchEvents || b.Chart[0]["count"].(float64) != 2 {
		t.Fatalf("default buckets: %v", b.Chart)
	}
	// Hour buckets over a range: one bucket with every event in range.
	b = ts.found("c:count(*) c:group_by(t::hour)", "from", "2025-07-10T12:10:00Z")
	if len(b.Chart) != 1 || b.Chart[0]["count"].(float64) != 40 {
		t.Fatalf("hour bucket: %v", b.Chart)
	}
	// No c: clause, no chart member.
	_, _, raw := ts.search("cloudflare.logs.prod", privKey, "lql", "websocket")
	if strings.Contains(raw, `"chart"`) {
		t.Fatalf("unexpected chart: %s", raw)
	}
}

// TestSearchErrors: bad LQL and parameters answer 400 with the message;
// auth failures and unknown sources 401; a failed query 200 {"error"}.
func TestSearchErrors(t *testing.T) {
	ts := searchServer(t)
	for _, tc := range []struct {
		params []string
		want   string
	}{
		{[]string{"lql", "m.status:500"}, "LQL parser error: path `metadata.status` not present in source schema."},
		{[]string{"lql", "m.response.status_code:abc"}, "Query syntax error: expected integer for metadata.response.status_code, got: 'abc'"},
		{[]string{"lql", "m.request:GET"}, "Field type `map` is not queryable."},
		{[]string{"lql", "s:m.request.path@"}, "Error while parsing select clause: select alias cannot be blank, expected alias name after @. For example, s:my_field@my_alias"},
		{[]string{"lql", "c:count(*) c:group_by(t::fortnight)"}, "Error while parsing chart clause"},
		{[]string{"lql", "t:soon"}, "Error while parsing timestamp filter value: expected ISO8601 string, Unix timestamp, range or shorthand, got 'soon'"},
		{[]string{"limit", "0"}, "limit must be an integer from 1 to 10000"},
		{[]string{"limit", "10001"}, "limit must be an integer from 1 to 10000"},
		{[]string{"limit", "ten"}, "limit must be an integer from 1 to 10000"},
		{[]string{"from", "last tuesday"}, "from: expected an ISO-8601 date or date-time, or unix microseconds"},
		{[]string{"from", "2025-07-10T12:10:00Z", "to", "2025-07-10T12:00:00Z"}, "is after to"},
	} {
		status, b, raw := ts.search("cloudflare.logs.prod", privKey, tc.params...)
		if status != 400 || b.Error == nil || !strings.Contains(*b.Error, tc.want) || b.Result != nil {
			t.Errorf("%v: %d %s, want 400 with %q", tc.params, status, raw, tc.want)
		}
	}
	for _, tc := range []struct{ source, key string }{
		{"cloudflare.logs.prod", ""},
		{"cloudflare.logs.prod", pubKey},
		{"cloudflare.logs.prod", ingestKey2},
		{"cloudflare.logs.prod", "not-a-key"},
		{"no.such.source", privKey},
		{"8a6b7c4e-0000-4000-8000-000000000000", privKey},
	} {
		r := ts.do("GET", "/api/sources/"+tc.source+"/search?lql=x", nil, "x-api-key", tc.key)
		r.expect(t, 401, `{"error":"Unauthorized"}`)
	}
}

// TestSearchQueryFailure: a query that fails (here, out of time) answers
// 200 {"error": ...} as query endpoints do.
func TestSearchQueryFailure(t *testing.T) {
	ts := startServer(t, serverConfig{opts: Options{Now: func() time.Time { return studioNow }, QueryTimeout: time.Nanosecond}})
	ts.ingestEdge(edgeBatch(3, searchStart, "default"))
	status, b, raw := ts.search("cloudflare.logs.prod", privKey, "lql", "m.response.status_code:200")
	if status != 200 || b.Error == nil || !strings.Contains(*b.Error, "Query timed out") {
		t.Fatalf("%d %s", status, raw)
	}
}
