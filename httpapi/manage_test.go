package httpapi

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	json "github.com/goccy/go-json"

	"github.com/sediment/sediment/engine"
)

func decodeJSON[T any](t *testing.T, s string) T {
	t.Helper()
	var v T
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatalf("decode %q: %v", s, err)
	}
	return v
}

func TestSourcesAPI(t *testing.T) {
	// The engine shares the server's clock: a source's retention hides
	// events by their time on the engine's clock.
	ts := startServer(t, serverConfig{noSupabase: true, opts: Options{Now: serverNow}, engine: engine.Options{Now: serverNow}})
	auth := withKey(privKey, jsonCT...)

	// Only the private token may manage.
	for _, key := range []string{"", pubKey, queryKey, "wrong"} {
		ts.do("GET", "/api/sources", nil, withKey(key)...).expect(t, 401, unauthorized)
		ts.do("POST", "/api/sources", []byte(`{"name":"x"}`), withKey(key, jsonCT...)...).expect(t, 401, unauthorized)
	}
	ts.do("GET", "/api/sources", nil, auth...).expect(t, 200, `[]`)

	r := ts.do("POST", "/api/sources", []byte(`{"name":"app.logs","description":"mine","retention_days":7}`), auth...)
	r.expect(t, 201, "")
	created := decodeJSON[map[string]any](t, r.body)
	tok, _ := created["token"].(string)
	if created["name"] != "app.logs" || created["description"] != "mine" || created["retention_days"] != float64(7) ||
		created["bigquery_table_ttl"] != float64(7) || created["id"] != float64(1) || len(tok) != 36 || created["drop_lql_string"] != nil {
		t.Fatalf("created %v", created)
	}
	// The single-source view adds the drop counts (none yet).
	ts.do("GET", "/api/sources/"+tok, nil, auth...).expect(t, 200, strings.TrimSuffix(r.body, "}")+`,"dropped_events":{},"rejected_requests":{},"effective_retention_days":7,"deleted_events":{},"deleted_bytes":{}}`)
	list := decodeJSON[[]map[string]any](t, ts.do("GET", "/api/sources", nil, auth...).body)
	if len(list) != 1 || list[0]["token"] != tok {
		t.Fatalf("list %v", list)
	}

	// Validation errors are 422 with Logflare's shape.
	ts.do("POST", "/api/sources", []byte(`{}`), auth...).expect(t, 422, `{"errors":{"name":["can't be blank"]}}`)
	ts.do("POST", "/api/sources", []byte(`{"name":"x","retention_days":"many"}`), auth...).expect(t, 422, `{"errors":{"retention_days":["is invalid"]}}`)
	ts.do("POST", "/api/sources", []byte(`{"name":`), auth...).expect(t, 400, "")
	r = ts.do("PUT", "/api/sources/"+tok, []byte(`{"drop_lql_string":"m.status:>"}`), auth...)
	if r.status != 422 || !strings.Contains(r.body, `"drop_lql_string":[`) {
		t.Fatalf("bad lql: %d %s", r.status, r.body)
	}

	// PUT answers 200 with the source, PATCH 204.
	r = ts.do("PUT", "/api/sources/"+tok, []byte(`{"name":"app2","bigquery_table_ttl":3}`), auth...)
	r.expect(t, 200, "")
	if u := decodeJSON[map[string]any](t, r.body); u["name"] != "app2" || u["retention_days"] != float64(3) || u["description"] != "mine" {
		t.Fatalf("updated %v", u)
	}
	ts.do("PATCH", "/api/sources/"+tok, []byte(`{"drop_lql_string":"m.level:debug"}`), auth...).expect(t, 204, "")

	// The sort key is shown, validated, and given to the source's shard.
	if created["sort_key"] != nil {
		t.Fatalf("a new source's sort key %v", created["sort_key"])
	}
	r = ts.do("PUT", "/api/sources/"+tok, []byte(`{"sort_key":"timestamp"}`), auth...)
	if r.status != 422 || !strings.Contains(r.body, `"sort_key":[`) {
		t.Fatalf("bad sort key: %d %s", r.status, r.body)
	}
	r = ts.do("PUT", "/api/sources/"+tok, []byte(`{"sort_key":"metadata.project"}`), auth...)
	if u := decodeJSON[map[string]any](t, r.body); r.status != 200 || u["sort_key"] != "metadata.project" {
		t.Fatalf("sort key set: %d %s", r.status, r.body)
	}
	if sh, _ := ts.eng.Shard(tok); sh.SortKey() != "metadata.project" {
		t.Fatalf("the shard's sort key is %q", sh.SortKey())
	}
	if s := ts.cat.SourceByToken(tok); s.DropLQL != "m.level:debug" || s.Name != "app2" {
		t.Fatalf("after patch %+v", s)
	}
	// The drop rule applies to ingest at once.
	ts.do("POST", "/api/logs?source_name=app2", []byte(`[{"message":"keep","metadata":{"level":"info"}},{"message":"drop","metadata":{"level":"debug"}}]`),
		withKey(pubKey, jsonCT...)...).expect(t, 200, logged)
	if evs := ts.events("app2"); len(evs) != 1 || evs[0]["event_message"] != "keep" {
		t.Fatalf("drop rule not applied: %v", evs)
	}

	// Unknown tokens are 404.
	for _, m := range []string{"GET", "PUT", "PATCH", "DELETE"} {
		ts.do(m, "/api/sources/00000000-0000-4000-8000-000000000000", []byte(`{}`), auth...).expect(t, 404, `{"error":"Not Found"}`)
		ts.do(m, "/api/sources/not-a-uuid", []byte(`{}`), auth...).expect(t, 404, `{"error":"Not Found"}`)
	}

	// DELETE is 204 and drops the events; a new source with the same name
	// starts empty.
	ts.do("DELETE", "/api/sources/"+tok, nil, auth...).expect(t, 204, "")
	ts.do("GET", "/api/sources/"+tok, nil, auth...).expect(t, 404, "")
	ts.do("POST", "/api/logs?source_name=app2", []byte(`{"message":"x"}`), withKey(pubKey, jsonCT...)...).expect(t, 401, unauthorized)
	r = ts.do("POST", "/api/sources", []byte(`{"name":"app2"}`), auth...)
	r.expect(t, 201, "")
	if n := len(ts.events("app2")); n != 0 {
		t.Fatalf("re-created source has %d old events", n)
	}
}

func TestSourceSchemaAndRecent(t *testing.T) {
	ts := startServer(t, serverConfig{opts: Options{Now: serverNow}})
	auth := withKey(privKey)
	src := ts.source("storage.logs.prod.2")
	ts.do("POST", "/api/logs?source_name=storage.logs.prod.2", []byte(vectorEvents["storage.logs.prod.2"]), withKey(pubKey, jsonCT...)...).expect(t, 200, logged)

	dot := decodeJSON[map[string]string](t, ts.do("GET", "/api/sources/"+src.Token+"/schema?variant=dot", nil, auth...).body)
	want := map[string]string{
		"timestamp": "datetime", "id": "string", "event_message": "string", "appname": "string",
		"metadata": "map", "metadata.level": "string", "metadata.project": "string", "metadata.tenantId": "string",
		"metadata.timestamp": "string", "metadata.context": "list(map)", "metadata.context.host": "string", "metadata.context.pid": "integer",
	}
	for k, v := range want {
		if dot[k] != v {
			t.Errorf("dot schema %s = %q, want %q (all: %v)", k, dot[k], v, dot)
		}
	}
	schema := decodeJSON[map[string]any](t, ts.do("GET", "/api/sources/"+src.Token+"/schema", nil, auth...).body)
	if at(schema, "properties.metadata.type") != "object" || at(schema, "properties.metadata.properties.level.type") != "string" ||
		at(schema, "properties.metadata.properties.context.type") != "array" ||
		at(schema, "properties.metadata.properties.context.items.properties.pid.type") != "integer" {
		t.Fatalf("json schema %v", schema)
	}
	ts.do("GET", "/api/sources/"+src.Token+"/schema", nil, withKey(pubKey)...).expect(t, 401, unauthorized)

	// /recent: newest first, at most 100.
	var batch strings.Builder
	batch.WriteByte('[')
	for i := range 150 {
		if i > 0 {
			batch.WriteByte(',')
		}
		fmt.Fprintf(&batch, `{"message":"m%d","timestamp":%d}`, i, 1752148800000000+int64(i))
	}
	batch.WriteByte(']')
	ts.do("POST", "/api/logs?source_name=postgres.logs", []byte(batch.String()), withKey(pubKey, jsonCT...)...).expect(t, 200, logged)
	recent := decodeJSON[[]map[string]any](t, ts.do("GET", "/api/sources/"+ts.source("postgres.logs").Token+"/recent", nil, auth...).body)
	if len(recent) != 100 || recent[0]["event_message"] != "m149" || recent[99]["event_message"] != "m50" {
		t.Fatalf("recent: %d events, first %v", len(recent), recent[0])
	}
	ts.do("GET", "/api/sources/"+ts.source("pgbouncer.logs.prod").Token+"/recent", nil, auth...).expect(t, 200, `[]`)
}

func TestEndpointsAPI(t *testing.T) {
	ts := startServer(t, serverConfig{noSupabase: true})
	ts.cat.SetSQLValidator(func(q string) error {
		if strings.Contains(q, "*") {
			return errors.New("restricted wildcard (*) in a result column")
		}
		return nil
	})
	auth := withKey(privKey, jsonCT...)
	ts.do("GET", "/api/endpoints", nil, withKey(pubKey)...).expect(t, 401, unauthorized)
	ts.do("GET", "/api/endpoints", nil, auth...).expect(t, 200, `[]`)

	r := ts.do("POST", "/api/endpoints", []byte(`{"name":"errors","query":"select id from t where x = @x"}`), auth...)
	r.expect(t, 201, "")
	ep := decodeJSON[map[string]any](t, r.body)
	tok, _ := ep["token"].(string)
	defaults := map[string]any{
		"language": "bq_sql", "cache_duration_seconds": float64(3600), "proactive_requerying_seconds": float64(1800),
		"max_limit": float64(1000), "enable_auth": true, "redact_pii": false, "sandboxable": false,
		"enable_dynamic_reservation": false, "labels": nil, "backend_id": nil, "description": nil,
	}
	for k, v := range defaults {
		if ep[k] != v {
			t.Errorf("default %s = %v, want %v", k, ep[k], v)
		}
	}
	if m, ok := ep["source_mapping"].(map[string]any); !ok || len(m) != 0 {
		t.Errorf("source_mapping %v", ep["source_mapping"])
	}
	ts.do("GET", "/api/endpoints/"+tok, nil, auth...).expect(t, 200, r.body)

	ts.do("POST", "/api/endpoints", []byte(`{"name":"bad","query":"select * from t"}`), auth...).
		expect(t, 422, `{"errors":{"query":["restricted wildcard (*) in a result column"]}}`)
	ts.do("POST", "/api/endpoints", []byte(`{"name":"errors","query":"select 1 as a"}`), auth...).
		expect(t, 422, `{"errors":{"name":["has already been taken"]}}`)
	ts.do("POST", "/api/endpoints", []byte(`{"name":"lim","query":"select 1 as a","max_limit":10001}`), auth...).
		expect(t, 422, `{"errors":{"max_limit":["must be less than or equal to 10000"]}}`)
	ts.do("POST", "/api/endpoints", []byte(`{"name":"lim","query":"select 1 as a","cache_duration_seconds":-1}`), auth...).
		expect(t, 422, `{"errors":{"cache_duration_seconds":["must be greater than or equal to 0"]}}`)
	ts.do("POST", "/api/endpoints", []byte(`{"name":"lim","query":"select 1 as a","sandboxable":"yes"}`), auth...).
		expect(t, 422, `{"errors":{"sandboxable":["is invalid"]}}`)

	r = ts.do("PUT", "/api/endpoints/"+tok, []byte(`{"sandboxable":true,"max_limit":5,"labels":"a=b","redact_pii":true}`), auth...)
	r.expect(t, 200, "")
	if u := decodeJSON[map[string]any](t, r.body); u["sandboxable"] != true || u["max_limit"] != float64(5) || u["labels"] != "a=b" || u["redact_pii"] != true {
		t.Fatalf("updated %v", u)
	}
	ts.do("PATCH", "/api/endpoints/"+tok, []byte(`{"enable_auth":false}`), auth...).expect(t, 204, "")
	if ts.cat.EndpointByToken(tok).EnableAuth {
		t.Fatal("patch not applied")
	}
	ts.do("PATCH", "/api/endpoints/"+tok, []byte(`{"query":"select * from t"}`), auth...).expect(t, 422, "")
	ts.do("DELETE", "/api/endpoints/"+tok, nil, auth...).expect(t, 204, "")
	ts.do("DELETE", "/api/endpoints/"+tok, nil, auth...).expect(t, 404, `{"error":"Not Found"}`)
	ts.do("GET", "/api/endpoints/"+tok, nil, auth...).expect(t, 404, `{"error":"Not Found"}`)
}

// TestSourceIngestRules: custom_event_message_keys rebuilds event_message;
// retention_days reaches the shard (old segments are dropped).
func TestSourceIngestRules(t *testing.T) {
	ts := startServer(t, serverConfig{opts: Options{Now: serverNow}})
	auth := withKey(privKey, jsonCT...)
	src := ts.source("cloudflare.logs.prod")
	ts.do("PATCH", "/api/sources/"+src.Token, []byte(`{"custom_event_message_keys":"m.request.method, m.response.status_code,project, m.missing"}`), auth...).expect(t, 204, "")
	ts.do("POST", "/api/logs?source_name=cloudflare.logs.prod", []byte(vectorEvents["cloudflare.logs.prod"]), withKey(pubKey, jsonCT...)...).expect(t, 200, logged)
	evs := ts.events("cloudflare.logs.prod")
	if len(evs) != 2 || evs[0]["event_message"] != "POST | 200 | default | " || evs[1]["event_message"] != "GET | 200 | default | " {
		t.Fatalf("custom messages: %v / %v", evs[0]["event_message"], evs[1]["event_message"])
	}

	sh, err := ts.eng.Shard(src.Token)
	if err != nil {
		t.Fatal(err)
	}
	if err := sh.Flush(); err != nil {
		t.Fatal(err)
	}
	if n, err := sh.ApplyRetention(); err != nil || n != 0 {
		t.Fatalf("retention without a limit dropped %d (%v)", n, err)
	}
	// The events are from July 2025, long before the engine's clock: a
	// one-day retention drops their segment.
	ts.do("PATCH", "/api/sources/"+src.Token, []byte(`{"retention_days":1}`), auth...).expect(t, 204, "")
	if n, err := sh.ApplyRetention(); err != nil || n != 1 {
		t.Fatalf("retention dropped %d segments (%v), want 1", n, err)
	}
	if n := len(ts.events("cloudflare.logs.prod")); n != 0 {
		t.Fatalf("%d events left after retention", n)
	}
}

// TestSourceSortKeyAtStart: the server gives every source's shard its
// sort key from the catalog when it starts (the seeded edge logs are
// ordered by project, the other sources by time).
func TestSourceSortKeyAtStart(t *testing.T) {
	ts := startServer(t, serverConfig{})
	for _, src := range ts.cat.Sources() {
		sh, err := ts.eng.Shard(src.Token)
		if err != nil {
			t.Fatal(err)
		}
		want := ""
		if src.Name == "cloudflare.logs.prod" {
			want = "project"
		}
		if sh.SortKey() != want {
			t.Fatalf("source %s: shard sort key %q, want %q", src.Name, sh.SortKey(), want)
		}
	}
}
