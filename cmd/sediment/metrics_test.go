package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/sediment/sediment/catalog"
	"github.com/sediment/sediment/engine"
	"github.com/sediment/sediment/httpapi"
	"github.com/sediment/sediment/query/endpoints"
)

// holdingRunner is the real query runner, except that the ad-hoc query
// `select 'hold' as x` waits for release once it has a query slot: a
// query that is surely running while the test sends another.
type holdingRunner struct {
	*endpoints.Service
	started chan struct{}
	release chan struct{}
}

// RunSQL implements httpapi.QueryRunner.
func (h *holdingRunner) RunSQL(ctx context.Context, sql string) []byte {
	if sql == "select 'hold' as x" {
		h.started <- struct{}{}
		<-h.release
	}
	return h.Service.RunSQL(ctx, sql)
}

// send makes a request with a content type and a key of its own.
func (r *running) send(method, path, key, contentType, body string) (int, string) {
	r.t.Helper()
	req, _ := http.NewRequest(method, r.base+path, strings.NewReader(body))
	req.Header.Set("Content-Type", contentType)
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		r.t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b)
}

// scrapeMetrics reads GET /metrics with key and parses it with
// Prometheus's text parser.
func (r *running) scrapeMetrics(key string) metricSet {
	r.t.Helper()
	req, _ := http.NewRequest("GET", r.base+"/metrics", nil)
	if key != "" {
		req.Header.Set("x-api-key", key)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		r.t.Fatal(err)
	}
	defer res.Body.Close()
	if res.StatusCode != 200 {
		r.t.Fatalf("GET /metrics: %d", res.StatusCode)
	}
	p := expfmt.NewTextParser(model.LegacyValidation)
	mfs, err := p.TextToMetricFamilies(res.Body)
	if err != nil {
		r.t.Fatalf("metrics do not parse: %v", err)
	}
	return metricSet{t: r.t, mfs: mfs}
}

// metricSet is a parsed scrape.
type metricSet struct {
	t   *testing.T
	mfs map[string]*dto.MetricFamily
}

// get returns the value of the series of name with the given labels
// (alternating name, value): a counter's or gauge's value, a histogram's
// count. It fails the test when there is none.
func (m metricSet) get(name string, labels ...string) float64 {
	m.t.Helper()
	mf := m.mfs[name]
	if mf == nil {
		m.t.Fatalf("no metric %s", name)
	}
series:
	for _, s := range mf.Metric {
		for i := 0; i+1 < len(labels); i += 2 {
			found := false
			for _, lp := range s.Label {
				found = found || (lp.GetName() == labels[i] && lp.GetValue() == labels[i+1])
			}
			if !found {
				continue series
			}
		}
		switch {
		case s.Counter != nil:
			return s.Counter.GetValue()
		case s.Gauge != nil:
			return s.Gauge.GetValue()
		case s.Histogram != nil:
			return float64(s.Histogram.GetSampleCount())
		}
	}
	m.t.Fatalf("no series %s%v", name, labels)
	return 0
}

// TestMetricsOfARealServer starts the server as `sediment serve` does,
// ingests through five routes, runs queries (a cached endpoint twice, a
// search, ad-hoc SQL, and one refused by admission control), scrapes
// /metrics and checks what each series says.
func TestMetricsOfARealServer(t *testing.T) {
	cfg := serveConfig{DataDir: t.TempDir(), PrivateToken: "priv", PublicToken: "pub",
		Limits: httpLimits{MaxConcurrentQueries: 1, MaxQueuedQueries: -1}}
	hold := &holdingRunner{started: make(chan struct{}, 1), release: make(chan struct{})}
	deps := productionDeps()
	deps.Runner = func(eng *engine.Engine, cat *catalog.Catalog, opts *endpoints.Options) httpapi.QueryRunner {
		hold.Service = endpoints.New(eng, cat, opts)
		return hold
	}
	r := startWith(t, cfg, deps)
	r.mustDo("POST", "/api/sources", "priv", `{"name":"app.logs"}`, 201)
	r.mustDo("POST", "/api/sources", "priv", `{"name":"edge"}`, 201)
	now := time.Now()

	// Ingest: the Logflare routes, OTLP, Loki and Elasticsearch bulk.
	ingest := []struct {
		path, contentType, body string
	}{
		{"/api/logs?source_name=app.logs", "application/json", `[{"message":"a1"},{"message":"a2"},{"message":"a3"}]`},
		{"/api/logs/json?source_name=edge", "application/json", `[{"path":"/x","status":200},{"path":"/y","status":500}]`},
		{"/v1/logs", "application/json", fmt.Sprintf(`{"resourceLogs":[{"resource":{"attributes":[{"key":"service.name","value":{"stringValue":"edge"}}]},`+
			`"scopeLogs":[{"logRecords":[{"timeUnixNano":"%[1]d","body":{"stringValue":"o1"}},{"timeUnixNano":"%[1]d","body":{"stringValue":"o2"}}]}]}]}`, now.UnixNano())},
		{"/loki/api/v1/push", "application/json", fmt.Sprintf(`{"streams":[{"stream":{"source":"app.logs","job":"x"},"values":[["%[1]d","l1"],["%[1]d","l2"]]}]}`, now.UnixNano())},
		{"/_bulk", "application/x-ndjson", "{\"create\":{\"_index\":\"app.logs\"}}\n{\"message\":\"b1\"}\n"},
		// One event an hour and more ahead: answered 200, dropped, counted.
		{"/api/logs?source_name=edge", "application/json", `[{"message":"later","timestamp":"` + now.Add(3*time.Hour).UTC().Format(time.RFC3339) + `"}]`},
	}
	for _, in := range ingest {
		if code, body := r.send("POST", in.path, "pub", in.contentType, in.body); code/100 != 2 {
			t.Fatalf("POST %s: %d %s", in.path, code, body)
		}
	}
	if code, _ := r.send("POST", "/api/logs?source_name=edge", "not-a-key", "application/json", `[{"message":"x"}]`); code != 401 {
		t.Fatalf("a bad key got %d", code)
	}

	// Queries: a caching endpoint (a miss, then a hit), a search, ad-hoc
	// SQL, and a query refused while the only slot is held.
	r.mustDo("POST", "/api/endpoints", "priv", `{"name":"app.count","query":"select count(*) as n from `+"`app.logs`"+`","cache_duration_seconds":60}`, 201)
	for range 2 {
		if body := r.mustDo("GET", "/api/endpoints/query/name/app.count", "priv", "", 200); !strings.Contains(body, `"n":6`) {
			t.Fatalf("endpoint answer %s", body)
		}
	}
	r.mustDo("GET", "/api/sources/app.logs/search?lql="+url.QueryEscape("a1"), "priv", "", 200)
	held := make(chan int, 1)
	go func() {
		code, _ := r.do("GET", "/api/query?sql="+url.QueryEscape("select 'hold' as x"), "priv", "")
		held <- code
	}()
	<-hold.started
	r.mustDo("GET", "/api/query?sql="+url.QueryEscape("select 1 as one"), "priv", "", 429)
	running := r.scrapeMetrics("priv")
	close(hold.release)
	if code := <-held; code != 200 {
		t.Fatalf("the held query got %d", code)
	}
	if got := running.get("sediment_query_running"); got != 1 {
		t.Errorf("queries running while one is held: %v", got)
	}

	m := r.scrapeMetrics("priv")
	want := func(v float64, name string, labels ...string) {
		t.Helper()
		if got := m.get(name, labels...); got != v {
			t.Errorf("%s%v = %v, want %v", name, labels, got, v)
		}
	}
	// Ingest per source and route, with the bytes of single-source
	// requests exactly their bodies.
	want(3, "sediment_ingest_events_total", "source", "app.logs", "route", "ingest_create")
	want(2, "sediment_ingest_events_total", "source", "edge", "route", "ingest_json")
	want(2, "sediment_ingest_events_total", "source", "edge", "route", "ingest_otlp")
	want(2, "sediment_ingest_events_total", "source", "app.logs", "route", "ingest_loki")
	want(1, "sediment_ingest_events_total", "source", "app.logs", "route", "ingest_es_bulk")
	want(float64(len(ingest[0].body)), "sediment_ingest_bytes_total", "source", "app.logs", "route", "ingest_create")
	want(float64(len(ingest[2].body)), "sediment_ingest_bytes_total", "source", "edge", "route", "ingest_otlp")
	want(1, "sediment_ingest_dropped_events_total", "source", "edge", "reason", "future_timestamp")
	// Answers per route and status.
	want(2, "sediment_http_requests_total", "route", "ingest_create", "code", "200")
	want(1, "sediment_http_requests_total", "route", "ingest_create", "code", "401")
	want(1, "sediment_http_requests_total", "route", "sql", "code", "429")
	want(1, "sediment_http_requests_total", "route", "ingest_loki", "code", "204")
	// Storage: everything stored is in memory still, durably logged.
	want(6, "sediment_head_events", "source", "app.logs")
	want(4, "sediment_head_events", "source", "edge")
	if v := m.get("sediment_head_bytes", "source", "app.logs"); v <= 0 {
		t.Errorf("app.logs head bytes %v", v)
	}
	// Five requests stored events (the last one's only event was
	// dropped), each acknowledged after its own fsync in sync mode.
	if v := m.get("sediment_wal_fsync_duration_seconds"); v < 5 {
		t.Errorf("%v WAL fsyncs observed for 5 acknowledged appends in sync mode", v)
	}
	want(0, "sediment_source_condition", "source", "app.logs", "kind", "disk_full")
	want(0, "sediment_quarantined_segments", "source", "app.logs")
	// Queries: latency per route and endpoint, the cache, admission.
	want(2, "sediment_query_duration_seconds", "route", "endpoint_query", "endpoint", "app.count")
	want(1, "sediment_query_duration_seconds", "route", "search", "endpoint", "")
	want(1, "sediment_query_duration_seconds", "route", "sql", "endpoint", "")
	want(1, "sediment_endpoint_cache_hits_total")
	want(1, "sediment_endpoint_cache_misses_total")
	want(1, "sediment_endpoint_cache_entries")
	want(1, "sediment_query_rejected_total", "reason", "queue_full")
	want(0, "sediment_query_running")
	want(1, "sediment_query_slots")
	if v := m.get("sediment_query_memory_limit_bytes"); v <= 0 {
		t.Errorf("query memory pool size %v", v)
	}
	m.get("sediment_query_memory_peak_bytes")
	// The Go runtime and the process.
	for _, name := range []string{"go_goroutines", "go_memstats_heap_alloc_bytes", "go_gc_duration_seconds", "process_resident_memory_bytes", "process_cpu_seconds_total"} {
		if m.mfs[name] == nil {
			t.Errorf("no %s", name)
		}
	}

	// docs/metrics.md lists every series this scrape has (each sediment_
	// family of the server shows up in it), and no other.
	doc, err := os.ReadFile("../../docs/metrics.md")
	if err != nil {
		t.Fatal(err)
	}
	documented := map[string]bool{}
	for _, match := range regexp.MustCompile("(?m)^\\| `(sediment_[a-z_]+)` \\| (counter|gauge|histogram) \\|").FindAllStringSubmatch(string(doc), -1) {
		documented[match[1]] = true
		mf := m.mfs[match[1]]
		if mf == nil {
			t.Errorf("docs/metrics.md lists %s, which the server does not serve", match[1])
		} else if got := strings.ToLower(mf.GetType().String()); got != match[2] {
			t.Errorf("docs/metrics.md says %s is a %s; it is a %s", match[1], match[2], got)
		}
	}
	for name := range m.mfs {
		if strings.HasPrefix(name, "sediment_") && !documented[name] {
			t.Errorf("%s is not in docs/metrics.md", name)
		}
	}
}

// TestMetricsAccessFlag: without a key, GET /metrics answers 401 unless
// --metrics-public opens it (the test client is on loopback, so both
// loopback and all let it in); the private key reads it in every mode and
// the public key never does better than no key.
func TestMetricsAccessFlag(t *testing.T) {
	for _, tc := range []struct {
		flag  string
		noKey int
	}{{"none", 401}, {"loopback", 200}, {"all", 200}} {
		t.Run(tc.flag, func(t *testing.T) {
			cfg, err := parseServeConfig([]string{"--metrics-public", tc.flag, "--data-dir", t.TempDir()}, func(string) string { return "" }, io.Discard)
			if err != nil {
				t.Fatal(err)
			}
			cfg.PrivateToken, cfg.PublicToken = "priv", "pub"
			r := start(t, cfg)
			for key, status := range map[string]int{"": tc.noKey, "pub": tc.noKey, "priv": 200} {
				if code, _ := r.do("GET", "/metrics", key, ""); code != status {
					t.Errorf("key %q: %d, want %d", key, code, status)
				}
			}
		})
	}
}
