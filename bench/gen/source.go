package gen

// Source is one of the nine Logflare sources Supabase ships logs to. The
// constants are named after the table names Supabase Studio's logs.all
// endpoint gives them; Name returns the Logflare source name.
type Source uint8

// The nine sources, in the order Logflare's single-tenant seeding creates them.
const (
	EdgeLogs         Source = iota // cloudflare.logs.prod: API gateway (Kong / Cloudflare) request logs
	PostgresLogs                   // postgres.logs: database server log lines
	FunctionEdgeLogs               // deno-relay-logs: edge function invocations (self-hosted: all function output)
	FunctionLogs                   // deno-subhosting-events: edge function console and lifecycle events
	AuthLogs                       // gotrue.logs.prod: GoTrue (auth) request and audit logs
	RealtimeLogs                   // realtime.logs.prod: Realtime server logs
	StorageLogs                    // storage.logs.prod.2: Storage API request logs
	PostgRESTLogs                  // postgREST.logs.prod: PostgREST server logs
	PgBouncerLogs                  // pgbouncer.logs.prod: connection pooler logs
	numSources
)

var sourceNames = [numSources]string{
	EdgeLogs:         "cloudflare.logs.prod",
	PostgresLogs:     "postgres.logs",
	FunctionEdgeLogs: "deno-relay-logs",
	FunctionLogs:     "deno-subhosting-events",
	AuthLogs:         "gotrue.logs.prod",
	RealtimeLogs:     "realtime.logs.prod",
	StorageLogs:      "storage.logs.prod.2",
	PostgRESTLogs:    "postgREST.logs.prod",
	PgBouncerLogs:    "pgbouncer.logs.prod",
}

var sourceTables = [numSources]string{
	EdgeLogs:         "edge_logs",
	PostgresLogs:     "postgres_logs",
	FunctionEdgeLogs: "function_edge_logs",
	FunctionLogs:     "function_logs",
	AuthLogs:         "auth_logs",
	RealtimeLogs:     "realtime_logs",
	StorageLogs:      "storage_logs",
	PostgRESTLogs:    "postgrest_logs",
	PgBouncerLogs:    "pgbouncer_logs",
}

// Name returns the Logflare source name, e.g. "cloudflare.logs.prod" (case
// matters: "postgREST.logs.prod").
func (s Source) Name() string {
	if s >= numSources {
		return "unknown"
	}
	return sourceNames[s]
}

// Table returns the name Studio's logs.all endpoint gives the source's CTE,
// e.g. "edge_logs".
func (s Source) Table() string {
	if s >= numSources {
		return "unknown"
	}
	return sourceTables[s]
}

// String returns Name.
func (s Source) String() string { return s.Name() }

// AllSources returns the nine sources in seeding order.
func AllSources() []Source {
	out := make([]Source, numSources)
	for i := range out {
		out[i] = Source(i)
	}
	return out
}

// SourceByName finds a source by its Logflare name (exact, case-sensitive,
// as in an ingest URL's source_name) or by its Studio table name.
func SourceByName(name string) (Source, bool) {
	for i := range numSources {
		if sourceNames[i] == name || sourceTables[i] == name {
			return i, true
		}
	}
	return 0, false
}

// Shape selects which deployment's event form a generator produces.
type Shape uint8

const (
	// SelfHosted is the form Vector ships in Supabase's docker setup:
	// appname, project "default", the fields Vector's remap transforms
	// extract, and nothing more.
	SelfHosted Shape = iota
	// Platform is the richer form of supabase.com, as Logflare's schema seed
	// samples show it: project refs, Cloudflare request metadata, Postgres
	// csvlog fields, function deployment metadata.
	Platform
)

// String returns "selfhosted" or "platform".
func (s Shape) String() string {
	if s == Platform {
		return "platform"
	}
	return "selfhosted"
}

// ParseShape parses "selfhosted" (also "self-hosted") or "platform".
func ParseShape(s string) (Shape, bool) {
	switch s {
	case "selfhosted", "self-hosted":
		return SelfHosted, true
	case "platform":
		return Platform, true
	}
	return 0, false
}
