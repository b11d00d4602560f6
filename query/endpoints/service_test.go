package endpoints

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	json "github.com/goccy/go-json"

	"github.com/sediment/sediment/catalog"
	"github.com/sediment/sediment/engine"
	"github.com/sediment/sediment/event"
	"github.com/sediment/sediment/internal/vfs"
	"github.com/sediment/sediment/sql/parser"
)

var fixtureNow = time.Date(2025, 7, 10, 12, 30, 0, 0, time.UTC)

type testClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *testClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *testClock) advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// lockedBuffer is a log sink safe for the service's goroutines.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// fixture is a Service over a real engine and catalog (in memory) with
// Supabase's sources and endpoints seeded.
type fixture struct {
	t   *testing.T
	eng *engine.Engine
	cat *catalog.Catalog
	svc *Service
	clk *testClock
	log *lockedBuffer
	seq int
}

func newFixture(t *testing.T, opts Options) *fixture {
	t.Helper()
	fs := vfs.NewMemFS()
	f := &fixture{t: t, clk: &testClock{now: fixtureNow}, log: &lockedBuffer{}}
	var err error
	if f.eng, err = engine.Open("/data", &engine.Options{FS: fs, DisableBackground: true, BlockRows: 8, Now: f.clk.Now}); err != nil {
		t.Fatal(err)
	}
	if f.cat, err = catalog.Open("/data", &catalog.Options{FS: fs, Now: f.clk.Now}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.cat.SeedSupabase(); err != nil {
		t.Fatal(err)
	}
	f.cat.SetSQLValidator(func(q string) error {
		_, err := parser.Validate(q, parser.ValidateOptions{KnownSource: f.cat.HasSourceName})
		return err
	})
	opts.Now, opts.DisableBackground = f.clk.Now, true
	opts.Logger = slog.New(slog.NewTextHandler(f.log, nil))
	f.svc = New(f.eng, f.cat, &opts)
	t.Cleanup(func() {
		f.svc.Close()
		f.eng.Close()
	})
	return f
}

// ingest normalises JSON events as the HTTP layer does and appends them
// to a source; flush writes them to a segment.
func (f *fixture) ingest(source string, flush bool, events ...string) {
	f.t.Helper()
	sh, err := f.eng.Shard(f.cat.SourceByName(source).Token)
	if err != nil {
		f.t.Fatal(err)
	}
	var evs []event.Event
	for _, js := range events {
		raw, err := event.Parse([]byte(js))
		if err != nil {
			f.t.Fatalf("%s: %v", js, err)
		}
		f.seq++
		n := f.seq
		ev, _ := event.Normalize(raw, f.clk.Now(), event.NormalizeOptions{NewID: func() string { return fmt.Sprintf("id-%03d", n) }})
		evs = append(evs, ev.Clone())
	}
	if err := sh.Append(context.Background(), evs); err != nil {
		f.t.Fatal(err)
	}
	if flush {
		if err := sh.Flush(); err != nil {
			f.t.Fatal(err)
		}
	}
}

// edge is a Kong access event as Vector ships it.
func edge(at time.Time, project, ip, path string, status int) string {
	return fmt.Sprintf(`{"event_message":"%s - - \"GET %s HTTP/1.1\" %d","metadata":{"request":{"headers":{"cf_connecting_ip":"%s"},"method":"GET","path":"%s"},"response":{"status_code":%d}},"project":"%s","timestamp":"%s"}`,
		ip, path, status, ip, path, status, project, at.Format(time.RFC3339Nano))
}

func (f *fixture) endpoint(p catalog.EndpointParams) *catalog.Endpoint {
	f.t.Helper()
	e, err := f.cat.CreateEndpoint(p)
	if err != nil {
		f.t.Fatal(err)
	}
	return e
}

type body struct {
	Result []map[string]any `json:"result"`
	Error  any              `json:"error"`
}

func decode(t *testing.T, b []byte) body {
	t.Helper()
	var out body
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatalf("%s: %v", b, err)
	}
	if out.Result != nil && out.Error != nil {
		t.Fatalf("both result and error: %s", b)
	}
	return out
}

func (f *fixture) rows(ep *catalog.Endpoint, params map[string]string) []map[string]any {
	f.t.Helper()
	out := decode(f.t, f.svc.RunEndpoint(context.Background(), ep, params, false))
	if out.Error != nil || out.Result == nil {
		f.t.Fatalf("%s: %v", ep.Name, out.Error)
	}
	return out.Result
}

func (f *fixture) errorOf(ep *catalog.Endpoint, params map[string]string) string {
	f.t.Helper()
	out := decode(f.t, f.svc.RunEndpoint(context.Background(), ep, params, false))
	msg, ok := out.Error.(string)
	if !ok {
		f.t.Fatalf("%s: want an error, got %v", ep.Name, out)
	}
	return msg
}

func str(s string) *string { return &s }
func num(n int) *int       { return &n }
func yes() *bool           { b := true; return &b }
func no() *bool            { b := false; return &b }

// TestParameterBinding: every @parameter is bound as a STRING value (never
// spliced into the text), a missing one is NULL, extra ones are ignored.
func TestParameterBinding(t *testing.T) {
	f := newFixture(t, Options{})
	f.ingest("cloudflare.logs.prod", true,
		edge(fixtureNow.Add(-3*time.Minute), "default", "10.0.0.1", "/rest/v1/a", 200),
		edge(fixtureNow.Add(-2*time.Minute), "default", "10.0.0.2", "/auth/v1/token", 500),
		edge(fixtureNow.Add(-1*time.Minute), "other", "10.0.0.3", "/rest/v1/b", 200))
	ep := f.endpoint(catalog.EndpointParams{Name: str("params"), CacheDurationSeconds: num(0), Query: str(
		"select count(*) as n, @name as name, @missing is null as missing_is_null, cast(@num as int64) + 1 as num " +
			"from `cloudflare.logs.prod` as t where t.project = @name")})
	got := f.rows(ep, map[string]string{"name": "default", "num": "41", "extra": "ignored"})
	if len(got) != 1 || got[0]["n"] != float64(2) || got[0]["name"] != "default" || got[0]["missing_is_null"] != true || got[0]["num"] != float64(42) {
		t.Fatalf("bound: %v", got)
	}
	// A value is a value: quotes in it do not change the query.
	if got := f.rows(ep, map[string]string{"name": "default' or '1'='1", "num": "0"}); got[0]["n"] != float64(0) {
		t.Fatalf("a parameter changed the query: %v", got)
	}
	// Missing parameter: NULL, so no project matches.
	if got := f.rows(ep, map[string]string{"num": "0"}); got[0]["n"] != float64(0) || got[0]["name"] != nil {
		t.Fatalf("missing parameter: %v", got)
	}

	// A parameter that only the consumer sql= names is bound from the
	// request too (Logflare binds the endpoint's own only; README).
	la := f.cat.EndpointByName("logs.all")
	if got := f.rows(la, map[string]string{"project": "default", "foo": "bar", "sql": "select @foo as f, @absent as a from edge_logs limit 1"}); got[0]["f"] != "bar" || got[0]["a"] != nil {
		t.Fatalf("consumer parameters: %v", got)
	}

	// logs.all's optional bounds: start exclusive, end inclusive, empty or
	// missing means unbounded.
	count := func(params map[string]string) float64 {
		params["sql"] = "select count(*) as c from edge_logs"
		return f.rows(la, params)[0]["c"].(float64)
	}
	at := func(d time.Duration) string { return fixtureNow.Add(d).Format("2006-01-02T15:04:05.000Z") }
	for _, tc := range []struct {
		params map[string]string
		want   float64
	}{
		{map[string]string{"project": "default"}, 2},
		{map[string]string{"project": "default", "iso_timestamp_start": "", "iso_timestamp_end": ""}, 2},
		{map[string]string{"project": "default", "iso_timestamp_start": at(-3 * time.Minute)}, 1},
		{map[string]string{"project": "default", "iso_timestamp_end": at(-3 * time.Minute)}, 1},
		{map[string]string{"project": "default", "iso_timestamp_start": at(-3 * time.Minute), "iso_timestamp_end": at(-2 * time.Minute)}, 1},
		{map[string]string{"project": "other"}, 1},
		{map[string]string{}, 0},
	} {
		if got := count(tc.params); got != tc.want {
			t.Errorf("logs.all with %v: %v, want %v", tc.params, got, tc.want)
		}
	}
}

// TestCaching: results are kept per (endpoint, every parameter) for
// cache_duration_seconds, refreshed in the background every
// proactive_requerying_seconds while read, dropped when the endpoint
// changes; a failed run is not kept; redaction is applied per request.
func TestCaching(t *testing.T) {
	f := newFixture(t, Options{})
	f.ingest("cloudflare.logs.prod", true, edge(fixtureNow.Add(-time.Minute), "default", "10.0.0.1", "/rest/v1/a", 200))
	ep := f.endpoint(catalog.EndpointParams{Name: str("cached"), CacheDurationSeconds: num(60), ProactiveRequeryingSeconds: num(0),
		Query: str("select count(*) as n, max(t.event_message) as msg from `cloudflare.logs.prod` as t where t.project = @p")})
	n := func(params map[string]string) float64 { return f.rows(ep, params)[0]["n"].(float64) }
	p := map[string]string{"p": "default", "x": "1"}

	if n(p) != 1 || f.svc.Executions() != 1 {
		t.Fatalf("first run: executions %d", f.svc.Executions())
	}
	f.ingest("cloudflare.logs.prod", false, edge(fixtureNow, "default", "10.0.0.2", "/rest/v1/b", 200))
	if n(map[string]string{"x": "1", "p": "default"}) != 1 || f.svc.Executions() != 1 {
		t.Fatal("the same parameters were not answered from the cache")
	}
	// Another value of any parameter is another entry, even one the SQL
	// does not use.
	if n(map[string]string{"p": "default", "x": "2"}) != 2 || f.svc.Executions() != 2 {
		t.Fatal("a different parameter map was answered from the cache")
	}
	// The cached result is served unredacted or redacted per request.
	red := decode(t, f.svc.RunEndpoint(context.Background(), ep, p, true))
	if msg := red.Result[0]["msg"].(string); !strings.HasPrefix(msg, "REDACTED") || f.svc.Executions() != 2 {
		t.Fatalf("redacted cached result %q (executions %d)", msg, f.svc.Executions())
	}
	if plain := f.rows(ep, p); !strings.HasPrefix(plain[0]["msg"].(string), "10.0.0.1") {
		t.Fatalf("redaction leaked into the cache: %v", plain)
	}
	// After cache_duration_seconds, a request runs the query again.
	f.clk.advance(61 * time.Second)
	f.svc.Tick()
	if n(p) != 2 || f.svc.Executions() != 3 {
		t.Fatalf("after expiry: executions %d", f.svc.Executions())
	}
	// Changing the endpoint drops its results.
	if _, err := f.cat.UpdateEndpoint(ep.Token, catalog.EndpointParams{Query: str("select count(*) * 10 as n from `cloudflare.logs.prod` as t where t.project = @p")}); err != nil {
		t.Fatal(err)
	}
	ep = f.cat.EndpointByToken(ep.Token)
	if n(p) != 20 || f.svc.Executions() != 4 {
		t.Fatalf("after an update: executions %d", f.svc.Executions())
	}

	// A failed run is not cached: the next request runs it again.
	bad := f.endpoint(catalog.EndpointParams{Name: str("bad"), CacheDurationSeconds: num(60),
		Query: str("select cast(@n as int64) as n from `cloudflare.logs.prod` as t limit 1")})
	before := f.svc.Executions()
	for range 2 {
		if msg := f.errorOf(bad, map[string]string{"n": "not a number"}); !strings.Contains(msg, "not a number") {
			t.Fatalf("error %q does not name the value", msg)
		}
	}
	if f.svc.Executions() != before+2 {
		t.Fatalf("a failed run was cached: %d executions", f.svc.Executions()-before)
	}
}

func TestProactiveRequerying(t *testing.T) {
	f := newFixture(t, Options{})
	f.ingest("cloudflare.logs.prod", true, edge(fixtureNow.Add(-time.Minute), "default", "10.0.0.1", "/rest/v1/a", 200))
	ep := f.endpoint(catalog.EndpointParams{Name: str("refreshed"), CacheDurationSeconds: num(60), ProactiveRequeryingSeconds: num(10),
		Query: str("select count(*) as n from `cloudflare.logs.prod` as t")})
	p := map[string]string{}
	if got := f.rows(ep, p)[0]["n"]; got != float64(1) {
		t.Fatalf("first: %v", got)
	}
	f.ingest("cloudflare.logs.prod", false, edge(fixtureNow, "default", "10.0.0.2", "/rest/v1/b", 200))
	f.clk.advance(5 * time.Second)
	f.svc.Tick() // not due yet
	if f.svc.Executions() != 1 {
		t.Fatalf("refreshed early: %d", f.svc.Executions())
	}
	f.clk.advance(6 * time.Second)
	f.svc.Tick() // due: refreshed in the background
	if f.svc.Executions() != 2 {
		t.Fatalf("not refreshed: %d executions", f.svc.Executions())
	}
	if got := f.rows(ep, p)[0]["n"]; got != float64(2) || f.svc.Executions() != 2 {
		t.Fatalf("after the refresh: %v (executions %d)", got, f.svc.Executions())
	}
}

func TestCacheMemoryBound(t *testing.T) {
	f := newFixture(t, Options{CacheMaxBytes: 1})
	f.ingest("cloudflare.logs.prod", true, edge(fixtureNow.Add(-time.Minute), "default", "10.0.0.1", "/rest/v1/a", 200))
	ep := f.endpoint(catalog.EndpointParams{Name: str("big"), CacheDurationSeconds: num(600),
		Query: str("select count(*) as n, @k as k from `cloudflare.logs.prod` as t")})
	f.rows(ep, map[string]string{"k": "a"})
	f.rows(ep, map[string]string{"k": "b"}) // evicts a, the least recently used
	f.rows(ep, map[string]string{"k": "b"})
	if f.svc.Executions() != 2 {
		t.Fatalf("b not kept: %d executions", f.svc.Executions())
	}
	f.rows(ep, map[string]string{"k": "a"})
	if f.svc.Executions() != 3 {
		t.Fatalf("a kept past the memory bound: %d executions", f.svc.Executions())
	}
}

// TestSandboxing: sql= (or lql=) replaces the final SELECT of a
// sandboxable endpoint with CTEs and may read only those CTEs.
func TestSandboxing(t *testing.T) {
	f := newFixture(t, Options{})
	f.ingest("cloudflare.logs.prod", true,
		edge(fixtureNow.Add(-3*time.Minute), "default", "10.0.0.1", "/rest/v1/a", 200),
		edge(fixtureNow.Add(-2*time.Minute), "default", "10.0.0.2", "/auth/v1/token", 500))
	f.ingest("postgres.logs", false, `{"event_message":"ERROR: boom","project":"default","metadata":{"parsed":{"error_severity":"ERROR"}},"timestamp":"2025-07-10T12:29:00Z"}`)
	la := f.cat.EndpointByName("logs.all")
	base := map[string]string{"project": "default"}
	with := func(k, v string) map[string]string {
		p := map[string]string{"project": "default"}
		p[k] = v
		return p
	}
	if got := f.rows(la, base); len(got) != 2 || got[0]["timestamp"].(float64) < got[1]["timestamp"].(float64) {
		t.Fatalf("default final select: %v", got)
	}
	if got := f.rows(la, with("sql", "select event_message from postgres_logs")); len(got) != 1 || got[0]["event_message"] != "ERROR: boom" {
		t.Fatalf("sql=: %v", got)
	}
	if got := f.rows(la, with("sql", "with x as (select id from edge_logs) select count(*) as c from x")); got[0]["c"] != float64(2) {
		t.Fatalf("consumer WITH: %v", got)
	}
	if msg := f.errorOf(la, with("sql", "select id from `cloudflare.logs.prod`")); !strings.Contains(msg, "Table not found in CTE") {
		t.Fatalf("a source read from a sandbox: %q", msg)
	}
	if msg := f.errorOf(la, with("sql", "select id from edge_logs; select 1")); msg == "" {
		t.Fatal("two statements accepted")
	}
	got := f.rows(la, with("lql", "f:edge_logs m.response.status_code:500"))
	if len(got) != 1 {
		t.Fatalf("lql=: %v", got)
	}
	if msg := f.errorOf(la, with("lql", "m.response.status_code:500")); !strings.Contains(msg, "f:") {
		t.Fatalf("lql= without f: over several CTEs: %q", msg)
	}
	// sql= wins over lql=.
	p := with("sql", "select count(*) as c from edge_logs")
	p["lql"] = "f:edge_logs m.response.status_code:500"
	if got := f.rows(la, p); got[0]["c"] != float64(2) {
		t.Fatalf("sql and lql: %v", got)
	}

	// Not sandboxable, or no CTE to sandbox in: the consumer query is
	// ignored and the endpoint's own runs.
	closed := f.endpoint(catalog.EndpointParams{Name: str("closed"), Sandboxable: no(), CacheDurationSeconds: num(0),
		Query: str("with e as (select t.id from `cloudflare.logs.prod` as t) select count(*) as c from e")})
	if got := f.rows(closed, map[string]string{"sql": "select id from e"}); len(got) != 1 || got[0]["c"] != float64(2) {
		t.Fatalf("not sandboxable: %v", got)
	}
	flat := f.endpoint(catalog.EndpointParams{Name: str("flat"), Sandboxable: yes(), CacheDurationSeconds: num(0),
		Query: str("select count(*) as c from `cloudflare.logs.prod` as t")})
	if got := f.rows(flat, map[string]string{"sql": "select 1 as one"}); got[0]["c"] != float64(2) {
		t.Fatalf("no CTE: %v", got)
	}
}

func TestRedactString(t *testing.T) {
	for in, want := range map[string]string{
		"User 10.0.0.1 connected ::1":          "User REDACTED connected REDACTED",
		"IPv6: 2001:0db8:85a3::8a2e:0370:7334": "IPv6: REDACTED",
		"192.168.1.1":                          "REDACTED",
		"from 10.0.0.1:5432":                   "from REDACTED:5432",
		"link fe80::1%eth0 up":                 "link REDACTED up",
		"mapped ::ffff:192.168.1.1":            "mapped REDACTED",
		"999.1.1.1 is no address":              "999.1.1.1 is no address",
		"ratio 1:2 and a:b":                    "ratio 1:2 and a:b",
		"version 1.2.3":                        "version 1.2.3",
		"":                                     "",
	} {
		if got := RedactString(in); got != want {
			t.Errorf("RedactString(%q) = %q, want %q", in, got, want)
		}
	}
	// Keys and non-strings are untouched; strings at any depth are not.
	got := string(RedactJSON([]byte(`{"result":[{"10.0.0.1":"10.0.0.1","n":10,"m":[{"ip":["8.8.8.8 via ::1"]}]}]}`)))
	if want := `{"result":[{"10.0.0.1":"REDACTED","n":10,"m":[{"ip":["REDACTED via REDACTED"]}]}]}`; got != want {
		t.Errorf("RedactJSON: %s, want %s", got, want)
	}
}

// TestRedactionOfResults: an endpoint with redact_pii redacts its rows,
// records included; a request may turn it on or off.
func TestRedactionOfResults(t *testing.T) {
	f := newFixture(t, Options{})
	f.ingest("cloudflare.logs.prod", true, edge(fixtureNow.Add(-time.Minute), "default", "172.18.0.1", "/rest/v1/a", 200))
	ep := f.endpoint(catalog.EndpointParams{Name: str("pii"), RedactPII: yes(), CacheDurationSeconds: num(0),
		Query: str("select t.event_message, t.metadata from `cloudflare.logs.prod` as t")})
	out := string(f.svc.RunEndpoint(context.Background(), ep, nil, ep.RedactPII))
	if strings.Contains(out, "172.18.0.1") || strings.Count(out, "REDACTED") != 2 {
		t.Fatalf("redacted: %s", out)
	}
	if out := string(f.svc.RunEndpoint(context.Background(), ep, nil, false)); strings.Count(out, "172.18.0.1") != 2 {
		t.Fatalf("not redacted: %s", out)
	}
}

// TestErrors: a failing query answers {"error": "..."} (the HTTP layer
// sends it with 200), never a result; timeouts and panics included.
func TestErrors(t *testing.T) {
	f := newFixture(t, Options{})
	f.ingest("cloudflare.logs.prod", true,
		edge(fixtureNow.Add(-3*time.Minute), "default", "10.0.0.1", "/rest/v1/a", 200),
		edge(fixtureNow.Add(-2*time.Minute), "default", "10.0.0.2", "/rest/v1/b", 200),
		edge(fixtureNow.Add(-1*time.Minute), "default", "10.0.0.3", "/rest/v1/c", 200))
	la := f.cat.EndpointByName("logs.all")
	for sql, want := range map[string]string{
		"select from":                        "",
		"select * from edge_logs":            "wildcard",
		"delete from edge_logs where true":   "SELECT",
		"select nosuchfn(id) from edge_logs": "nosuchfn",
	} {
		msg := f.errorOf(la, map[string]string{"project": "default", "sql": sql})
		if !strings.Contains(msg, want) {
			t.Errorf("%s: %q does not say %q", sql, msg, want)
		}
	}
	// The error body is JSON whatever the message holds.
	if msg := f.errorOf(la, map[string]string{"project": "default", "sql": "select id from edge_logs where regexp_contains(id, '(\"')"}); msg == "" {
		t.Fatal("no message for a bad regex")
	}

	// max_limit truncates.
	few := f.endpoint(catalog.EndpointParams{Name: str("few"), MaxLimit: num(2), CacheDurationSeconds: num(0),
		Query: str("select t.id from `cloudflare.logs.prod` as t")})
	if got := f.rows(few, nil); len(got) != 2 {
		t.Fatalf("max_limit 2: %d rows", len(got))
	}

	// An LQL endpoint must name its source.
	lqlEP := f.endpoint(catalog.EndpointParams{Name: str("lql"), Language: str(catalog.LanguageLQL), CacheDurationSeconds: num(0),
		Query: str("m.response.status_code:200")})
	if msg := f.errorOf(lqlEP, nil); !strings.Contains(msg, "f:") {
		t.Fatalf("LQL endpoint without f: %q", msg)
	}

	// A query past its deadline.
	slow := newFixture(t, Options{QueryTimeout: time.Nanosecond})
	slow.ingest("cloudflare.logs.prod", true, edge(fixtureNow, "default", "10.0.0.1", "/", 200))
	if msg := slow.errorOf(slow.cat.EndpointByName("logs.all"), map[string]string{"project": "default"}); msg != "Query timed out. Retry your query or reduce the time range." {
		t.Fatalf("timeout: %q", msg)
	}
}

// TestPanicIsTheQuerysError: a query that panics fails alone: its request
// gets {"error": ...}, the stack is logged, waiters on a cached entry are
// released and nothing is cached; the next query runs.
func TestPanicIsTheQuerysError(t *testing.T) {
	f := newFixture(t, Options{})
	f.ingest("cloudflare.logs.prod", true, edge(fixtureNow.Add(-time.Minute), "default", "10.0.0.1", "/rest/v1/a", 200))
	explode := true
	f.svc.testHookRun = func(*parser.Query) {
		if explode {
			var empty []int
			_ = empty[0]
		}
	}
	ep := f.endpoint(catalog.EndpointParams{Name: str("cached"), CacheDurationSeconds: num(60),
		Query: str("select count(*) as n from `cloudflare.logs.prod` as t")})
	for range 2 {
		msg := f.errorOf(ep, nil)
		if !strings.Contains(msg, "index out of range") || strings.Contains(msg, "goroutine") {
			t.Fatalf("panic answered %q", msg)
		}
	}
	if f.svc.Panics() != 2 || f.svc.Executions() != 2 {
		t.Fatalf("panics %d, executions %d: a panic's outcome was cached", f.svc.Panics(), f.svc.Executions())
	}
	logs := f.log.String()
	if !strings.Contains(logs, "query panicked") || !strings.Contains(logs, "service_test.go") || !strings.Contains(logs, "endpoint=cached") {
		t.Fatalf("panic not logged with its stack and endpoint:\n%s", logs)
	}
	// Ad-hoc SQL too.
	if out := decode(t, f.svc.RunSQL(context.Background(), "select count(*) as n from `cloudflare.logs.prod`")); out.Error == nil {
		t.Fatal("ad-hoc query panic not answered as an error")
	}
	explode = false
	if got := f.rows(ep, nil); got[0]["n"] != float64(1) {
		t.Fatalf("after the panic: %v", got)
	}
}

func TestAdhocSQL(t *testing.T) {
	f := newFixture(t, Options{AdhocMaxRows: 2})
	f.ingest("cloudflare.logs.prod", true,
		edge(fixtureNow.Add(-3*time.Minute), "default", "10.0.0.1", "/rest/v1/a", 200),
		edge(fixtureNow.Add(-2*time.Minute), "default", "10.0.0.2", "/rest/v1/b", 200),
		edge(fixtureNow.Add(-1*time.Minute), "default", "10.0.0.3", "/rest/v1/c", 200))
	out := decode(t, f.svc.RunSQL(context.Background(), "select t.id from `cloudflare.logs.prod` as t order by t.timestamp"))
	if len(out.Result) != 2 || out.Result[0]["id"] != "id-001" {
		t.Fatalf("ad-hoc: %v", out)
	}
	out = decode(t, f.svc.RunSQL(context.Background(), "select id from `no.such.source`"))
	if msg, _ := out.Error.(string); !strings.Contains(msg, "no.such.source") {
		t.Fatalf("unknown source: %v", out)
	}
}
