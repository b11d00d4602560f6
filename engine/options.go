package engine

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/sediment/sediment/event"
	"github.com/sediment/sediment/internal/vfs"
	"github.com/sediment/sediment/segment"
)

// AckMode says when Append returns.
type AckMode int

const (
	// AckSync returns once the batch is fsynced to the write-ahead log.
	// Nothing acknowledged is lost on a crash or power failure.
	AckSync AckMode = iota
	// AckBuffered returns once the batch is written to the log (the OS page
	// cache); a background fsync runs every BufferedSyncInterval. A process
	// crash (kill -9) loses nothing; a power failure or kernel crash can
	// lose the batches acknowledged in the last BufferedSyncInterval plus
	// the time of up to two fsyncs (see Options.BufferedSyncInterval).
	AckBuffered
)

func (m AckMode) String() string {
	if m == AckBuffered {
		return "buffered"
	}
	return "sync"
}

// ParseAckMode parses "sync" or "buffered".
func ParseAckMode(s string) (AckMode, error) {
	switch s {
	case "sync", "":
		return AckSync, nil
	case "buffered":
		return AckBuffered, nil
	}
	return 0, fmt.Errorf("unknown ack mode %q (sync or buffered)", s)
}

// Options configure an Engine. The zero value of every field means its
// default; a nil *Options means all defaults.
type Options struct {
	// FS is the file system (default the OS).
	FS vfs.FS
	// Logger receives operational logs (default discards).
	Logger *slog.Logger
	// SourceName, if set, names the source of a shard id in log records
	// (a "source" attribute beside "shard"); "" when it has none.
	SourceName func(shardID string) string
	// Now is the clock (default time.Now).
	Now func() time.Time

	// AckMode (default AckSync) and, for AckBuffered, how often the log is
	// fsynced (default 100ms). In buffered mode an acknowledged batch is
	// durable at most BufferedSyncInterval plus two fsyncs after it was
	// written (the fsync under way then, and the one that covers it):
	// writes and fsyncs never wait for each other, and a sync starts an
	// interval after the previous one started, at once if that one took
	// longer. ShardInfo.LogSync.MaxLag records the longest wait seen.
	AckMode              AckMode
	BufferedSyncInterval time.Duration

	// ObserveWALSync, when set, is called after every fsync that makes
	// acknowledged events durable (each group commit's in sync mode, each
	// periodic one in buffered mode) with how long the fsync took. It runs
	// on the write path: it must be cheap and safe for concurrent use. The
	// engine keeps no record of these durations itself; this is how a
	// metrics layer gets them without the engine knowing about it.
	ObserveWALSync func(time.Duration)

	// A head is frozen and flushed to a segment when it reaches HeadMaxRows
	// rows (default 131072), HeadMaxBytes of values (default 32 MiB) or
	// HeadMaxAge (default 10 minutes), or when it holds at least
	// HeadIdleMinBytes (default 1 MiB) and nothing was added for
	// HeadIdleFlush (default 30s): a source that went quiet gives its memory
	// back instead of holding a big head for the rest of HeadMaxAge.
	// HeadMaxBytes is most of the memory a busy source costs.
	HeadMaxRows      int
	HeadMaxBytes     int
	HeadMaxAge       time.Duration
	HeadIdleFlush    time.Duration
	HeadIdleMinBytes int
	// HeadChunkRows is the rows of the chunks a head is scanned in, each
	// summarised once it is full so that queries prune it (default 8192, a
	// multiple of 64; small values are for tests).
	HeadChunkRows int
	// MaxFrozenHeads bounds heads waiting to be flushed per shard (default
	// 2); HeadMemoryBudget bounds heads across all shards (default 64
	// MiB): past it, the largest heads are frozen early. Past either bound
	// (for the memory, twice the budget, counting heads waiting to be
	// written), Append waits for a head to be written out, up to
	// AdmissionWait (default 10s), and then returns a *BackpressureError
	// (see admission.go). MaxConcurrentFlushes bounds heads being written
	// at once (default 1).
	MaxFrozenHeads       int
	HeadMemoryBudget     int64
	AdmissionWait        time.Duration
	MaxConcurrentFlushes int
	// HeadPartsCacheBytes bounds the heads' parts an ingest node keeps
	// encoded between query nodes' asks for its unsealed events, across
	// the engines of the process (headparts.go; default a quarter of
	// HeadMemoryBudget; negative: none kept, every ask encodes its heads).
	HeadPartsCacheBytes int64

	// BlockRows is the rows per segment block (default 65536); PageBytes
	// the target page size before compression for columns of wide values
	// (narrow ones end pages at segment.DefaultPageRows rows, 2048;
	// default segment.DefaultPageBytes, 128 KiB: a read of a few rows
	// decompresses little, for about 6% more bytes on disk than 1 MiB
	// pages; see docs/format/segment.md). ZstdLevel
	// (1..4) is used when flushing heads (default 1: fast, the head must
	// make way), CompactZstdLevel when compaction rewrites segments in the
	// background (default 2: where data lives; level 3 stores about 2%
	// fewer bytes for about a tenth more compaction CPU, see
	// docs/benchmarking.md, "Compression levels"; a level above the
	// default also recompresses the flushes' units when time-ordered
	// segments are concatenated).
	BlockRows        int
	PageBytes        int
	ZstdLevel        int
	CompactZstdLevel int
	// HistoryBytes, when positive, is the size of the sample of values the
	// pages of a column of wide text are compressed against, per block
	// (default 0: none; see segment.WriterOptions.HistoryBytes).
	HistoryBytes int

	// DictCacheBytes bounds the decoded segment dictionaries kept between
	// reads, PageCacheBytes the decompressed data pages (default 32 MiB
	// each; negative disables a cache). The caches are shared by every
	// engine of the process: the last Open sets them.
	DictCacheBytes int64
	PageCacheBytes int64
	// FooterCacheBytes bounds the block directories of open segments
	// (their page lists and unit offsets, decoded from the footer when a
	// read needs them; what pruning reads stays resident) kept between
	// reads: default 32 MiB, shared by the engines of the process as the
	// caches above; negative or below 1 MiB means 1 MiB.
	FooterCacheBytes int64
	// PredicateCacheBytes bounds the predicate cache: which rows of a
	// segment block or head chunk a regex, LIKE or substring test passed
	// (predcache.go; default 16 MiB, negative disables it). Shared by the
	// engines of the process, as the caches above.
	PredicateCacheBytes int64

	// SegmentMaxRows is the size compaction merges small segments up to
	// (default 2097152). CompactionInterval is how often shards are checked
	// (default 10s); a merge needs at least CompactionMinInputs segments
	// (default 4) below a quarter of SegmentMaxRows.
	SegmentMaxRows      int
	CompactionInterval  time.Duration
	CompactionMinInputs int

	// RetentionInterval is how often retention and the size caps run
	// (default 1 minute).
	RetentionInterval time.Duration

	// MaxDiskBytes caps the bytes of all shards' segments together
	// (default 0: no cap). Past it, the retention pass deletes the oldest
	// segments across shards, by event time, never a shard's newest one
	// (see sizecap.go). Shard.SetMaxDiskBytes caps one shard.
	MaxDiskBytes int64

	// MaxColumns caps the columns (distinct field path and type pairs) of
	// one head, and so of a flushed segment (default 10000, BigQuery's
	// column limit). An event that needs a column a full head cannot take
	// starts a new head (the full one is frozen and flushed), so events
	// never lose fields to what other events brought. Fields whose path
	// exceeds segment.MaxPathLen cannot be stored at all: they are left out
	// and counted (ShardInfo.DroppedFields).
	MaxColumns int

	// MaxEventFields caps the fields of one event (default
	// event.DefaultMaxFields, 1000; at most MaxColumns-3, the columns left
	// beside timestamp, id and event_message, which it is clamped to when
	// left at its default). A field is a member of an object at any depth
	// (event.CountFields). Append keeps an event's first MaxEventFields
	// fields in the order the event has them, depth first
	// (event.CapFields), and counts the rest (ShardInfo.FieldsOverEventCap
	// and EventsOverFieldCap); the event itself is stored. With the cap,
	// every event fits an empty head.
	MaxEventFields int

	// SortKey is the field (a path such as "project") the segments of a
	// shard are ordered by before time, unless Shard.SetSortKey gives the
	// shard its own (the server sets each source's from the catalog);
	// default "": time order only. See sortkey.go and docs/format.
	SortKey string

	// TextIndexPaths are the string fields whose tokens are indexed
	// (default event_message).
	TextIndexPaths []string
	// IndexMaxValueTerms drops a field from a segment's value index past
	// this many distinct values (default 64).
	IndexMaxValueTerms int

	// RepairWAL makes startup rewrite each damaged write-ahead log without
	// its damaged records (repairWALFile: only the damaged record when the
	// length framing is intact, else the bytes up to the next record that
	// checks out), keeping the file as it was in the source's quarantine/,
	// and logging what was dropped. Off by default: a source whose log is
	// damaged then opens read-only (ConditionWALDamaged), serving what
	// replay could read, until an operator repairs it.
	RepairWAL bool

	// ReadOnly opens the data directory without changing it, for fsck and
	// the query command next to a running server: the write-ahead log is
	// replayed into memory (damage and a torn tail are left alone), damaged
	// segments and blocks are skipped and reported rather than set aside on
	// disk (queries still say what they miss), nothing runs in the
	// background, and Append fails.
	ReadOnly bool

	// DisableBackground turns off the flush, compaction and retention
	// goroutines; tests then call Flush, Compact and ApplyRetention.
	DisableBackground bool

	// MinFreeDiskBytes is the free space of the data directory's file
	// system below which ingest is refused (ErrDiskFull) before the disk
	// is actually full, leaving room to write out what was acknowledged
	// (default 0: no floor; `sediment serve` sets 256 MiB). Compaction and
	// retention do not start a rewrite that would go below it. Free space
	// is checked every DiskCheckInterval (default 1s), which is also how
	// soon a full disk is probed again, backing off to 16 times that.
	MinFreeDiskBytes  int64
	DiskCheckInterval time.Duration

	// A failed or panicking background task (flush, compaction, retention)
	// is retried after BackgroundRetryMin (default 1s), doubling after
	// each failure in a row up to BackgroundRetryMax (default 1 minute).
	BackgroundRetryMin time.Duration
	BackgroundRetryMax time.Duration

	// Remote, when set, is told of every segment published and removed,
	// to keep copies in object storage (see Remote). Nil (the default):
	// segments live on local disk only.
	Remote Remote
	// External, when set, adds segments kept elsewhere to every snapshot
	// of a shard (a query node's: see External). Nil (the default): a
	// shard serves its own data only.
	External External
}

func (o *Options) withDefaults() (*Options, error) {
	out := Options{}
	if o != nil {
		out = *o
	}
	if out.FS == nil {
		out.FS = vfs.OS
	}
	if out.Logger == nil {
		out.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	out.Logger = withSourceNames(out.Logger, out.SourceName)
	out.SourceName = nil // applied once, even when these options are defaulted again
	if out.Now == nil {
		out.Now = time.Now
	}
	def := func(p *int, v int) {
		if *p <= 0 {
			*p = v
		}
	}
	defDur := func(p *time.Duration, v time.Duration) {
		if *p <= 0 {
			*p = v
		}
	}
	defDur(&out.BufferedSyncInterval, 100*time.Millisecond)
	def(&out.HeadMaxRows, 131072)
	def(&out.HeadMaxBytes, 32<<20)
	defDur(&out.HeadMaxAge, 10*time.Minute)
	defDur(&out.HeadIdleFlush, 30*time.Second)
	def(&out.MaxColumns, 10000)
	if out.MaxEventFields < 0 {
		return nil, errors.New("engine: MaxEventFields must not be negative")
	}
	if out.MaxEventFields == 0 {
		out.MaxEventFields = min(event.DefaultMaxFields, max(out.MaxColumns-reservedColumns, 0))
	} else if out.MaxEventFields > out.MaxColumns-reservedColumns {
		return nil, fmt.Errorf("engine: MaxEventFields (%d) must be at most MaxColumns-%d (%d)", out.MaxEventFields, reservedColumns, out.MaxColumns-reservedColumns)
	}
	def(&out.HeadIdleMinBytes, 1<<20)
	def(&out.HeadChunkRows, defaultHeadChunkRows)
	if out.HeadChunkRows%64 != 0 || out.HeadChunkRows > 1<<20 {
		return nil, errors.New("engine: HeadChunkRows must be a multiple of 64, at most 1048576")
	}
	def(&out.MaxFrozenHeads, 2)
	defDur(&out.AdmissionWait, 10*time.Second)
	def(&out.MaxConcurrentFlushes, 1)
	if out.HeadMemoryBudget <= 0 {
		out.HeadMemoryBudget = 64 << 20
	}
	switch {
	case out.HeadPartsCacheBytes == 0:
		out.HeadPartsCacheBytes = out.HeadMemoryBudget / 4
	case out.HeadPartsCacheBytes < 0:
		out.HeadPartsCacheBytes = 0
	}
	def(&out.BlockRows, 65536)
	def(&out.PageBytes, segment.DefaultPageBytes)
	for _, c := range []struct {
		p   *int64
		def int64
	}{{&out.DictCacheBytes, segment.DefaultDictCacheBytes}, {&out.PageCacheBytes, segment.DefaultPageCacheBytes},
		{&out.FooterCacheBytes, segment.DefaultFooterCacheBytes},
		{&out.PredicateCacheBytes, defaultPredCacheBytes}} {
		switch {
		case *c.p == 0:
			*c.p = c.def
		case *c.p < 0:
			*c.p = 0
		}
	}
	def(&out.ZstdLevel, 1)
	def(&out.CompactZstdLevel, DefaultCompactZstdLevel)
	def(&out.SegmentMaxRows, 2<<20)
	defDur(&out.CompactionInterval, 10*time.Second)
	def(&out.CompactionMinInputs, 4)
	defDur(&out.RetentionInterval, time.Minute)
	def(&out.IndexMaxValueTerms, 64)
	defDur(&out.DiskCheckInterval, time.Second)
	out.MinFreeDiskBytes = max(out.MinFreeDiskBytes, 0)
	out.MaxDiskBytes = max(out.MaxDiskBytes, 0)
	defDur(&out.BackgroundRetryMin, time.Second)
	defDur(&out.BackgroundRetryMax, time.Minute)
	out.BackgroundRetryMax = max(out.BackgroundRetryMax, out.BackgroundRetryMin)
	if out.TextIndexPaths == nil {
		out.TextIndexPaths = []string{"event_message"}
	}
	if out.ZstdLevel > 4 || out.CompactZstdLevel > 4 {
		return nil, errors.New("engine: zstd levels must be 1..4")
	}
	if out.BlockRows > 1<<20 {
		return nil, errors.New("engine: BlockRows must be at most 1048576")
	}
	if out.PageBytes < 256 {
		return nil, errors.New("engine: PageBytes must be at least 256")
	}
	if out.MaxColumns > segment.MaxColumns/2 {
		// Compaction merges segments' columns; half the format's limit
		// leaves room for two heads' worth of different fields.
		return nil, fmt.Errorf("engine: MaxColumns must be at most %d", segment.MaxColumns/2)
	}
	if err := CheckSortKey(out.SortKey); err != nil {
		return nil, fmt.Errorf("engine: %w", err)
	}
	if out.AckMode != AckSync && out.AckMode != AckBuffered {
		return nil, errors.New("engine: unknown AckMode")
	}
	out.SegmentMaxRows = max(out.SegmentMaxRows, out.BlockRows)
	if out.ReadOnly {
		out.DisableBackground = true
		out.RepairWAL = false
	}
	return &out, nil
}
