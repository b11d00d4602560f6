package httpapi

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/url"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	json "github.com/goccy/go-json"

	"github.com/sediment/sediment/lql"
	"github.com/sediment/sediment/ui"
)

// Tests of what the web explorer needs from the HTTP API: the page and its
// files, /api/access, the event lookup, LQL error clauses, and the cache
// and timing headers of endpoint answers.

func TestUIRootServesPageToBrowsersOnly(t *testing.T) {
	ts := startServer(t, serverConfig{noRunner: true})
	page := ts.do("GET", "/", nil, "Accept", "text/html,application/xhtml+xml,*/*;q=0.8")
	if page.status != 200 || !strings.HasPrefix(page.header.Get("Content-Type"), "text/html") ||
		!strings.Contains(page.body, `<script type="module" src="ui/main.js">`) {
		t.Fatalf("GET / as a browser: %d %s %.200s", page.status, page.header.Get("Content-Type"), page.body)
	}
	if csp := page.header.Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'self'") {
		t.Fatalf("no same-origin policy on the page: %q", csp)
	}
	if !strings.Contains(page.header.Get("Vary"), "Accept") {
		t.Fatalf("GET / varies by Accept but does not say so: %q", page.header.Get("Vary"))
	}
	// API clients (no Accept, or JSON) get the Elasticsearch version
	// answer their clients probe; every other method keeps Logflare's 404.
	for _, accept := range []string{"", "application/json"} {
		r := ts.do("GET", "/", nil, "Accept", accept)
		if r.status != 200 || !strings.Contains(r.body, `"tagline":"You Know, for Search"`) || r.header.Get("X-Elastic-Product") != "Elasticsearch" {
			t.Fatalf("GET / with Accept %q: %d %s", accept, r.status, r.body)
		}
	}
	ts.do("POST", "/", []byte("{}"), "Accept", "text/html").expect(t, 404, `{"error":"Not Found"}`)
	ts.do("DELETE", "/", nil, "Accept", "text/html").expect(t, 404, `{"error":"Not Found"}`)
	// Behind Kong's prefix too.
	if r := ts.do("GET", "/analytics/v1/", nil, "Accept", "text/html"); r.status != 200 {
		t.Fatalf("GET /analytics/v1/ as a browser: %d", r.status)
	}
	// The routes next to it are unchanged.
	if r := ts.do("GET", "/health", nil); r.status != 200 {
		t.Fatalf("/health: %d", r.status)
	}
}

func TestUIAssets(t *testing.T) {
	ts := startServer(t, serverConfig{noRunner: true})
	for _, name := range ui.Names() {
		if name == ui.IndexName {
			ts.do("GET", "/ui/"+name, nil).expect(t, 404, `{"error":"Not Found"}`)
			continue
		}
		a, _ := ui.Lookup(name)
		r := ts.do("GET", "/ui/"+name, nil)
		if r.status != 200 || r.body != string(a.Body) || r.header.Get("Content-Type") != a.ContentType || r.header.Get("ETag") != a.ETag {
			t.Fatalf("GET /ui/%s: %d %q %q", name, r.status, r.header.Get("Content-Type"), r.header.Get("ETag"))
		}
		// Revalidation answers 304 without a body.
		if r := ts.do("GET", "/ui/"+name, nil, "If-None-Match", a.ETag); r.status != 304 || r.body != "" {
			t.Fatalf("GET /ui/%s with its ETag: %d %q", name, r.status, r.body)
		}
		if a.Gzip != nil {
			r := ts.do("GET", "/ui/"+name, nil, "Accept-Encoding", "gzip")
			if r.header.Get("Content-Encoding") != "gzip" {
				t.Fatalf("GET /ui/%s with gzip: Content-Encoding %q", name, r.header.Get("Content-Encoding"))
			}
			zr, err := gzip.NewReader(strings.NewReader(r.body))
			if err != nil {
				t.Fatal(err)
			}
			plain, err := io.ReadAll(zr)
			if err != nil || !bytes.Equal(plain, a.Body) {
				t.Fatalf("GET /ui/%s gzip body differs (%v)", name, err)
			}
		}
	}
	for _, p := range []string{"/ui/", "/ui/nope.js", "/ui/../go.mod", "/ui/%2e%2e/ui.go"} {
		if r := ts.do("GET", p, nil); r.status != 404 {
			t.Fatalf("GET %s: %d", p, r.status)
		}
	}
	if r := ts.do("POST", "/ui/main.js", []byte("x")); r.status != 404 {
		t.Fatalf("POST /ui/main.js: %d", r.status)
	}
}

type accessAnswer struct {
	Scopes  []string `json:"scopes"`
	Manage  bool     `json:"manage"`
	Search  bool     `json:"search"`
	Sources []struct {
		Token                string `json:"token"`
		Name                 string `json:"name"`
		EventCount           int64  `json:"event_count"`
		OldestEventTimestamp *int64 `json:"oldest_event_timestamp"`
		NewestEventTimestamp *int64 `json:"newest_event_timestamp"`
		StorageBytes         int64  `json:"storage_bytes"`
		UnflushedEventCount  int64  `json:"unflushed_event_count"`
	} `json:"sources"`
	Endpoints []struct {
		Name       string   `json:"name"`
		Query      *string  `json:"query"`
		Parameters []string `json:"parameters"`
	} `json:"endpoints"`
}

func (ts *testServer) access(key string) (int, accessAnswer) {
	ts.t.Helper()
	var headers []string
	if key != "" {
		headers = []string{"Authorization", "Bearer " + key}
	}
	r := ts.do("GET", "/api/access", nil, headers...)
	var a accessAnswer
	if r.status == 200 {
		if err := json.Unmarshal([]byte(r.body), &a); err != nil {
			ts.t.Fatalf("/api/access: %v in %s", err, r.body)
		}
	}
	return r.status, a
}

func TestAccess(t *testing.T) {
	ts, _ := runServer(t)
	ts.ingestEdge(edgeBatch(30, studioNow.Add(-30*time.Minute), "default"))
	// Events in a segment and in memory are both counted.
	src := ts.source("cloudflare.logs.prod")
	sh, err := ts.eng.Shard(src.Token)
	if err != nil {
		t.Fatal(err)
	}
	if err := sh.Flush(); err != nil {
		t.Fatal(err)
	}
	ts.ingestEdge(edgeBatch(5, studioNow.Add(-2*time.Minute), "default"))
	if _, err := ts.cat.CreateAccessToken("test-endpoint-key", []string{"query:endpoint:1"}, "test", ""); err != nil {
		t.Fatal(err)
	}

	for _, key := range []string{"", "wrong-key"} {
		if status, _ := ts.access(key); status != 401 {
			t.Fatalf("/api/access with key %q: %d", key, status)
		}
	}

	status, priv := ts.access(privKey)
	if status != 200 || !priv.Manage || !priv.Search || len(priv.Scopes) != 1 || priv.Scopes[0] != "private" {
		t.Fatalf("private key: %d %+v", status, priv)
	}
	if len(priv.Sources) != len(ts.cat.Sources()) {
		t.Fatalf("%d sources listed, the catalog has %d", len(priv.Sources), len(ts.cat.Sources()))
	}
	for _, s := range priv.Sources {
		switch s.Name {
		case "cloudflare.logs.prod":
			if s.EventCount != 35 || s.StorageBytes <= 0 || s.UnflushedEventCount != 5 || s.NewestEventTimestamp == nil || s.OldestEventTimestamp == nil ||
				*s.OldestEventTimestamp != studioNow.Add(-30*time.Minute).UnixMicro() ||
				*s.NewestEventTimestamp != studioNow.Add(-2*time.Minute+4*time.Minute).UnixMicro() {
				t.Fatalf("edge source: %+v", s)
			}
		case "postgres.logs":
			if s.EventCount != 0 || s.NewestEventTimestamp != nil || s.StorageBytes != 0 {
				t.Fatalf("empty source: %+v", s)
			}
		}
	}
	if len(priv.Endpoints) != len(ts.cat.Endpoints()) {
		t.Fatalf("private key: %d endpoints, the catalog has %d", len(priv.Endpoints), len(ts.cat.Endpoints()))
	}
	for _, e := range priv.Endpoints {
		if e.Name == "logs.all" && (e.Query == nil || strings.Join(e.Parameters, ",") != "project,iso_timestamp_start,iso_timestamp_end") {
			t.Fatalf("logs.all: query %v, parameters %v", e.Query != nil, e.Parameters)
		}
	}
	// A query key searches everything and runs every endpoint, but does
	// not manage.
	if _, q := ts.access(queryKey); q.Manage || !q.Search || len(q.Sources) != len(priv.Sources) || len(q.Endpoints) != len(priv.Endpoints) {
		t.Fatalf("query key: %+v", q)
	}
	// A key for one endpoint sees that endpoint without its SQL, and no
	// source.
	if _, e := ts.access("test-endpoint-key"); e.Search || len(e.Sources) != 0 || len(e.Endpoints) != 1 || e.Endpoints[0].Query != nil {
		t.Fatalf("endpoint key: %+v", e)
	}
	// An ingest key reaches nothing.
	if _, p := ts.access(pubKey); p.Manage || p.Search || len(p.Sources) != 0 || len(p.Endpoints) != 0 {
		t.Fatalf("public key: %+v", p)
	}
}

func TestEventLookup(t *testing.T) {
	ts, _ := runServer(t)
	ts.ingestEdge(edgeBatch(10, studioNow.Add(-10*time.Minute), "default"))
	found := ts.found("m.response.status_code:500")
	if len(found.Result) == 0 {
		t.Fatal("no status 500 in the data")
	}
	row := found.Result[0]
	id := row["id"].(string)
	tsMicros := int64(row["timestamp"].(float64))
	get := func(key string, params url.Values) response {
		return ts.do("GET", "/api/sources/cloudflare.logs.prod/event?"+params.Encode(), nil, "x-api-key", key)
	}
	r := get(queryKey, url.Values{"id": {id}, "timestamp": {time.UnixMicro(tsMicros).UTC().Format(time.RFC3339Nano)}})
	var body struct {
		Result []map[string]any `json:"result"`
	}
	if r.status != 200 || json.Unmarshal([]byte(r.body), &body) != nil || len(body.Result) != 1 {
		t.Fatalf("event lookup: %d %s", r.status, r.body)
	}
	ev := body.Result[0]
	// The whole event as stored, nested objects as objects.
	if ev["id"] != id || ev["project"] != "default" || ev["appname"] != "supabase-kong" ||
		at(ev, "metadata.response.status_code") != float64(500) || at(ev, "metadata.request.method") != "GET" ||
		at(ev, "metadata.request.headers.cf_connecting_ip") == nil || int64(ev["timestamp"].(float64)) != tsMicros {
		t.Fatalf("event: %s", r.body)
	}
	if _, isArray := ev["metadata"].([]any); isArray {
		t.Fatalf("metadata in BigQuery's shape: %s", r.body)
	}
	// Another time: no event.
	if r := get(privKey, url.Values{"id": {id}, "timestamp": {"1"}}); r.status != 200 || r.body != `{"result":[]}` {
		t.Fatalf("lookup at another time: %d %s", r.status, r.body)
	}
	// Ids with quotes are values, not LQL.
	if r := get(privKey, url.Values{"id": {`x" OR "1`}, "timestamp": {"1"}}); r.status != 200 || r.body != `{"result":[]}` {
		t.Fatalf("lookup of a quoted id: %d %s", r.status, r.body)
	}
	for _, c := range []struct {
		key    string
		params url.Values
		status int
	}{
		{pubKey, url.Values{"id": {id}, "timestamp": {"1"}}, 401},
		{"", url.Values{"id": {id}, "timestamp": {"1"}}, 401},
		{privKey, url.Values{"timestamp": {"1"}}, 400},
		{privKey, url.Values{"id": {id}}, 400},
		{privKey, url.Values{"id": {id}, "timestamp": {"soon"}}, 400},
		{privKey, url.Values{"id": {strings.Repeat("x", 300)}, "timestamp": {"1"}}, 400},
	} {
		if r := get(c.key, c.params); r.status != c.status {
			t.Fatalf("%s %v: %d %s, want %d", c.key, c.params, r.status, r.body, c.status)
		}
	}
	if r := ts.do("GET", "/api/sources/no-such-source/event?id=a&timestamp=1", nil, "x-api-key", privKey); r.status != 401 {
		t.Fatalf("unknown source: %d", r.status)
	}
}

func TestPlainValue(t *testing.T) {
	// BigQuery's shape: records are one-element arrays; real arrays stay.
	in := `{"metadata":[{"request":[{"method":"GET"}],"tags":[{"k":"a"}],"ids":[1,2]}]}`
	var v map[string]any
	if err := json.Unmarshal([]byte(in), &v); err != nil {
		t.Fatal(err)
	}
	out := map[string]any{}
	for k, x := range v {
		out[k] = plainValue(x, k, map[string]bool{"metadata.tags": true, "metadata.ids": true})
	}
	b, _ := json.Marshal(out)
	if want := `{"metadata":{"ids":[1,2],"request":{"method":"GET"},"tags":[{"k":"a"}]}}`; string(b) != want {
		t.Fatalf("plain: %s, want %s", b, want)
	}
}

func TestSearchErrorNamesClause(t *testing.T) {
	ts := searchServer(t)
	lql := "m.response.status_code:500 m.nope:1"
	status, _, raw := ts.search("cloudflare.logs.prod", privKey, "lql", lql)
	var b struct {
		Error  string `json:"error"`
		Clause string `json:"clause"`
		Offset int    `json:"offset"`
	}
	if err := json.Unmarshal([]byte(raw), &b); err != nil || status != 400 {
		t.Fatalf("%d %s", status, raw)
	}
	if b.Clause != "m.nope:1" || b.Offset != strings.Index(lql, "m.nope") || !strings.Contains(b.Error, "metadata.nope") {
		t.Fatalf("error %+v", b)
	}
	// Errors that are not LQL keep Logflare's one member.
	status, _, raw = ts.search("cloudflare.logs.prod", privKey, "lql", "", "limit", "0")
	if status != 400 || strings.Contains(raw, "clause") {
		t.Fatalf("bad limit: %d %s", status, raw)
	}
}

func TestEndpointCacheAndTimingHeaders(t *testing.T) {
	ts, _ := runServer(t)
	ts.ingestEdge(edgeBatch(10, studioNow.Add(-10*time.Minute), "default"))
	body := []byte(`{"name":"cached.count","query":"select count(*) as n from ` + "`cloudflare.logs.prod`" + `","cache_duration_seconds":60}`)
	ts.do("POST", "/api/endpoints", body, "x-api-key", privKey, "Content-Type", "application/json")
	body = []byte(`{"name":"uncached.count","query":"select count(*) as n from ` + "`cloudflare.logs.prod`" + `","cache_duration_seconds":0}`)
	ts.do("POST", "/api/endpoints", body, "x-api-key", privKey, "Content-Type", "application/json")
	for i, want := range []string{"miss", "hit"} {
		r := ts.do("GET", "/api/endpoints/query/cached.count", nil, "x-api-key", privKey)
		if r.status != 200 || r.body != `{"result":[{"n":10}]}` || r.header.Get("X-Sediment-Cache") != want {
			t.Fatalf("run %d: %d %s cache %q", i, r.status, r.body, r.header.Get("X-Sediment-Cache"))
		}
		if !strings.HasPrefix(r.header.Get("Server-Timing"), "query;dur=") {
			t.Fatalf("Server-Timing %q", r.header.Get("Server-Timing"))
		}
	}
	r := ts.do("GET", "/api/endpoints/query/uncached.count", nil, "x-api-key", privKey)
	if r.header.Get("X-Sediment-Cache") != "off" || r.body != `{"result":[{"n":10}]}` {
		t.Fatalf("uncached: %s cache %q", r.body, r.header.Get("X-Sediment-Cache"))
	}
}

// FuzzEventLQL checks that every id is read back as one value, never as
// LQL: the lookup's query parses to exactly a filter id = <the id>, or is
// refused as a whole (an id that is not UTF-8).
func FuzzEventLQL(f *testing.F) {
	for _, id := range []string{"0b6e3c5e-1f2a-4c3b-9d4e-5f6a7b8c9d0e", `x" OR "1`, `a\`, `\"`, "m.x:1 y", "", "é\x00\n", "\xff"} {
		f.Add(id)
	}
	f.Fuzz(func(t *testing.T, id string) {
		text, _ := eventLQL(id, []string{"metadata", "project", "bad-name"})
		q, err := lql.Parse(text, lql.Options{})
		if err != nil {
			if utf8.ValidString(id) && len(text) <= lql.MaxQueryBytes {
				t.Fatalf("id %q: %v", id, err)
			}
			return
		}
		if len(q.Filters) != 1 || q.Filters[0].Path != "id" || q.Filters[0].Op != lql.OpEq || q.Filters[0].Negate ||
			q.Filters[0].Value.Str != id || len(q.Selects) != 5 {
			t.Fatalf("id %q reads as %+v", id, q)
		}
	})
}
