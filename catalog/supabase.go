package catalog

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"slices"
	"strings"
)

// The SQL of the seeded endpoints, written for Sediment's BigQuery dialect
// (docs/compat/supabase.md §4).
//
//go:embed supabase/*.sql
var supabaseSQL embed.FS

// SupabaseSource is one of the sources Supabase ships logs to, with the
// CTE that logs.all gives it, the column that holds the project ref and
// the sort key it is seeded with.
type SupabaseSource struct {
	Name          string // Logflare source name (the SQL table name)
	CTE           string // CTE name in logs.all (Studio's table name)
	ProjectFilter string // the column compared to @project in logs.all
	// SortKey is the source's sort key when seeded (Source.SortKey): the
	// edge logs, by far the biggest source on the platform, are ordered by
	// project so that Studio's project-scoped queries read one project's
	// blocks.
	SortKey string
}

// SupabaseSources returns the nine sources Supabase mode seeds, in
// Logflare's seeding order.
func SupabaseSources() []SupabaseSource {
	return []SupabaseSource{
		{"cloudflare.logs.prod", "edge_logs", "t.project", "project"},
		{"postgres.logs", "postgres_logs", "t.project", ""},
		{"deno-relay-logs", "function_edge_logs", "m.project_ref", ""},
		{"deno-subhosting-events", "function_logs", "m.project_ref", ""},
		{"gotrue.logs.prod", "auth_logs", "t.project", ""},
		{"realtime.logs.prod", "realtime_logs", "m.project", ""},
		{"storage.logs.prod.2", "storage_logs", "m.project", ""},
		{"postgREST.logs.prod", "postgrest_logs", "t.project", ""},
		{"pgbouncer.logs.prod", "pgbouncer_logs", "t.project", ""},
	}
}

// SupabaseEndpoints returns the two endpoints Supabase mode seeds, with
// Logflare's settings: logs.all (sandboxable, max_limit 1000, no cache)
// and usage.api-counts (sandboxable, max_limit 1000, cached 900 s,
// refreshed every 300 s).
func SupabaseEndpoints() []EndpointParams {
	str := func(s string) *string { return &s }
	num := func(n int) *int { return &n }
	yes := func() *bool { b := true; return &b }
	return []EndpointParams{
		{
			Name:                       str("logs.all"),
			Description:                str("Logs of every Supabase service, one CTE per source; Studio's log explorer queries it with sql="),
			Query:                      str(mustSQL("logs.all.sql")),
			Language:                   str(LanguageBQSQL),
			Sandboxable:                yes(),
			MaxLimit:                   num(1000),
			EnableAuth:                 yes(),
			CacheDurationSeconds:       num(0),
			ProactiveRequeryingSeconds: num(DefaultProactiveRequeryingSeconds),
		},
		{
			Name:                       str("usage.api-counts"),
			Description:                str("API requests per time bucket by service, for Studio's project home"),
			Query:                      str(mustSQL("usage.api-counts.sql")),
			Language:                   str(LanguageBQSQL),
			Sandboxable:                yes(),
			MaxLimit:                   num(1000),
			EnableAuth:                 yes(),
			CacheDurationSeconds:       num(900),
			ProactiveRequeryingSeconds: num(300),
		},
	}
}

func mustSQL(name string) string {
	b, err := supabaseSQL.ReadFile("supabase/" + name)
	if err != nil {
		// The files are embedded at build time; a missing one is a build
		// defect caught by the package tests.
		panic("catalog: embedded SQL " + name + " missing: " + err.Error())
	}
	return strings.TrimSpace(string(b))
}

// supersededSeedSQL lists, per seeded endpoint, the SHA-256 digests (hex,
// of the text with surrounding space trimmed) of every SQL text an earlier
// version of Sediment seeded it with. An endpoint whose query is still one
// of these was never edited by its operator, so SeedSupabase replaces it
// with the current text; any other text is the operator's and is kept.
//
// When a seeded SQL file changes, add the digest of its previous text here
// (TestSeedSQLHistory fails until it is, and prints the digest).
var supersededSeedSQL = map[string][]string{
	// Until the logs.all CTEs of edge, auth, PostgREST and PgBouncer logs
	// read their source through unnest(t.metadata), and usage.api-counts
	// matched the project on t.project with an exclusive window start.
	"logs.all":         {"f26cbf4d3352ba143a50a0e175f014f752fa2bbc44c053c37a187122e0672c4f"},
	"usage.api-counts": {"be816a7002d50d765d8875b6471191eee4ad551fbfac1d4f85d51cad38b415c1"},
}

// seedDigest is the digest supersededSeedSQL records for a text.
func seedDigest(sql string) string {
	sum := sha256.Sum256([]byte(strings.TrimSpace(sql)))
	return hex.EncodeToString(sum[:])
}

// SeedResult lists what SeedSupabase did.
type SeedResult struct {
	// Sources and Endpoints were created.
	Sources   []*Source
	Endpoints []*Endpoint
	// Upgraded are seeded endpoints whose query was an earlier version's
	// seeded SQL, never edited, and now is the current one.
	Upgraded []*Endpoint
	// Customized names seeded endpoints whose query the operator changed:
	// they are left as they are, even where this version seeds other SQL.
	Customized []string
}

// SeedSupabase creates, in one write, each Supabase source that no source
// is named after yet and each Supabase endpoint whose name is not taken
// yet. Running it again creates nothing, so it is safe on every start; a
// source or endpoint the operator changed or deleted and re-created is left
// as it is, with one exception: a seeded endpoint whose query is exactly
// SQL that an earlier version seeded (see supersededSeedSQL) gets the
// current SQL, so an upgrade fixes the endpoints of an existing data
// directory without touching an operator's edits. Only the query changes;
// the endpoint keeps its token and other settings. The seeded SQL is not
// passed through the SQL validator (it is Sediment's own and tested).
func (c *Catalog) SeedSupabase() (SeedResult, error) {
	var res SeedResult
	err := c.change(func(st *state) ([]Change, error) {
		res = SeedResult{}
		var changes []Change
		names := map[string]bool{}
		for _, s := range st.sources {
			names[s.Name] = true
		}
		for _, ss := range SupabaseSources() {
			if names[ss.Name] {
				continue
			}
			now := c.now()
			s := &Source{ID: st.nextSourceID, Token: c.opts.NewUUID(), Name: ss.Name, SortKey: ss.SortKey, InsertedAt: now, UpdatedAt: now}
			st.nextSourceID++
			st.sources = append(st.sources, s)
			res.Sources = append(res.Sources, s)
			changes = append(changes, Change{Kind: SourceCreated, Source: s})
		}
		for _, p := range SupabaseEndpoints() {
			if i := indexOf(st.endpoints, func(e *Endpoint) bool { return e.Name == *p.Name }); i >= 0 {
				old := st.endpoints[i]
				switch {
				case strings.TrimSpace(old.Query) == *p.Query:
				case old.Language == LanguageBQSQL && slices.Contains(supersededSeedSQL[old.Name], seedDigest(old.Query)):
					e := *old
					e.Query = *p.Query
					e.UpdatedAt = c.now()
					st.endpoints[i] = &e
					res.Upgraded = append(res.Upgraded, &e)
					changes = append(changes, Change{Kind: EndpointUpdated, Endpoint: &e, OldEndpoint: old})
				default:
					res.Customized = append(res.Customized, old.Name)
				}
				continue
			}
			e := c.newEndpoint(st.nextEndpointID)
			if err := c.applyEndpointParams(st, e, p, true, false); err != nil {
				return nil, err
			}
			st.nextEndpointID++
			st.endpoints = append(st.endpoints, e)
			res.Endpoints = append(res.Endpoints, e)
			changes = append(changes, Change{Kind: EndpointCreated, Endpoint: e})
		}
		return changes, nil
	})
	return res, err
}
