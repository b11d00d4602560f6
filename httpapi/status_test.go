package httpapi

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/sediment/sediment/catalog"
	"github.com/sediment/sediment/engine"
)

// statusCase is one request and the answer docs/compat/logflare.md §3.8 gives.
type statusCase struct {
	name    string
	path    string // %s is replaced by the postgres.logs token
	body    string
	headers []string
	status  int
	body2   string // exact body expected ("" = not checked)
	stored  int    // events stored by the request
}

func runStatusCases(t *testing.T, ts *testServer, cases []statusCase) {
	t.Helper()
	tok := ts.source("postgres.logs").Token
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before := len(ts.events("postgres.logs"))
			path := tc.path
			if strings.Contains(path, "%s") {
				path = fmt.Sprintf(path, tok)
			}
			var body []byte
			if tc.body != "" {
				body = []byte(tc.body)
			}
			r := ts.do("POST", path, body, tc.headers...)
			r.expect(t, tc.status, tc.body2)
			if ct := r.header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
				t.Errorf("content type %q", ct)
			}
			if got := len(ts.events("postgres.logs")) - before; got != tc.stored {
				t.Errorf("stored %d events, want %d", got, tc.stored)
			}
		})
	}
}

const (
	logged       = `{"message":"Logged!"}`
	unauthorized = `{"error":"Unauthorized"}`
)

var jsonCT = []string{"Content-Type", "application/json"}

func withKey(key string, h ...string) []string { return append([]string{"X-API-KEY", key}, h...) }

// TestStatus200 covers success, including events dropped by the source's
// drop_lql_string and events more than an hour in the future (both still
// 200 {"message":"Logged!"}).
func TestStatus200(t *testing.T) {
	ts := startServer(t, serverConfig{opts: Options{Now: serverNow}})
	drop := "m.level:debug"
	if _, err := ts.cat.UpdateSource(ts.source("postgres.logs").Token, catalog.SourceParams{DropLQL: &drop}); err != nil {
		t.Fatal(err)
	}
	tok := ts.source("postgres.logs").Token
	cases := []statusCase{
		{"single object", "/api/logs?source_name=postgres.logs", `{"message":"a"}`, withKey(pubKey, jsonCT...), 200, logged, 1},
		{"batch", "/logs?source=%s", `{"batch":[{"message":"a"},{"message":"b"}]}`, withKey(pubKey, jsonCT...), 200, logged, 2},
		{"array", "/api/events?source=%s", `[{"message":"a"}]`, withKey(pubKey, jsonCT...), 200, logged, 1},
		{"ndjson", "/api/logs?source=%s", "{\"message\":\"a\"}\n{\"message\":\"b\"}\n", withKey(pubKey, "Content-Type", "application/x-ndjson"), 200, logged, 2},
		{"empty body", "/api/logs?source=%s", "", withKey(pubKey, jsonCT...), 200, logged, 0},
		{"lql dropped", "/api/logs?source=%s", `[{"message":"x","metadata":{"level":"debug"}},{"message":"y","metadata":{"level":"info"}}]`, withKey(pubKey, jsonCT...), 200, logged, 1},
		{"future dropped", "/api/logs?source=%s", `[{"message":"x","timestamp":"2025-07-10T14:00:00Z"},{"message":"y","timestamp":"2025-07-10T13:00:00Z"}]`, withKey(pubKey, jsonCT...), 200, logged, 1},
		{"private key ingests", "/api/logs?source=%s", `{"message":"a"}`, withKey(privKey, jsonCT...), 200, logged, 1},
		{"source scope", "/api/logs?source=%s", `{"message":"a"}`, withKey(ingestKey2, jsonCT...), 200, logged, 1},
		{"bearer wins over x-api-key", "/api/logs?source=%s", `{"message":"a"}`, []string{"Authorization", "Bearer " + pubKey, "X-API-KEY", "wrong", "Content-Type", "application/json"}, 200, logged, 1},
		{"x-api-key wins over api_key", "/api/logs?source=%s&api_key=wrong", `{"message":"a"}`, withKey(pubKey, jsonCT...), 200, logged, 1},
		{"upper-case uuid", "/api/logs?source=" + strings.ToUpper(tok), `{"message":"a"}`, withKey(pubKey, jsonCT...), 200, logged, 1},
		{"x-source header", "/api/logs", `{"message":"a"}`, withKey(pubKey, "X-Source", tok, "Content-Type", "application/json"), 200, logged, 1},
		{"x-collection header", "/api/logs", `{"message":"a"}`, withKey(pubKey, "X-Collection", tok, "Content-Type", "application/json"), 200, logged, 1},
		{"collection param", "/api/logs?collection=%s", `{"message":"a"}`, withKey(pubKey, jsonCT...), 200, logged, 1},
		{"collection_name alias", "/api/logs?collection_name=postgres.logs", `{"message":"a"}`, withKey(pubKey, jsonCT...), 200, logged, 1},
		{"name wins over token", "/api/logs?source_name=postgres.logs&source=" + ts.source("pgbouncer.logs.prod").Token, `{"message":"a"}`, withKey(pubKey, jsonCT...), 200, logged, 1},
		{"body source_name wins over query", "/api/logs?source_name=pgbouncer.logs.prod", `{"batch":[{"message":"a"}],"source_name":"postgres.logs"}`, withKey(pubKey, jsonCT...), 200, logged, 1},
		{"through gateway prefix", "/analytics/v1/api/logs?source=%s", `{"message":"a"}`, withKey(pubKey, jsonCT...), 200, logged, 1},
		{"deflate", "/api/logs?source=%s", "DEFLATE", withKey(pubKey, "Content-Type", "application/json", "Content-Encoding", "deflate"), 200, logged, 1},
	}
	for i := range cases {
		if cases[i].body == "DEFLATE" {
			cases[i].body = string(deflated(t, []byte(`{"message":"compressed"}`)))
		}
	}
	runStatusCases(t, ts, cases)
	gz := gzipped(t, []byte(`[{"message":"g1"},{"message":"g2"}]`))
	before := len(ts.events("postgres.logs"))
	ts.do("POST", "/api/logs?source="+tok, gz, withKey(pubKey, "Content-Type", "application/json", "Content-Encoding", "gzip")...).expect(t, 200, logged)
	if len(ts.events("postgres.logs")) != before+2 {
		t.Fatal("gzip body not ingested")
	}
	st := ts.srv.Stats()
	if st.Dropped(DropRule) != 1 || st.Dropped(DropFutureTimestamp) != 1 {
		t.Fatalf("stats %+v", st)
	}
}

// TestStatus401: every key or source problem is 401 {"error":"Unauthorized"}.
func TestStatus401(t *testing.T) {
	ts := startServer(t, serverConfig{})
	runStatusCases(t, ts, []statusCase{
		{"no key", "/api/logs?source=%s", `{"message":"a"}`, jsonCT, 401, unauthorized, 0},
		{"unknown key", "/api/logs?source=%s", `{"message":"a"}`, withKey("nope", jsonCT...), 401, unauthorized, 0},
		{"bearer wins, and is wrong", "/api/logs?source=%s", `{"message":"a"}`, []string{"Authorization", "Bearer wrong", "X-API-KEY", pubKey, "Content-Type", "application/json"}, 401, unauthorized, 0},
		{"unknown source name", "/api/logs?source_name=nope", `{"message":"a"}`, withKey(pubKey, jsonCT...), 401, unauthorized, 0},
		{"unknown source token", "/api/logs?source=00000000-0000-4000-8000-000000000000", `{"message":"a"}`, withKey(pubKey, jsonCT...), 401, unauthorized, 0},
		{"source not a uuid", "/api/logs?source=postgres.logs", `{"message":"a"}`, withKey(pubKey, jsonCT...), 401, unauthorized, 0},
		{"no source", "/api/logs", `{"message":"a"}`, withKey(pubKey, jsonCT...), 401, unauthorized, 0},
		{"scope for another source", "/api/logs?source_name=gotrue.logs.prod", `{"message":"a"}`, withKey(ingestKey2, jsonCT...), 401, unauthorized, 0},
		{"query-only token", "/api/logs?source=%s", `{"message":"a"}`, withKey(queryKey, jsonCT...), 401, unauthorized, 0},
		{"key checked before the body", "/api/logs?source=%s", `{not json`, jsonCT, 401, unauthorized, 0},
	})
}

// TestStatus400: malformed bodies, shapes a route cannot take, encodings
// we do not decode.
func TestStatus400(t *testing.T) {
	ts := startServer(t, serverConfig{})
	runStatusCases(t, ts, []statusCase{
		{"malformed json", "/api/logs?source=%s", `{"message":`, withKey(pubKey, jsonCT...), 400, "", 0},
		{"malformed ndjson line", "/api/logs?source=%s", "{\"a\":1}\n{oops\n", withKey(pubKey, "Content-Type", "application/x-ndjson"), 400, "", 0},
		{"batch of non-objects", "/api/logs?source=%s", `{"batch":[1,2]}`, withKey(pubKey, jsonCT...), 400, "", 0},
		{"vector without timestamp", "/api/logs/vector?source=%s", `{"message":"a"}`, withKey(pubKey, jsonCT...), 400, "", 0},
		{"brotli", "/api/logs?source=%s", `{"message":"a"}`, withKey(pubKey, "Content-Type", "application/json", "Content-Encoding", "br"), 400, "", 0},
		{"corrupt gzip", "/api/logs?source=%s", `not gzip`, withKey(pubKey, "Content-Type", "application/json", "Content-Encoding", "gzip"), 400, "", 0},
		{"elixir logger without batch", "/logs/elixir/logger?source=%s", `{"message":"a"}`, withKey(pubKey, jsonCT...), 400, "", 0},
	})
	r := ts.do("POST", "/api/logs?source_name=postgres.logs", []byte(`{"message":`), withKey(pubKey, jsonCT...)...)
	if !strings.Contains(r.body, `"errors":{"detail":"ingest: malformed body`) {
		t.Fatalf("400 body does not say what is wrong: %s", r.body)
	}
}

// TestStatus413: a body over 12,000,000 bytes is refused before it is
// read (Content-Length) and, compressed, after decompression.
func TestStatus413(t *testing.T) {
	ts := startServer(t, serverConfig{})
	// Declared too large: the server answers without reading the body.
	conn, err := net.Dial("tcp", strings.TrimPrefix(ts.base, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "POST /api/logs?source_name=postgres.logs HTTP/1.1\r\nHost: x\r\nX-API-KEY: %s\r\nContent-Type: application/json\r\nContent-Length: 12000001\r\n\r\n[", pubKey)
	_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	res, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	if res.StatusCode != 413 || !bytes.Contains(body, []byte("12000000")) {
		t.Fatalf("declared oversize: %d %s", res.StatusCode, body)
	}

	// A gzip bomb: small on the wire, over the limit once decompressed.
	big := append(append([]byte(`[{"message":"`), bytes.Repeat([]byte("a"), 12_000_000)...), `"}]`...)
	runStatusCases(t, ts, []statusCase{
		{"gzip bomb", "/api/logs?source=%s", string(gzipped(t, big)), withKey(pubKey, "Content-Type", "application/json", "Content-Encoding", "gzip"), 413, "", 0},
		{"exactly at the limit is fine", "/api/logs?source=%s", `[{"message":"` + strings.Repeat("b", 1000) + `"}]`, withKey(pubKey, jsonCT...), 200, logged, 1},
	})
}

// TestStatus415: a content type the route does not parse.
func TestStatus415(t *testing.T) {
	ts := startServer(t, serverConfig{})
	runStatusCases(t, ts, []statusCase{
		{"text/html", "/api/logs?source=%s", `{"message":"a"}`, withKey(pubKey, "Content-Type", "text/html"), 415, "", 0},
		{"form", "/api/logs?source=%s", `a=b`, withKey(pubKey, "Content-Type", "application/x-www-form-urlencoded"), 415, "", 0},
		{"logplex on create", "/api/logs?source=%s", "1 <1>1 - - - - - x", withKey(pubKey, "Content-Type", "application/logplex-1"), 415, "", 0},
		{"json on logplex", "/logs/logplex?source=%s", `{"message":"a"}`, withKey(pubKey, jsonCT...), 415, "", 0},
	})
}

// TestStatus429: when the engine pushes back, 429 with retry-after: 3.
func TestStatus429(t *testing.T) {
	ts := startServer(t, serverConfig{engine: engine.Options{DisableBackground: true, HeadMaxRows: 2, MaxFrozenHeads: 1}})
	path := "/api/logs?source_name=postgres.logs"
	// Two events fill the head, which is frozen and (no background flush)
	// stays waiting: the shard's backlog is full.
	ts.do("POST", path, []byte(`[{"message":"a"},{"message":"b"}]`), withKey(pubKey, jsonCT...)...).expect(t, 200, logged)
	r := ts.do("POST", path, []byte(`[{"message":"c"}]`), withKey(pubKey, jsonCT...)...)
	r.expect(t, 429, `{"error":"Buffer Full: Too Many Requests"}`)
	if r.header.Get("Retry-After") != "3" {
		t.Fatalf("retry-after %q", r.header.Get("Retry-After"))
	}
	sh, _ := ts.eng.Shard(ts.source("postgres.logs").Token)
	if err := sh.Flush(); err != nil {
		t.Fatal(err)
	}
	ts.do("POST", path, []byte(`[{"message":"c"}]`), withKey(pubKey, jsonCT...)...).expect(t, 200, logged)
	if n := len(ts.events("postgres.logs")); n != 3 {
		t.Fatalf("%d events, want 3 (the refused one not stored)", n)
	}
}

// TestNotFoundRoutes: unknown paths and methods answer 404 {"error":"Not Found"}.
func TestNotFoundRoutes(t *testing.T) {
	ts := startServer(t, serverConfig{})
	for _, c := range []struct{ method, path string }{
		{"GET", "/nope"}, {"GET", "/api/logs"}, {"PUT", "/api/logs"}, {"POST", "/api/logs/unknown"},
		{"DELETE", "/api/sources"}, {"POST", "/health"}, {"OPTIONS", "/api/logs/cloudflare"}, {"GET", "/analytics/v1x/health"},
	} {
		ts.do(c.method, c.path, nil, withKey(privKey)...).expect(t, 404, `{"error":"Not Found"}`)
	}
}

// TestCORS: preflight and response headers on the routes Logflare gives
// CORS to.
func TestCORS(t *testing.T) {
	ts := startServer(t, serverConfig{})
	for _, c := range []struct {
		path, methods, headers string
	}{
		{"/api/logs", corsIngestMethods, corsIngestHeaders},
		{"/logs/json", corsIngestMethods, corsIngestHeaders},
		{"/api/events/browser/reports", corsIngestMethods, corsIngestHeaders},
		{"/api/endpoints/query/logs.all", corsEndpointMethods, corsEndpointsHeaders},
	} {
		r := ts.do("OPTIONS", c.path, nil, "Origin", "https://app.example", "Access-Control-Request-Method", "POST")
		if r.status != 204 || r.header.Get("Access-Control-Allow-Origin") != "*" ||
			r.header.Get("Access-Control-Allow-Methods") != c.methods || r.header.Get("Access-Control-Allow-Headers") != c.headers ||
			r.header.Get("Access-Control-Max-Age") != "1728000" {
			t.Errorf("preflight %s: %d %v", c.path, r.status, r.header)
		}
	}
	r := ts.do("POST", "/api/logs?source_name=postgres.logs", []byte(`{"message":"a"}`), withKey(pubKey, jsonCT...)...)
	if r.header.Get("Access-Control-Allow-Origin") != "*" {
		t.Error("no CORS header on an ingest response")
	}
	r = ts.do("GET", "/api/endpoints/query/logs.all", nil)
	if r.status != 401 || r.header.Get("Access-Control-Allow-Origin") != "*" {
		t.Errorf("endpoint 401 without CORS: %v", r.header)
	}
}
