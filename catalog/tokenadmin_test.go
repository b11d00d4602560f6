package catalog

import (
	"errors"
	"testing"
)

// TestRevokeAccessToken: tokens are revoked by id, except the last one
// with scope private.
func TestRevokeAccessToken(t *testing.T) {
	c, err := Open(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	priv1, _ := c.CreateAccessToken("p1", []string{ScopePrivate}, OriginAPI, "")
	priv2, _ := c.CreateAccessToken("p2", []string{ScopePrivate}, OriginAPI, "")
	ing, _ := c.CreateAccessToken("i1", []string{ScopeIngest}, OriginAPI, "")
	if err := c.RevokeAccessToken(ing.ID); err != nil {
		t.Fatal(err)
	}
	if c.Authenticate("i1") != nil {
		t.Fatal("revoked token still authenticates")
	}
	if err := c.RevokeAccessToken(ing.ID); !errors.Is(err, ErrNotFound) {
		t.Fatalf("revoking twice: %v", err)
	}
	if err := c.RevokeAccessToken(priv1.ID); err != nil {
		t.Fatal(err)
	}
	var ve *ValidationError
	if err := c.RevokeAccessToken(priv2.ID); !errors.As(err, &ve) || len(ve.Fields["token"]) != 1 {
		t.Fatalf("revoking the last private token: %v", err)
	}
	if c.Authenticate("p2") == nil {
		t.Fatal("the last private token was removed")
	}
}

// TestWriteCopy: the copy opens as the same catalog.
func TestWriteCopy(t *testing.T) {
	c, err := Open(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	src, err := c.CreateSource(SourceParams{Name: ptr("app")})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.CreateAccessToken("k", []string{ScopePrivate}, OriginAPI, ""); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	toks, err := c.WriteCopy(dir)
	if err != nil || len(toks) != 1 || toks[0] != src.Token {
		t.Fatalf("%v %v", toks, err)
	}
	d, err := Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := d.SourceByName("app"); got == nil || got.Token != src.Token || d.Authenticate("k") == nil {
		t.Fatal("the copy does not hold the source and the token")
	}
}
