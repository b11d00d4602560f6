package httpapi

import (
	"strconv"
	"strings"
	"testing"
	"time"

	json "github.com/goccy/go-json"
)

type tokenJSON struct {
	ID          int64   `json:"id"`
	Token       *string `json:"token"`
	Description *string `json:"description"`
	Scopes      string  `json:"scopes"`
	InsertedAt  string  `json:"inserted_at"`
	Origin      string  `json:"origin"`
}

func decodeTokens(t *testing.T, body string) []tokenJSON {
	t.Helper()
	var out []tokenJSON
	if err := json.Unmarshal([]byte(body), &out); err != nil {
		t.Fatalf("%s: %v", body, err)
	}
	return out
}

// TestAccessTokensAPI: list, create (with scopes and a description) and
// revoke tokens as Logflare's /api/access-tokens does, private key only;
// a created key works at once for what its scopes allow, and stops
// working once revoked.
func TestAccessTokensAPI(t *testing.T) {
	ts := startServer(t, serverConfig{})
	priv := withKey(privKey, jsonCT...)

	// Private key only.
	for _, key := range []string{"", pubKey, queryKey, ingestKey2} {
		ts.do("GET", "/api/access-tokens", nil, withKey(key)...).expect(t, 401, `{"error":"Unauthorized"}`)
		ts.do("POST", "/api/access-tokens", []byte(`{"scopes":"private"}`), withKey(key, jsonCT...)...).expect(t, 401, `{"error":"Unauthorized"}`)
		ts.do("DELETE", "/api/access-tokens/"+privKey, nil, withKey(key)...).expect(t, 401, `{"error":"Unauthorized"}`)
	}

	list := ts.do("GET", "/api/access-tokens", nil, priv...)
	list.expect(t, 200, "")
	before := decodeTokens(t, list.body)
	if len(before) != 4 {
		t.Fatalf("%d tokens listed, want the 4 test tokens: %s", len(before), list.body)
	}
	for _, tok := range before {
		if tok.Token != nil {
			t.Fatalf("a listing reveals a key: %s", list.body)
		}
		if _, err := time.Parse(time.RFC3339, tok.InsertedAt); err != nil || !strings.HasSuffix(tok.InsertedAt, "Z") {
			t.Fatalf("inserted_at %q is not RFC 3339 UTC", tok.InsertedAt)
		}
	}

	// Create: the default scope is public; the key is revealed once; a
	// token in the body is not taken.
	res := ts.do("POST", "/api/access-tokens?description=from+query", nil, priv...)
	res.expect(t, 201, "")
	var pub tokenJSON
	json.Unmarshal([]byte(res.body), &pub)
	if pub.Token == nil || len(*pub.Token) < 40 || pub.Scopes != "public" || pub.Description == nil || *pub.Description != "from query" || pub.Origin != "api" {
		t.Fatalf("created %s", res.body)
	}
	res = ts.do("POST", "/api/access-tokens", []byte(`{"scopes":"ingest query","description":"ci","token":"attacker-chosen"}`), priv...)
	res.expect(t, 201, "")
	var iq tokenJSON
	json.Unmarshal([]byte(res.body), &iq)
	if iq.Token == nil || *iq.Token == "attacker-chosen" || iq.Scopes != "ingest query" {
		t.Fatalf("created %s", res.body)
	}
	ts.do("POST", "/api/logs?source_name=postgres.logs", []byte(`{"message":"x"}`), withKey("attacker-chosen", jsonCT...)...).expect(t, 401, "")
	ts.do("POST", "/api/logs?source_name=postgres.logs", []byte(`{"message":"with a new key"}`), withKey(*iq.Token, jsonCT...)...).expect(t, 200, "")
	ts.do("GET", "/api/sources/postgres.logs/search", nil, withKey(*iq.Token)...).expect(t, 200, "")
	ts.do("GET", "/api/sources", nil, withKey(*iq.Token)...).expect(t, 401, "") // not private
	res = ts.do("POST", "/api/access-tokens", []byte(`{"scopes":["private"]}`), priv...)
	res.expect(t, 201, "")
	var priv2 tokenJSON
	json.Unmarshal([]byte(res.body), &priv2)
	ts.do("GET", "/api/sources", nil, withKey(*priv2.Token)...).expect(t, 200, "")

	// Bad scopes: Logflare's 422 shapes.
	ts.do("POST", "/api/access-tokens", []byte(`{"scopes":"partner"}`), priv...).expect(t, 422, `{"errors":{"scopes":["contains unrecognized scope"]}}`)
	ts.do("POST", "/api/access-tokens", []byte(`{"scopes":"ingest partner"}`), priv...).expect(t, 422, `{"errors":{"scopes":["contains unrecognized scope"]}}`)
	ts.do("POST", "/api/access-tokens", []byte(`{"scopes":{"bad":"value"}}`), priv...).expect(t, 422, `{"errors":{"scopes":["is invalid"]}}`)
	ts.do("POST", "/api/access-tokens", []byte(`{"scopes":`), priv...).expect(t, 400, "")

	list = ts.do("GET", "/api/access-tokens", nil, priv...)
	if got := decodeTokens(t, list.body); len(got) != 7 {
		t.Fatalf("%d tokens after three creates: %s", len(got), list.body)
	}

	// Revoke by key, then by id; unknown ones are 404.
	ts.do("DELETE", "/api/access-tokens/"+*iq.Token, nil, priv...).expect(t, 204, "")
	ts.do("POST", "/api/logs?source_name=postgres.logs", []byte(`{"message":"x"}`), withKey(*iq.Token, jsonCT...)...).expect(t, 401, "")
	ts.do("DELETE", "/api/access-tokens/"+*iq.Token, nil, priv...).expect(t, 404, `{"error":"Not Found"}`)
	ts.do("DELETE", "/api/access-tokens/"+strconv.FormatInt(pub.ID, 10), nil, priv...).expect(t, 204, "")
	ts.do("POST", "/api/logs?source_name=postgres.logs", []byte(`{"message":"x"}`), withKey(*pub.Token, jsonCT...)...).expect(t, 401, "")
	ts.do("DELETE", "/api/access-tokens/123456", nil, priv...).expect(t, 404, "")

	// The last private token stays.
	ts.do("DELETE", "/api/access-tokens/"+privKey, nil, withKey(*priv2.Token)...).expect(t, 204, "")
	ts.do("DELETE", "/api/access-tokens/"+*priv2.Token, nil, withKey(*priv2.Token)...).expect(t, 422, "")
	ts.do("GET", "/api/sources", nil, withKey(*priv2.Token)...).expect(t, 200, "")
	ts.do("GET", "/api/sources", nil, withKey(privKey)...).expect(t, 401, "")
}
