package httpapi

import (
	"strings"
	"testing"
)

// TestSourceByName: a source's name works in the path wherever its token
// does, for the management routes as for search.
func TestSourceByName(t *testing.T) {
	ts := startServer(t, serverConfig{})
	priv := withKey(privKey, jsonCT...)
	src := ts.source("postgres.logs")
	ts.do("POST", "/api/logs?source_name=postgres.logs", []byte(`{"message":"by name","metadata":{"level":"info"}}`), withKey(pubKey, jsonCT...)...).expect(t, 200, logged)

	byToken := ts.do("GET", "/api/sources/"+src.Token, nil, priv...)
	byToken.expect(t, 200, "")
	ts.do("GET", "/api/sources/postgres.logs", nil, priv...).expect(t, 200, byToken.body)
	if r := ts.do("GET", "/api/sources/postgres.logs/schema?variant=dot", nil, priv...); r.status != 200 || !strings.Contains(r.body, `"metadata.level"`) {
		t.Fatalf("schema by name: %d %s", r.status, r.body)
	}
	if r := ts.do("GET", "/api/sources/postgres.logs/recent", nil, priv...); r.status != 200 || !strings.Contains(r.body, "by name") {
		t.Fatalf("recent by name: %d %s", r.status, r.body)
	}
	ts.do("PATCH", "/api/sources/postgres.logs", []byte(`{"description":"renamed by name"}`), priv...).expect(t, 204, "")
	if ts.cat.SourceByToken(src.Token).Description != "renamed by name" {
		t.Fatal("PATCH by name did not update the source")
	}
	ts.do("PUT", "/api/sources/postgres.logs", []byte(`{"retention_days":3}`), priv...).expect(t, 200, "")
	ts.do("GET", "/api/sources/no.such.source", nil, priv...).expect(t, 404, `{"error":"Not Found"}`)
	ts.do("GET", "/api/sources/postgres.logs", nil, withKey(pubKey)...).expect(t, 401, "")
	ts.do("DELETE", "/api/sources/postgres.logs", nil, priv...).expect(t, 204, "")
	if ts.cat.SourceByToken(src.Token) != nil {
		t.Fatal("DELETE by name did not delete the source")
	}
	ts.do("DELETE", "/api/sources/postgres.logs", nil, priv...).expect(t, 404, "")
}
