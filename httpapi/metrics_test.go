package httpapi

import (
	"fmt"
	"net"
	"slices"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/valyala/fasthttp"

	"github.com/sediment/sediment/catalog"
)

// scrape is a parsed GET /metrics answer.
type scrape map[string]*dto.MetricFamily

// parseScrape parses a metrics answer with Prometheus's own text parser
// (legacy names: every name must be a classic Prometheus name).
func parseScrape(t testing.TB, body string) scrape {
	t.Helper()
	p := expfmt.NewTextParser(model.LegacyValidation)
	mfs, err := p.TextToMetricFamilies(strings.NewReader(body))
	if err != nil {
		t.Fatalf("metrics do not parse: %v\n%s", err, body)
	}
	return mfs
}

// value returns the value of the series of name whose labels include
// labels (alternating name, value): a counter's or gauge's value, a
// histogram's count. ok is false when there is no such series.
func (s scrape) value(name string, labels ...string) (v float64, ok bool) {
	mf := s[name]
	if mf == nil {
		return 0, false
	}
	for _, m := range mf.Metric {
		if !hasLabels(m, labels) {
			continue
		}
		switch {
		case m.Counter != nil:
			return m.Counter.GetValue(), true
		case m.Gauge != nil:
			return m.Gauge.GetValue(), true
		case m.Histogram != nil:
			return float64(m.Histogram.GetSampleCount()), true
		case m.Untyped != nil:
			return m.Untyped.GetValue(), true
		}
	}
	return 0, false
}

func hasLabels(m *dto.Metric, labels []string) bool {
	for i := 0; i+1 < len(labels); i += 2 {
		found := false
		for _, lp := range m.Label {
			if lp.GetName() == labels[i] && lp.GetValue() == labels[i+1] {
				found = true
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// must returns the value of a series that must be there.
func (s scrape) must(t testing.TB, name string, labels ...string) float64 {
	t.Helper()
	v, ok := s.value(name, labels...)
	if !ok {
		t.Fatalf("no series %s%v in the scrape", name, labels)
	}
	return v
}

// labelValues returns every value label takes in the series of name.
func (s scrape) labelValues(name, label string) []string {
	var out []string
	if mf := s[name]; mf != nil {
		for _, m := range mf.Metric {
			for _, lp := range m.Label {
				if lp.GetName() == label {
					out = append(out, lp.GetValue())
				}
			}
		}
	}
	return out
}

func (ts *testServer) scrape() scrape {
	ts.t.Helper()
	r := ts.do("GET", "/metrics", nil, "Authorization", "Bearer "+privKey)
	r.expect(ts.t, 200, "")
	if ct := r.header.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain; version=0.0.4") {
		ts.t.Fatalf("metrics Content-Type %q", ct)
	}
	return parseScrape(ts.t, r.body)
}

// TestMetricsAccess: GET /metrics answers a private key in every mode,
// and without a key only where --metrics-public opens it: to clients on a
// loopback address (loopback) or to anyone (all). A public key is no
// better than none.
func TestMetricsAccess(t *testing.T) {
	remote := &net.TCPAddr{IP: net.ParseIP("192.0.2.10"), Port: 40000} // not loopback
	for _, tc := range []struct {
		access MetricsAccess
		// status without a key from loopback, and from elsewhere
		loopback, elsewhere int
	}{
		{MetricsPrivate, 401, 401},
		{MetricsLoopback, 200, 401},
		{MetricsPublic, 200, 200},
	} {
		t.Run(tc.access.String(), func(t *testing.T) {
			ts := startServer(t, serverConfig{opts: Options{MetricsAccess: tc.access}})
			// Over TCP from 127.0.0.1.
			ts.do("GET", "/metrics", nil).expect(t, tc.loopback, "")
			ts.do("GET", "/metrics", nil, "x-api-key", pubKey).expect(t, tc.loopback, "")
			ts.do("GET", "/metrics", nil, "x-api-key", privKey).expect(t, 200, "")
			ts.do("GET", "/analytics/v1/metrics", nil, "Authorization", "Bearer "+privKey).expect(t, 200, "")
			// From a remote address, through the handler.
			call := func(key string) (int, string) {
				var req fasthttp.Request
				req.Header.SetMethod("GET")
				req.SetRequestURI("/metrics")
				if key != "" {
					req.Header.Set("x-api-key", key)
				}
				var ctx fasthttp.RequestCtx
				ctx.Init(&req, remote, nil)
				ts.srv.Handler()(&ctx)
				return ctx.Response.StatusCode(), string(ctx.Response.Body())
			}
			if code, body := call(""); code != tc.elsewhere {
				t.Errorf("remote client without a key: %d %s, want %d", code, body, tc.elsewhere)
			} else if code == 401 && body != string(bodyUnauthorized) {
				t.Errorf("401 body %q", body)
			}
			if code, _ := call(pubKey); code != tc.elsewhere {
				t.Errorf("remote client with a public key: %d, want %d", code, tc.elsewhere)
			}
			if code, body := call(privKey); code != 200 || !strings.Contains(body, "sediment_http_requests_total") {
				t.Errorf("remote client with the private key: %d", code)
			}
			ts.do("POST", "/metrics", nil, "x-api-key", privKey).expect(t, 404, "")
		})
	}
}

func TestParseMetricsAccess(t *testing.T) {
	for in, want := range map[string]MetricsAccess{"": MetricsPrivate, "none": MetricsPrivate, "loopback": MetricsLoopback, "all": MetricsPublic} {
		got, err := ParseMetricsAccess(in)
		if err != nil || got != want {
			t.Errorf("ParseMetricsAccess(%q) = %v, %v", in, got, err)
		}
		if in != "" && got.String() != in {
			t.Errorf("%v.String() = %q", got, got.String())
		}
	}
	if _, err := ParseMetricsAccess("public"); err == nil {
		t.Error("ParseMetricsAccess(public) accepted")
	}
}

// TestMetricsIngest: events and body bytes are counted per source and
// route (a request spanning sources splits its bytes by events), drops per
// source and reason, answers per route and status; no label takes a raw
// path.
func TestMetricsIngest(t *testing.T) {
	ts := startServer(t, serverConfig{opts: Options{Now: serverNow}})
	ts.createSource("checkout")
	ts.createSource("billing")
	at := serverNow().Add(-time.Minute)
	json := []string{"Content-Type", "application/json", "x-api-key", pubKey}

	create := []byte(fmt.Sprintf(`[{"message":"a","timestamp":%d},{"message":"b","timestamp":%d}]`, at.UnixMicro(), at.UnixMicro()))
	ts.do("POST", "/api/logs?source_name=checkout", create, json...).expect(t, 200, "")
	ts.do("POST", "/logs?source_name=checkout", create, json...).expect(t, 200, "") // an alias of the same route
	vector := []byte(fmt.Sprintf(`{"message":"v","timestamp":%d}`, at.UnixMicro()))
	ts.do("POST", "/api/logs/vector?source_name=billing", vector, json...).expect(t, 200, "")
	future := []byte(`[{"message":"f","timestamp":"` + serverNow().Add(3*time.Hour).Format(time.RFC3339) + `"}]`)
	ts.do("POST", "/api/logs?source_name=billing", future, json...).expect(t, 200, "")
	ts.do("POST", "/api/logs?source_name=billing", create, "Content-Type", "application/json", "x-api-key", "nope").expect(t, 401, "")

	// One OTLP request: three records for checkout, one for billing, two
	// for no source.
	otlp := []byte(fmt.Sprintf(`{"resourceLogs":[`+
		`{"resource":{"attributes":[{"key":"service.name","value":{"stringValue":"checkout"}}]},"scopeLogs":[{"logRecords":[`+
		`{"timeUnixNano":"%[1]d","body":{"stringValue":"1"}},{"timeUnixNano":"%[1]d","body":{"stringValue":"2"}},{"timeUnixNano":"%[1]d","body":{"stringValue":"3"}}]}]},`+
		`{"resource":{"attributes":[{"key":"service.name","value":{"stringValue":"billing"}}]},"scopeLogs":[{"logRecords":[`+
		`{"timeUnixNano":"%[1]d","body":{"stringValue":"4"}}]}]},`+
		`{"resource":{"attributes":[{"key":"service.name","value":{"stringValue":"nobody"}}]},"scopeLogs":[{"logRecords":[`+
		`{"timeUnixNano":"%[1]d","body":{"stringValue":"x"}},{"timeUnixNano":"%[1]d","body":{"stringValue":"y"}}]}]}]}`, at.UnixNano()))
	ts.do("POST", "/v1/logs", otlp, json...).expect(t, 200, "")
	// Paths a client made up.
	ts.do("GET", "/api/sources/made-up-token/also-made-up", nil).expect(t, 404, "")
	ts.do("GET", "/no/such/route", nil).expect(t, 404, "")

	m := ts.scrape()
	events := func(source, route string) float64 {
		return m.must(t, "sediment_ingest_events_total", "source", source, "route", route)
	}
	bytes := func(source, route string) float64 {
		return m.must(t, "sediment_ingest_bytes_total", "source", source, "route", route)
	}
	if got := events("checkout", "ingest_create"); got != 4 {
		t.Errorf("checkout create events %v, want 4", got)
	}
	if got := bytes("checkout", "ingest_create"); got != float64(2*len(create)) {
		t.Errorf("checkout create bytes %v, want %d", got, 2*len(create))
	}
	if got := events("billing", "ingest_vector"); got != 1 {
		t.Errorf("billing vector events %v", got)
	}
	if got := bytes("billing", "ingest_vector"); got != float64(len(vector)) {
		t.Errorf("billing vector bytes %v, want %d", got, len(vector))
	}
	// The request that stored nothing (its one event was dropped) still
	// brought its bytes to billing.
	if got := events("billing", "ingest_create"); got != 0 {
		t.Errorf("billing create events %v", got)
	}
	if got := bytes("billing", "ingest_create"); got != float64(len(future)) {
		t.Errorf("billing create bytes %v, want %d", got, len(future))
	}
	// The OTLP request's bytes go 3:1 to checkout and billing; the two
	// records without a source are drops, not bytes.
	if events("checkout", "ingest_otlp") != 3 || events("billing", "ingest_otlp") != 1 {
		t.Errorf("otlp events: checkout %v, billing %v", events("checkout", "ingest_otlp"), events("billing", "ingest_otlp"))
	}
	if c, b := bytes("checkout", "ingest_otlp"), bytes("billing", "ingest_otlp"); c != float64(len(otlp)*3/4) || c+b != float64(len(otlp)) {
		t.Errorf("otlp bytes: checkout %v, billing %v; want %d of %d for checkout", c, b, len(otlp)*3/4, len(otlp))
	}
	if got := m.must(t, "sediment_ingest_dropped_events_total", "source", "billing", "reason", "future_timestamp"); got != 1 {
		t.Errorf("billing future drops %v", got)
	}
	if got := m.must(t, "sediment_ingest_dropped_events_total", "source", "", "reason", "rejected"); got != 2 {
		t.Errorf("drops without a source %v", got)
	}
	// Answers per route and status.
	for _, c := range []struct {
		route, code string
		want        float64
	}{
		{"ingest_create", "200", 3}, {"ingest_create", "401", 1}, {"ingest_vector", "200", 1},
		{"ingest_otlp", "200", 1}, {"other", "404", 2},
	} {
		if got := m.must(t, "sediment_http_requests_total", "route", c.route, "code", c.code); got != c.want {
			t.Errorf("requests %s %s: %v, want %v", c.route, c.code, got, c.want)
		}
	}
	if got := m.must(t, "sediment_http_request_duration_seconds", "route", "ingest_create"); got != 4 {
		t.Errorf("ingest_create durations observed %v, want 4", got)
	}
	// Route labels come from the fixed set only.
	for _, name := range []string{"sediment_http_requests_total", "sediment_http_request_duration_seconds", "sediment_ingest_events_total"} {
		for _, v := range m.labelValues(name, "route") {
			if strings.Contains(v, "/") || strings.Contains(v, "made-up") {
				t.Errorf("%s has route %q", name, v)
			}
		}
	}
	// The engine's series name sources.
	if v := m.must(t, "sediment_head_events", "source", "checkout"); v != 7 {
		t.Errorf("checkout head events %v, want 7", v)
	}
	if v := m.must(t, "sediment_head_bytes", "source", "checkout"); v <= 0 {
		t.Errorf("checkout head bytes %v", v)
	}
	for _, name := range []string{"go_goroutines", "process_cpu_seconds_total", "sediment_wal_fsync_duration_seconds"} {
		if m[name] == nil {
			t.Errorf("no %s", name)
		}
	}

	// A deleted source's series go with it.
	if _, err := ts.cat.DeleteSource(ts.source("billing").Token); err != nil {
		t.Fatal(err)
	}
	m = ts.scrape()
	for _, name := range []string{"sediment_ingest_events_total", "sediment_head_events", "sediment_ingest_dropped_events_total"} {
		if slices.Contains(m.labelValues(name, "source"), "billing") {
			t.Errorf("%s still has the deleted source", name)
		}
	}
}

// TestMetricsQueries: answered queries are timed per route and endpoint
// name, admission control's rejections and queue are counted, and an
// endpoint renamed loses its old name's series.
func TestMetricsQueries(t *testing.T) {
	ts := startServer(t, serverConfig{opts: Options{MaxConcurrentQueries: 1, MaxQueuedQueries: -1}})
	ts.runner.block = make(chan struct{})
	ts.runner.started = make(chan struct{}, 8)
	ep, err := ts.cat.CreateEndpoint(catalog.EndpointParams{Name: ptr("errors.count"), Query: ptr("select 1 as n")})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan response, 1)
	go func() { done <- ts.do("GET", "/api/endpoints/query/"+ep.Token, nil, "x-api-key", privKey) }()
	<-ts.runner.started
	// The slot is taken and nobody may wait: refused at once.
	ts.do("GET", "/api/query?sql=select+1", nil, "x-api-key", privKey).expect(t, 429, "")
	m := ts.scrape()
	if got := m.must(t, "sediment_query_running"); got != 1 {
		t.Errorf("running %v", got)
	}
	if got := m.must(t, "sediment_query_rejected_total", "reason", "queue_full"); got != 1 {
		t.Errorf("rejected %v", got)
	}
	close(ts.runner.block)
	(<-done).expect(t, 200, "")
	ts.do("GET", "/api/query?sql=select+1", nil, "x-api-key", privKey).expect(t, 200, "")
	ts.do("GET", "/api/endpoints/query/name/"+ep.Name, nil, "x-api-key", privKey).expect(t, 200, "")
	ts.do("GET", "/api/endpoints/query/no-such-endpoint", nil, "x-api-key", privKey).expect(t, 401, "")

	m = ts.scrape()
	if got := m.must(t, "sediment_query_duration_seconds", "route", "endpoint_query", "endpoint", "errors.count"); got != 2 {
		t.Errorf("endpoint queries timed %v, want 2", got)
	}
	if got := m.must(t, "sediment_query_duration_seconds", "route", "sql", "endpoint", ""); got != 1 {
		t.Errorf("sql queries timed %v, want 1 (the rejected one is not an answer)", got)
	}
	if got := m.must(t, "sediment_http_requests_total", "route", "sql", "code", "429"); got != 1 {
		t.Errorf("429s %v", got)
	}
	if slices.Contains(m.labelValues("sediment_query_duration_seconds", "endpoint"), "no-such-endpoint") {
		t.Error("a name the client made up became a label value")
	}
	if _, err := ts.cat.UpdateEndpoint(ep.Token, catalog.EndpointParams{Name: ptr("errors.total")}); err != nil {
		t.Fatal(err)
	}
	if slices.Contains(ts.scrape().labelValues("sediment_query_duration_seconds", "endpoint"), "errors.count") {
		t.Error("the renamed endpoint's old series stayed")
	}
}

// TestMetricRoute maps every path the router serves to its route name.
func TestMetricRoute(t *testing.T) {
	for path, want := range map[string]string{
		"/api/logs": "ingest_create", "/logs": "ingest_create", "/api/events": "ingest_create", "/api/logs/": "ingest_create",
		"/api/logs/json": "ingest_json", "/logs/vector": "ingest_vector", "/api/logs/cloudflare": "ingest_cloudflare",
		"/logs/erlang/lager": "ingest_elixir_logger", "/logs/logplex": "ingest_logplex", "/logs/syslogs": "ingest_syslogs",
		"/v1/logs": "ingest_otlp", "/otlp/v1/logs": "ingest_otlp", "/loki/api/v1/push": "ingest_loki",
		"/_bulk": "ingest_es_bulk", "/my-index/_bulk": "ingest_es_bulk",
		"/": "root", "/health": "health", "/ready": "ready", "/api/access": "access", "/metrics": "metrics",
		"/ui/app.js": "ui", "/api/query": "sql", "/api/sources": "sources", "/api/sources/tok": "source",
		"/api/sources/tok/schema": "source_schema", "/api/sources/tok/recent": "source_recent",
		"/api/sources/tok/event": "source_event", "/api/sources/tok/repair-wal": "source_repair_wal",
		"/api/sources/tok/search": "search", "/api/sources/tok/tail": "tail", "/api/endpoints": "endpoints",
		"/api/endpoints/tok": "endpoint", "/api/endpoints/query/tok": "endpoint_query",
		"/api/endpoints/query/name/x": "endpoint_query", "/endpoints/query/x": "endpoint_query",
		"/api/access-tokens": "access_tokens", "/api/sources/tok/nope": "other", "/wp-admin": "other",
	} {
		if got := metricRoute(path); got != want {
			t.Errorf("metricRoute(%q) = %q, want %q", path, got, want)
		}
	}
}

// TestIngestMeterSplits: shares add up to the body, whatever the order
// and rounding, and a share not taken (a failed store) is counted nowhere.
func TestIngestMeterSplits(t *testing.T) {
	var m ingestMeter
	m.start("r", 1000, 7)
	a, b, c := m.take(3), m.take(1), m.take(3)
	if a != 428 || b != 143 || a+b+c != 1000 {
		t.Errorf("shares %d %d %d", a, b, c)
	}
	m.start("r", 10, 3)
	if got := m.take(1); got != 3 {
		t.Errorf("first share %d", got)
	}
	// The second source failed; the third takes its own share.
	if got := m.take(1); got != 3 {
		t.Errorf("last share %d", got)
	}
}

// FuzzMetricRoute: whatever the path, its route name is one of the fixed
// set, so no client can make a label value of its own.
func FuzzMetricRoute(f *testing.F) {
	for _, p := range []string{"/api/logs", "/api/sources/x/tail", "/x/_bulk", "/api/endpoints/query/a/b", "/ui/../metrics", "//", ""} {
		f.Add(p)
	}
	allowed := map[string]bool{}
	for _, n := range []string{routeRoot, routeHealth, routeReady, routeAccess, routeMetrics, routeUI, routeSQL, routeSources,
		routeSource, routeSourceSchema, routeSourceRecent, routeSourceEvent, routeSourceRepair, routeSearch, routeTail,
		routeEndpoints, routeEndpoint, routeEndpointQuery, routeAccessTokens, routeIngestOTLP, routeIngestLoki, routeIngestBulk, routeOther} {
		allowed[n] = true
	}
	for _, n := range ingestRouteNames {
		allowed[n] = true
	}
	f.Fuzz(func(t *testing.T, path string) {
		if got := metricRoute(path); !allowed[got] {
			t.Fatalf("metricRoute(%q) = %q, not a route name", path, got)
		}
	})
}
