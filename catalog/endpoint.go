package catalog

import (
	"maps"
	"strings"
	"time"

	"github.com/sediment/sediment/lql"
)

// Endpoint query languages. Sediment executes BigQuery-dialect SQL and LQL;
// Logflare's pg_sql and ch_sql target backends Sediment does not have.
const (
	LanguageBQSQL = "bq_sql"
	LanguageLQL   = "lql"
)

// Defaults and bounds of endpoint settings (docs/compat/logflare.md §5.3).
const (
	DefaultCacheDurationSeconds       = 3600
	DefaultProactiveRequeryingSeconds = 1800
	DefaultMaxLimit                   = 1000
	MaxMaxLimit                       = 10000
)

// Endpoint is a saved, parameterised query served at
// /api/endpoints/query/<token or name> (docs/compat/logflare.md §5.3). The
// JSON tags are the catalog file's format.
type Endpoint struct {
	ID    int64  `json:"id"`
	Token string `json:"token"` // UUID
	Name  string `json:"name"`  // unique
	// Query is the SQL (or LQL) template; @name placeholders are its
	// parameters.
	Query       string `json:"query"`
	Description string `json:"description,omitempty"`
	Language    string `json:"language"` // LanguageBQSQL (default) or LanguageLQL
	// SourceMapping maps source names to tokens (kept for API compatibility).
	SourceMapping map[string]string `json:"source_mapping,omitempty"`
	// Sandboxable allows consumer sql=/lql= queries over the query's CTEs.
	Sandboxable bool `json:"sandboxable"`
	// CacheDurationSeconds is how long a result is cached (0: no cache).
	CacheDurationSeconds int `json:"cache_duration_seconds"`
	// ProactiveRequeryingSeconds is how often a cached result is refreshed.
	ProactiveRequeryingSeconds int `json:"proactive_requerying_seconds"`
	// MaxLimit caps the rows returned (1..10000).
	MaxLimit int `json:"max_limit"`
	// EnableAuth false lets anyone query the endpoint by its token.
	EnableAuth bool `json:"enable_auth"`
	// RedactPII replaces IP addresses in string results with REDACTED.
	RedactPII                bool   `json:"redact_pii"`
	EnableDynamicReservation bool   `json:"enable_dynamic_reservation"`
	Labels                   string `json:"labels,omitempty"`

	InsertedAt time.Time `json:"inserted_at"`
	UpdatedAt  time.Time `json:"updated_at"`
}

// EndpointParams are the fields a create or update sets; nil fields keep
// their value (their default on create).
type EndpointParams struct {
	Name                       *string
	Query                      *string
	Description                *string
	Language                   *string
	SourceMapping              map[string]string // nil: unchanged
	Sandboxable                *bool
	CacheDurationSeconds       *int
	ProactiveRequeryingSeconds *int
	MaxLimit                   *int
	EnableAuth                 *bool
	RedactPII                  *bool
	EnableDynamicReservation   *bool
	Labels                     *string
}

// Endpoints returns every endpoint, by id.
func (c *Catalog) Endpoints() []*Endpoint { return append([]*Endpoint(nil), c.load().endpoints...) }

// EndpointByToken returns the endpoint with token tok, or nil.
func (c *Catalog) EndpointByToken(tok string) *Endpoint { return c.load().endpointByToken[tok] }

// EndpointByName returns the endpoint named name, or nil.
func (c *Catalog) EndpointByName(name string) *Endpoint { return c.load().endpointByName[name] }

// EndpointByID returns the endpoint with id, or nil.
func (c *Catalog) EndpointByID(id int64) *Endpoint { return c.load().endpointByID[id] }

// newEndpoint returns an endpoint with Logflare's defaults.
func (c *Catalog) newEndpoint(id int64) *Endpoint {
	now := c.now()
	return &Endpoint{
		ID: id, Token: c.opts.NewUUID(), Language: LanguageBQSQL,
		CacheDurationSeconds:       DefaultCacheDurationSeconds,
		ProactiveRequeryingSeconds: DefaultProactiveRequeryingSeconds,
		MaxLimit:                   DefaultMaxLimit,
		EnableAuth:                 true,
		InsertedAt:                 now, UpdatedAt: now,
	}
}

// CreateEndpoint adds an endpoint. Name and query are required; the query
// is validated (see SetSQLValidator). Errors: *ValidationError.
func (c *Catalog) CreateEndpoint(p EndpointParams) (*Endpoint, error) {
	var out *Endpoint
	err := c.change(func(st *state) ([]Change, error) {
		e := c.newEndpoint(st.nextEndpointID)
		if err := c.applyEndpointParams(st, e, p, true, true); err != nil {
			return nil, err
		}
		st.nextEndpointID++
		st.endpoints = append(st.endpoints, e)
		out = e
		return []Change{{Kind: EndpointCreated, Endpoint: e}}, nil
	})
	return out, err
}

// UpdateEndpoint changes the fields p sets on the endpoint with token tok.
// The query is validated again only when p sets query or language.
// Errors: ErrNotFound, *ValidationError.
func (c *Catalog) UpdateEndpoint(tok string, p EndpointParams) (*Endpoint, error) {
	var out *Endpoint
	err := c.change(func(st *state) ([]Change, error) {
		i := indexOf(st.endpoints, func(e *Endpoint) bool { return e.Token == tok })
		if i < 0 {
			return nil, ErrNotFound
		}
		old := st.endpoints[i]
		e := *old
		if err := c.applyEndpointParams(st, &e, p, false, true); err != nil {
			return nil, err
		}
		e.UpdatedAt = c.now()
		st.endpoints[i] = &e
		out = &e
		return []Change{{Kind: EndpointUpdated, Endpoint: &e, OldEndpoint: old}}, nil
	})
	return out, err
}

// DeleteEndpoint removes the endpoint with token tok and returns it.
// Errors: ErrNotFound.
func (c *Catalog) DeleteEndpoint(tok string) (*Endpoint, error) {
	var out *Endpoint
	err := c.change(func(st *state) ([]Change, error) {
		i := indexOf(st.endpoints, func(e *Endpoint) bool { return e.Token == tok })
		if i < 0 {
			return nil, ErrNotFound
		}
		out = st.endpoints[i]
		st.endpoints = append(st.endpoints[:i:i], st.endpoints[i+1:]...)
		return []Change{{Kind: EndpointDeleted, OldEndpoint: out}}, nil
	})
	return out, err
}

// applyEndpointParams validates p and sets it on e; st is the state being
// changed (for the unique-name check). validateSQL false skips the SQL
// validator (for the seeded endpoints).
func (c *Catalog) applyEndpointParams(st *state, e *Endpoint, p EndpointParams, create, validateSQL bool) error {
	fe := fieldErrors{}
	setStr := func(dst *string, src *string) {
		if src != nil {
			*dst = *src
		}
	}
	setInt := func(dst *int, src *int) {
		if src != nil {
			*dst = *src
		}
	}
	setBool := func(dst *bool, src *bool) {
		if src != nil {
			*dst = *src
		}
	}
	setStr(&e.Name, p.Name)
	setStr(&e.Query, p.Query)
	setStr(&e.Description, p.Description)
	setStr(&e.Language, p.Language)
	setStr(&e.Labels, p.Labels)
	if p.SourceMapping != nil {
		e.SourceMapping = maps.Clone(p.SourceMapping)
	}
	setBool(&e.Sandboxable, p.Sandboxable)
	setBool(&e.EnableAuth, p.EnableAuth)
	setBool(&e.RedactPII, p.RedactPII)
	setBool(&e.EnableDynamicReservation, p.EnableDynamicReservation)
	setInt(&e.CacheDurationSeconds, p.CacheDurationSeconds)
	setInt(&e.ProactiveRequeryingSeconds, p.ProactiveRequeryingSeconds)
	setInt(&e.MaxLimit, p.MaxLimit)

	if create || p.Name != nil {
		checkName(fe, "name", e.Name)
		for _, other := range st.endpoints {
			if other.Name == e.Name && other.ID != e.ID {
				fe.add("name", msgTaken)
				break
			}
		}
	}
	if e.Language == "" {
		e.Language = LanguageBQSQL
	}
	langOK := e.Language == LanguageBQSQL || e.Language == LanguageLQL
	if !langOK {
		fe.add("language", msgInvalid)
	}
	if create || p.Query != nil || p.Language != nil {
		switch {
		case strings.TrimSpace(e.Query) == "":
			fe.add("query", msgBlank)
		case !langOK:
		case e.Language == LanguageLQL:
			if _, err := lql.Parse(e.Query, lql.Options{Now: c.now()}); err != nil {
				fe.add("query", err.Error())
			}
		case !validateSQL:
		default:
			if v := c.sqlValidator(); v != nil {
				if err := v(e.Query); err != nil {
					fe.add("query", err.Error())
				}
			}
		}
	}
	if e.MaxLimit < 1 {
		fe.add("max_limit", msgAtLeast("1"))
	} else if e.MaxLimit > MaxMaxLimit {
		fe.add("max_limit", msgAtMost("10000"))
	}
	if e.CacheDurationSeconds < 0 {
		fe.add("cache_duration_seconds", msgAtLeast("0"))
	}
	if e.ProactiveRequeryingSeconds < 0 {
		fe.add("proactive_requerying_seconds", msgAtLeast("0"))
	}
	return fe.err()
}
