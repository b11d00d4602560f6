-- logs.all: the Supabase log sources, one CTE each, filtered to the
-- project and to an optional time window. Studio sends its own final
-- SELECT over these CTEs as sql=; this one is the default.
--
-- Parameters (all strings; a missing or empty bound means unbounded):
--   @project             project ref ("default" when self-hosted)
--   @iso_timestamp_start exclusive lower bound, ISO 8601
--   @iso_timestamp_end   inclusive upper bound, ISO 8601
with edge_logs as (
  select t.timestamp, t.id, t.event_message, t.metadata
  from `cloudflare.logs.prod` as t
  where t.project = @project
    and CASE WHEN COALESCE(@iso_timestamp_start, '') = '' THEN TRUE ELSE cast(t.timestamp as timestamp) > cast(@iso_timestamp_start as timestamp) END
    and CASE WHEN COALESCE(@iso_timestamp_end, '') = '' THEN TRUE ELSE cast(t.timestamp as timestamp) <= cast(@iso_timestamp_end as timestamp) END
  order by cast(t.timestamp as timestamp) desc
),
postgres_logs as (
  select t.timestamp, t.id, t.event_message, t.metadata
  from `postgres.logs` as t
  where t.project = @project
    and CASE WHEN COALESCE(@iso_timestamp_start, '') = '' THEN TRUE ELSE cast(t.timestamp as timestamp) > cast(@iso_timestamp_start as timestamp) END
    and CASE WHEN COALESCE(@iso_timestamp_end, '') = '' THEN TRUE ELSE cast(t.timestamp as timestamp) <= cast(@iso_timestamp_end as timestamp) END
  order by cast(t.timestamp as timestamp) desc
),
function_edge_logs as (
  select t.timestamp, t.id, t.event_message, t.metadata
  from `deno-relay-logs` as t
  cross join unnest(t.metadata) as m
  where m.project_ref = @project
    and CASE WHEN COALESCE(@iso_timestamp_start, '') = '' THEN TRUE ELSE cast(t.timestamp as timestamp) > cast(@iso_timestamp_start as timestamp) END
    and CASE WHEN COALESCE(@iso_timestamp_end, '') = '' THEN TRUE ELSE cast(t.timestamp as timestamp) <= cast(@iso_timestamp_end as timestamp) END
  order by cast(t.timestamp as timestamp) desc
),
function_logs as (
  select t.timestamp, t.id, t.event_message, t.metadata
  from `deno-subhosting-events` as t
  cross join unnest(t.metadata) as m
  where m.project_ref = @project
    and CASE WHEN COALESCE(@iso_timestamp_start, '') = '' THEN TRUE ELSE cast(t.timestamp as timestamp) > cast(@iso_timestamp_start as timestamp) END
    and CASE WHEN COALESCE(@iso_timestamp_end, '') = '' THEN TRUE ELSE cast(t.timestamp as timestamp) <= cast(@iso_timestamp_end as timestamp) END
  order by cast(t.timestamp as timestamp) desc
),
auth_logs as (
  select t.timestamp, t.id, t.event_message, t.metadata
  from `gotrue.logs.prod` as t
  where t.project = @project
    and CASE WHEN COALESCE(@iso_timestamp_start, '') = '' THEN TRUE ELSE cast(t.timestamp as timestamp) > cast(@iso_timestamp_start as timestamp) END
    and CASE WHEN COALESCE(@iso_timestamp_end, '') = '' THEN TRUE ELSE cast(t.timestamp as timestamp) <= cast(@iso_timestamp_end as timestamp) END
  order by cast(t.timestamp as timestamp) desc
),
realtime_logs as (
  select t.timestamp, t.id, t.event_message, t.metadata
  from `realtime.logs.prod` as t
  cross join unnest(t.metadata) as m
  where m.project = @project
    and CASE WHEN COALESCE(@iso_timestamp_start, '') = '' THEN TRUE ELSE cast(t.timestamp as timestamp) > cast(@iso_timestamp_start as timestamp) END
    and CASE WHEN COALESCE(@iso_timestamp_end, '') = '' THEN TRUE ELSE cast(t.timestamp as timestamp) <= cast(@iso_timestamp_end as timestamp) END
  order by cast(t.timestamp as timestamp) desc
),
storage_logs as (
  select t.timestamp, t.id, t.event_message, t.metadata
  from `storage.logs.prod.2` as t
  cross join unnest(t.metadata) as m
  where m.project = @project
    and CASE WHEN COALESCE(@iso_timestamp_start, '') = '' THEN TRUE ELSE cast(t.timestamp as timestamp) > cast(@iso_timestamp_start as timestamp) END
    and CASE WHEN COALESCE(@iso_timestamp_end, '') = '' THEN TRUE ELSE cast(t.timestamp as timestamp) <= cast(@iso_timestamp_end as timestamp) END
  order by cast(t.timestamp as timestamp) desc
),
postgrest_logs as (
  select t.timestamp, t.id, t.event_message, t.metadata
  from `postgREST.logs.prod` as t
  where t.project = @project
    and CASE WHEN COALESCE(@iso_timestamp_start, '') = '' THEN TRUE ELSE cast(t.timestamp as timestamp) > cast(@iso_timestamp_start as timestamp) END
    and CASE WHEN COALESCE(@iso_timestamp_end, '') = '' THEN TRUE ELSE cast(t.timestamp as timestamp) <= cast(@iso_timestamp_end as timestamp) END
  order by cast(t.timestamp as timestamp) desc
),
pgbouncer_logs as (
  select t.timestamp, t.id, t.event_message, t.metadata
  from `pgbouncer.logs.prod` as t
  where t.project = @project
    and CASE WHEN COALESCE(@iso_timestamp_start, '') = '' THEN TRUE ELSE cast(t.timestamp as timestamp) > cast(@iso_timestamp_start as timestamp) END
    and CASE WHEN COALESCE(@iso_timestamp_end, '') = '' THEN TRUE ELSE cast(t.timestamp as timestamp) <= cast(@iso_timestamp_end as timestamp) END
  order by cast(t.timestamp as timestamp) desc
)
SELECT id, timestamp, event_message, metadata FROM edge_logs LIMIT 100
