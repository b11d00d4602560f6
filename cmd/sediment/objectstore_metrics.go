package main

import (
	"github.com/prometheus/client_golang/prometheus"
)

// objectStoreCollector exposes object storage's counters on /metrics.
type objectStoreCollector struct{ o *objectStorage }

func newObjectStoreCollector(o *objectStorage) *objectStoreCollector {
	return &objectStoreCollector{o: o}
}

func osDesc(name, help string) *prometheus.Desc {
	return prometheus.NewDesc("sediment_object_store_"+name, help, nil, nil)
}

var (
	descOSUploads        = osDesc("segments_uploaded_total", "Segments this node uploaded and listed in their manifest.")
	descOSUploadedBytes  = osDesc("uploaded_bytes_total", "Bytes of the segments this node uploaded.")
	descOSDelisted       = osDesc("segments_delisted_total", "Segments this node removed from manifests (compaction inputs, retention).")
	descOSSkipped        = osDesc("segments_skipped_total", "Segments replaced before they could be uploaded (their replacement carries their events).")
	descOSAbandoned      = osDesc("segments_abandoned_total", "Segments whose local file was gone (set aside as damaged) before they could be uploaded.")
	descOSReconciled     = osDesc("segments_reconciled_total", "Segments found unpublished at startup and published.")
	descOSAdopted        = osDesc("segments_adopted_total", "Segments the store lists under this node's id that a new data directory took over (read through the cache).")
	descOSEvicted        = osDesc("segments_evicted_total", "Listed segments whose local file was dropped to stay within the local bound (read through the cache from then on).")
	descOSEvictedBytes   = osDesc("evicted_bytes_total", "Bytes of the local segment files evicted.")
	descOSEvictFailures  = osDesc("evict_failures_total", "Evictions that failed (retried at the next pass).")
	descOSLocalBytes     = osDesc("local_segment_bytes", "Bytes of this node's local segment files at the last eviction pass.")
	descOSLocalLimit     = osDesc("local_segment_limit_bytes", "The bound of this node's local segment files (half of --cache-size; unlisted segments may exceed it).")
	descOSPending        = osDesc("publish_pending", "Segment changes (uploads, delistings) waiting to be published.")
	descOSFailures       = osDesc("publish_failures_total", "Failed attempts to publish a segment change (each retried with backoff).")
	descOSFailing        = osDesc("publish_failing", "1 while publishing fails (the store is unreachable or refuses), else 0.")
	descOSCacheHits      = osDesc("cache_hits_total", "Chunk reads served from the local cache.")
	descOSCacheMisses    = osDesc("cache_misses_total", "Chunk reads fetched from the store.")
	descOSCacheFetches   = osDesc("cache_fetches_total", "Ranged GETs the cache made.")
	descOSCacheFetched   = osDesc("cache_fetched_bytes_total", "Bytes the cache fetched from the store.")
	descOSCacheEvictions = osDesc("cache_evictions_total", "Chunks evicted from the cache to stay within --cache-size.")
	descOSCacheDamaged   = osDesc("cache_damaged_total", "Cached chunks that failed their checksum (dropped and fetched again).")
	descOSCacheBytes     = osDesc("cache_bytes", "Bytes the cache holds on disk.")
	descOSCacheLimit     = osDesc("cache_limit_bytes", "The cache's bound (--cache-size; on an ingest node, the half not kept for local segment files).")
	descOSGCRuns         = osDesc("gc_runs_total", "Garbage collections run.")
	descOSGCFailures     = osDesc("gc_failures_total", "Garbage collections that failed for some source.")
	descOSGCDeleted      = osDesc("gc_deleted_total", "Segment objects deleted by garbage collection.")
	descOSQManifest      = osDesc("query_manifest_failures_total", "Query node: snapshots whose manifest could not be read (answers marked partial).")
	descOSQNode          = osDesc("query_ingest_node_failures_total", "Query node: ingest node requests that failed (answers marked partial).")
	descOSQSegment       = osDesc("query_segment_failures_total", "Query node: listed segments that could not be opened (answers marked partial).")
	descOSQUnsealed      = osDesc("query_unsealed_bytes_total", "Query node: bytes of unsealed events the ingest nodes sent.")
	descOSQHeldReused    = osDesc("query_held_parts_reused_total", "Query node: head parts the ingest nodes named instead of sending them again, since this node held them.")
	descOSQHeldBytes     = osDesc("query_held_part_bytes", "Query node: bytes of ingest nodes' head parts held between queries.")
)

// Describe implements prometheus.Collector.
func (c *objectStoreCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descOSUploads, descOSUploadedBytes, descOSDelisted, descOSSkipped, descOSAbandoned,
		descOSReconciled, descOSPending, descOSFailures, descOSFailing, descOSCacheHits, descOSCacheMisses, descOSCacheFetches,
		descOSCacheFetched, descOSCacheEvictions, descOSCacheDamaged, descOSCacheBytes, descOSCacheLimit,
		descOSGCRuns, descOSGCFailures, descOSGCDeleted, descOSQManifest, descOSQNode, descOSQSegment, descOSQUnsealed,
		descOSQHeldReused, descOSQHeldBytes, descOSAdopted, descOSEvicted, descOSEvictedBytes, descOSEvictFailures, descOSLocalBytes, descOSLocalLimit} {
		ch <- d
	}
}

// Collect implements prometheus.Collector.
func (c *objectStoreCollector) Collect(ch chan<- prometheus.Metric) {
	counter := func(d *prometheus.Desc, v int64) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, float64(v))
	}
	gauge := func(d *prometheus.Desc, v int64) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, float64(v))
	}
	if r := c.o.rem; r != nil {
		st := r.Stats()
		counter(descOSUploads, st.Uploaded)
		counter(descOSUploadedBytes, st.UploadedBytes)
		counter(descOSDelisted, st.Delisted)
		counter(descOSSkipped, st.Skipped)
		counter(descOSAbandoned, st.Abandoned)
		counter(descOSReconciled, st.Reconciled)
		counter(descOSAdopted, st.Adopted)
		counter(descOSEvicted, st.Evicted)
		counter(descOSEvictedBytes, st.EvictedBytes)
		counter(descOSEvictFailures, st.EvictFailures)
		gauge(descOSLocalBytes, st.LocalBytes)
		gauge(descOSLocalLimit, st.LocalLimit)
		gauge(descOSPending, int64(st.Pending))
		counter(descOSFailures, st.Failures)
		failing := int64(0)
		if !st.FailingSince.IsZero() {
			failing = 1
		}
		gauge(descOSFailing, failing)
	}
	cs := c.o.cache.Stats()
	counter(descOSCacheHits, cs.Hits)
	counter(descOSCacheMisses, cs.Misses)
	counter(descOSCacheFetches, cs.Fetches)
	counter(descOSCacheFetched, cs.FetchedBytes)
	counter(descOSCacheEvictions, cs.Evictions)
	counter(descOSCacheDamaged, cs.Damaged)
	gauge(descOSCacheBytes, cs.Bytes)
	gauge(descOSCacheLimit, c.o.cfg.CacheSize-c.o.localLimit)
	counter(descOSGCRuns, c.o.gcRuns.Load())
	counter(descOSGCFailures, c.o.gcFailures.Load())
	counter(descOSGCDeleted, c.o.gcDeleted.Load())
	if q := c.o.query; q != nil {
		st := q.Stats()
		counter(descOSQManifest, st.ManifestFailures)
		counter(descOSQNode, st.NodeFailures)
		counter(descOSQSegment, st.SegmentFailures)
		counter(descOSQUnsealed, st.UnsealedBytes)
		counter(descOSQHeldReused, st.UnsealedHeldParts)
		gauge(descOSQHeldBytes, st.HeldBytes)
	}
}
