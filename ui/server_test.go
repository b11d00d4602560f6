package ui_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/sediment/sediment/bench/gen"
	"github.com/sediment/sediment/catalog"
	"github.com/sediment/sediment/engine"
	"github.com/sediment/sediment/httpapi"
	"github.com/sediment/sediment/query/endpoints"
	"github.com/sediment/sediment/sql/parser"
)

// Keys of the explorer's test server.
const (
	privateKey = "ui-test-private-key"
	queryKey   = "ui-test-query-key"
	publicKey  = "ui-test-public-key"
)

// edgeSource is the source the tests search.
const edgeSource = "cloudflare.logs.prod"

// explorerServer is a real Sediment server on a loopback port: the engine,
// the catalog with Supabase's sources, the SQL engine behind query
// endpoints, and generated edge events over the last two hours.
type explorerServer struct {
	t      testing.TB
	base   string
	client *http.Client
}

// startExplorerServer starts the server and loads events: edge events at
// about rate per second from two hours ago to now.
func startExplorerServer(t testing.TB, rate float64) *explorerServer {
	t.Helper()
	dir := t.TempDir()
	eng, err := engine.Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	cat, err := catalog.Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	cat.SetSQLValidator(func(q string) error {
		_, err := parser.Validate(q, parser.ValidateOptions{KnownSource: cat.HasSourceName})
		return err
	})
	if _, err := cat.SeedSupabase(); err != nil {
		t.Fatal(err)
	}
	for key, scope := range map[string]string{privateKey: catalog.ScopePrivate, queryKey: catalog.ScopeQuery, publicKey: catalog.ScopePublic} {
		if _, err := cat.CreateAccessToken(key, []string{scope}, "test", ""); err != nil {
			t.Fatal(err)
		}
	}
	svc := endpoints.New(eng, cat, nil)
	srv, err := httpapi.New(httpapi.Options{Engine: eng, Catalog: cat, Runner: svc})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	srv.SetReady()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := srv.Shutdown(ctx); err != nil {
			t.Errorf("shutdown: %v", err)
		}
		if err := <-served; err != nil {
			t.Errorf("serve: %v", err)
		}
		svc.Close()
		if err := eng.Close(); err != nil {
			t.Errorf("close engine: %v", err)
		}
	})
	es := &explorerServer{t: t, base: "http://" + ln.Addr().String(), client: &http.Client{Timeout: 30 * time.Second}}

	now := time.Now().UTC()
	g := gen.New(gen.EdgeLogs, gen.Options{Seed: 7, Start: now.Add(-2 * time.Hour), Rate: rate, InOrder: true})
	var body []byte
	for g.Time().Before(now) {
		body = g.AppendVectorBatch(body[:0], 500)
		es.ingest(body)
	}
	return es
}

// ingest posts a Vector batch to the edge source.
func (es *explorerServer) ingest(body []byte) {
	es.t.Helper()
	status, out := es.do(http.MethodPost, "/api/logs?source_name="+url.QueryEscape(edgeSource), privateKey, body)
	if status != http.StatusOK {
		es.t.Fatalf("ingest: %d %s", status, out)
	}
}

// do sends a request with key and returns the status and body.
func (es *explorerServer) do(method, path, key string, body []byte) (int, []byte) {
	es.t.Helper()
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequest(method, es.base+path, rd)
	if err != nil {
		es.t.Fatal(err)
	}
	if key != "" {
		req.Header.Set("X-API-KEY", key)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := es.client.Do(req)
	if err != nil {
		es.t.Fatal(err)
	}
	defer res.Body.Close()
	out, err := io.ReadAll(res.Body)
	if err != nil {
		es.t.Fatal(err)
	}
	return res.StatusCode, out
}

// getJSON calls a GET route with the private key and decodes its answer.
func (es *explorerServer) getJSON(path string, params url.Values, v any) {
	es.t.Helper()
	if params != nil {
		path += "?" + params.Encode()
	}
	status, body := es.do(http.MethodGet, path, privateKey, nil)
	if status != http.StatusOK {
		es.t.Fatalf("GET %s: %d %s", path, status, body)
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		es.t.Fatalf("GET %s: %v in %s", path, err, body)
	}
}

// createEndpoint adds a query endpoint through the management API.
func (es *explorerServer) createEndpoint(name, query string, cacheSeconds int) {
	es.t.Helper()
	b, _ := json.Marshal(map[string]any{"name": name, "query": query, "cache_duration_seconds": cacheSeconds})
	status, out := es.do(http.MethodPost, "/api/endpoints", privateKey, b)
	if status != http.StatusCreated {
		es.t.Fatalf("create endpoint %s: %d %s", name, status, out)
	}
}

// searchRows calls the search API as the explorer does and returns its rows.
func (es *explorerServer) searchRows(lql string, from, to int64, limit int) []map[string]any {
	es.t.Helper()
	var res struct {
		Result []map[string]any `json:"result"`
		Chart  []map[string]any `json:"chart"`
		Error  string           `json:"error"`
	}
	es.getJSON("/api/sources/"+url.PathEscape(edgeSource)+"/search", url.Values{
		"lql": {lql}, "from": {fmt.Sprint(from)}, "to": {fmt.Sprint(to)}, "limit": {fmt.Sprint(limit)},
	}, &res)
	if res.Error != "" {
		es.t.Fatalf("search %q: %s", lql, res.Error)
	}
	return res.Result
}
