package bench

import (
	"time"

	"github.com/sediment/sediment/bench/gen"
)

// Query is one query of a suite: an endpoint call with its parameters, or
// an LQL search.
type Query struct {
	Name string
	// Endpoint is the query endpoint called (logs.all, usage.api-counts).
	Endpoint string
	// Params are the request's parameters (project, sql, lql,
	// iso_timestamp_start, interval, ...).
	Params map[string]string
	// BustCache adds a parameter that changes on every run, so that an
	// endpoint with a result cache computes each time.
	BustCache bool
	// Search, when set, is an LQL search of source Search.Source, which a
	// target runs through the source search API when the server has one,
	// else as Fallback (an lql= call of logs.all).
	Search *Search
	// SQL, when set, is ad-hoc SQL over the sources, sent as GET
	// /api/query?sql= with the private key (Endpoint and Params unused).
	SQL string
	// LogsQL is the same question for VictoriaLogs (nil: the query has no
	// VictoriaLogs form).
	LogsQL *LogsQL
	// Check, when set, compares an answer's rows with the generator's
	// truth and says what is wrong (an error wrapping errWrongAnswer).
	Check func(rows []Row) error
}

// Search is an LQL search on one source.
type Search struct {
	Source string // source name, e.g. cloudflare.logs.prod
	LQL    string // without f:
	Start  time.Time
	End    time.Time
}

// isoMillis formats t as Studio does (toISOString: milliseconds, Z).
func isoMillis(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }

// SuiteOptions place a suite in time and data.
type SuiteOptions struct {
	// Project is the project ref logs.all and usage.api-counts filter on.
	Project string
	// Now is the reference time: "the last hour" ends here. It should be
	// the newest event's time of the data set (or later).
	Now time.Time
	// Sources are the sources the data hold; queries of others are left out.
	Sources []gen.Source
	// NoCached leaves out the query that measures an endpoint's result
	// cache (a sweep compares storage settings, which the cache hides).
	NoCached bool
}

// edgeJoins are Studio's joins for edge_logs (genCrossJoinUnnests).
const edgeJoins = `cross join unnest(metadata) as m
cross join unnest(m.request) as request
cross join unnest(m.response) as response
`

// StudioSuite returns the queries Supabase Studio and its users send, as
// Studio sends them (logs.all with sql= and a time window, usage.api-counts
// with an interval), plus LQL searches. "Last hour" means the hour before
// o.Now, "last day" the 24 hours before it.
func StudioSuite(o SuiteOptions) []Query {
	now := o.Now.UTC()
	hour := now.Add(-time.Hour)
	day := now.Add(-24 * time.Hour)
	has := func(s gen.Source) bool {
		for _, x := range o.Sources {
			if x == s {
				return true
			}
		}
		return false
	}
	logsAll := func(name string, start time.Time, sql string) Query {
		p := map[string]string{"project": o.Project, "iso_timestamp_start": isoMillis(start), "iso_timestamp_end": isoMillis(now)}
		if sql != "" {
			p["sql"] = sql
		}
		return Query{Name: name, Endpoint: "logs.all", Params: p}
	}
	usage := func(name, interval string, cached bool) Query {
		return Query{Name: name, Endpoint: "usage.api-counts", BustCache: !cached,
			Params: map[string]string{"project": o.Project, "interval": interval}}
	}
	var qs []Query
	if has(gen.EdgeLogs) {
		qs = append(qs,
			logsAll("logs.all default, 1h", hour, ""),
			logsAll("edge newest 100 + regexp, 1h", hour, `select id, edge_logs.timestamp, event_message, request.method, request.path, response.status_code
from edge_logs
`+edgeJoins+`where (regexp_contains(event_message, 'auth/v1/(token|user)'))
order by timestamp desc
limit 100`),
			logsAll("edge count 4xx/5xx, 1h", hour, `select count(*) as count from edge_logs
`+edgeJoins+`where (response.status_code >= 400 and response.status_code <= 599)`),
			logsAll("edge chart per minute, 1h", hour, `select
  timestamp_trunc(t.timestamp, minute) as timestamp,
  countif(response.status_code < 300) as ok_count,
  countif(response.status_code >= 500) as error_count,
  countif(response.status_code >= 400 and response.status_code < 500) as warning_count
from edge_logs t
cross join unnest(t.metadata) as metadata
cross join unnest(metadata.response) as response
group by timestamp
order by timestamp asc`),
			logsAll("edge status 500 newest 100, 24h", day, `select id, edge_logs.timestamp, event_message, request.method, request.path, response.status_code
from edge_logs
`+edgeJoins+`where (response.status_code = 500)
order by timestamp desc
limit 100`),
			logsAll("edge top 10 paths, 1h", hour, `select request.path as path, count(*) as count
from edge_logs
`+edgeJoins+`group by path
order by count desc
limit 10`),
			logsAll("edge top 10 paths, 24h", day, `select request.path as path, count(*) as count
from edge_logs
`+edgeJoins+`group by path
order by count desc
limit 10`),
			usage("usage.api-counts minutely", "minutely", false),
			usage("usage.api-counts hourly", "hourly", false),
			usage("usage.api-counts daily", "daily", false),
		)
		if !o.NoCached {
			qs = append(qs, usage("usage.api-counts hourly, cached", "hourly", true))
		}
		qs = append(qs,
			search("lql status 500, 1h", gen.EdgeLogs, "m.response.status_code:500", hour, now, o.Project),
			search("lql regex, 1h", gen.EdgeLogs, `~"rest/v1/[a-z_]+\?select"`, hour, now, o.Project),
			search("lql POST 4xx+, 1h", gen.EdgeLogs, "m.request.method:POST m.response.status_code:>=400", hour, now, o.Project),
		)
	}
	if has(gen.PostgresLogs) {
		qs = append(qs, logsAll("postgres errors newest 100, 24h", day, `select id, postgres_logs.timestamp, event_message, parsed.error_severity
from postgres_logs
cross join unnest(metadata) as m
cross join unnest(m.parsed) as parsed
where (parsed.error_severity in ('ERROR', 'FATAL', 'PANIC'))
order by timestamp desc
limit 100`))
	}
	if has(gen.AuthLogs) {
		qs = append(qs, logsAll("auth errors newest 100, 24h", day, `select id, auth_logs.timestamp, event_message, metadata.level, metadata.status, metadata.path
from auth_logs
cross join unnest(metadata) as metadata
where metadata.level = 'error'
order by timestamp desc
limit 100`))
	}
	return qs
}

// search builds an LQL search with its logs.all fallback.
func search(name string, src gen.Source, lql string, start, end time.Time, project string) Query {
	return Query{
		Name:     name,
		Endpoint: "logs.all",
		Params: map[string]string{
			"project":             project,
			"iso_timestamp_start": isoMillis(start),
			"iso_timestamp_end":   isoMillis(end),
			"lql":                 "f:" + src.Table() + " " + lql,
		},
		Search: &Search{Source: src.Name(), LQL: lql, Start: start, End: end},
	}
}
