// Package gen generates realistic Supabase log events for the nine Logflare
// sources Supabase ships logs to, for benchmarks, tests and fuzz seeds.
//
// Events are JSON objects in the form the client sends them, before any
// server-side normalisation: Vector's form for self-hosted Supabase
// (Shape SelfHosted) and the richer form of the hosted platform, as
// Logflare's schema seed samples show it (Shape Platform). Generation is
// seeded and deterministic — the same Options give the same bytes on every
// run, Go version and architecture (the random stream is our own SplitMix64
// and all sampling is integer arithmetic) — and fast: no fmt, no maps and
// no allocation per event.
//
//	g := gen.New(gen.EdgeLogs, gen.Options{Seed: 1, Shape: gen.Platform})
//	body := g.AppendVectorBatch(nil, 500) // POST /api/logs?source_name=cloudflare.logs.prod
//
// # Time
//
// Events advance in log time by gaps uniform on [0, 2/Rate] seconds from
// Start. One event in a hundred is stamped 0.5–5 s behind the clock, so it
// arrives out of order, as from a shipper batching several containers
// (InOrder turns this off). Time reports the next event's time. Self-hosted timestamps are
// RFC 3339 in Vector's form (a 0-, 3-, 6- or 9-digit fraction, "Z"); Kong and
// PostgREST events carry whole seconds because Vector takes their time from
// the log line. Platform timestamps carry microseconds. Options.Timestamps
// can force another form, including 10/13/16/19-digit integers or none.
//
// # Projects
//
// Self-hosted events all belong to project "default". Platform events
// spread over Options.Projects project refs (20 lowercase letters, from
// ProjectRefs), rank k getting a share proportional to 1/(k+1): with 100
// projects the busiest has about 19% of events. Refs, a project's web app,
// API keys, auth users and edge functions derive from the seed and the
// project's rank only, so every source agrees on them.
//
// # Sources and shapes
//
// cloudflare.logs.prod (EdgeLogs). Self-hosted: a Kong access line as
// Vector's kong_logs transform ships it — appname "supabase-kong",
// event_message an nginx combined log line, and the fields parse_nginx_log
// yields: metadata.request.{headers.{cf_connecting_ip, referer (null when
// "-"), user_agent}, method, path (with the query string), protocol},
// metadata.response.status_code (integer), project "default". About 3% are
// Kong error-log lines as the kong_err transform ships them: a top-level
// severity, metadata.request.host, the request line's method, path and
// protocol, and the status 200 the transform presets. Clients are mostly
// the docker gateway 172.18.0.1.
// Platform: the Logflare Cloudflare worker's event. event_message is
// "<METHOD> | <status> | <client ip> | <ray id> | <url> | <user agent>";
// id is present on half the events (the server generates the rest);
// metadata.logflare_worker.worker_id; metadata.request.{cf.{asn, city,
// clientTcpRtt, colo, country, httpProtocol, latitude, longitude, region,
// timezone, tlsVersion}, headers.{accept, cf_connecting_ip, cf_ipcountry,
// cf_ray, host, referer (browsers), user_agent, x_client_info (Supabase
// client libraries), x_forwarded_proto, x_real_ip}, host, method, path,
// protocol "https:", sb.jwt (6%: the apikey's and, for signed-in users, the
// bearer's claims), search (when there is a query), url};
// metadata.response.{headers.{cf_cache_status, cf_ray ("<ray>-<colo>"),
// content_length or content_range, content_type, date, sb_gateway_mode,
// sb_gateway_version, x_kong_proxy_latency (25%)}, origin_time (ms),
// status_code}; project. Events average about 1.44 KB (1.40–1.50 KB with a
// single project, whose busiest clients weigh more, depending on the seed).
//
// Edge traffic, both shapes: REST table reads 53% (/rest/v1/<table>?select=…,
// mostly with an id=eq.<n> filter), REST writes 11%, RPC 5%, auth 14%
// (/auth/v1/token?grant_type=…, /auth/v1/user, sign-up, OTP, OAuth),
// storage 10% (/storage/v1/object/public/<bucket>/<file>, signed URLs,
// uploads, image transforms), edge functions 4%, realtime websockets 2–3%
// (/realtime/v1/websocket?apikey=<anon JWT or publishable key>&vsn=…),
// GraphQL 1%, and
// self-hosted Studio's /pg/ calls 4%. Methods: about 65% GET, 23% POST,
// the rest PATCH, OPTIONS (CORS preflights), HEAD, DELETE, PUT. Status:
// about 87% 1xx/2xx (101 for websockets, 201 for inserts, 204 for deletes),
// 1.5% 3xx (mostly 304, GETs only), 10% 4xx (401, 404, 400, 403, 409,
// 429, 406), 1.5% 5xx (500, 502, 504, 503, 520). origin_time: median 30–40
// ms, 80% within 5–200 ms, a tail to 15 s; 504s take 15–60 s.
// Clients: each project draws, with a Zipf skew, from 512 clients of a
// pool of 8192; a client keeps its IP (12% of end users on IPv6), user
// agent, ASN and location, so colo, country, city and coordinates agree.
// User agents: a quarter browsers, the rest supabase-js on Node and Deno,
// Flutter/Dart, Swift, Kotlin, React Native, Python, PostgREST clients,
// curl and others.
//
// postgres.logs (PostgresLogs). Self-hosted: the supabase-db text log line
// "2025-07-10 12:00:05.012 UTC [1234] LOG:  …" with metadata.host
// "db-default" and metadata.parsed.{error_severity (what Vector's regex
// extracts), timestamp}; an ERROR is often followed by its DETAIL and
// STATEMENT lines as separate events with severity LOG. Platform: the bare
// message and the csvlog fields in metadata.parsed: application_name,
// backend_type, command_tag, connection_from, context, database_name,
// detail, error_severity, leader_pid, process_id, query,
// query_id, session_id, session_line_num, session_start_time,
// sql_state_code, timestamp, transaction_id, user_name,
// virtual_transaction_id, with per-backend sessions that persist across
// events. Severities: LOG 85% (connections, statement durations, pg_cron,
// autovacuum, checkpoints, logical decoding), ERROR 7% (duplicate keys,
// missing relations, statement timeouts, RLS violations…), WARNING 3%,
// FATAL 2%, NOTICE 1.2%, INFO 0.8%, PANIC 0.01%.
//
// deno-relay-logs (FunctionEdgeLogs). Self-hosted: every line the
// edge-runtime container prints (serving the request with …, boot and
// shutdown notices, user console output) with only metadata.project_ref.
// Platform: one invocation per event: event_message
// "<METHOD> | <status> | <url>", metadata.{deployment_id, execution_id,
// execution_time_ms, function_id, project_ref, request.{headers, host,
// method, pathname, protocol, search, url}, response.{headers,
// status_code}, version}. No top-level project.
//
// deno-subhosting-events (FunctionLogs). Both shapes (self-hosted has no
// producer; it gets the seed sample's form with project "default"):
// metadata.{deployment_id, event_type, execution_id, function_id, level,
// project_ref, region, timestamp ("…+00:00"), version}. Executions
// interleave; each optionally boots, logs 1–40 console lines, and ends in
// a shutdown or (8%) an uncaughtException.
//
// gotrue.logs.prod (AuthLogs). event_message is GoTrue's raw JSON line;
// metadata holds the same fields plus timestamp = time, as Vector's auth
// transform merges them (platform adds metadata.host). 65% request logs
// (component, duration in ns, level, method, msg "request completed",
// path, referer, remote_addr, request_id, status), 15% audit events
// (auth_event.{action, actor_id, actor_username, actor_via_sso, log_type,
// traits.provider}), 10% API errors, 10% start-up lines.
//
// realtime.logs.prod (RealtimeLogs). No top-level project;
// metadata.{external_id, level, project}; the platform adds the Elixir
// logger's metadata.context {application, domain, file, function, line,
// module, pid, vm.node} and error_code for errors. 2% of self-hosted lines
// do not match Vector's level regex and carry no level.
//
// storage.logs.prod.2 (StorageLogs). No top-level project; event_message
// "<METHOD> | <status> | <ip> | <request id> | <path> | <user agent>" for
// requests (92%), start-up and error lines otherwise; metadata.{context:
// [{host, pid}] (an array, as Vector's index assignment builds it), level
// (warn for 4xx, error for 5xx), project, tenantId, timestamp}; the
// platform adds reqId.
//
// postgREST.logs.prod (PostgRESTLogs). metadata.host ("default"
// self-hosted, "db-<ref>" on the platform) and project; connection pool
// events, schema cache loads, config reloads and start-up lines. 3% of
// self-hosted events are request lines without PostgREST's time prefix,
// which Vector forwards unparsed: raw message, no metadata.
//
// pgbouncer.logs.prod (PgBouncerLogs). metadata.host and project, as in
// Logflare's seed sample for both shapes; logins, closes, server
// connections, stats lines and authentication failures.
//
// Options.UseMessageKey writes "message" instead of "event_message", the
// alias Logflare accepts from pino-style clients.
//
// # Benchmark knobs and the generator's truth
//
// Options.RareEvery puts Options.RareToken into the message of about one
// edge event in RareEvery, chosen by a hash of the seed and the event's
// position (the other events stay byte for byte what they would be
// without it): a needle for full-text search. Options.StorageObjects
// draws Storage request paths from a fixed set of objects, so distinct
// paths stay bounded (12,000 objects give about 48,000 distinct edge
// paths, saturated from a few million events on). Both are off by default.
//
// Generator.Facts returns what the generator knows of the edge event it
// appended last (time as written, project, method, status, path, url, the
// rare token), so that benchmarks compute the right answers to their
// queries without parsing the JSON they sent.
package gen
