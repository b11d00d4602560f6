package httpapi

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// The events Vector ships in Supabase self-hosting, one per route, exactly
// as docs/compat/supabase.md §3.3 describes them (null values included).
var vectorEvents = map[string]string{
	"cloudflare.logs.prod": `[
{"appname":"supabase-kong","event_message":"172.18.0.1 - - [10/Jul/2025:12:00:05 +0000] \"POST /functions/v1/hello HTTP/1.1\" 200 44 \"-\" \"supabase-js-node/2.50.0\"","metadata":{"request":{"headers":{"cf_connecting_ip":"172.18.0.1","referer":null,"user_agent":"supabase-js-node/2.50.0"},"method":"POST","path":"/functions/v1/hello","protocol":"HTTP/1.1"},"response":{"status_code":200}},"project":"default","timestamp":"2025-07-10T12:00:05Z"},
{"appname":"supabase-kong","event_message":"2025/07/10 12:00:06 [error] 1288#0: *1470 connect() failed (111: Connection refused) while connecting to upstream, client: 172.18.0.1, server: kong, request: \"GET /rest/v1/todos?select=* HTTP/1.1\", upstream: \"http://172.18.0.7:3000/todos?select=*\", host: \"localhost:8000\"","metadata":{"request":{"headers":{"cf_connecting_ip":"172.18.0.1"},"host":"localhost:8000","method":"GET","path":"/rest/v1/todos?select=*","protocol":"HTTP/1.1"},"response":{"status_code":200}},"project":"default","severity":"error","timestamp":"2025-07-10T12:00:06Z"}]`,
	"gotrue.logs.prod":    `[{"appname":"supabase-auth","event_message":"{\"component\":\"api\",\"duration\":85734208,\"level\":\"info\",\"method\":\"POST\",\"msg\":\"request completed\",\"path\":\"/signup\",\"referer\":\"http://localhost:3000\",\"remote_addr\":\"172.18.0.1\",\"request_id\":\"9a3c1f0e-5a49-4b1c-9d8e-6d3f1f4c2b11\",\"status\":200,\"time\":\"2025-07-10T12:00:05Z\"}","metadata":{"component":"api","duration":85734208,"level":"info","method":"POST","msg":"request completed","path":"/signup","referer":"http://localhost:3000","remote_addr":"172.18.0.1","request_id":"9a3c1f0e-5a49-4b1c-9d8e-6d3f1f4c2b11","status":200,"time":"2025-07-10T12:00:05Z","timestamp":"2025-07-10T12:00:05Z"},"project":"default","timestamp":"2025-07-10T12:00:05.123456789Z"}]`,
	"postgREST.logs.prod": `[{"appname":"supabase-rest","event_message":"Config reloaded","metadata":{"host":"default"},"project":"default","timestamp":"2025-07-10T12:00:07Z"}]`,
	"realtime.logs.prod":  `[{"appname":"realtime-dev.supabase-realtime","event_message":"Billing metrics: [:realtime, :rate_counter, :channel, :events] project=realtime-dev external_id=realtime-dev","metadata":{"external_id":"default","level":"info","project":"default"},"timestamp":"2025-07-10T12:00:08.123921337Z"}]`,
	"deno-relay-logs":     `[{"appname":"supabase-edge-functions","event_message":"serving the request with /home/deno/functions/hello","metadata":{"project_ref":"default"},"timestamp":"2025-07-10T12:00:10.004211876Z"}]`,
	"storage.logs.prod.2": `[{"appname":"supabase-storage","event_message":"POST | 200 | 172.18.0.9 | 1b6c6a0e-8f0a-4e53-9e3b-4f8c6b1d3f20 | /bucket | node","metadata":{"context":[{"host":"5c1e3a9d2b7f","pid":1}],"level":"info","project":"default","tenantId":"default","timestamp":"2025-07-10T12:00:09.210Z"},"timestamp":"2025-07-10T12:00:09.211862011Z"}]`,
	"postgres.logs":       `[{"appname":"supabase-db","event_message":"2025-07-10 12:00:05.012 UTC [1234] LOG:  cron job 1 starting: SELECT auth.email()","metadata":{"host":"db-default","parsed":{"error_severity":"LOG","timestamp":"2025-07-10T12:00:05.013210487Z"}},"project":"default","timestamp":"2025-07-10T12:00:05.013210487Z"}]`,
}

// serverNow is the clock of the client tests: shortly after the events.
var serverNow = func() time.Time { return time.Date(2025, 7, 10, 12, 30, 0, 0, time.UTC) }

// TestVectorIngest sends what Vector's http sinks send
// (docs/compat/supabase.md §3.1): a JSON array POSTed to
// /api/logs?source_name=<source> with the public key in x-api-key, and
// reads every event back.
func TestVectorIngest(t *testing.T) {
	ts := startServer(t, serverConfig{opts: Options{Now: serverNow}})
	for name, body := range vectorEvents {
		ts.do("POST", "/api/logs?source_name="+name, []byte(body),
			"x-api-key", pubKey, "Content-Type", "application/json").expect(t, 200, `{"message":"Logged!"}`)
	}

	edge := ts.events("cloudflare.logs.prod")
	if len(edge) != 2 {
		t.Fatalf("%d edge events", len(edge))
	}
	access := edge[0]
	checks := map[string]any{
		"event_message":           `172.18.0.1 - - [10/Jul/2025:12:00:05 +0000] "POST /functions/v1/hello HTTP/1.1" 200 44 "-" "supabase-js-node/2.50.0"`,
		"timestamp":               micros(t, "2025-07-10T12:00:05Z"),
		"project":                 "default",
		"appname":                 "supabase-kong",
		"metadata.request.method": "POST",
		"metadata.request.path":   "/functions/v1/hello",
		"metadata.request.headers.cf_connecting_ip": "172.18.0.1",
		"metadata.request.headers.user_agent":       "supabase-js-node/2.50.0",
		"metadata.request.headers.referer":          nil, // null values are dropped
		"metadata.response.status_code":             float64(200),
	}
	for path, want := range checks {
		if got := at(access, path); got != want {
			t.Errorf("edge %s = %#v, want %#v", path, got, want)
		}
	}
	if id, _ := access["id"].(string); len(id) != 36 {
		t.Errorf("no generated uuid id: %q", id)
	}
	if at(edge[1], "severity") != "error" || at(edge[1], "metadata.request.host") != "localhost:8000" {
		t.Errorf("kong error line: %v", edge[1])
	}

	auth := ts.events("gotrue.logs.prod")[0]
	if auth["timestamp"] != float64(1752148805123456) || at(auth, "metadata.status") != float64(200) || at(auth, "metadata.msg") != "request completed" {
		t.Errorf("auth event: %v", auth)
	}
	if !strings.HasPrefix(auth["event_message"].(string), `{"component":"api"`) {
		t.Errorf("auth event_message must stay the raw JSON line: %v", auth["event_message"])
	}
	storage := ts.events("storage.logs.prod.2")[0]
	ctxs, _ := at(storage, "metadata.context").([]any)
	if len(ctxs) != 1 || ctxs[0].(map[string]any)["host"] != "5c1e3a9d2b7f" {
		t.Errorf("storage context array: %v", storage)
	}
	if storage["timestamp"] != float64(1752148809211862) {
		t.Errorf("storage ns timestamp: %v", storage["timestamp"])
	}
	rt := ts.events("realtime.logs.prod")[0]
	if _, has := rt["project"]; has || at(rt, "metadata.project") != "default" {
		t.Errorf("realtime event: %v", rt)
	}
	for name := range vectorEvents {
		if n := len(ts.events(name)); n == 0 {
			t.Errorf("%s: no events stored", name)
		}
	}
}

// TestVectorOlderConfigs covers the older Vector configurations: the key in
// the URL (?api_key=), and requests through Kong's /analytics/v1 prefix.
func TestVectorOlderConfigs(t *testing.T) {
	ts := startServer(t, serverConfig{opts: Options{Now: serverNow}})
	body := []byte(vectorEvents["postgres.logs"])
	ts.do("POST", "/api/logs?source_name=postgres.logs&api_key="+pubKey, body, "Content-Type", "application/json").expect(t, 200, `{"message":"Logged!"}`)
	ts.do("POST", "/analytics/v1/api/logs?source_name=postgres.logs", body, "x-api-key", pubKey, "Content-Type", "application/json").expect(t, 200, `{"message":"Logged!"}`)
	evs := ts.events("postgres.logs")
	if len(evs) != 2 || at(evs[0], "metadata.parsed.error_severity") != "LOG" {
		t.Fatalf("events: %v", evs)
	}
}

// TestHealthProbes: Studio's / docker's healthcheck (GET /health) and
// Logflare's e2e readiness probe (a POST per source until any 2xx).
func TestHealthProbes(t *testing.T) {
	ts := startServer(t, serverConfig{notReady: true, noSupabase: true})
	ts.do("GET", "/health", nil).expect(t, 503, `{"status":"coming_up"}`)
	ts.do("GET", "/ready", nil).expect(t, 503, `{"status":"not_ready"}`)
	probe := []byte(`{"event_message":"stack-readiness-probe"}`)
	// Before seeding the source does not exist: 401, as Logflare answers.
	ts.do("POST", "/api/logs?source_name=gotrue.logs.prod", probe, "x-api-key", pubKey, "content-type", "application/json").expect(t, 401, `{"error":"Unauthorized"}`)

	if _, err := ts.cat.SeedSupabase(); err != nil {
		t.Fatal(err)
	}
	ts.srv.SetReady()
	ts.do("GET", "/health", nil).expect(t, 200, `{"status":"ok"}`)
	ts.do("GET", "/ready", nil).expect(t, 200, `{"status":"ok"}`)
	for _, name := range []string{"cloudflare.logs.prod", "postgres.logs", "deno-relay-logs", "deno-subhosting-events",
		"gotrue.logs.prod", "realtime.logs.prod", "storage.logs.prod.2", "postgREST.logs.prod", "pgbouncer.logs.prod"} {
		ts.do("POST", "/api/logs?source_name="+name, probe, "x-api-key", pubKey, "content-type", "application/json").expect(t, 200, `{"message":"Logged!"}`)
		if evs := ts.events(name); len(evs) != 1 || evs[0]["event_message"] != "stack-readiness-probe" {
			t.Fatalf("%s: %v", name, evs)
		}
	}
}

// TestHerokuLogDrain sends a logplex batch as Heroku's log drain does:
// Content-Type application/logplex-1, octet-counted syslog lines, the
// source as ?source=<uuid>, the key as ?api_key=.
func TestHerokuLogDrain(t *testing.T) {
	ts := startServer(t, serverConfig{opts: Options{Now: serverNow}})
	src := ts.source("pgbouncer.logs.prod")
	lines := []string{
		"182 <190>1 2020-08-09T13:30:36.316601+00:00 host phx-limit phx-limit-5885669966-287kp - \x1b[36mweb.1  | \x1b[0m13:30:36.314 request_id=FiqqLs [info] Sent 200 in 1ms",
		"83 <40>1 2020-08-09T13:30:37.000000+00:00 host app web.1 - State changed from starting to up",
		"garbage line that is not syslog",
	}
	ts.do("POST", "/logs/logplex?source="+src.Token+"&api_key="+pubKey, []byte(strings.Join(lines, "\n")+"\n"),
		"Content-Type", "application/logplex-1", "Logplex-Msg-Count", "3").expect(t, 200, `{"message":"Logged!"}`)
	evs := ts.events("pgbouncer.logs.prod")
	if len(evs) != 2 {
		t.Fatalf("%d events, want 2 (the garbage line is skipped): %v", len(evs), evs)
	}
	first := evs[0]
	want := map[string]any{
		"event_message":       "web.1  | 13:30:36.314 request_id=FiqqLs [info] Sent 200 in 1ms",
		"timestamp":           micros(t, "2020-08-09T13:30:36.316601Z"),
		"metadata.appname":    "phx-limit",
		"metadata.process_id": "phx-limit-5885669966-287kp",
		"metadata.facility":   "local7",
		"metadata.severity":   "info",
		"metadata.priority":   float64(190),
	}
	for path, w := range want {
		if got := at(first, path); got != w {
			t.Errorf("%s = %#v, want %#v", path, got, w)
		}
	}
	if n := ts.srv.Stats().Dropped(DropUnparseableLine); n != 1 {
		t.Errorf("skipped lines %d", n)
	}
}

// TestCloudflareLogpush sends what Cloudflare Logpush sends: gzip NDJSON
// with "text/plain; charset=utf-8", the key in ?header_X_API_KEY=.
func TestCloudflareLogpush(t *testing.T) {
	ts := startServer(t, serverConfig{opts: Options{Now: serverNow}})
	src := ts.source("cloudflare.logs.prod")
	ndjson := `{"ClientIP":"203.0.113.9","ClientRequestHost":"example.com","ClientRequestMethod":"GET","ClientRequestURI":"/a","EdgeResponseStatus":200,"EdgeStartTimestamp":1752148805000000000,"RayID":"8a1b2c3d4e5f6a7b"}
{"ClientIP":"203.0.113.10","ClientRequestHost":"example.com","ClientRequestMethod":"POST","ClientRequestURI":"/b","EdgeResponseStatus":502,"EdgeStartTimestamp":1752148806000000000,"RayID":"8a1b2c3d4e5f6a7c"}
not json
`
	ts.do("POST", "/logs/cloudflare?source="+src.Token+"&header_X_API_KEY="+pubKey, gzipped(t, []byte(ndjson)),
		"Content-Type", "text/plain; charset=utf-8", "Content-Encoding", "gzip").expect(t, 200, `{"message":"Logged!"}`)
	evs := ts.events("cloudflare.logs.prod")
	if len(evs) != 2 {
		t.Fatalf("%d events: %v", len(evs), evs)
	}
	if evs[0]["timestamp"] != float64(1752148805000000) || at(evs[0], "metadata.RayID") != "8a1b2c3d4e5f6a7b" ||
		at(evs[1], "metadata.EdgeResponseStatus") != float64(502) || !strings.HasPrefix(evs[0]["event_message"].(string), `{"ClientIP":"203.0.113.9"`) {
		t.Fatalf("events: %v", evs)
	}
}

// TestGithubWebhook sends a GitHub webhook payload to /logs/github: the
// message names repository, sender and action; every *_url key is gone.
func TestGithubWebhook(t *testing.T) {
	ts := startServer(t, serverConfig{opts: Options{Now: serverNow}})
	src := ts.source("deno-subhosting-events")
	payload := `{"action":"opened","issue":{"number":7,"html_url":"https://github.com/o/r/issues/7","user":{"login":"alice","avatar_url":"https://a","site_admin":false}},
"repository":{"full_name":"o/r","url":"https://api.github.com/repos/o/r","hooks_url":"https://h"},"sender":{"login":"alice","followers_url":"https://f"}}`
	ts.do("POST", "/logs/github?source="+src.Token, []byte(payload), "Content-Type", "application/json",
		"X-GitHub-Event", "issues", "X-API-KEY", pubKey).expect(t, 200, `{"message":"Logged!"}`)
	evs := ts.events("deno-subhosting-events")
	if len(evs) != 1 {
		t.Fatalf("%v", evs)
	}
	ev := evs[0]
	if ev["event_message"] != "o/r | alice | opened" || at(ev, "metadata.issue.number") != float64(7) ||
		at(ev, "metadata.repository.url") != "https://api.github.com/repos/o/r" {
		t.Fatalf("event %v", ev)
	}
	for _, gone := range []string{"metadata.issue.html_url", "metadata.issue.user.avatar_url", "metadata.repository.hooks_url", "metadata.sender.followers_url"} {
		if at(ev, gone) != nil {
			t.Errorf("%s kept", gone)
		}
	}
}

// TestPinoLogflareRequests replays the requests of logflare-transport-core
// (docs/compat/supabase.md §6): the current client ({"batch":[...]} with
// ?source=), the older one (source in the body), and the browser form.
func TestPinoLogflareRequests(t *testing.T) {
	ts := startServer(t, serverConfig{opts: Options{Now: serverNow}})
	src := ts.source("deno-relay-logs")
	current := `{"batch":[{"message":"hello from pino","timestamp":1752148805123,"metadata":{"level":"info","context":{"host":"h1","pid":42},"user":"u1"}}]}`
	ts.do("POST", "/logs?source="+src.Token, []byte(current), "Accept", "application/json, text/plain, */*",
		"Content-Type", "application/json", "X-API-Key", pubKey).expect(t, 200, `{"message":"Logged!"}`)
	older := fmt.Sprintf(`{"batch":[{"message":"older transport","timestamp":1752148806000,"metadata":{"level":"error"}}],"source":%q}`, src.Token)
	ts.do("POST", "/logs", []byte(older), "Content-Type", "application/json", "X-API-KEY", pubKey).expect(t, 200, `{"message":"Logged!"}`)
	browser := `{"log_entry":"clicked button","timestamp":1752148807000,"metadata":{"url":"https://app","level":"info","browser":true}}`
	ts.do("POST", "/logs/?api_key="+pubKey+"&source="+src.Token, []byte(browser), "Content-Type", "application/json").expect(t, 200, `{"message":"Logged!"}`)

	evs := ts.events("deno-relay-logs")
	if len(evs) != 3 {
		t.Fatalf("%d events: %v", len(evs), evs)
	}
	byMsg := map[string]map[string]any{}
	for _, e := range evs {
		byMsg[e["event_message"].(string)] = e
	}
	p := byMsg["hello from pino"]
	if p == nil || p["timestamp"] != float64(1752148805123000) || at(p, "metadata.context.pid") != float64(42) || at(p, "metadata.level") != "info" {
		t.Fatalf("pino event: %v", evs)
	}
	if o := byMsg["older transport"]; o == nil || o["timestamp"] != float64(1752148806000000) {
		t.Fatalf("older transport event: %v", evs)
	}
	// A single object loses its timestamp (Logflare stamps it on arrival);
	// log_entry is the legacy message.
	if b := byMsg["clicked button"]; b == nil || b["timestamp"] != float64(serverNow().UnixMicro()) || at(b, "metadata.browser") != true {
		t.Fatalf("browser event: %v", evs)
	}
}

// TestEdgeWorkerForm sends the Logflare Cloudflare worker's body: source
// and log_entry in the body, no query parameters.
func TestEdgeWorkerForm(t *testing.T) {
	ts := startServer(t, serverConfig{opts: Options{Now: serverNow}})
	src := ts.source("cloudflare.logs.prod")
	body := fmt.Sprintf(`{"source":%q,"log_entry":"GET | 200 | 1.2.3.4 | ray | https://x/y | ua","metadata":{"request":{"url":"https://x/y","method":"GET","headers":{"cf-connecting-ip":"1.2.3.4"}},"response":{"status_code":200,"origin_time":12},"logflare_worker":{"worker_id":"w1"}}}`, src.Token)
	ts.do("POST", "/api/logs", []byte(body), "Content-Type", "application/json", "X-API-KEY", pubKey).expect(t, 200, `{"message":"Logged!"}`)
	evs := ts.events("cloudflare.logs.prod")
	if len(evs) != 1 || evs[0]["event_message"] != "GET | 200 | 1.2.3.4 | ray | https://x/y | ua" ||
		at(evs[0], "metadata.request.headers._cf_connecting_ip") != "1.2.3.4" || evs[0]["source"] != src.Token {
		t.Fatalf("events: %v", evs)
	}
}
