package parser

import (
	"fmt"
	"strings"
)

// This file holds realistic queries in the shapes Supabase Studio and
// Logflare's seeded endpoints send. They feed the parse tests, the
// round-trip property, the fuzz seeds and the benchmarks.

type namedSQL struct {
	name string
	sql  string
}

// logsAllSQL builds the logs.all endpoint query: nine CTEs, one per
// Supabase source, each with a project filter and optional time bounds
// written as CASE WHEN COALESCE(@p, ”) = ” THEN TRUE ELSE ... END.
func logsAllSQL() string {
	type cte struct {
		name, source string
		unnest       bool
		projectCol   string
	}
	ctes := []cte{
		{"edge_logs", "cloudflare.logs.prod", true, "t.project"},
		{"postgres_logs", "postgres.logs", false, "t.project"},
		{"function_edge_logs", "deno-relay-logs", true, "m.project_ref"},
		{"function_logs", "deno-subhosting-events", true, "m.project_ref"},
		{"auth_logs", "gotrue.logs.prod", false, "t.project"},
		{"realtime_logs", "realtime.logs.prod", true, "m.project"},
		{"storage_logs", "storage.logs.prod.2", true, "m.project"},
		{"postgrest_logs", "postgREST.logs.prod", false, "t.project"},
		{"pgbouncer_logs", "pgbouncer.logs.prod", false, "t.project"},
	}
	var b strings.Builder
	b.WriteString("with ")
	for i, c := range ctes {
		if i > 0 {
			b.WriteString(",\n")
		}
		unnest := ""
		if c.unnest {
			unnest = "\n  cross join unnest(t.metadata) as m"
		}
		fmt.Fprintf(&b, `%s as (
  select t.timestamp, t.id, t.event_message, t.metadata
  from `+"`%s`"+` as t%s
  where %s = @project
    AND CASE WHEN COALESCE(@iso_timestamp_start, '') = '' THEN TRUE ELSE cast(t.timestamp as timestamp) > cast(@iso_timestamp_start as timestamp) END
    AND CASE WHEN COALESCE(@iso_timestamp_end, '') = '' THEN TRUE ELSE cast(t.timestamp as timestamp) <= cast(@iso_timestamp_end as timestamp) END
  order by cast(t.timestamp as timestamp) desc
)`, c.name, c.source, unnest, c.projectCol)
	}
	b.WriteString("\nSELECT id, timestamp, event_message, metadata FROM edge_logs LIMIT 100")
	return b.String()
}

// apiCountsSQL is the usage.api-counts endpoint shape.
const apiCountsSQL = `with
dates as (
  select (case
    when @interval = 'hourly' then timestamp_sub(current_timestamp(), interval 1 hour)
    when @interval = 'daily' then timestamp_sub(current_timestamp(), interval 7 day)
    when @interval = 'minutely' then timestamp_sub(current_timestamp(), interval 60 minute)
  end) as start
),
chart_counts as (
select
  (case
    when @interval = 'hourly' then timestamp_trunc(f0.timestamp, hour)
    when @interval = 'daily' then timestamp_trunc(f0.timestamp, day)
    when @interval = 'minutely' then timestamp_trunc(f0.timestamp, minute)
  end
  ) as timestamp,
  COUNTIF(REGEXP_CONTAINS(f2.path, '/rest')) as total_rest_requests,
  COUNTIF(REGEXP_CONTAINS(f2.path, '/storage')) as total_storage_requests,
  COUNTIF(REGEXP_CONTAINS(f2.path, '/auth')) as total_auth_requests,
  COUNTIF(REGEXP_CONTAINS(f2.path, '/realtime')) as total_realtime_requests,
FROM
  dates,
  ` + "`cloudflare.logs.prod`" + ` as f0
  LEFT JOIN UNNEST(metadata) f1
  LEFT JOIN UNNEST(f1.request) f2
where
  REGEXP_CONTAINS(f2.url, @project) AND f0.timestamp >= dates[0]
  -- the project is matched on the url
GROUP BY
    timestamp
)
SELECT
    datetime(chart_counts.timestamp, 'UTC') as timestamp,
    COALESCE(SUM(chart_counts.total_rest_requests), 0) as total_rest_requests,
    COALESCE(SUM(chart_counts.total_storage_requests), 0) as total_storage_requests,
    COALESCE(SUM(chart_counts.total_auth_requests), 0) as total_auth_requests,
    COALESCE(SUM(chart_counts.total_realtime_requests), 0) as total_realtime_requests,
FROM
  chart_counts
GROUP BY
    timestamp
ORDER BY
    timestamp asc;`

// invocationStatsSQL is the older functions.invocation-stats endpoint shape.
const invocationStatsSQL = `with rows as (
  select
    timestamp_trunc(t.timestamp, minute) as ts,
    m.execution_time_ms as exec_ms,
    response.status_code as status
  from ` + "`deno-relay-logs`" + ` t
  cross join unnest(t.metadata) m
  cross join unnest(m.response) response
  where m.function_id = @function_id
    and m.project_ref = @project
    and t.timestamp >= case
      when @interval = '5min' then timestamp_sub(current_timestamp(), interval 5 minute)
      when @interval = '15min' then timestamp_sub(current_timestamp(), interval 15 minute)
      when @interval = '1hr' then timestamp_sub(current_timestamp(), interval 1 hour)
      when @interval = '1day' then timestamp_sub(current_timestamp(), interval 1 day)
      else timestamp_sub(current_timestamp(), interval 7 day)
    end
)
select
  ts as timestamp,
  count(*) as count,
  avg(exec_ms) as avg_execution_time,
  max(exec_ms) as max_execution_time,
  min(exec_ms) as min_execution_time,
  approx_quantiles(exec_ms, 100)[offset(95)] as p95_execution_time,
  approx_quantiles(exec_ms, 100)[OFFSET(99)] as p99_execution_time,
  countif(status >= 200 and status < 300) as ok_count,
  countif(status between 400 and 499) as client_err_count,
  countif(status >= 500) as server_err_count
from rows
group by ts
order by ts desc`

// unifiedLogsSQL is a ~2 KB query in the shape of Studio's unified logs view:
// one CTE per log kind projecting common columns, filtered and unioned. It is
// the benchmark's "typical large Studio query".
const unifiedLogsSQL = `with edge as (
  select id, el.timestamp as timestamp, 'edge' as log_type,
    cast(response.status_code as string) as status, request.method as method, request.path as pathname,
    CASE WHEN response.status_code >= 500 THEN 'error' WHEN response.status_code >= 400 THEN 'warning' ELSE 'success' END as level,
    event_message
  from edge_logs as el
  cross join unnest(el.metadata) as m
  cross join unnest(m.request) as request
  cross join unnest(m.response) as response
  where el.timestamp > '2025-07-10T11:00:00.000Z' and request.path not like '/realtime/%'
),
postgres as (
  select id, pl.timestamp as timestamp, 'postgres' as log_type,
    cast(null as string) as status, cast(null as string) as method, cast(null as string) as pathname,
    case when parsed.error_severity in ('ERROR', 'FATAL', 'PANIC') then 'error'
         when parsed.error_severity = 'WARNING' then 'warning' else 'success' end as level,
    event_message
  from postgres_logs as pl
  cross join unnest(pl.metadata) as m
  cross join unnest(m.parsed) as parsed
  where pl.timestamp > '2025-07-10T11:00:00.000Z'
),
-- edge functions
functions as (
  select id, fl.timestamp as timestamp, 'edge function' as log_type,
    cast(response.status_code as string) as status, request.method as method, request.pathname as pathname,
    if(response.status_code >= 500, 'error', 'success') as level,
    event_message
  from function_edge_logs as fl
  cross join unnest(fl.metadata) as m
  cross join unnest(m.response) as response
  cross join unnest(m.request) as request
  where fl.timestamp > '2025-07-10T11:00:00.000Z' and m.function_id = @function_id
),
auth as (
  select id, al.timestamp as timestamp, 'auth' as log_type,
    cast(metadata.status as string) as status, metadata.method as method, metadata.path as pathname,
    coalesce(metadata.level, 'info') as level, event_message
  from auth_logs as al
  cross join unnest(al.metadata) as metadata
  where al.timestamp > '2025-07-10T11:00:00.000Z'
)
select id, timestamp, log_type, status, method, pathname, level, event_message from edge
union all
select id, timestamp, log_type, status, method, pathname, level, event_message from postgres
union all
select id, timestamp, log_type, status, method, pathname, level, event_message from functions
union all
select id, timestamp, log_type, status, method, pathname, level, event_message from auth
order by timestamp desc, id desc
limit 50`

// studioQueries are queries in the shapes Studio generates or users write in
// the logs explorer and reports.
var studioQueries = []namedSQL{
	{"edge logs list", `select id, edge_logs.timestamp, event_message, request.method, request.path, response.status_code
from edge_logs
cross join unnest(metadata) as m
cross join unnest(m.request) as request
cross join unnest(m.response) as response
where (regexp_contains(event_message, 'error')) and (response.status_code >= 500)
order by timestamp desc
limit 100`},
	{"edge logs count", `select count(*) as count from edge_logs
cross join unnest(metadata) as m
cross join unnest(m.request) as request
cross join unnest(m.response) as response
where (response.status_code >= 400 and response.status_code <= 599) and (request.method in ('GET', 'POST'))`},
	{"edge chart", `select
  timestamp_trunc(t.timestamp, minute) as timestamp,
  countif(response.status_code < 300) as ok_count,
  countif(response.status_code >= 500) as error_count,
  countif(response.status_code >= 400 and response.status_code < 500) as warning_count
from edge_logs t
cross join unnest(t.metadata) as metadata
cross join unnest(metadata.response) as response
where t.timestamp > '2025-07-10T05:00:00.000Z'
group by timestamp
order by timestamp asc`},
	{"postgres logs", `select identifier, postgres_logs.timestamp, id, event_message, parsed.error_severity, parsed.user_name
from postgres_logs
cross join unnest(metadata) as m
cross join unnest(m.parsed) as parsed
where (parsed.error_severity in ('ERROR', 'FATAL', 'PANIC')) and (regexp_contains(event_message, 'connection|timeout'))
order by timestamp desc
limit 100`},
	{"function logs shadowing alias", `select id, function_logs.timestamp, event_message, metadata.event_type, metadata.function_id, metadata.level
from function_logs
cross join unnest(metadata) as metadata
where ` + "`function_id`" + ` = 'b1c2d3' and (metadata.level = 'error' or metadata.level = 'warning')
order by timestamp desc
limit 100`},
	{"function edge logs backticked path", `select id, function_edge_logs.timestamp, event_message, response.status_code, request.method, m.function_id, m.execution_time_ms, m.deployment_id, m.version
from function_edge_logs
cross join unnest(metadata) as m
cross join unnest(m.response) as response
cross join unnest(m.request) as request
where ` + "`request`.`method`" + ` = 'POST' and function_id = 'abc'
order by timestamp desc
limit 100`},
	{"auth logs", `select id, auth_logs.timestamp, event_message, metadata.level, metadata.status, metadata.path, metadata.msg as msg, metadata.error
from auth_logs
cross join unnest(metadata) as metadata
where metadata.level = 'error' and metadata.status != 200
order by timestamp desc
limit 100`},
	{"single log", `select id, timestamp, event_message, metadata from edge_logs where id = '5f8c6a2e-1c1d-4e3b-9e2c-0a5f3e4d2b1a' limit 1`},
	{"explorer with comments", `-- find slow requests
# hash comment too
select
  -- the request path
  request.path as path, /* inline */ count(*) as c,
  avg(response.origin_time) as avg
from edge_logs
  cross join unnest(metadata) as m
  cross join unnest(m.request) as request
  cross join unnest(m.response) as response
where starts_with(request.path, '/rest/v1') and not (request.path like '%rpc%')
group by path
having count(*) > 10
order by avg desc, c desc
limit 10;`},
	{"storage report", `select
  request.path as path,
  request.search as search,
  count(*) as count,
  safe_divide(countif(response.status_code >= 400), count(*)) as error_rate,
  ANY_VALUE(response.headers) as headers
from edge_logs f0
cross join unnest(f0.metadata) as m
cross join unnest(m.request) as request
cross join unnest(m.response) as response
cross join unnest(response.headers) as h
where starts_with(request.path, '/storage/v1/object') and h.cf_cache_status in ('MISS', 'NONE/UNKNOWN', 'EXPIRED', 'BYPASS', 'DYNAMIC')
group by path, search
order by count desc
limit 12`},
	{"report with derived table join", `with dates as (
  select timestamp_trunc(timestamp_sub(current_timestamp(), interval 60 minute), minute) as ts
)
select d.ts as timestamp, ifnull(c.count, 0) as count
from dates d
left join (
  select timestamp_trunc(t.timestamp, minute) as ts, count(*) as count
  from edge_logs t
  group by 1
) c on d.ts = c.ts
order by timestamp`},
	{"realtime with cast and comparisons", `select id, realtime_logs.timestamp, event_message, m.level, SAFE_CAST(m.external_id AS INT64) as ext
from realtime_logs
cross join unnest(metadata) as m
where m.level <> 'info' and m.project is not null and m.tenant is null
order by timestamp desc, id desc
limit 50 offset 50`},
	{"cached boolean column", `select (h.cf_cache_status = 'HIT') as cached, count(*) as c,
  (request.method = 'GET') and not (request.path like '/rest/%') as is_get
from edge_logs
cross join unnest(metadata) as m
cross join unnest(m.request) as request
cross join unnest(m.response) as response
cross join unnest(response.headers) as h
group by 1, 3`},
	{"unified logs union", `with edge as (
  select id, timestamp, 'edge' as log_type, cast(response.status_code as string) as status, request.method as method,
    CAST(NULL AS STRING) as level, event_message
  from edge_logs
  cross join unnest(metadata) as m
  cross join unnest(m.request) as request
  cross join unnest(m.response) as response
),
-- postgres next
postgres as (
  select id, timestamp, 'postgres' as log_type, null as status, null as method,
    parsed.error_severity as level, event_message
  from postgres_logs
  cross join unnest(metadata) as m
  cross join unnest(m.parsed) as parsed
)
/* combine */
select id, timestamp, log_type, status, method, level, event_message from edge
union all
select id, timestamp, log_type, status, method, level, event_message from postgres
order by timestamp desc, id desc
limit 50`},
	{"window functions", `select id, timestamp,
  row_number() over (partition by request.path order by timestamp desc) as rn,
  count(*) over (partition by request.path) as per_path,
  avg(response.origin_time) over (order by timestamp rows between 5 preceding and current row) as moving,
  lag(timestamp) over (order by timestamp) as prev
from edge_logs
cross join unnest(metadata) as m
cross join unnest(m.request) as request
cross join unnest(m.response) as response
qualify rn <= 3`},
	{"json and format functions", `select format_timestamp('%Y-%m-%d %H:%M', timestamp) as minute,
  json_value(event_message, '$.level') as lvl,
  to_json_string(metadata) as meta,
  extract(hour from timestamp at time zone 'UTC') as h,
  date_diff(current_date(), date(timestamp), day) as age_days
from edge_logs
limit 5`},
	{"constant rows union", `select 'a' as k, 1 as v union all select 'b', 2 union all select 'c', 3`},
	{"grouping by backticked column and ordinal", "select `log_type`, count(*) from unified group by `log_type` order by 2 desc"},
	{"unified logs (2 KB)", unifiedLogsSQL},
	{"logs.all", logsAllSQL()},
	{"usage.api-counts", apiCountsSQL},
	{"functions.invocation-stats", invocationStatsSQL},
}
