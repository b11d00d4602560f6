package metrics

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/sediment/sediment/catalog"
	"github.com/sediment/sediment/engine"
)

// EngineCollector reads the storage engine's state at scrape time: for
// every shard of a source in the catalog, what engine.Shard.Info and
// Conditions report. Shards of sources the catalog does not know (data
// left by a deleted source) are left out: their only name is a token.
type EngineCollector struct {
	eng *engine.Engine
	cat *catalog.Catalog
}

// NewEngineCollector returns a collector of eng's shards, named after
// cat's sources.
func NewEngineCollector(eng *engine.Engine, cat *catalog.Catalog) *EngineCollector {
	return &EngineCollector{eng: eng, cat: cat}
}

func sourceDesc(name, help string, labels ...string) *prometheus.Desc {
	return prometheus.NewDesc(name, help, append([]string{"source"}, labels...), nil)
}

var (
	descHeadBytes = sourceDesc("sediment_head_bytes",
		"Memory held by the source's events not yet in segments (the head taking events and heads waiting to be flushed).")
	descHeadEvents = sourceDesc("sediment_head_events",
		"Events of the source in memory, not yet in segments (they are in the write-ahead log and queryable).")
	descSegments = sourceDesc("sediment_segments",
		"Segment files of the source.")
	descSegmentBytes = sourceDesc("sediment_segment_bytes",
		"Size of the source's segment files.")
	descSegmentEvents = sourceDesc("sediment_segment_events",
		"Events in the source's segment files (expired events not yet removed included).")
	descFlushes = sourceDesc("sediment_flushes_total",
		"Heads written out as segments since the source's storage opened.")
	descCompactions = sourceDesc("sediment_compactions_total",
		"Compactions (merges of small segments, rewrites without damaged blocks) done since the source's storage opened.")
	descCompactionBacklog = sourceDesc("sediment_compaction_backlog_segments",
		"Segments compaction would rewrite if it ran now: small segments in runs it would merge, and segments waiting to be rewritten without damaged blocks.")
	descTaskFailures = sourceDesc("sediment_background_failures_total",
		"Failed runs (panics included) of a background task of the source since its storage opened. Task compaction counts compaction failures.", "task")
	descTaskPanics = sourceDesc("sediment_background_panics_total",
		"Panics, recovered, of a background task of the source since its storage opened.", "task")
	descTaskFailing = sourceDesc("sediment_background_consecutive_failures",
		"Failures of a background task of the source since its last success: above 0 while it fails and is being retried.", "task")
	descQuarantinedSegments = sourceDesc("sediment_quarantined_segments",
		"Segments of the source set aside whole as damaged (in quarantine/): answers no longer include them.")
	descQuarantinedBlocks = sourceDesc("sediment_quarantined_blocks",
		"Blocks of the source's segments set aside as damaged: answers no longer include them.")
	descQuarantinedEvents = sourceDesc("sediment_quarantined_events",
		"Events known to be in the source's data set aside as damaged (segments whose size is unknown add none).")
	descCondition = sourceDesc("sediment_source_condition",
		"1 while the source's storage has the condition (disk_full, wal_failed, wal_damaged, quarantined, background_failing), else 0; GET /ready says more.", "kind")
	descRefusesIngest = sourceDesc("sediment_source_refuses_ingest",
		"1 while the source refuses events (a full disk, a failed or damaged write-ahead log), else 0.")
	descFieldsDropped = sourceDesc("sediment_fields_dropped_total",
		"Fields of stored events left out since the source's storage opened: unstorable (a path too long for a segment) or over_event_cap (past --max-event-fields).", "reason")
	descEventsOverCap = sourceDesc("sediment_events_over_field_cap_total",
		"Events stored without some of their fields because they had more than --max-event-fields, since the source's storage opened.")
	descWALRepairDropped = sourceDesc("sediment_wal_repair_dropped_events_total",
		"Events that repairing the source's damaged write-ahead log dropped (--repair-wal), since its storage opened.")
	descRetentionExpired = sourceDesc("sediment_retention_expired_events_total",
		"Events removed by retention (whole segments deleted and segments rewritten) since the source's storage opened (also sediment_storage_deleted_events_total{reason=\"retention\"}).")
	descRetentionSegments = sourceDesc("sediment_retention_deleted_segments_total",
		"Segments retention deleted whole since the source's storage opened.")
	descDeletedEvents = sourceDesc("sediment_storage_deleted_events_total",
		"Stored events deleted since the source's storage opened, by reason: retention (older than the source's retention), source_size_cap (its max_disk_bytes), global_size_cap (--max-disk-bytes).", "reason")
	descDeletedBytes = sourceDesc("sediment_storage_deleted_bytes_total",
		"Bytes of segment files freed by those deletions, by reason.", "reason")
	descDeletedSegments = sourceDesc("sediment_storage_deleted_segments_total",
		"Segments deleted whole since the source's storage opened, by reason (each one is logged at warn level for a size cap, info for retention).", "reason")
	descSyncLag = sourceDesc("sediment_wal_sync_max_lag_seconds",
		"In --ack-mode buffered, the longest an acknowledged write of the source waited for its fsync (the loss window a power failure could have had); 0 in sync mode.")
)

// conditionKinds are the kinds reported with a 0 when absent, so that an
// alert can compare with 0 instead of testing for a missing series.
var conditionKinds = []engine.ConditionKind{
	engine.ConditionDiskFull, engine.ConditionWALFailed, engine.ConditionWALDamaged,
	engine.ConditionQuarantined, engine.ConditionBackgroundFailing,
}

// Describe implements prometheus.Collector.
func (c *EngineCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descHeadBytes, descHeadEvents, descSegments, descSegmentBytes, descSegmentEvents,
		descFlushes, descCompactions, descCompactionBacklog, descTaskFailures, descTaskPanics, descTaskFailing,
		descQuarantinedSegments, descQuarantinedBlocks, descQuarantinedEvents, descCondition, descRefusesIngest,
		descFieldsDropped, descEventsOverCap, descWALRepairDropped, descRetentionExpired, descRetentionSegments,
		descDeletedEvents, descDeletedBytes, descDeletedSegments, descSyncLag} {
		ch <- d
	}
}

// Collect implements prometheus.Collector.
func (c *EngineCollector) Collect(ch chan<- prometheus.Metric) {
	names := SourceNames(c.cat)
	for _, sh := range c.eng.Shards() {
		name, ok := names.Take(sh.ID())
		if !ok {
			continue
		}
		in := sh.Info()
		gauge := func(d *prometheus.Desc, v float64, labels ...string) {
			ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, append([]string{name}, labels...)...)
		}
		counter := func(d *prometheus.Desc, v float64, labels ...string) {
			ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, v, append([]string{name}, labels...)...)
		}
		gauge(descHeadBytes, float64(in.HeadBytes))
		gauge(descHeadEvents, float64(in.HeadRows))
		gauge(descSegments, float64(in.Segments))
		gauge(descSegmentBytes, float64(in.SegmentBytes))
		gauge(descSegmentEvents, float64(in.SegmentRows))
		counter(descFlushes, float64(in.Flushes))
		counter(descCompactions, float64(in.Compactions))
		gauge(descCompactionBacklog, float64(in.CompactionBacklog))
		for _, t := range in.Background {
			counter(descTaskFailures, float64(t.Failures), t.Task)
			counter(descTaskPanics, float64(t.Panics), t.Task)
			gauge(descTaskFailing, float64(t.Consecutive), t.Task)
		}
		gauge(descQuarantinedSegments, float64(in.QuarantinedSegments))
		gauge(descQuarantinedBlocks, float64(in.QuarantinedBlocks))
		gauge(descQuarantinedEvents, float64(in.QuarantinedEvents))
		counter(descFieldsDropped, float64(in.DroppedFields), "unstorable")
		counter(descFieldsDropped, float64(in.FieldsOverEventCap), "over_event_cap")
		counter(descEventsOverCap, float64(in.EventsOverFieldCap))
		counter(descWALRepairDropped, float64(in.WALEventsDropped))
		counter(descRetentionExpired, float64(in.RowsExpired))
		counter(descRetentionSegments, float64(in.SegmentsPurged))
		for _, d := range sh.Deletions() {
			counter(descDeletedEvents, float64(d.Events), d.Reason.String())
			counter(descDeletedBytes, float64(d.Bytes), d.Reason.String())
			counter(descDeletedSegments, float64(d.Segments), d.Reason.String())
		}
		gauge(descSyncLag, in.LogSync.MaxLag.Seconds())

		present := map[engine.ConditionKind]bool{}
		refuses := 0.0
		for _, cond := range sh.Conditions() {
			present[cond.Kind] = true
			if cond.RefusesIngest {
				refuses = 1
			}
		}
		for _, k := range conditionKinds {
			gauge(descCondition, b2f(present[k]), string(k))
			delete(present, k)
		}
		for k := range present { // a kind added to the engine since
			gauge(descCondition, 1, string(k))
		}
		gauge(descRefusesIngest, refuses)
	}
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// SourceNameSet maps source tokens to the names the label source takes,
// for one scrape. Each name is
// handed out once: two series with the same labels would fail the whole
// scrape, and a rename racing with the scrape could otherwise give two
// tokens one name.
type SourceNameSet struct {
	byToken map[string]string
	used    map[string]bool
}

// SourceNames reads the catalog's sources.
func SourceNames(cat *catalog.Catalog) *SourceNameSet {
	srcs := cat.Sources()
	s := &SourceNameSet{byToken: make(map[string]string, len(srcs)), used: make(map[string]bool, len(srcs))}
	for _, src := range srcs {
		s.byToken[src.Token] = src.Name
	}
	return s
}

// Take returns the name of the source with token, once: a collector takes
// each source's name once and uses it for all of that source's series.
func (s *SourceNameSet) Take(token string) (string, bool) {
	name, ok := s.byToken[token]
	if !ok || s.used[name] {
		return "", false
	}
	s.used[name] = true
	return name, true
}
