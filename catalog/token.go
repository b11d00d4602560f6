package catalog

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Access token scopes (docs/compat/logflare.md §2.2).
const (
	// ScopePublic may ingest into any source (Supabase's public token).
	ScopePublic = "public"
	// ScopePrivate may do everything, including the management API.
	ScopePrivate = "private"
	// ScopeIngest may ingest into any source.
	ScopeIngest = "ingest"
	// ScopeQuery may query any endpoint.
	ScopeQuery = "query"
)

// Scope prefixes that name one resource by id: ingest:source:<id>,
// ingest:collection:<id> (an alias) and query:endpoint:<id>.
const (
	scopeIngestSource     = "ingest:source:"
	scopeIngestCollection = "ingest:collection:"
	scopeQueryEndpoint    = "query:endpoint:"
)

// Origins of the tokens Sediment creates on its own; tokens with one of
// these origins are replaced when the setting they come from changes.
const (
	OriginEnvPublic        = "env:public"
	OriginEnvPrivate       = "env:private"
	OriginGeneratedPublic  = "generated:public"
	OriginGeneratedPrivate = "generated:private"
)

// Digest is the SHA-256 of an access token's key; the key itself is never
// stored. It is persisted as lower-case hex.
type Digest [sha256.Size]byte

// DigestOf returns the digest of key.
func DigestOf(key string) Digest { return sha256.Sum256([]byte(key)) }

// MarshalText implements encoding.TextMarshaler (hex).
func (d Digest) MarshalText() ([]byte, error) { return []byte(hex.EncodeToString(d[:])), nil }

// UnmarshalText implements encoding.TextUnmarshaler.
func (d *Digest) UnmarshalText(b []byte) error {
	if hex.DecodedLen(len(b)) != len(d) {
		return fmt.Errorf("digest: want %d hex digits, got %d", 2*len(d), len(b))
	}
	_, err := hex.Decode(d[:], b)
	return err
}

// AccessToken is an API key's record: its digest and what it may do.
type AccessToken struct {
	ID     int64    `json:"id"`
	Digest Digest   `json:"sha256"`
	Scopes []string `json:"scopes"`
	// Origin says who made the token: one of the Origin* constants, or
	// free text for tokens made through the API.
	Origin      string    `json:"origin,omitempty"`
	Description string    `json:"description,omitempty"`
	InsertedAt  time.Time `json:"inserted_at"`
}

// HasScope reports whether the token carries scope s exactly.
func (t *AccessToken) HasScope(s string) bool { return slices.Contains(t.Scopes, s) }

// CanIngest reports whether the token may ingest into the source with id
// sourceID: scope private, public, ingest, ingest:source:<id> or
// ingest:collection:<id>.
func (t *AccessToken) CanIngest(sourceID int64) bool {
	id := strconv.FormatInt(sourceID, 10)
	for _, s := range t.Scopes {
		switch s {
		case ScopePrivate, ScopePublic, ScopeIngest, scopeIngestSource + id, scopeIngestCollection + id:
			return true
		}
	}
	return false
}

// CanIngestSomewhere reports whether the token may ingest into some
// source (CanIngest holds for at least one id): the check of an ingest
// request that can be made before its source is known.
func (t *AccessToken) CanIngestSomewhere() bool {
	for _, s := range t.Scopes {
		switch {
		case s == ScopePrivate, s == ScopePublic, s == ScopeIngest,
			strings.HasPrefix(s, scopeIngestSource), strings.HasPrefix(s, scopeIngestCollection):
			return true
		}
	}
	return false
}

// CanQuery reports whether the token may query the endpoint with id
// endpointID: scope private, query or query:endpoint:<id>. A public token
// may not.
func (t *AccessToken) CanQuery(endpointID int64) bool {
	id := strconv.FormatInt(endpointID, 10)
	for _, s := range t.Scopes {
		switch s {
		case ScopePrivate, ScopeQuery, scopeQueryEndpoint + id:
			return true
		}
	}
	return false
}

// CanManage reports whether the token may use the management API (and
// ad-hoc SQL): scope private only.
func (t *AccessToken) CanManage() bool { return t.HasScope(ScopePrivate) }

// ValidScope reports whether s is a scope Logflare accepts: public, ingest,
// query, private, ingest:source:<int>, ingest:collection:<int>,
// query:endpoint:<int>.
func ValidScope(s string) bool {
	switch s {
	case ScopePublic, ScopePrivate, ScopeIngest, ScopeQuery:
		return true
	}
	for _, p := range [...]string{scopeIngestSource, scopeIngestCollection, scopeQueryEndpoint} {
		if rest, ok := strings.CutPrefix(s, p); ok {
			n, err := strconv.ParseInt(rest, 10, 64)
			return err == nil && n > 0 && strconv.FormatInt(n, 10) == rest
		}
	}
	return false
}

// NewKey returns a new random API key: 32 bytes from crypto/rand,
// base64url without padding (43 characters).
func NewKey() (string, error) {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	return base64.RawURLEncoding.EncodeToString(b[:]), nil
}

// Authenticate returns the token whose key is key, or nil. Every stored
// digest is compared in constant time, so the time taken does not depend on
// which token (if any) matches. An empty key never matches.
func (c *Catalog) Authenticate(key string) *AccessToken {
	if key == "" {
		return nil
	}
	d := DigestOf(key)
	var found *AccessToken
	for _, t := range c.load().tokens {
		if subtle.ConstantTimeCompare(d[:], t.Digest[:]) == 1 && found == nil {
			found = t
		}
	}
	return found
}

// AccessTokens returns every token, by id.
func (c *Catalog) AccessTokens() []*AccessToken {
	return append([]*AccessToken(nil), c.load().tokens...)
}

// HasAccessTokens reports whether any token exists.
func (c *Catalog) HasAccessTokens() bool { return len(c.load().tokens) > 0 }

// CreateAccessToken stores a token for key with the given scopes.
// Errors: *ValidationError (no scope, an unknown scope, an empty key, or a
// key already stored).
func (c *Catalog) CreateAccessToken(key string, scopes []string, origin, description string) (*AccessToken, error) {
	var out *AccessToken
	err := c.change(func(st *state) ([]Change, error) {
		t, err := c.newToken(st, key, scopes, origin, description)
		if err != nil {
			return nil, err
		}
		st.tokens = append(st.tokens, t)
		out = t
		return []Change{{Kind: TokensChanged}}, nil
	})
	return out, err
}

func (c *Catalog) newToken(st *state, key string, scopes []string, origin, description string) (*AccessToken, error) {
	fe := fieldErrors{}
	if key == "" {
		fe.add("token", msgBlank)
	}
	if len(scopes) == 0 {
		fe.add("scopes", msgBlank)
	}
	for _, s := range scopes {
		if !ValidScope(s) {
			fe.add("scopes", "contains unrecognized scope")
			break
		}
	}
	d := DigestOf(key)
	for _, t := range st.tokens {
		if t.Digest == d {
			fe.add("token", msgTaken)
		}
	}
	if err := fe.err(); err != nil {
		return nil, err
	}
	t := &AccessToken{
		ID: st.nextTokenID, Digest: d, Scopes: slices.Clone(scopes),
		Origin: origin, Description: description, InsertedAt: c.now(),
	}
	st.nextTokenID++
	return t, nil
}

// DeleteAccessToken removes the token with id. Errors: ErrNotFound.
func (c *Catalog) DeleteAccessToken(id int64) error {
	return c.change(func(st *state) ([]Change, error) {
		i := indexOf(st.tokens, func(t *AccessToken) bool { return t.ID == id })
		if i < 0 {
			return nil, ErrNotFound
		}
		st.tokens = append(st.tokens[:i:i], st.tokens[i+1:]...)
		return []Change{{Kind: TokensChanged}}, nil
	})
}

// TokenSeed is one token Sediment keeps in place on its own, from the
// environment or generated at first start.
type TokenSeed struct {
	// Key is the token's key; empty removes the tokens of Origin.
	Key    string
	Scopes []string
	// Origin identifies the seed (OriginEnvPublic, ...).
	Origin string
	// Replaces lists further origins whose tokens this seed supersedes
	// (an environment token replaces a generated one of the same role).
	Replaces []string
}

// EnsureTokens makes the stored tokens match seeds, idempotently and in one
// write: for each seed with a key, a token with that key, scopes and origin
// exists and no other token has the seed's origin or one it replaces; for a
// seed without a key, tokens of its origin are removed. It reports whether
// anything changed. A key already stored under another origin is an error.
func (c *Catalog) EnsureTokens(seeds ...TokenSeed) (changed bool, err error) {
	err = c.change(func(st *state) ([]Change, error) {
		dirty := false
		for _, seed := range seeds {
			d := DigestOf(seed.Key)
			keep := func(t *AccessToken) bool {
				if seed.Key != "" && t.Origin == seed.Origin && t.Digest == d && slices.Equal(t.Scopes, seed.Scopes) {
					return true
				}
				return t.Origin != seed.Origin && !slices.Contains(seed.Replaces, t.Origin)
			}
			present := false
			kept := st.tokens[:0:0]
			for _, t := range st.tokens {
				if !keep(t) {
					dirty = true
					continue
				}
				if seed.Key != "" && t.Origin == seed.Origin {
					present = true
				}
				kept = append(kept, t)
			}
			st.tokens = kept
			if seed.Key == "" || present {
				continue
			}
			t, err := c.newToken(st, seed.Key, seed.Scopes, seed.Origin, "")
			if err != nil {
				return nil, fmt.Errorf("seed %s token: %w", seed.Origin, err)
			}
			st.tokens = append(st.tokens, t)
			dirty = true
		}
		if !dirty {
			return nil, nil
		}
		changed = true
		return []Change{{Kind: TokensChanged}}, nil
	})
	if err != nil {
		return false, err
	}
	return changed, nil
}
