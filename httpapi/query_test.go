package httpapi

import (
	"net/url"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/sediment/sediment/catalog"
)

const logsAllResult = `{"result":[{"endpoint":"logs.all"}]}`

// TestEndpointQueryAuth covers resolution and access
// (docs/compat/logflare.md §6.1, §6.2): by UUID for anyone, by name only
// when authenticated; public tokens may not query; every failure is 401.
func TestEndpointQueryAuth(t *testing.T) {
	ts := startServer(t, serverConfig{})
	logsAll := ts.cat.EndpointByName("logs.all")
	open, err := ts.cat.CreateEndpoint(catalog.EndpointParams{Name: ptr("open"), Query: ptr("select 1 as a"), EnableAuth: ptr(false)})
	if err != nil {
		t.Fatal(err)
	}
	scoped, err := ts.cat.CreateAccessToken("scoped-query", []string{"query:endpoint:" + strconv.FormatInt(logsAll.ID, 10)}, "test", "")
	if err != nil || scoped == nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, path string
		headers    []string
		status     int
		body       string
	}{
		{"private by name", "/api/endpoints/query/logs.all", withKey(privKey), 200, logsAllResult},
		{"private by token", "/api/endpoints/query/" + logsAll.Token, withKey(privKey), 200, logsAllResult},
		{"private upper-case token", "/api/endpoints/query/" + strings.ToUpper(logsAll.Token), withKey(privKey), 200, logsAllResult},
		{"query scope", "/api/endpoints/query/logs.all", withKey(queryKey), 200, logsAllResult},
		{"endpoint scope", "/api/endpoints/query/logs.all", withKey("scoped-query"), 200, logsAllResult},
		{"bearer", "/api/endpoints/query/logs.all", []string{"Authorization", "Bearer " + privKey}, 200, logsAllResult},
		{"api_key param", "/api/endpoints/query/logs.all?api_key=" + privKey, nil, 200, logsAllResult},
		{"legacy route", "/endpoints/query/logs.all", withKey(privKey), 200, logsAllResult},
		{"name route", "/api/endpoints/query/name/logs.all", withKey(privKey), 200, logsAllResult},
		{"through gateway", "/analytics/v1/api/endpoints/query/logs.all", withKey(privKey), 200, logsAllResult},
		{"public token", "/api/endpoints/query/logs.all", withKey(pubKey), 401, unauthorized},
		{"public token by uuid", "/api/endpoints/query/" + logsAll.Token, withKey(pubKey), 401, unauthorized},
		{"no key", "/api/endpoints/query/logs.all", nil, 401, unauthorized},
		{"no key by uuid", "/api/endpoints/query/" + logsAll.Token, nil, 401, unauthorized},
		{"wrong key", "/api/endpoints/query/logs.all", withKey("nope"), 401, unauthorized},
		{"other endpoint's scope", "/api/endpoints/query/usage.api-counts", withKey("scoped-query"), 401, unauthorized},
		{"unknown name", "/api/endpoints/query/nope", withKey(privKey), 401, unauthorized},
		{"unknown uuid", "/api/endpoints/query/00000000-0000-4000-8000-000000000000", withKey(privKey), 401, unauthorized},
		{"ingest-only token", "/api/endpoints/query/logs.all", withKey(ingestKey2), 401, unauthorized},
		{"enable_auth false by uuid, no key", "/api/endpoints/query/" + open.Token, nil, 200, `{"result":[{"endpoint":"open"}]}`},
		{"enable_auth false by name needs a key", "/api/endpoints/query/open", nil, 401, unauthorized},
		{"enable_auth false by name, public key", "/api/endpoints/query/open", withKey(pubKey), 200, `{"result":[{"endpoint":"open"}]}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			n := ts.runner.count()
			r := ts.do("GET", tc.path, nil, tc.headers...)
			r.expect(t, tc.status, tc.body)
			if called := ts.runner.count() > n; called != (tc.status == 200) {
				t.Fatalf("runner called: %v", called)
			}
		})
	}
	// POST works on the main route.
	ts.do("POST", "/api/endpoints/query/logs.all", []byte(`{}`), withKey(privKey, jsonCT...)...).expect(t, 200, logsAllResult)
}

// TestEndpointQueryParams checks what the runner receives: path param,
// query string, JSON bodies (values as text), the PII header.
func TestEndpointQueryParams(t *testing.T) {
	ts := startServer(t, serverConfig{})
	notSandboxed, err := ts.cat.CreateEndpoint(catalog.EndpointParams{Name: ptr("plain"), Query: ptr("select @a as a")})
	if err != nil {
		t.Fatal(err)
	}
	// Studio's request: everything form-encoded in the query string,
	// empty strings kept.
	studio := url.Values{}
	studio.Set("project", "default")
	studio.Set("iso_timestamp_start", "2025-07-10T11:00:00.000Z")
	studio.Set("iso_timestamp_end", "")
	studio.Set("sql", "select count(*) as c from edge_logs where regexp_contains(event_message, 'error')")
	ts.do("GET", "/api/endpoints/query/logs.all?"+studio.Encode(), nil, withKey(privKey, "Content-Type", "application/json", "Accept", "application/json")...).expect(t, 200, logsAllResult)
	call := ts.runner.last(t)
	want := map[string]string{
		"token_or_name": "logs.all", "project": "default", "iso_timestamp_start": "2025-07-10T11:00:00.000Z",
		"iso_timestamp_end": "", "sql": "select count(*) as c from edge_logs where regexp_contains(event_message, 'error')",
	}
	if call.endpoint.Name != "logs.all" || !reflect.DeepEqual(call.params, want) || call.redact {
		t.Fatalf("studio call: %+v", call)
	}

	cases := []struct {
		name    string
		method  string
		path    string
		body    string
		headers []string
		status  int
		params  map[string]string
		redact  bool
	}{
		{"post json body wins over query, values as text", "POST", "/api/endpoints/query/logs.all?project=q&x=1",
			`{"project":"b","n":1.50,"big":12345678901234567890,"t":true,"f":false,"nil":null,"obj":{"k":[1,"a"]}}`, jsonCT, 200,
			map[string]string{"token_or_name": "logs.all", "project": "b", "x": "1", "n": "1.50", "big": "12345678901234567890",
				"t": "true", "f": "false", "obj": `{"k":[1,"a"]}`}, false},
		{"post form body", "POST", "/api/endpoints/query/logs.all", "sql=select+1&project=p",
			[]string{"Content-Type", "application/x-www-form-urlencoded"}, 200,
			map[string]string{"token_or_name": "logs.all", "sql": "select 1", "project": "p"}, false},
		{"post malformed json", "POST", "/api/endpoints/query/logs.all", `{"sql":`, jsonCT, 400, nil, false},
		{"post array body", "POST", "/api/endpoints/query/logs.all", `[1]`, jsonCT, 400, nil, false},
		{"get body on sandboxable endpoint", "GET", "/api/endpoints/query/logs.all?project=default", `{"sql":"select id from edge_logs","iso_timestamp_start":"x"}`, jsonCT, 200,
			map[string]string{"token_or_name": "logs.all", "project": "default", "sql": "select id from edge_logs", "iso_timestamp_start": "x"}, false},
		{"get body ignored when sql in query", "GET", "/api/endpoints/query/logs.all?sql=select+1", `{"sql":"select 2","other":"y"}`, jsonCT, 200,
			map[string]string{"token_or_name": "logs.all", "sql": "select 1"}, false},
		{"get body ignored when lql in query", "GET", "/api/endpoints/query/logs.all?lql=error", `{"sql":"select 2"}`, jsonCT, 200,
			map[string]string{"token_or_name": "logs.all", "lql": "error"}, false},
		{"get body ignored on non-sandboxable", "GET", "/api/endpoints/query/plain?a=1", `{"a":"2"}`, jsonCT, 200,
			map[string]string{"token_or_name": "plain", "a": "1"}, false},
		{"get invalid body ignored", "GET", "/api/endpoints/query/logs.all?project=p", `{oops`, jsonCT, 200,
			map[string]string{"token_or_name": "logs.all", "project": "p"}, false},
		{"name route param", "GET", "/api/endpoints/query/name/logs.all?project=p", "", nil, 200,
			map[string]string{"name": "logs.all", "project": "p"}, false},
		{"api key in the query string is not a parameter", "GET", "/api/endpoints/query/logs.all?api_key=" + privKey + "&project=p", "", nil, 200,
			map[string]string{"token_or_name": "logs.all", "project": "p"}, false},
		{"redact header true", "GET", "/api/endpoints/query/logs.all", "", []string{redactHeader, "TRUE"}, 200,
			map[string]string{"token_or_name": "logs.all"}, true},
		{"redact header other value", "GET", "/api/endpoints/query/logs.all", "", []string{redactHeader, "yes"}, 200,
			map[string]string{"token_or_name": "logs.all"}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			n := ts.runner.count()
			var body []byte
			if tc.body != "" {
				body = []byte(tc.body)
			}
			r := ts.do(tc.method, tc.path, body, withKey(privKey, tc.headers...)...)
			r.expect(t, tc.status, "")
			if tc.status != 200 {
				if ts.runner.count() != n {
					t.Fatal("runner called on a bad request")
				}
				return
			}
			call := ts.runner.last(t)
			if !reflect.DeepEqual(call.params, tc.params) || call.redact != tc.redact {
				t.Fatalf("params %v redact %v, want %v %v", call.params, call.redact, tc.params, tc.redact)
			}
		})
	}

	// The endpoint's redact_pii is the default; the header overrides it.
	if _, err := ts.cat.UpdateEndpoint(notSandboxed.Token, catalog.EndpointParams{RedactPII: ptr(true)}); err != nil {
		t.Fatal(err)
	}
	ts.do("GET", "/api/endpoints/query/plain", nil, withKey(privKey)...).expect(t, 200, "")
	if !ts.runner.last(t).redact {
		t.Fatal("endpoint redact_pii not applied")
	}
	ts.do("GET", "/api/endpoints/query/plain", nil, withKey(privKey, redactHeader, "false")...).expect(t, 200, "")
	if ts.runner.last(t).redact {
		t.Fatal("header did not override redact_pii")
	}
}

func TestAdHocSQL(t *testing.T) {
	ts := startServer(t, serverConfig{})
	ts.do("GET", "/api/query?sql=select+1", nil, withKey(privKey)...).expect(t, 200, `{"result":[{"sql":true}]}`)
	if ts.runner.last(t).sql != "select 1" {
		t.Fatal("sql not passed")
	}
	ts.do("GET", "/api/query?bq_sql=select+2", nil, withKey(privKey)...).expect(t, 200, "")
	if ts.runner.last(t).sql != "select 2" {
		t.Fatal("bq_sql not passed")
	}
	ts.do("GET", "/api/query", nil, withKey(privKey)...).expect(t, 400,
		`{"error":"No query params provided. Supported query params are sql=, bq_sql=, ch_sql=, and pg_sql="}`)
	ts.do("GET", "/api/query?sql=", nil, withKey(privKey)...).expect(t, 400, "")
	ts.do("GET", "/api/query?sql=select+1", nil, withKey(pubKey)...).expect(t, 401, unauthorized)
	ts.do("GET", "/api/query?sql=select+1", nil, withKey(queryKey)...).expect(t, 401, unauthorized)
}

// TestQueryWithoutRunner: the query routes answer 503 until a runner is
// set; auth is still checked first.
func TestQueryWithoutRunner(t *testing.T) {
	ts := startServer(t, serverConfig{noRunner: true})
	ts.do("GET", "/api/endpoints/query/logs.all", nil, withKey(privKey)...).expect(t, 503, `{"error":"Query execution is not available on this server"}`)
	ts.do("GET", "/api/query?sql=select+1", nil, withKey(privKey)...).expect(t, 503, "")
	ts.do("GET", "/api/endpoints/query/logs.all", nil, withKey(pubKey)...).expect(t, 401, unauthorized)
	r := &fakeRunner{}
	ts.srv.SetRunner(r)
	ts.do("GET", "/api/endpoints/query/logs.all", nil, withKey(privKey)...).expect(t, 200, logsAllResult)
	if r.count() != 1 {
		t.Fatal("runner set later not used")
	}
}

func ptr[T any](v T) *T { return &v }
