// Package bench measures Sediment end to end: how fast it ingests, how
// small it stores, how quickly it answers the queries Supabase Studio and
// Vector's users send, and which storage settings suit a data shape. It
// drives `sediment bench ingest|query|sweep|peers|compare`; cmd/sediment
// only parses flags.
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
// PeersSuite lists issue 14's six queries over platform edge events
// (PeersDataset: 50 projects, a rare token, bounded storage paths), each
// with its VictoriaLogs form (LogsQL) and a check of the answer against
// the generator's truth (ComputeTruth, from gen.Generator.Facts). Only
// the request is timed; answers are decoded and checked afterwards.
//
// # Peers
//
// RunPeers sends the same events to Sediment (Logflare API) and to
// VictoriaLogs (/insert/jsonline, built from its public source and driven
// only through its HTTP API), one server at a time, and measures each:
// ingest rate, server CPU (/proc/<pid>/stat), peak RSS while ingesting and
// while querying, bytes on disk once flushed and merged, the peers
// suite's times with every answer checked, and Sediment's GC share from
// its runtime metrics (the debug listener's /debug/runtime-metrics).
//
// # Sweep
//
// RunSweep ingests the same generated batches into an in-process engine
// once per Setting (BlockRows, PageBytes, the flush and compaction zstd
// levels, the segment size compaction merges to, scaled to the events
// swept, and a sort key once the engine has one: SortKeySetter), through
// the server's own decoder and normaliser but without HTTP, then flushes,
// compacts fully, measures bytes per event and runs a query suite in
// process. Best names the winning setting for a Goal.
//
// # Comparing runs
//
// Every report can be written as JSON (WriteJSON) and reports of the same
// kind compared metric by metric (Compare), a change counting only when
// the Mann-Whitney U test over the runs says it exceeds their noise, as
// benchstat does; docs/benchmarking.md has the commands, and the
// benchstat recipe for the Go benchmarks next to the code:
//
//	go test -run '^$' -bench . -count 6 ./engine/... | tee old.txt
//	# change the code
//	go test -run '^$' -bench . -count 6 ./engine/... | tee new.txt
//	benchstat old.txt new.txt
package bench
