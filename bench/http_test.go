package bench

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sediment/sediment/bench/gen"
	"github.com/sediment/sediment/catalog"
	"github.com/sediment/sediment/engine"
	"github.com/sediment/sediment/httpapi"
	"github.com/sediment/sediment/query/endpoints"
)

// testServer is an in-process server wired as `sediment serve --supabase`
// wires it, for tests that need no child process.
type testServer struct {
	url, pub, priv string
	dir            string
	eng            *engine.Engine
	srv            *httpapi.Server
	svc            *endpoints.Service
	done           chan struct{}
}

func startTestServer(t *testing.T) *testServer {
	t.Helper()
	ts := &testServer{dir: t.TempDir(), pub: "pub-key", priv: "priv-key", done: make(chan struct{})}
	var err error
	if ts.eng, err = engine.Open(ts.dir, nil); err != nil {
		t.Fatal(err)
	}
	cat, err := catalog.Open(ts.dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cat.SeedSupabase(); err != nil {
		t.Fatal(err)
	}
	if _, err := cat.EnsureTokens(
		catalog.TokenSeed{Key: ts.pub, Scopes: []string{catalog.ScopePublic}, Origin: catalog.OriginEnvPublic},
		catalog.TokenSeed{Key: ts.priv, Scopes: []string{catalog.ScopePrivate}, Origin: catalog.OriginEnvPrivate},
	); err != nil {
		t.Fatal(err)
	}
	ts.svc = endpoints.New(ts.eng, cat, nil)
	ts.srv, err = httpapi.New(httpapi.Options{Engine: ts.eng, Catalog: cat, Runner: ts.svc, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ts.url = "http://" + ln.Addr().String()
	go func() {
		defer close(ts.done)
		_ = ts.srv.Serve(ln)
	}()
	ts.srv.SetReady()
	t.Cleanup(func() { ts.stop(t) })
	return ts
}

// stop shuts the server down and closes the engine (flushing every head).
func (ts *testServer) stop(t *testing.T) {
	if ts.eng == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := ts.srv.Shutdown(ctx); err != nil {
		t.Error(err)
	}
	<-ts.done
	ts.svc.Close()
	if err := ts.eng.Close(); err != nil {
		t.Error(err)
	}
	ts.eng = nil
}

// TestIngestQueryAndSettle drives the whole HTTP path: ingest a mix of
// sources, run the Studio suite, then settle and count what was stored.
func TestIngestQueryAndSettle(t *testing.T) {
	ts := startTestServer(t)
	now := time.Now().UTC().Truncate(time.Second)
	ds := Dataset{Shape: gen.SelfHosted, Seed: 2, Sources: SupabaseMix(), Events: 6000, End: now, Span: 2 * time.Hour}
	ctx := context.Background()

	res, err := IngestHTTP(ctx, ds, IngestOptions{URL: ts.url, Key: ts.pub, Connections: 3, BatchSize: 250})
	if err != nil {
		t.Fatal(err)
	}
	if res.Events != 6000 || res.Requests < 6000/250 || res.BodyBytes == 0 || res.Retries != 0 {
		t.Fatalf("ingest result %+v", res)
	}
	if !(res.LatencyP50 > 0 && res.LatencyP50 <= res.LatencyP99 && res.LatencyP99 <= res.LatencyMax) {
		t.Fatalf("latencies p50 %v p99 %v max %v", res.LatencyP50, res.LatencyP99, res.LatencyMax)
	}

	suite := StudioSuite(SuiteOptions{Project: ds.Project(), Now: now.Add(time.Second), Sources: sourcesOf(ds)})
	stats, err := RunQueries(ctx, NewHTTPTarget(ts.url, ts.priv), suite, 2, nil)
	if err != nil {
		t.Fatalf("%v\n%+v", err, stats)
	}
	rows := map[string]int{}
	for _, s := range stats {
		rows[s.Name] = s.Rows
		if s.Runs != 2 || s.MedianMs <= 0 || s.P99Ms < s.MedianMs || s.MinMs > s.MedianMs {
			t.Errorf("%s: %+v", s.Name, s)
		}
	}
	// The last hour holds about half of the 2400 edge events.
	for name, want := range map[string]int{
		"logs.all default, 1h":            100,
		"edge newest 100 + regexp, 1h":    100,
		"edge count 4xx/5xx, 1h":          1,
		"edge top 10 paths, 24h":          10,
		"postgres errors newest 100, 24h": 100,
	} {
		if rows[name] != want {
			t.Errorf("%s: %d rows, want %d", name, rows[name], want)
		}
	}
	for _, name := range []string{"edge chart per minute, 1h", "lql status 500, 1h", "lql regex, 1h"} {
		if rows[name] == 0 {
			t.Errorf("%s: no rows", name)
		}
	}
	// Self-hosted Kong events carry no request URL, which the seeded
	// usage.api-counts matches the project on: it counts nothing, as
	// Logflare's does.
	for _, name := range []string{"usage.api-counts minutely", "usage.api-counts hourly"} {
		if rows[name] != 0 {
			t.Errorf("%s: %d rows from events without a URL, want none", name, rows[name])
		}
	}

	ts.stop(t)
	disk, err := CompactDataDir(ts.dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	if disk.Rows != 6000 || disk.Shards != 9 || disk.Segments == 0 || disk.SegmentBytes == 0 || disk.BytesPerEvent() <= 0 {
		t.Fatalf("disk %+v", disk)
	}
}

// TestIngestRetriesAndFails: 429 answers are retried and counted; any
// other error status ends the run with the server's message.
func TestIngestRetriesAndFails(t *testing.T) {
	var calls atomic.Int32
	var gotKey, gotPath atomic.Value
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gotKey.Store(r.Header.Get("X-Api-Key"))
		gotPath.Store(r.URL.RequestURI())
		if calls.Add(1) <= 2 {
			w.WriteHeader(http.StatusTooManyRequests)
			return
		}
		io.WriteString(w, `{"message":"Logged!"}`)
	}))
	defer srv.Close()
	ds := Dataset{Events: 10, End: time.Now()}
	res, err := IngestHTTP(context.Background(), ds, IngestOptions{URL: srv.URL, Key: "k", Connections: 1, BatchSize: 10, MaxRetryWait: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if res.Retries != 2 || res.Requests != 1 || res.Events != 10 {
		t.Fatalf("result %+v", res)
	}
	if gotKey.Load() != "k" || gotPath.Load() != "/api/logs?source_name=cloudflare.logs.prod" {
		t.Fatalf("request key %v path %v", gotKey.Load(), gotPath.Load())
	}

	bad := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusUnauthorized)
		io.WriteString(w, `{"error":"Unauthorized"}`)
	}))
	defer bad.Close()
	_, err = IngestHTTP(context.Background(), Dataset{Events: 2000, End: time.Now()}, IngestOptions{URL: bad.URL, Key: "k", Connections: 2, BatchSize: 100})
	if err == nil || !strings.Contains(err.Error(), "401") || !strings.Contains(err.Error(), "Unauthorized") {
		t.Fatalf("error %v", err)
	}
}

// TestQueryFailuresAreReported: a query error (Logflare's 200 with
// {"error":...}) is reported per query and in the error.
func TestQueryFailuresAreReported(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.Contains(r.URL.RawQuery, "bad") {
			io.WriteString(w, `{"error":"Field \"bad\" does not exist."}`)
			return
		}
		io.WriteString(w, `{"result":[{"a":1},{"a":2}]}`)
	}))
	defer srv.Close()
	suite := []Query{
		{Name: "good", Endpoint: "logs.all", Params: map[string]string{"sql": "select 1"}},
		{Name: "broken", Endpoint: "logs.all", Params: map[string]string{"sql": "select bad"}},
	}
	stats, err := RunQueries(context.Background(), NewHTTPTarget(srv.URL, "k"), suite, 3, nil)
	if err == nil || !strings.Contains(err.Error(), "broken") {
		t.Fatalf("error %v", err)
	}
	if stats[0].Rows != 2 || stats[0].Error != "" || stats[0].Runs != 3 || stats[0].Via != "logs.all sql=" {
		t.Fatalf("good: %+v", stats[0])
	}
	if !strings.Contains(stats[1].Error, "does not exist") || stats[1].Runs != 0 {
		t.Fatalf("broken: %+v", stats[1])
	}
}

// TestSearchAPIFallback: LQL searches use the source search API when the
// server answers it, and logs.all lql= when it answers 404.
func TestSearchAPIFallback(t *testing.T) {
	for _, hasAPI := range []bool{false, true} {
		var searched, viaLogsAll atomic.Int32
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			switch {
			case strings.HasPrefix(r.URL.Path, "/api/sources/cloudflare.logs.prod/search"):
				if !hasAPI {
					w.WriteHeader(http.StatusNotFound)
					io.WriteString(w, `{"error":"Not Found"}`)
					return
				}
				searched.Add(1)
				if q := r.URL.Query(); q.Get("lql") != "m.response.status_code:500" || q.Get("from") == "" || q.Get("to") == "" || q.Get("limit") != "100" {
					t.Errorf("search parameters %v", q)
				}
			case r.URL.Path == "/api/endpoints/query/logs.all":
				viaLogsAll.Add(1)
				if lql := r.URL.Query().Get("lql"); lql != "f:edge_logs m.response.status_code:500" {
					t.Errorf("logs.all lql %q", lql)
				}
			}
			io.WriteString(w, `{"result":[{"a":1}]}`)
		}))
		now := time.Now()
		q := search("s", gen.EdgeLogs, "m.response.status_code:500", now.Add(-time.Hour), now, "default")
		stats, err := RunQueries(context.Background(), NewHTTPTarget(srv.URL, "k"), []Query{q}, 3, nil)
		srv.Close()
		if err != nil {
			t.Fatal(err)
		}
		want := "logs.all lql="
		if hasAPI {
			want = "search API"
		}
		if stats[0].Via != want {
			t.Errorf("api %v: via %q, want %q", hasAPI, stats[0].Via, want)
		}
		if hasAPI && (searched.Load() != 4 || viaLogsAll.Load() != 0) || !hasAPI && viaLogsAll.Load() != 4 {
			t.Errorf("api %v: %d searches, %d logs.all calls", hasAPI, searched.Load(), viaLogsAll.Load())
		}
	}
}

func TestRunSweep(t *testing.T) {
	ds := Dataset{Seed: 4, Events: 3000, End: time.Date(2025, 7, 10, 12, 0, 0, 0, time.UTC), Span: 3 * time.Hour}
	settings := []Setting{{BlockRows: 512, PageBytes: 16 << 10, ZstdLevel: 1, CompactZstdLevel: 1}, {BlockRows: 4096, ZstdLevel: 1, CompactZstdLevel: 4}}
	rep, err := RunSweep(context.Background(), SweepOptions{Dataset: ds, Settings: settings, BatchSize: 200, Runs: 1, Dir: t.TempDir(), AckMode: engine.AckBuffered, Goal: GoalSize})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Results) != 2 || rep.Best < 0 {
		t.Fatalf("report %+v", rep)
	}
	for _, r := range rep.Results {
		if r.Error != "" || r.Events != 3000 || r.Disk.Rows != 3000 || r.BytesPerEvent <= 0 || r.EventsPerS <= 0 || r.QueryScoreMs <= 0 {
			t.Fatalf("%s: %+v", r.Name, r)
		}
		for _, q := range r.Queries {
			if q.Error != "" {
				t.Errorf("%s: %s: %s", r.Name, q.Name, q.Error)
			}
			// The clock is pinned at the data's end, so the last-hour
			// queries find events whenever the sweep runs.
			if q.Name == "edge newest 100 + regexp, 1h" && q.Rows != 100 {
				t.Errorf("%s: %s: %d rows", r.Name, q.Name, q.Rows)
			}
		}
	}
	if rep.Best != Best(rep.Results, GoalSize) {
		t.Fatalf("best %d", rep.Best)
	}
}

// TestIngestJSONLines: VictoriaLogs gets the events as JSON lines on
// /insert/jsonline with its field arguments, and a content type that is
// not a form (Go's form parsing would read the body first).
func TestIngestJSONLines(t *testing.T) {
	var lines atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		if r.URL.Path != "/insert/jsonline" || q.Get("_stream_fields") != "project" || q.Get("_time_field") != "timestamp" ||
			q.Get("_msg_field") != "event_message" || r.Header.Get("Content-Type") != "application/stream+json" || r.Header.Get("X-Api-Key") != "" {
			t.Errorf("request %s %v", r.URL, r.Header)
		}
		body, _ := io.ReadAll(r.Body)
		for _, l := range strings.Split(strings.TrimSuffix(string(body), "\n"), "\n") {
			if !strings.HasPrefix(l, "{") || !strings.HasSuffix(l, "}") {
				t.Errorf("line %q", l)
			}
			lines.Add(1)
		}
	}))
	defer srv.Close()
	res, err := IngestHTTP(context.Background(), smallPeersDataset(1200), IngestOptions{URL: srv.URL, Protocol: VictoriaLogsJSONLine, Connections: 2, BatchSize: 500})
	if err != nil || res.Events != 1200 || res.Requests != 3 || lines.Load() != 1200 {
		t.Fatalf("%+v %v, %d lines", res, err, lines.Load())
	}
}
