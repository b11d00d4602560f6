package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/sediment/sediment/catalog"
	"github.com/sediment/sediment/engine"
	"github.com/sediment/sediment/httpapi"
	"github.com/sediment/sediment/httpapi/metrics"
	"github.com/sediment/sediment/objstore"
	"github.com/sediment/sediment/query/endpoints"
	"github.com/sediment/sediment/query/search"
	"github.com/sediment/sediment/remote"
	"github.com/sediment/sediment/sql"
	"github.com/sediment/sediment/sql/parser"
)

// serveConfig is everything `sediment serve` is configured with, from
// flags and the environment Logflare reads in Supabase self-hosting.
type serveConfig struct {
	Listen  string
	DataDir string
	AckMode engine.AckMode
	// Supabase seeds the nine Supabase sources and the logs.all and
	// usage.api-counts endpoints (LOGFLARE_SUPABASE_MODE, --supabase).
	Supabase bool
	// PublicToken may ingest (LOGFLARE_PUBLIC_ACCESS_TOKEN, else
	// LOGFLARE_API_KEY); PrivateToken may do everything
	// (LOGFLARE_PRIVATE_ACCESS_TOKEN).
	PublicToken  string
	PrivateToken string
	LogLevel     slog.Level
	// DrainDelay keeps serving with /ready at 503 before closing the
	// listener; ShutdownTimeout bounds the wait for requests in flight.
	DrainDelay      time.Duration
	ShutdownTimeout time.Duration
	// DebugListen, when set, serves Go's profiler (/debug/pprof/) and the
	// runtime's metrics as JSON (/debug/runtime-metrics) on a
	// separate listener, off by default; bind it to localhost.
	DebugListen string
	// RepairWAL makes startup rewrite damaged write-ahead logs without
	// their damaged records (the records after the damage are kept; the
	// originals go to the source's quarantine/). Off, a source whose log is
	// damaged starts read-only and the others start normally.
	RepairWAL bool
	// MemoryLimit is the soft memory target (--memory-limit): the Go
	// runtime's limit and the size of the engine's heads; 0 turns it off.
	MemoryLimit int64
	// QueryMemory bounds the memory one query may hold (--query-memory),
	// QueryMemoryTotal all queries together (--query-memory-total); 0
	// means the default sized from MemoryLimit (see queryBudgets).
	QueryMemory, QueryMemoryTotal int64
	// Storage settings `sediment bench sweep` measures (0: the engine's
	// defaults): rows per block, target page bytes, rows compaction merges
	// segments up to, zstd levels for flushes and for compaction.
	BlockRows, PageBytes, SegmentRows int
	ZstdFlush, ZstdCompact            int
	// Syslog is the syslog listener, off by default.
	Syslog syslogConfig
	// MinFreeDisk is the free space of the data directory's file system
	// below which ingest answers 507 (--min-free-disk); 0 turns it off.
	MinFreeDisk int64
	// RetentionDays is the retention of every source without its own
	// retention_days (--retention-days; 0: keep their events forever).
	RetentionDays int
	// MaxDiskBytes caps the bytes of all sources' segments together
	// (--max-disk-bytes; 0: no cap): past it the oldest segments across
	// sources are deleted (engine.Options.MaxDiskBytes).
	MaxDiskBytes int64
	// PredicateCache is --predicate-cache: the bytes of remembered text
	// predicate answers (engine.Options.PredicateCacheBytes); -1 turns it
	// off, 0 leaves the default (a sixteenth of --memory-limit).
	PredicateCache int64
	// MaxEventFields caps the fields of one event (--max-event-fields; 0:
	// the engine's default, 1000): an event keeps its first ones and the
	// rest are counted (engine.Options.MaxEventFields).
	MaxEventFields int
	// Limits bound the queries and request bodies clients can hold
	// (limits.go).
	Limits httpLimits
	// LogFormat is the format of the server's log: "text" (slog's
	// key=value lines) or "json" (one JSON object per line).
	LogFormat string
	// SnapshotDir is where online snapshots are written (default
	// <data-dir>/snapshots; see snapshot.go).
	SnapshotDir string
	// MetricsAccess says who may read GET /metrics without the private
	// key (--metrics-public).
	MetricsAccess httpapi.MetricsAccess
	// Store configures object storage (objectstore.go); its zero value,
	// the default, keeps everything in DataDir.
	Store objectStoreConfig
}

// defaultMinFreeDisk is --min-free-disk's default: room, once ingest is
// refused, to write out what was acknowledged (the heads, at most twice
// their budget, a quarter of the default memory limit, and far smaller
// compressed) and for a compaction to finish; small beside today's disks.
// A fixed size, not a share: a percentage reserves gigabytes on a large
// disk and too little on a small one.
const defaultMinFreeDisk = 256 << 20

// parseServeConfig reads flags (which win) and the environment.
func parseServeConfig(args []string, getenv func(string) string, stderr io.Writer) (serveConfig, error) {
	cfg := serveConfig{Listen: ":4000", DataDir: "./data", ShutdownTimeout: 30 * time.Second}
	if p := strings.TrimSpace(getenv("PHX_HTTP_PORT")); p != "" {
		if n, err := strconv.Atoi(p); err != nil || n <= 0 || n > 65535 {
			return cfg, fmt.Errorf("PHX_HTTP_PORT=%q is not a port", p)
		}
		cfg.Listen = ":" + p
	}
	cfg.Supabase = envBool(getenv("LOGFLARE_SUPABASE_MODE"))
	cfg.PublicToken = strings.TrimSpace(getenv("LOGFLARE_PUBLIC_ACCESS_TOKEN"))
	if cfg.PublicToken == "" {
		cfg.PublicToken = strings.TrimSpace(getenv("LOGFLARE_API_KEY"))
	}
	cfg.PrivateToken = strings.TrimSpace(getenv("LOGFLARE_PRIVATE_ACCESS_TOKEN"))
	level := getenv("LOGFLARE_LOG_LEVEL")

	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { serveUsage(stderr, fs) }
	fs.StringVar(&cfg.Listen, "listen", cfg.Listen, "address to listen on (default :4000, or :$PHX_HTTP_PORT)")
	fs.StringVar(&cfg.DataDir, "data-dir", cfg.DataDir, "data directory")
	ack := fs.String("ack-mode", "sync", "when ingest is acknowledged: sync (after fsync) or buffered (after write; a power loss can lose the last 100ms plus up to two fsyncs)")
	fs.BoolVar(&cfg.Supabase, "supabase", cfg.Supabase, "Supabase mode: seed Supabase's sources and endpoints (default off, or $LOGFLARE_SUPABASE_MODE)")
	fs.StringVar(&level, "log-level", level, "log level: debug, info, warn, error (default info, or $LOGFLARE_LOG_LEVEL)")
	fs.DurationVar(&cfg.DrainDelay, "drain-delay", 0, "on SIGTERM, keep serving this long with /ready at 503 before closing the listener")
	fs.DurationVar(&cfg.ShutdownTimeout, "shutdown-timeout", cfg.ShutdownTimeout, "on SIGTERM, how long to wait for requests in flight")
	fs.StringVar(&cfg.DebugListen, "debug-listen", "", "serve Go's profiler (/debug/pprof/) and runtime metrics (/debug/runtime-metrics) on this address, e.g. 127.0.0.1:6060")
	memLimit := fs.String("memory-limit", fmt.Sprintf("%dMiB", defaultMemoryLimit>>20), "soft memory target: Go's memory limit (unless GOMEMLIMIT is set) and the in-memory heads' budget (a quarter of it); 0 turns it off")
	queryMemory := fs.String("query-memory", "", "memory one query may hold (joins, sorts, groups, results; default a quarter of --memory-limit, 64MiB, or 512MiB without one); past it the query fails saying so")
	queryMemoryTotal := fs.String("query-memory-total", "", "memory all queries may hold together (default half of --memory-limit, 128MiB, or 4x --query-memory without one); past it a query fails saying so")
	fs.IntVar(&cfg.BlockRows, "block-rows", 0, "rows per segment block (default 65536; sediment bench sweep measures the choices)")
	pageBytes := fs.String("page-bytes", "", "target size of a segment page before compression (default 128KiB)")
	fs.IntVar(&cfg.SegmentRows, "segment-rows", 0, "rows compaction merges segments up to (default 2097152)")
	zstdLevels := fs.String("zstd", "", "zstd levels for flushes and compaction, 1..4 each, as FLUSH/COMPACT (default 1/2)")
	minFree := fs.String("min-free-disk", fmt.Sprintf("%dMiB", defaultMinFreeDisk>>20), "free space of the data directory's file system below which ingest is refused (507 with Retry-After) until space is freed; 0 turns it off")
	fs.IntVar(&cfg.RetentionDays, "retention-days", 0, "days events are kept, by their timestamp, in every source without its own retention_days (a source's own wins, shorter or longer); 0 keeps them forever")
	maxDisk := fs.String("max-disk-bytes", "", "cap on the bytes all sources' segments take together (e.g. 100GiB): past it the oldest segments by event time are deleted, across sources, each source keeping its newest; the write-ahead log and unflushed events are not counted (default: no cap)")
	predCache := fs.String("predicate-cache", "", "memory for remembered answers of text predicates (regexp_contains, LIKE, substring tests) per segment block and head chunk, reused by later queries with the same predicate (default a sixteenth of --memory-limit, 16MiB); 0 turns it off")
	fs.IntVar(&cfg.MaxEventFields, "max-event-fields", 0, "most fields one event may have, counting nested ones (default 1000, at most 9997): an event with more is stored with its first fields in the order it lists them, depth first, and the rest are counted per source, not stored")
	fs.BoolVar(&cfg.RepairWAL, "repair-wal", false, "rewrite damaged write-ahead logs at startup, dropping only their damaged records (run `sediment fsck` first to see what is lost; the originals are kept in quarantine/)")
	cfg.Syslog.register(fs)
	fs.Var((*metricsAccessFlag)(&cfg.MetricsAccess), "metrics-public", metricsPublicUsage)
	parseLimits := cfg.Limits.register(fs)
	parseStore := registerObjectStoreFlags(fs, getenv, &cfg.Store)
	fs.StringVar(&cfg.LogFormat, "log-format", "text", "format of the server's log on stderr: text (key=value) or json (one object per line)")
	fs.StringVar(&cfg.SnapshotDir, "snapshot-dir", "", "directory POST /api/admin/snapshot writes snapshots into (default <data-dir>/snapshots)")
	if err := applyFlagEnv(fs, getenv); err != nil {
		return cfg, err
	}
	if err := fs.Parse(args); err != nil {
		return cfg, err
	}
	if err := parseLimits(); err != nil {
		return cfg, err
	}
	if err := parseStore(); err != nil {
		return cfg, err
	}
	if cfg.Store.Role == roleQuery && (cfg.Syslog.TCP != "" || cfg.Syslog.UDP != "") {
		return cfg, errors.New("--syslog-tcp and --syslog-udp take events: not on a query node (--role query)")
	}
	if fs.NArg() > 0 {
		return cfg, fmt.Errorf("unexpected arguments: %q", fs.Args())
	}
	var err error
	if cfg.AckMode, err = engine.ParseAckMode(*ack); err != nil {
		return cfg, err
	}
	if cfg.MemoryLimit, err = parseBytes(*memLimit); err != nil {
		return cfg, fmt.Errorf("--memory-limit: %w", err)
	}
	if cfg.MinFreeDisk, err = parseBytes(*minFree); err != nil {
		return cfg, fmt.Errorf("--min-free-disk: %w", err)
	}
	if *maxDisk != "" {
		if cfg.MaxDiskBytes, err = parseBytes(*maxDisk); err != nil {
			return cfg, fmt.Errorf("--max-disk-bytes: %w", err)
		}
	}
	if *predCache != "" {
		n, err := parseBytes(*predCache)
		if err != nil {
			return cfg, fmt.Errorf("--predicate-cache: %w", err)
		}
		cfg.PredicateCache = n
		if n == 0 {
			cfg.PredicateCache = -1
		}
	}
	if cfg.RetentionDays < 0 {
		return cfg, fmt.Errorf("--retention-days %d: must be 0 (keep forever) or more", cfg.RetentionDays)
	}
	if *queryMemory != "" {
		if cfg.QueryMemory, err = parseBytes(*queryMemory); err != nil || cfg.QueryMemory == 0 {
			return cfg, fmt.Errorf("--query-memory: want a size above 0, e.g. 64MiB, got %q", *queryMemory)
		}
	}
	if *queryMemoryTotal != "" {
		if cfg.QueryMemoryTotal, err = parseBytes(*queryMemoryTotal); err != nil || cfg.QueryMemoryTotal == 0 {
			return cfg, fmt.Errorf("--query-memory-total: want a size above 0, e.g. 128MiB, got %q", *queryMemoryTotal)
		}
	}
	if cfg.QueryMemory > 0 && cfg.QueryMemoryTotal > 0 && cfg.QueryMemory > cfg.QueryMemoryTotal {
		return cfg, fmt.Errorf("--query-memory (%s) is more than --query-memory-total (%s)", *queryMemory, *queryMemoryTotal)
	}
	if *pageBytes != "" {
		n, err := parseBytes(*pageBytes)
		if err != nil || n > 1<<30 {
			return cfg, fmt.Errorf("--page-bytes: invalid size %q", *pageBytes)
		}
		cfg.PageBytes = int(n)
	}
	if *zstdLevels != "" {
		l, err := zstdList(*zstdLevels)
		if err != nil || len(l) != 1 {
			return cfg, fmt.Errorf("--zstd: want FLUSH/COMPACT levels 1..4, e.g. 1/3, got %q", *zstdLevels)
		}
		cfg.ZstdFlush, cfg.ZstdCompact = l[0][0], l[0][1]
	}
	if err := checkServeRanges(cfg); err != nil {
		return cfg, err
	}
	if cfg.LogFormat != "text" && cfg.LogFormat != "json" {
		return cfg, fmt.Errorf("--log-format: want text or json, got %q", cfg.LogFormat)
	}
	if cfg.SnapshotDir == "" {
		cfg.SnapshotDir = filepath.Join(cfg.DataDir, "snapshots")
	}
	if cfg.MaxEventFields < 0 {
		return cfg, errors.New("--max-event-fields must be positive")
	}
	if cfg.LogLevel, err = parseLogLevel(level); err != nil {
		return cfg, err
	}
	if err := cfg.Syslog.validate(); err != nil {
		return cfg, err
	}
	return cfg, nil
}

// envBool reads a boolean environment value as Logflare does ("true").
func envBool(v string) bool {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "true", "1", "yes":
		return true
	}
	return false
}

// parseLogLevel maps LOGFLARE_LOG_LEVEL (Elixir's Logger levels) and Go's
// names to a slog level.
func parseLogLevel(s string) (slog.Level, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "", "info", "notice":
		return slog.LevelInfo, nil
	case "debug":
		return slog.LevelDebug, nil
	case "warn", "warning":
		return slog.LevelWarn, nil
	case "error", "critical", "alert", "emergency":
		return slog.LevelError, nil
	}
	return 0, fmt.Errorf("unknown log level %q (debug, info, warn, error)", s)
}

// runServe is `sediment serve`: start, wait for SIGTERM/SIGINT, drain.
func runServe(args []string, _, stderr io.Writer) int {
	cfg, err := parseServeConfig(args, os.Getenv, stderr)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		fmt.Fprintln(stderr, "sediment serve:", err)
		return 2
	}
	log := newLogger(stderr, cfg.LogFormat, cfg.LogLevel)
	b := buildInfo()
	log.Info("sediment starting", "version", b.Version, "commit", b.Commit, "go", b.GoVersion)
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()

	a, err := startServer(cfg, productionDeps(), log)
	if err != nil {
		log.Error("start failed", "err", err)
		return 1
	}
	printStartupHints(stderr, cfg, a, log)
	if cfg.DebugListen != "" {
		ln, err := startDebugListener(cfg.DebugListen, log)
		if err != nil {
			log.Error("debug listener", "err", err)
		} else {
			defer ln.Close()
		}
	}
	code := 0
	select {
	case <-ctx.Done():
		log.Info("shutting down")
	case err := <-a.serveErr:
		log.Error("server stopped", "err", err)
		code = 1
	}
	stop() // a second signal kills the process
	sctx, cancel := context.WithTimeout(context.Background(), cfg.ShutdownTimeout)
	defer cancel()
	if err := a.shutdown(sctx); err != nil {
		log.Error("shutdown", "err", err)
		code = 1
	}
	log.Info("stopped")
	return code
}

// testEngineOptions, set only by tests that run the server as a child
// process (kill -9 tests), adjusts the engine's options (small heads).
var testEngineOptions func(*engine.Options)

// serveDeps are the parts wired in from other layers; nil fields leave the
// feature off.
type serveDeps struct {
	// SQLValidator returns the check endpoints' SQL must pass when saved.
	SQLValidator func(cat *catalog.Catalog) func(query string) error
	// Runner returns the executor of query endpoints and ad-hoc SQL, with
	// the query limits opts carries.
	Runner func(eng *engine.Engine, cat *catalog.Catalog, opts *endpoints.Options) httpapi.QueryRunner
}

// productionDeps wires the SQL engine: endpoint SQL is validated when
// saved, and queries run through the endpoints service.
func productionDeps() serveDeps {
	return serveDeps{
		SQLValidator: func(cat *catalog.Catalog) func(string) error {
			return func(q string) error {
				_, err := parser.Validate(q, parser.ValidateOptions{KnownSource: cat.HasSourceName})
				return err
			}
		},
		Runner: func(eng *engine.Engine, cat *catalog.Catalog, opts *endpoints.Options) httpapi.QueryRunner {
			return endpoints.New(eng, cat, opts)
		},
	}
}

// app is a running server and what it owns.
type app struct {
	log      *slog.Logger
	eng      *engine.Engine
	cat      *catalog.Catalog
	runner   httpapi.QueryRunner
	lock     *os.File
	srv      *httpapi.Server
	addr     net.Addr
	ln       net.Listener
	serveErr chan error
	stopped  chan struct{}

	// syslogTCP and syslogUDP are the syslog listeners' addresses (nil: off).
	syslogTCP, syslogUDP net.Addr
	// objs is the object storage (nil: none, the default).
	objs *objectStorage
}

// startServer opens the data directory, sets up access tokens, starts
// listening (so that /health answers "coming_up" meanwhile), seeds Supabase
// resources if asked and marks the server ready.
func startServer(cfg serveConfig, deps serveDeps, log *slog.Logger) (_ *app, err error) {
	if err := os.MkdirAll(cfg.DataDir, 0o755); err != nil {
		return nil, err
	}
	lock, err := lockDataDir(cfg.DataDir)
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			lock.Close()
		}
	}()
	// The engine names sources by token; its log records also carry the
	// source's name once the catalog is open (records written while the
	// engine replays its logs, before that, carry the token only).
	var catForNames atomic.Pointer[catalog.Catalog]
	engOpts := &engine.Options{AckMode: cfg.AckMode, RepairWAL: cfg.RepairWAL, Logger: log.With("component", "engine"),
		SourceName: func(token string) string {
			if c := catForNames.Load(); c != nil {
				if src := c.SourceByToken(token); src != nil {
					return src.Name
				}
			}
			return ""
		}}
	memoryOptions(cfg.MemoryLimit, engOpts)
	if testEngineOptions != nil {
		testEngineOptions(engOpts)
	}
	engOpts.BlockRows, engOpts.PageBytes, engOpts.SegmentMaxRows = cfg.BlockRows, cfg.PageBytes, cfg.SegmentRows
	engOpts.ZstdLevel, engOpts.CompactZstdLevel = cfg.ZstdFlush, cfg.ZstdCompact
	engOpts.MinFreeDiskBytes = cfg.MinFreeDisk
	engOpts.MaxEventFields = cfg.MaxEventFields
	engOpts.MaxDiskBytes = cfg.MaxDiskBytes
	if cfg.PredicateCache != 0 {
		engOpts.PredicateCacheBytes = cfg.PredicateCache
	}
	setMemoryLimit(cfg.MemoryLimit, os.Getenv)
	reg := metrics.New(log.With("component", "metrics"))
	engOpts.ObserveWALSync = reg.ObserveWALSync
	var objs *objectStorage
	if cfg.Store.enabled() {
		if cfg.MemoryLimit > 0 {
			cfg.Store.HeldPartBytes = max(cfg.MemoryLimit/8, 4<<20)
		}
		if objs, err = openObjectStorage(cfg.Store, cfg.DataDir, log.With("component", "objstore")); err != nil {
			return nil, err
		}
		defer func() {
			if err != nil {
				_ = objs.close(context.Background())
			}
		}()
		if objs.rem != nil {
			engOpts.Remote = objs.rem
		}
		if objs.query != nil {
			engOpts.External = objs.query
		}
		if err := reg.Register(newObjectStoreCollector(objs)); err != nil {
			return nil, err
		}
	}
	eng, err := engine.Open(cfg.DataDir, engOpts)
	if err != nil {
		return nil, fmt.Errorf("open engine: %w", err)
	}
	for _, c := range eng.Conditions() {
		if c.Kind == engine.ConditionWALDamaged {
			// The engine logged the damage; say once more, at the top, what
			// repairs it. The other sources start regardless.
			log.Error("a source's write-ahead log is damaged: it serves what it has, read-only", "source_token", c.Shard,
				"repair", fmt.Sprintf("stop the server, then run: sediment fsck --data-dir %s --repair-wal --source %s (or restart with --repair-wal)", cfg.DataDir, c.Shard))
		}
	}
	defer func() {
		if err != nil {
			_ = eng.Close()
		}
	}()
	catOpts := &catalog.Options{Logger: log.With("component", "catalog")}
	if objs != nil {
		catOpts.Shared = sharedCatalog{store: objs.store}
	}
	cat, err := catalog.Open(cfg.DataDir, catOpts)
	if errors.Is(err, catalog.ErrCorrupt) {
		return nil, fmt.Errorf("open catalog: %w. Sediment does not start on a damaged catalog: its endpoints' SQL or access tokens may have changed. %s",
			err, catalogRecovery(cfg.DataDir))
	}
	if err != nil {
		return nil, fmt.Errorf("open catalog: %w", err)
	}
	catForNames.Store(cat)
	if deps.SQLValidator != nil {
		cat.SetSQLValidator(deps.SQLValidator(cat))
	}
	if objs != nil {
		// Every node serves the catalog in the store; a node that cannot
		// reach it starts with the one it has.
		if err := cat.SyncShared(); errors.Is(err, objstore.ErrUnavailable) {
			log.Warn("object store unreachable: starting with the local catalog; it is synced when the store is back", "err", err)
		} else if err != nil {
			return nil, fmt.Errorf("shared catalog: %w", err)
		}
	}
	for _, sh := range eng.Shards() {
		if cat.SourceByToken(sh.ID()) == nil {
			// A crash between deleting a source and its data, or a catalog
			// restored from a backup: keep the data, say so.
			log.Warn("data directory holds events of a source not in the catalog; left alone", "source_token", sh.ID(),
				"dir", filepath.Join(cfg.DataDir, "sources", sh.ID()))
		}
	}
	perQuery, total := queryBudgets(cfg)
	pool := sql.NewMemoryPool(total, "--query-memory-total")
	bi := buildInfo()
	opts := httpapi.Options{Engine: eng, Catalog: cat, Logger: log.With("component", "http"), DrainDelay: cfg.DrainDelay,
		Version: bi.Version, Commit: bi.Commit, DefaultRetentionDays: cfg.RetentionDays,
		SnapshotDir: cfg.SnapshotDir, SnapshotFiles: []string{filepath.Join(cfg.DataDir, generatedKeysFile)},
		Search: search.Options{MemoryLimit: perQuery, MemoryLimitSetting: "--query-memory", MemoryPool: pool}}
	cfg.Limits.apply(&opts, cfg.MemoryLimit)
	if objs != nil {
		opts.ServerConditions = objs.conditions
		opts.QueryOnly = cfg.Store.Role == roleQuery
		if objs.rem != nil && cfg.Store.ClusterKey != "" {
			opts.ClusterKey = cfg.Store.ClusterKey
			opts.Unsealed = func(w io.Writer, source string, listed []string) error {
				return remote.WriteUnsealed(w, eng, nil, objs.node, remote.UnsealedRequest{Source: source, Listed: listed})
			}
		}
	}
	opts.Metrics, opts.MetricsAccess = reg, cfg.MetricsAccess
	if deps.Runner != nil {
		opts.Runner = deps.Runner(eng, cat, &endpoints.Options{Logger: log.With("component", "query"),
			QueryMemory: perQuery, QueryMemorySetting: "--query-memory", QueryMemoryPool: pool})
	}
	srv, err := httpapi.New(opts)
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		return nil, err
	}
	// Keys are set up once the address is ours: a server that cannot bind
	// leaves no generated-keys.json behind.
	if err := setupTokens(cat, cfg, log); err != nil {
		ln.Close()
		return nil, err
	}
	a := &app{log: log, eng: eng, cat: cat, runner: opts.Runner, lock: lock, srv: srv, addr: ln.Addr(), ln: ln, serveErr: make(chan error, 1), stopped: make(chan struct{}), objs: objs}
	if objs != nil {
		objs.reconcile(eng)
		objs.startCatalogSync(cat.SyncShared, cfg.Store.CatalogSync)
		objs.startGC(func() []string {
			var ids []string
			for _, src := range cat.Sources() {
				ids = append(ids, src.Token)
			}
			return ids
		})
	}
	idleCtx, stopIdle := context.WithCancel(context.Background())
	go releaseIdleMemory(idleCtx, eng, srv.ReleaseIdleMemory, 10*time.Second)
	go func() {
		defer close(a.stopped)
		defer stopIdle()
		if err := srv.Serve(ln); err != nil {
			a.serveErr <- err
		}
	}()
	if cfg.Supabase {
		res, err := cat.SeedSupabase()
		if err != nil {
			_ = srv.Shutdown(context.Background())
			<-a.stopped
			return nil, fmt.Errorf("seed Supabase resources: %w", err)
		}
		log.Info("supabase mode", "sources_created", len(res.Sources), "endpoints_created", len(res.Endpoints))
		for _, e := range res.Upgraded {
			log.Info("seeded endpoint upgraded to this version's SQL", "endpoint", e.Name)
		}
		for _, name := range res.Customized {
			log.Info("seeded endpoint keeps the SQL it was given through the management API", "endpoint", name)
		}
	}
	if a.syslogTCP, a.syslogUDP, err = startSyslog(cfg.Syslog, srv, log); err != nil {
		_ = srv.Shutdown(context.Background())
		<-a.stopped
		return nil, err
	}
	srv.SetReady()
	log.Info("listening", "addr", a.addr.String(), "data_dir", cfg.DataDir, "ack_mode", cfg.AckMode.String(),
		"sources", len(cat.Sources()), "endpoints", len(cat.Endpoints()),
		"retention_days_default", cfg.RetentionDays, "max_disk_bytes", cfg.MaxDiskBytes,
		"query_memory", sql.FormatBytes(perQuery), "query_memory_total", sql.FormatBytes(total), "metrics_public", cfg.MetricsAccess.String())
	return a, nil
}

// shutdown drains the HTTP server (requests in flight finish and are
// acknowledged), then flushes and closes the engine.
func (a *app) shutdown(ctx context.Context) error {
	herr := a.srv.Shutdown(ctx)
	// A shutdown that comes before Serve has taken the listener would
	// leave Serve waiting in Accept: closing it ends Serve either way.
	_ = a.ln.Close()
	<-a.stopped
	if c, ok := a.runner.(interface{ Close() }); ok {
		c.Close()
	}
	eerr := a.eng.Close()
	var oerr error
	if a.objs != nil {
		// After the engine's close, which flushed its heads: their
		// segments are published now if the store lets us in time.
		oerr = a.objs.close(ctx)
	}
	a.lock.Close()
	return errors.Join(herr, eerr, oerr)
}
