// Package metrics is Sediment's Prometheus metrics: the registry GET
// /metrics serves, the few instruments observed as things happen (HTTP
// requests per route, query latency, write-ahead log fsyncs), and
// collectors that read, at scrape time, the state the other packages keep
// anyway (engine.ShardInfo and conditions, the query memory pool, the
// endpoint result cache). Nothing below this package knows about
// Prometheus: the engine reports fsync durations through a plain function
// (engine.Options.ObserveWALSync), and everything else is read.
//
// docs/metrics.md lists every series. Conventions: names start with
// sediment_, counters end in _total, durations are histograms in _seconds,
// sizes are in bytes; the label source is a source's name, route one of
// a fixed set of route names, and no label ever takes a raw path or any
// other value a client chose.
package metrics
