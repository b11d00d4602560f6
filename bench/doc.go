// Package bench measures Sediment end to end: how fast it ingests, how
// small it stores, how quickly it answers the queries Supabase Studio and
// Vector's users send, and which storage settings suit a data shape. It
// drives `sediment bench ingest|query|sweep|compare`; cmd/sediment only
// parses flags.
//
// The data come from bench/gen (Supabase's nine log sources, self-hosted or
// platform shape), seeded and deterministic. A Dataset places them in log
// time so that the newest event is "now" when the run starts, so the
// Studio-style queries over "the last hour" see the data they would in
// production.
//
// # Ingest
//
// IngestHTTP posts the events as Vector does (POST /api/logs?source_name=,
// x-api-key, a JSON array per batch) over C keep-alive connections with B
// events per request, and reports events/s, MB/s (of request bodies) and
// the p50/p99 request latency. RunIngestBench starts the server as a child
// process (`sediment serve`, see StartServer) so that the peak RSS it
// reports (VmHWM of /proc/<pid>/status) is the server's own and not the
// load generator's; after the run it stops the server (which flushes every
// head to a segment), opens the data directory in process, compacts every
// shard until no merge is left (CompactDataDir) and divides the bytes of
// the segment files by the events stored. Client and server share the
// machine, so on a small machine the client's CPU is part of the figure.
//
// # Queries
//
// StudioSuite lists the queries: the seeded endpoints (logs.all,
// usage.api-counts by minute, hour and day, cold and cached), the
// sandboxed SQL Studio builds (newest 100 edge logs with a regexp, a count,
// a per-minute chart, a status-code filter, top paths) and LQL searches.
// RunQueries runs each once to warm up, then Runs times, one at a time,
// and reports the median and p99. Cached endpoints get a parameter that
// changes every run so that the query, not the cache, is measured (one
// row measures the cache on purpose).
//
// # Sweep
//
// RunSweep ingests the same generated batches into an in-process engine
// once per Setting (BlockRows, PageBytes, the flush and compaction zstd
// levels, the segment size compaction merges to), through the server's own
// decoder and normaliser but without HTTP, then flushes, compacts fully,
// measures bytes per event and runs the query suite in process. Best names
// the winning setting for a Goal.
//
// # Comparing runs
//
// Every report can be written as JSON (WriteJSON) and two reports of the
// same kind compared metric by metric (Compare); docs/benchmarking.md has
// the commands, and the benchstat recipe for the Go benchmarks next to the
// code:
//
//	go test -run '^$' -bench . -count 6 ./engine/... | tee old.txt
//	# change the code
//	go test -run '^$' -bench . -count 6 ./engine/... | tee new.txt
//	benchstat old.txt new.txt
package bench
