-- usage.api-counts: API requests through the gateway per time bucket, by
-- service (REST, Storage, Auth, Realtime), for one project.
--
-- Parameters:
--   @project   project ref; self-hosted edge events carry it as t.project
--              (they have no request.url)
--   @interval  window and bucket:
--                minutely, 1hr  the last 60 minutes, by minute
--                hourly         the last hour, by hour
--                1day           the last 24 hours, by hour
--                daily, 7day    the last 7 days, by day
--              any other value selects nothing (an empty result)
with requests as (
  select
    CASE
      WHEN @interval IN ('minutely', '1hr') THEN timestamp_trunc(cast(t.timestamp as timestamp), minute)
      WHEN @interval IN ('hourly', '1day') THEN timestamp_trunc(cast(t.timestamp as timestamp), hour)
      WHEN @interval IN ('daily', '7day') THEN timestamp_trunc(cast(t.timestamp as timestamp), day)
    END as ts,
    request.path as path
  from `cloudflare.logs.prod` as t
  cross join unnest(t.metadata) as m
  cross join unnest(m.request) as request
  where t.project = @project
    and cast(t.timestamp as timestamp) > CASE
      WHEN @interval IN ('minutely', '1hr') THEN timestamp_sub(current_timestamp(), interval 60 minute)
      WHEN @interval = 'hourly' THEN timestamp_sub(current_timestamp(), interval 1 hour)
      WHEN @interval = '1day' THEN timestamp_sub(current_timestamp(), interval 24 hour)
      WHEN @interval IN ('daily', '7day') THEN timestamp_sub(current_timestamp(), interval 7 day)
    END
),
counts as (
  select
    ts,
    countif(regexp_contains(path, '/rest')) as total_rest_requests,
    countif(regexp_contains(path, '/storage')) as total_storage_requests,
    countif(regexp_contains(path, '/auth')) as total_auth_requests,
    countif(regexp_contains(path, '/realtime')) as total_realtime_requests
  from requests
  group by ts
)
select
  datetime(ts, 'UTC') as timestamp,
  total_rest_requests,
  total_storage_requests,
  total_auth_requests,
  total_realtime_requests
from counts
order by timestamp
