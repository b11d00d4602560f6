package catalog

import (
	"embed"
	"strings"
)

// The SQL of the seeded endpoints, written for Sediment's BigQuery dialect
// (logflare-compat §5.3, supabase-clients §3).
//
//go:embed supabase/*.sql
var supabaseSQL embed.FS

// SupabaseSource is one of the sources Supabase ships logs to, with the
// CTE that logs.all gives it and the column that holds the project ref.
type SupabaseSource struct {
	Name          string // Logflare source name (the SQL table name)
	CTE           string // CTE name in logs.all (Studio's table name)
	ProjectFilter string // the column compared to @project in logs.all
}

// SupabaseSources returns the nine sources Supabase mode seeds, in
// Logflare's seeding order.
func SupabaseSources() []SupabaseSource {
	return []SupabaseSource{
		{"cloudflare.logs.prod", "edge_logs", "t.project"},
		{"postgres.logs", "postgres_logs", "t.project"},
		{"deno-relay-logs", "function_edge_logs", "m.project_ref"},
		{"deno-subhosting-events", "function_logs", "m.project_ref"},
		{"gotrue.logs.prod", "auth_logs", "t.project"},
		{"realtime.logs.prod", "realtime_logs", "m.project"},
		{"storage.logs.prod.2", "storage_logs", "m.project"},
		{"postgREST.logs.prod", "postgrest_logs", "t.project"},
		{"pgbouncer.logs.prod", "pgbouncer_logs", "t.project"},
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

// SeedResult lists what SeedSupabase created.
type SeedResult struct {
	Sources   []*Source
	Endpoints []*Endpoint
}

// SeedSupabase creates, in one write, each Supabase source that no source
// is named after yet and each Supabase endpoint whose name is not taken
// yet. Running it again creates nothing, so it is safe on every start; a
// source or endpoint the operator changed or deleted and re-created is left
// as it is. The seeded SQL is not passed through the SQL validator (it is
// Sediment's own and tested).
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
			s := &Source{ID: st.nextSourceID, Token: c.opts.NewUUID(), Name: ss.Name, InsertedAt: now, UpdatedAt: now}
			st.nextSourceID++
			st.sources = append(st.sources, s)
			res.Sources = append(res.Sources, s)
			changes = append(changes, Change{Kind: SourceCreated, Source: s})
		}
		for _, p := range SupabaseEndpoints() {
			if indexOf(st.endpoints, func(e *Endpoint) bool { return e.Name == *p.Name }) >= 0 {
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
