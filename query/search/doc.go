// Package search runs LQL searches over one source and follows a source's
// new events for live tail. It is the logic behind the HTTP API's
// /api/sources/:token_or_name/search and /tail routes; it knows nothing of
// HTTP.
//
// # Search
//
// A Request (an LQL string, an optional time range, a row limit) becomes,
// for one shard, SQL queries run by the SQL engine over one snapshot of the
// shard:
//
//   - the search: the LQL filters, the range, newest first
//     (ORDER BY timestamp DESC, id DESC), LIMIT n, columns timestamp, id,
//     event_message and then the s: selects. It runs in two steps: first
//     the timestamps of the newest n matches (ORDER BY timestamp DESC
//     alone, a top-K the scan can stop early for), then the search itself
//     bounded below by the oldest of those timestamps, so that it reads
//     only the newest blocks even though its id tie-break keeps the SQL
//     engine from stopping the scan early;
//   - the chart, only when the LQL has c: clauses: the same filters and
//     range, the c: aggregate per TIMESTAMP_TRUNC bucket, oldest first.
//
// The LQL is parsed with the source's schema (SchemaOf), so field paths the
// source never had and values of the wrong type are errors, as in Logflare's
// search. Both queries are lql.ToSQL output, so they get the same predicate
// pushdown, index lookups and newest-first early stop as any SQL query.
//
// When the LQL has c: clauses but no c:group_by, the bucket is chosen from
// the time span searched (the range, narrowed to the data the shard holds):
// seconds up to 5 minutes, minutes up to 6 hours, hours up to 7 days, days
// beyond. A chart is limited to MaxChartBuckets buckets.
//
// # Tail
//
// Tail wraps an engine subscription with an LQL filter (lql (match.go),
// the in-process evaluator with the semantics of the SQL translation). The
// subscription's buffer is bounded: a slow reader loses events (counted,
// see Tail.Dropped) and never slows ingestion.
package search
