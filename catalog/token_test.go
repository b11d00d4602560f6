package catalog

import (
	"reflect"
	"testing"

	"github.com/sediment/sediment/internal/vfs"
)

func TestAuthenticateAndScopes(t *testing.T) {
	c := openMem(t, vfs.NewMemFS())
	mk := func(key string, scopes ...string) *AccessToken {
		t.Helper()
		tok, err := c.CreateAccessToken(key, scopes, "", "")
		if err != nil {
			t.Fatal(err)
		}
		return tok
	}
	pub := mk("pub", "public")
	priv := mk("priv", "private")
	ing := mk("ing", "ingest:source:2")
	col := mk("col", "ingest:collection:3")
	qry := mk("qry", "query:endpoint:7")
	anyQ := mk("anyq", "query", "ingest")

	cases := []struct {
		key                  string
		want                 *AccessToken
		ingest1, ingest2     bool
		ingest3              bool
		query7, query8, mgmt bool
	}{
		{"pub", pub, true, true, true, false, false, false},
		{"priv", priv, true, true, true, true, true, true},
		{"ing", ing, false, true, false, false, false, false},
		{"col", col, false, false, true, false, false, false},
		{"qry", qry, false, false, false, true, false, false},
		{"anyq", anyQ, true, true, true, true, true, false},
	}
	for _, tc := range cases {
		t.Run(tc.key, func(t *testing.T) {
			got := c.Authenticate(tc.key)
			if got != tc.want {
				t.Fatalf("Authenticate(%q) = %+v", tc.key, got)
			}
			if got.CanIngest(1) != tc.ingest1 || got.CanIngest(2) != tc.ingest2 || got.CanIngest(3) != tc.ingest3 ||
				got.CanQuery(7) != tc.query7 || got.CanQuery(8) != tc.query8 || got.CanManage() != tc.mgmt {
				t.Fatalf("scopes of %q wrong", tc.key)
			}
		})
	}
	for _, bad := range []string{"", "Pub", "pub ", "unknown"} {
		if c.Authenticate(bad) != nil {
			t.Fatalf("Authenticate(%q) matched", bad)
		}
	}
	if _, err := c.CreateAccessToken("pub", []string{"public"}, "", ""); validationFields(t, err)["token"][0] != msgTaken {
		t.Fatal("duplicate key accepted")
	}
	if _, err := c.CreateAccessToken("x", []string{"admin"}, "", ""); validationFields(t, err)["scopes"][0] != "contains unrecognized scope" {
		t.Fatal("unknown scope accepted")
	}
	if err := c.DeleteAccessToken(pub.ID); err != nil || c.Authenticate("pub") != nil {
		t.Fatalf("delete: %v", err)
	}
}

func TestValidScope(t *testing.T) {
	for s, want := range map[string]bool{
		"public": true, "private": true, "ingest": true, "query": true,
		"ingest:source:12": true, "ingest:collection:1": true, "query:endpoint:3": true,
		"ingest:source:": false, "ingest:source:x": false, "ingest:source:-1": false, "ingest:source:01": false,
		"admin": false, "": false, "query:endpoint": false, "Public": false,
	} {
		if got := ValidScope(s); got != want {
			t.Errorf("ValidScope(%q) = %v", s, got)
		}
	}
}

func TestEnsureTokens(t *testing.T) {
	fs := vfs.NewMemFS()
	c := openMem(t, fs)
	envSeeds := func(pub, priv string) []TokenSeed {
		return []TokenSeed{
			{Key: pub, Scopes: []string{ScopePublic}, Origin: OriginEnvPublic, Replaces: []string{OriginGeneratedPublic}},
			{Key: priv, Scopes: []string{ScopePrivate}, Origin: OriginEnvPrivate, Replaces: []string{OriginGeneratedPrivate}},
		}
	}
	// Generated keys first (no env), as on a first start.
	changed, err := c.EnsureTokens(
		TokenSeed{Key: "gen-pub", Scopes: []string{ScopePublic}, Origin: OriginGeneratedPublic},
		TokenSeed{Key: "gen-priv", Scopes: []string{ScopePrivate}, Origin: OriginGeneratedPrivate},
	)
	if err != nil || !changed {
		t.Fatalf("generated: %v %v", changed, err)
	}
	api, _ := c.CreateAccessToken("api-made", []string{"ingest"}, "api", "")

	// Env tokens replace the generated ones; API-made tokens stay.
	if changed, err = c.EnsureTokens(envSeeds("env-pub", "env-priv")...); err != nil || !changed {
		t.Fatalf("env: %v %v", changed, err)
	}
	keys := func(c *Catalog) map[string]string {
		out := map[string]string{}
		for _, k := range []string{"gen-pub", "gen-priv", "env-pub", "env-priv", "env-pub-2", "api-made"} {
			if tok := c.Authenticate(k); tok != nil {
				out[k] = tok.Origin
			}
		}
		return out
	}
	want := map[string]string{"env-pub": OriginEnvPublic, "env-priv": OriginEnvPrivate, "api-made": "api"}
	if got := keys(c); !reflect.DeepEqual(got, want) {
		t.Fatalf("tokens %v, want %v", got, want)
	}
	// Same env again: nothing changes, even after a restart.
	c = openMem(t, fs.CrashClone())
	before := c.AccessTokens()
	if changed, err = c.EnsureTokens(envSeeds("env-pub", "env-priv")...); err != nil || changed {
		t.Fatalf("idempotent: %v %v", changed, err)
	}
	if !reflect.DeepEqual(before, c.AccessTokens()) {
		t.Fatal("tokens rewritten by an unchanged seed")
	}
	// A changed public env value replaces the old one only.
	if changed, err = c.EnsureTokens(envSeeds("env-pub-2", "env-priv")...); err != nil || !changed {
		t.Fatalf("changed env: %v %v", changed, err)
	}
	want = map[string]string{"env-pub-2": OriginEnvPublic, "env-priv": OriginEnvPrivate, "api-made": "api"}
	if got := keys(c); !reflect.DeepEqual(got, want) {
		t.Fatalf("tokens %v, want %v", got, want)
	}
	// An unset env value removes its token.
	if _, err = c.EnsureTokens(envSeeds("", "env-priv")...); err != nil {
		t.Fatal(err)
	}
	want = map[string]string{"env-priv": OriginEnvPrivate, "api-made": "api"}
	if got := keys(c); !reflect.DeepEqual(got, want) {
		t.Fatalf("tokens %v, want %v", got, want)
	}
	// A seed whose key another origin already holds is refused.
	if _, err = c.EnsureTokens(TokenSeed{Key: "api-made", Scopes: []string{ScopePublic}, Origin: OriginEnvPublic}); err == nil {
		t.Fatal("seed reusing an existing key accepted")
	}
	if c.Authenticate("api-made").Origin != "api" {
		t.Fatal("failed seed changed tokens")
	}
	_ = api
}

func TestNewKey(t *testing.T) {
	a, err := NewKey()
	if err != nil {
		t.Fatal(err)
	}
	b, _ := NewKey()
	if len(a) != 43 || a == b {
		t.Fatalf("keys %q %q", a, b)
	}
}
