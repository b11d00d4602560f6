-- usage.api-counts: API requests through the gateway per time bucket, by
-- service (REST, Storage, Auth, Realtime), for Studio's project home.
--
-- Parameters (strings):
--   @project   a regular expression the request URL
--              (metadata.request.url) must contain a match of, as in
--              Logflare's seed: on the platform the URL names the project
--              (https://<ref>.supabase.co/...). Self-hosted Kong events
--              carry no URL, so nothing is counted there (see the README
--              for counting by the top-level project instead).
--   @interval  the window (from now back to its start, start included)
--              and the bucket:
--                minutely  the last 60 minutes, by minute
--                hourly    the last hour, by hour
--                daily     the last 7 days, by day
--              and newer Studio's values, as windows of the same kind:
--                1hr       the last 60 minutes, by minute
--                1day      the last 24 hours, by hour
--                7day      the last 7 days, by day
--              any other value: no rows.
--
-- One row per bucket that holds at least one matching request, oldest
-- first, as Logflare's seed answers (a window without requests gives no
-- rows): timestamp is the bucket's start as a UTC DATETIME, the counts are
-- integers, 0 for a service without requests in the bucket.
select
  datetime(CASE
    WHEN @interval IN ('minutely', '1hr') THEN timestamp_trunc(t.timestamp, minute)
    WHEN @interval IN ('hourly', '1day') THEN timestamp_trunc(t.timestamp, hour)
    WHEN @interval IN ('daily', '7day') THEN timestamp_trunc(t.timestamp, day)
  END, 'UTC') as timestamp,
  countif(regexp_contains(request.path, '/rest')) as total_rest_requests,
  countif(regexp_contains(request.path, '/storage')) as total_storage_requests,
  countif(regexp_contains(request.path, '/auth')) as total_auth_requests,
  countif(regexp_contains(request.path, '/realtime')) as total_realtime_requests
from `cloudflare.logs.prod` as t
cross join unnest(t.metadata) as m
cross join unnest(m.request) as request
where regexp_contains(request.url, @project)
  and t.timestamp >= CASE
    WHEN @interval IN ('minutely', '1hr') THEN timestamp_sub(current_timestamp(), interval 60 minute)
    WHEN @interval = 'hourly' THEN timestamp_sub(current_timestamp(), interval 1 hour)
    WHEN @interval = '1day' THEN timestamp_sub(current_timestamp(), interval 24 hour)
    WHEN @interval IN ('daily', '7day') THEN timestamp_sub(current_timestamp(), interval 7 day)
  END
group by timestamp
order by timestamp
