package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/sediment/sediment/bench"
	"github.com/sediment/sediment/bench/gen"
	"github.com/sediment/sediment/engine"
)

const benchUsage = `usage: sediment bench <ingest|query|sweep|peers|compare|ingest-nodes> [flags]

  ingest   send generated Supabase logs to a server over HTTP, as Vector does;
           report events/s, MB/s, p50/p99 request latency, peak RSS of the
           server and bytes per event on disk after a full compaction
  query    run a query suite on a loaded data set and report the median and
           p99 of each query: --suite studio (logs.all with Studio's SQL,
           usage.api-counts, LQL searches) or --suite peers (issue 14's six
           queries over platform edge events, every answer checked against
           the generator's truth)
  sweep    ingest the same data in process under a grid of storage settings
           (block rows, page bytes, zstd levels, segment rows, sort key);
           report ingest rate, bytes per event and query times per setting
           and recommend the best for a goal
  peers    the same events into Sediment and into VictoriaLogs (--victorialogs,
           a binary built from its public source), the six peers queries on
           both, every answer checked; one table with both figures and the
           ratio: query times, ingest rate, server CPU per 1M events, bytes
           per event, peak RSS, GC share
  compare  compare reports written with --format json or --save, metric by
           metric; a change counts only past the runs' noise (U test)
  ingest-nodes
           one, then two 'serve --role ingest' processes on one object store
           (--object-store), the events sent to them at once over HTTP;
           report events/s, the nodes' CPU and when all was published

Without --url, ingest and query start 'sediment serve' (this binary) as a
child process on --data-dir (a temporary directory by default), so that the
peak RSS is the server's own. Client and server share the machine.
Run 'sediment bench <command> -h' for a command's flags; docs/benchmarking.md
explains how to reproduce and compare runs.`

// runBench is `sediment bench`.
func runBench(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		fmt.Fprintln(stderr, benchUsage)
		if len(args) == 0 {
			return 2
		}
		return 0
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	switch args[0] {
	case "ingest":
		return benchIngest(ctx, args[1:], stdout, stderr)
	case "query":
		return benchQuery(ctx, args[1:], stdout, stderr)
	case "sweep":
		return benchSweep(ctx, args[1:], stdout, stderr)
	case "peers":
		return benchPeers(ctx, args[1:], stdout, stderr)
	case "compare":
		return benchCompare(args[1:], stdout, stderr)
	case "ingest-nodes":
		return benchIngestNodes(ctx, args[1:], stdout, stderr)
	}
	fmt.Fprintf(stderr, "sediment bench: unknown command %q\n\n%s\n", args[0], benchUsage)
	return 2
}

// benchFlags are the flags the subcommands share.
type benchFlags struct {
	fs             *flag.FlagSet
	events         int
	shape          string
	seed           int64
	sources        string
	projects       int
	span           time.Duration
	rareEvery      int
	storageObjects int
	format         string
	save           string
	noBar          bool
	// suite is the query suite (ingest, query, sweep); "peers" changes
	// the data defaults to issue 14's (see peersDefaults).
	suite    string
	dataset  bench.Dataset
	progress *bench.Progress
	stderr   io.Writer
}

func newBenchFlags(name string, defEvents int, stderr io.Writer, usage string) *benchFlags {
	f := &benchFlags{fs: flag.NewFlagSet("bench "+name, flag.ContinueOnError), stderr: stderr}
	f.fs.SetOutput(stderr)
	f.fs.Usage = func() {
		fmt.Fprintln(stderr, usage)
		fmt.Fprintln(stderr)
		f.fs.PrintDefaults()
	}
	f.fs.IntVar(&f.events, "events", defEvents, "number of events to generate")
	f.fs.StringVar(&f.shape, "shape", "selfhosted", "event shape: selfhosted (Vector in Supabase's docker setup) or platform (supabase.com)")
	f.fs.Int64Var(&f.seed, "seed", 1, "generator seed (same seed, same events)")
	f.fs.StringVar(&f.sources, "sources", "edge", "sources: edge, all (the nine Supabase sources, weighted), or a list such as cloudflare.logs.prod=4,postgres.logs=1")
	f.fs.IntVar(&f.projects, "projects", gen.DefaultProjects, "platform shape: number of projects events spread over")
	f.fs.DurationVar(&f.span, "span", 24*time.Hour, "log time the events cover, ending now")
	f.fs.IntVar(&f.rareEvery, "rare-every", 0, "put a rare token ("+gen.DefaultRareToken+") into about one edge message in this many (0: none)")
	f.fs.IntVar(&f.storageObjects, "storage-objects", 0, "draw storage request paths from this many objects (0: unbounded names)")
	f.fs.StringVar(&f.format, "format", "table", "output: table, json or csv")
	f.fs.StringVar(&f.save, "save", "", "also write the report as JSON to this file (for 'sediment bench compare')")
	f.fs.BoolVar(&f.noBar, "no-progress", false, "no progress bar (it is drawn only when stderr is a terminal)")
	return f
}

// registerSuite adds --suite.
func (f *benchFlags) registerSuite() {
	f.fs.StringVar(&f.suite, "suite", bench.SuiteStudio, "queries: studio (Supabase Studio's), or peers (issue 14's six, answers checked; its data defaults: "+peersDefaultsText+")")
}

// peersDefaultsText describes peersDefaults for flag help.
const peersDefaultsText = "--shape platform --sources edge --projects 50 --span 168h --rare-every 100000 --storage-objects 12000"

// peersDefaults gives the data flags not set on the command line the
// peers suite's values (bench.PeersDataset's).
func (f *benchFlags) peersDefaults() {
	set := map[string]bool{}
	f.fs.Visit(func(fl *flag.Flag) { set[fl.Name] = true })
	def := bench.PeersDataset(0, 0)
	if !set["shape"] {
		f.shape = def.Shape.String()
	}
	if !set["sources"] {
		f.sources = "edge"
	}
	if !set["projects"] {
		f.projects = def.Projects
	}
	if !set["span"] {
		f.span = def.Span
	}
	if !set["rare-every"] {
		f.rareEvery = def.RareEvery
	}
	if !set["storage-objects"] {
		f.storageObjects = def.StorageObjects
	}
}

// showPeersDefaults makes the flags' help show the peers suite's data
// defaults (for `bench peers`, whose suite is always peers).
func (f *benchFlags) showPeersDefaults() {
	def := bench.PeersDataset(0, 0)
	for name, v := range map[string]string{
		"shape": def.Shape.String(), "sources": "edge", "projects": strconv.Itoa(def.Projects), "span": def.Span.String(),
		"rare-every": strconv.Itoa(def.RareEvery), "storage-objects": strconv.Itoa(def.StorageObjects),
	} {
		if fl := f.fs.Lookup(name); fl != nil {
			fl.DefValue = v
		}
	}
}

// parse parses args and builds the dataset and progress bar.
func (f *benchFlags) parse(args []string) error {
	if err := f.fs.Parse(args); err != nil {
		return err
	}
	if f.fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments: %q", f.fs.Args())
	}
	switch f.suite {
	case "", bench.SuiteStudio:
	case bench.SuitePeers:
		f.peersDefaults()
	default:
		return fmt.Errorf("unknown suite %q (studio or peers)", f.suite)
	}
	shape, ok := gen.ParseShape(f.shape)
	if !ok {
		return fmt.Errorf("unknown shape %q (selfhosted or platform)", f.shape)
	}
	srcs, err := bench.ParseSources(f.sources)
	if err != nil {
		return err
	}
	switch f.format {
	case "table", "json", "csv":
	default:
		return fmt.Errorf("unknown format %q (table, json or csv)", f.format)
	}
	if f.events < 0 || f.rareEvery < 0 || f.storageObjects < 0 {
		return errors.New("--events, --rare-every and --storage-objects must not be negative")
	}
	f.dataset = bench.Dataset{Shape: shape, Seed: f.seed, Sources: srcs, Projects: f.projects, Events: f.events, Span: f.span,
		RareEvery: f.rareEvery, StorageObjects: f.storageObjects}.WithDefaults()
	if file, ok := f.stderr.(*os.File); ok && !f.noBar && bench.IsTerminal(file) {
		f.progress = bench.NewProgress(f.stderr)
	}
	return nil
}

// usageError reports a flag error: 0 for -h, else 2.
func usageError(name string, err error, stderr io.Writer) int {
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	fmt.Fprintf(stderr, "sediment bench %s: %v\n", name, err)
	return 2
}

// serverFlags are the flags of ingest and query that choose the server.
type serverFlags struct {
	url, key, dataDir, ackMode, serverLog, serverArgs string
	pid                                               int
	keep                                              bool
}

func (s *serverFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&s.url, "url", "", "drive a running server at this URL (e.g. http://127.0.0.1:4000) instead of starting one")
	fs.StringVar(&s.key, "key", "", "with --url: access token (ingest needs one that may ingest, query the private one)")
	fs.IntVar(&s.pid, "server-pid", 0, "with --url: the server's process id, to report its peak RSS")
	fs.StringVar(&s.dataDir, "data-dir", "", "without --url: the child server's data directory (kept; default a temporary one, removed)")
	fs.BoolVar(&s.keep, "keep", false, "keep the temporary data directory (its path is reported)")
	fs.StringVar(&s.ackMode, "ack-mode", "sync", "the child server's --ack-mode: sync or buffered")
	fs.StringVar(&s.serverLog, "server-log", "", "write the child server's log to this file")
	fs.StringVar(&s.serverArgs, "server-args", "", "more 'sediment serve' flags for the child server, space-separated (e.g. \"--memory-limit 1GiB\")")
}

// options returns the child server's options; close closes its log.
func (s *serverFlags) options() (o bench.ServerOptions, closeLog func(), err error) {
	if s.url != "" && s.key == "" {
		return o, nil, errors.New("--url needs --key")
	}
	if _, err := engine.ParseAckMode(s.ackMode); err != nil {
		return o, nil, err
	}
	bin, err := os.Executable()
	if err != nil {
		return o, nil, fmt.Errorf("find the sediment binary: %w", err)
	}
	o = bench.ServerOptions{Binary: bin, DataDir: s.dataDir, Args: append([]string{"--ack-mode", s.ackMode}, strings.Fields(s.serverArgs)...)}
	closeLog = func() {}
	if s.serverLog != "" {
		f, err := os.Create(s.serverLog)
		if err != nil {
			return o, nil, err
		}
		o.Log, closeLog = f, func() { f.Close() }
	}
	return o, closeLog, nil
}

// emit writes the report (and saves it as JSON when asked) and returns
// the exit code for runErr.
func (f *benchFlags) emit(rep *bench.Report, runErr error, stdout, stderr io.Writer) int {
	if err := rep.Write(stdout, f.format); err != nil {
		fmt.Fprintln(stderr, "sediment bench:", err)
		return 1
	}
	if f.save != "" {
		file, err := os.Create(f.save)
		if err == nil {
			err = errors.Join(rep.WriteJSON(file), file.Close())
		}
		if err != nil {
			fmt.Fprintln(stderr, "sediment bench: save report:", err)
			return 1
		}
	}
	if runErr != nil {
		fmt.Fprintln(stderr, "sediment bench:", runErr)
		return 1
	}
	return 0
}

func benchIngest(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	f := newBenchFlags("ingest", 500_000, stderr, "usage: sediment bench ingest [flags]\n\n"+
		"Sends --events generated events over --connections connections, --batch events per\n"+
		"request (Vector's POST /api/logs?source_name=...), and reports the ingest rate, request\n"+
		"latencies, the server's peak RSS and, once the server has stopped and the data directory\n"+
		"is fully compacted, bytes per event on disk.")
	var sf serverFlags
	sf.register(f.fs)
	f.registerSuite()
	conns := f.fs.Int("connections", 4, "concurrent connections")
	batch := f.fs.Int("batch", 500, "events per request")
	if err := f.parse(args); err != nil {
		return usageError("ingest", err, stderr)
	}
	so, closeLog, err := sf.options()
	if err != nil {
		return usageError("ingest", err, stderr)
	}
	defer closeLog()
	rep := bench.NewReport(bench.KindIngest, f.dataset) // the machine and its load as the run starts
	res, err := bench.RunIngestBench(ctx, bench.IngestBenchOptions{
		Dataset:   f.dataset,
		Ingest:    bench.IngestOptions{URL: sf.url, Key: sf.key, Connections: *conns, BatchSize: *batch},
		Server:    so,
		Keep:      sf.keep,
		ServerPID: sf.pid,
		Progress:  f.progress,
	})
	if err != nil {
		fmt.Fprintln(stderr, "sediment bench ingest:", err)
		return 1
	}
	rep.Dataset = res.Dataset.Info()
	rep.Ingest, rep.Server, rep.DataDir, rep.Notes = res.Result, res.Server, res.DataDir, res.Notes
	rep.Config = map[string]any{"ack_mode": sf.ackMode, "connections": *conns, "batch": *batch}
	return f.emit(rep, nil, stdout, stderr)
}

func benchQuery(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	f := newBenchFlags("query", 200_000, stderr, "usage: sediment bench query [flags]\n\n"+
		"Runs a query suite (--suite studio or peers) --runs times per query (after one warm-up run)\n"+
		"and reports the median and p99 of each; the peers suite checks every answer against the\n"+
		"generator's truth. The data: with --url, the running server's (describe them with\n"+
		"--shape/--seed/--projects so the right project is queried); with --data-dir, what an\n"+
		"earlier 'sediment bench ingest --data-dir' recorded there; otherwise --events are loaded\n"+
		"first (and compacted) into a fresh directory.")
	var sf serverFlags
	sf.register(f.fs)
	f.registerSuite()
	conns := f.fs.Int("connections", 4, "concurrent connections when loading")
	batch := f.fs.Int("batch", 500, "events per request when loading")
	runs := f.fs.Int("runs", 10, "timed runs per query")
	dataEnd := f.fs.String("data-end", "", "with --url and --suite peers: the log time (RFC 3339) of the end of the data the server holds, as the loading run recorded it")
	if err := f.parse(args); err != nil {
		return usageError("query", err, stderr)
	}
	if f.suite == bench.SuitePeers && sf.url != "" {
		if *dataEnd == "" {
			return usageError("query", errors.New("--suite peers with --url needs --data-end (the peers answers are computed for the data's exact time span)"), stderr)
		}
		end, err := time.Parse(time.RFC3339Nano, *dataEnd)
		if err != nil {
			return usageError("query", fmt.Errorf("--data-end: %w", err), stderr)
		}
		f.dataset.End = end.UTC()
	}
	so, closeLog, err := sf.options()
	if err != nil {
		return usageError("query", err, stderr)
	}
	defer closeLog()
	rep := bench.NewReport(bench.KindQuery, f.dataset)
	res, err := bench.RunQueryBench(ctx, bench.QueryBenchOptions{
		Dataset:   f.dataset,
		URL:       sf.url,
		Key:       sf.key,
		Server:    so,
		Ingest:    bench.IngestOptions{Connections: *conns, BatchSize: *batch},
		Runs:      *runs,
		Keep:      sf.keep,
		ServerPID: sf.pid,
		Progress:  f.progress,
		Suite:     f.suite,
	})
	if res == nil {
		fmt.Fprintln(stderr, "sediment bench query:", err)
		return 1
	}
	rep.Dataset = res.Dataset.Info()
	rep.Query, rep.Server, rep.DataDir, rep.Notes = res, res.Server, res.DataDir, res.Notes
	rep.Config = map[string]any{"runs": *runs, "ack_mode": sf.ackMode, "suite": f.suite}
	return f.emit(rep, err, stdout, stderr)
}

func benchSweep(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	f := newBenchFlags("sweep", 200_000, stderr, "usage: sediment bench sweep [flags]\n\n"+
		"Generates --events once, then for every combination of --block-rows, --page-bytes,\n"+
		"--zstd, --segment-rows and --sort-key ingests them into a fresh in-process engine (the\n"+
		"server's decoder and normaliser, no HTTP), flushes and fully compacts, and runs the query\n"+
		"suite (--suite; the peers suite checks every answer); reports per setting the ingest rate,\n"+
		"bytes per event and the geometric mean of the query medians, and recommends the best\n"+
		"setting for --goal, with the serve flags that apply it:\n"+
		"  size      fewest bytes per event\n"+
		"  ingest    most events per second\n"+
		"  query     fastest queries\n"+
		"  balanced  best geometric mean of the three, each relative to the best setting")
	f.registerSuite()
	blockRows := f.fs.String("block-rows", "16384,65536,262144", "rows per segment block, comma-separated")
	pageBytes := f.fs.String("page-bytes", "65536,1048576", "target page size in bytes before compression, comma-separated")
	zstd := f.fs.String("zstd", "1/2", "zstd levels as flush/compaction pairs (1..4), comma-separated, e.g. 1/2,1/3,2/2")
	segRows := f.fs.String("segment-rows", "0", "rows compaction merges segments up to, comma-separated (0: engine default), as meant for --segment-rows-at events")
	segAt := f.fs.Int("segment-rows-at", 10_000_000, "events the --segment-rows values are meant for: a sweep of fewer events scales them down in proportion, and says so (0: never scale)")
	sortKeys := f.fs.String("sort-key", "", "sort keys to sweep, comma-separated: a field path (e.g. project), none (time order only) or - (each source's own, as seeded: project for the edge logs)")
	memBudget := f.fs.String("memory-budget", "2GiB", "generated events kept in memory for every setting to ingest; past it each setting generates while ingesting")
	goal := f.fs.String("goal", "balanced", "what the best setting optimises: size, ingest, query or balanced")
	svg := f.fs.String("svg", "", "also write a chart (bytes/event vs ingest rate) to this SVG file")
	runs := f.fs.Int("runs", 3, "timed runs per query")
	workers := f.fs.Int("workers", 0, "ingest goroutines (default GOMAXPROCS)")
	batch := f.fs.Int("batch", 500, "events per batch")
	dir := f.fs.String("dir", "", "where to make the per-setting data directories (default the system temporary directory)")
	ack := f.fs.String("ack-mode", "sync", "engine ack mode: sync or buffered")
	if err := f.parse(args); err != nil {
		return usageError("sweep", err, stderr)
	}
	g, err := bench.ParseGoal(*goal)
	if err != nil {
		return usageError("sweep", err, stderr)
	}
	ackMode, err := engine.ParseAckMode(*ack)
	if err != nil {
		return usageError("sweep", err, stderr)
	}
	br, err1 := intList(*blockRows)
	pb, err2 := intList(*pageBytes)
	sr, err3 := intList(*segRows)
	zl, err4 := zstdList(*zstd)
	budget, err5 := parseBytes(*memBudget)
	if err := errors.Join(err1, err2, err3, err4, err5); err != nil {
		return usageError("sweep", err, stderr)
	}
	var keys []string
	for _, k := range strings.Split(*sortKeys, ",") {
		switch k = strings.TrimSpace(k); k {
		case "":
		case "-":
			keys = append(keys, "")
		default:
			keys = append(keys, k)
		}
	}
	rep := bench.NewReport(bench.KindSweep, f.dataset)
	sw, err := bench.RunSweep(ctx, bench.SweepOptions{
		Dataset:       f.dataset,
		Settings:      bench.Grid(br, pb, zl, sr, keys...),
		BatchSize:     *batch,
		Workers:       *workers,
		Runs:          *runs,
		Dir:           *dir,
		AckMode:       ackMode,
		Goal:          g,
		Suite:         f.suite,
		SegmentRowsAt: *segAt,
		MemoryBudget:  budget,
		Progress:      f.progress,
	})
	if err != nil {
		fmt.Fprintln(stderr, "sediment bench sweep:", err)
		return 1
	}
	rep.Sweep = sw
	rep.Server = "in-process engine (no HTTP)"
	rep.Config = map[string]any{"runs": *runs, "ack_mode": *ack, "batch": *batch, "workers": *workers, "suite": f.suite, "segment_rows_at": *segAt}
	if *svg != "" {
		file, err := os.Create(*svg)
		if err == nil {
			err = errors.Join(bench.WriteSVG(file, sw), file.Close())
		}
		if err != nil {
			fmt.Fprintln(stderr, "sediment bench sweep: write chart:", err)
			return 1
		}
	}
	var runErr error
	if sw.Best < 0 {
		runErr = errors.New("every setting failed")
	}
	return f.emit(rep, runErr, stdout, stderr)
}

func benchPeers(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	f := newBenchFlags("peers", 1_000_000, stderr, "usage: sediment bench peers --victorialogs PATH [flags]\n\n"+
		"Generates --events platform edge events (issue 14's data: "+peersDefaultsText+")\n"+
		"and computes the answers to the six peers queries from the generator. Then, one server at a\n"+
		"time: starts Sediment (this binary) and VictoriaLogs (--victorialogs) on empty directories,\n"+
		"sends them the same events with --senders connections (Sediment through its Logflare API as\n"+
		"Vector does, VictoriaLogs through /insert/jsonline with the project as its stream), lets each\n"+
		"flush and merge, restarts it and runs the six queries --runs times after a warm-up run, every\n"+
		"answer checked. Prints one table: median and p99 per query, ingest events/s, server CPU-s per\n"+
		"1M events (/proc), bytes per event on disk, peak RSS ingesting and querying, Sediment's GC\n"+
		"share (its runtime metrics), and the ratio of Sediment's figure to VictoriaLogs'.\n"+
		"Without --victorialogs only Sediment runs.")
	f.suite = bench.SuitePeers
	f.showPeersDefaults()
	vlBin := f.fs.String("victorialogs", "", "the victoria-logs binary to compare with (built from github.com/VictoriaMetrics/VictoriaLogs; see docs/benchmarking.md)")
	vlArgs := f.fs.String("victorialogs-args", "", "more victoria-logs flags, space-separated")
	vlLog := f.fs.String("victorialogs-log", "", "write VictoriaLogs' log to this file")
	serverArgs := f.fs.String("server-args", "", "more 'sediment serve' flags, space-separated (e.g. \"--memory-limit 1GiB\")")
	serverLog := f.fs.String("server-log", "", "write Sediment's log to this file")
	senders := f.fs.Int("senders", 2, "concurrent connections sending to each server")
	batch := f.fs.Int("batch", 5000, "events per request (Vector's 10 MB batches hold about 7,000 of these events)")
	runs := f.fs.Int("runs", 10, "timed runs per query, after one warm-up run")
	dir := f.fs.String("dir", "", "where to make the servers' data directories (default the system temporary directory)")
	keep := f.fs.Bool("keep", false, "keep the data directories (their paths are reported)")
	if err := f.parse(args); err != nil {
		return usageError("peers", err, stderr)
	}
	if *vlBin != "" {
		if _, err := os.Stat(*vlBin); err != nil {
			return usageError("peers", fmt.Errorf("--victorialogs: %w", err), stderr)
		}
	}
	bin, err := os.Executable()
	if err != nil {
		fmt.Fprintln(stderr, "sediment bench peers: find the sediment binary:", err)
		return 1
	}
	openLog := func(path string) (io.Writer, func(), error) {
		if path == "" {
			return nil, func() {}, nil
		}
		file, err := os.Create(path)
		if err != nil {
			return nil, nil, err
		}
		return file, func() { file.Close() }, nil
	}
	sLog, closeS, err := openLog(*serverLog)
	if err != nil {
		return usageError("peers", err, stderr)
	}
	defer closeS()
	vLog, closeV, err := openLog(*vlLog)
	if err != nil {
		return usageError("peers", err, stderr)
	}
	defer closeV()
	rep := bench.NewReport(bench.KindPeers, f.dataset)
	res, runErr := bench.RunPeers(ctx, bench.PeersOptions{
		Dataset:      f.dataset,
		Sediment:     bench.ServerOptions{Binary: bin, Args: strings.Fields(*serverArgs), Log: sLog},
		VictoriaLogs: bench.VLOptions{Binary: *vlBin, Args: strings.Fields(*vlArgs), Log: vLog},
		Senders:      *senders,
		BatchSize:    *batch,
		Runs:         *runs,
		Dir:          *dir,
		Keep:         *keep,
		Progress:     f.progress,
	})
	if res == nil {
		fmt.Fprintln(stderr, "sediment bench peers:", runErr)
		return 1
	}
	rep.Peers = res
	rep.Server = "sediment serve and victoria-logs (child processes, one at a time)"
	if *vlBin == "" {
		rep.Server = "sediment serve (child process)"
		rep.Notes = append(rep.Notes, "VictoriaLogs was not run (no --victorialogs)")
	}
	rep.Config = map[string]any{"senders": *senders, "batch": *batch, "runs": *runs, "server_args": *serverArgs, "victorialogs_args": *vlArgs}
	return f.emit(rep, runErr, stdout, stderr)
}

func benchCompare(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("bench compare", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: sediment bench compare [flags] old.json[,old2.json...] new.json[,new2.json...]\n\n"+
			"Prints every metric the reports share (written by 'sediment bench ... --format json' or --save,\n"+
			"all of one kind) with old, new, new/old, the p-value and the sample counts, and calls a change\n"+
			"better or worse only when it exceeds the runs' noise, as benchstat does: a query's timed runs\n"+
			"(or one value per report, when a side lists several reports of repeated runs) are compared\n"+
			"with the Mann-Whitney U test, and a difference counts when p < --alpha. Sizes on disk do not\n"+
			"vary between runs and are compared directly. '~' is no significant change; 'too few runs'\n"+
			"means a side needs more samples (four a side at least) before any change can count.")
		fmt.Fprintln(stderr)
		fs.PrintDefaults()
	}
	alpha := fs.Float64("alpha", 0.05, "significance level of the U test")
	threshold := fs.Float64("threshold", 0, "smallest relative change to call at all (e.g. 0.02 for 2%); decides alone for sizes on disk")
	if err := fs.Parse(args); err != nil {
		return usageError("compare", err, stderr)
	}
	if fs.NArg() != 2 {
		return usageError("compare", errors.New("want two sides: old.json[,more.json] new.json[,more.json]"), stderr)
	}
	if !(*alpha > 0 && *alpha < 1) || *threshold < 0 {
		return usageError("compare", errors.New("--alpha must be in (0, 1) and --threshold not negative"), stderr)
	}
	read := func(list string) ([]*bench.Report, error) {
		var out []*bench.Report
		for _, path := range strings.Split(list, ",") {
			if path = strings.TrimSpace(path); path == "" {
				continue
			}
			r, err := bench.ReadReport(path)
			if err != nil {
				return nil, err
			}
			out = append(out, r)
		}
		return out, nil
	}
	old, err := read(fs.Arg(0))
	if err != nil {
		fmt.Fprintln(stderr, "sediment bench compare:", err)
		return 1
	}
	cur, err := read(fs.Arg(1))
	if err != nil {
		fmt.Fprintln(stderr, "sediment bench compare:", err)
		return 1
	}
	deltas, err := bench.Compare(old, cur, bench.CompareOptions{Alpha: *alpha, Threshold: *threshold})
	if err != nil {
		fmt.Fprintln(stderr, "sediment bench compare:", err)
		return 1
	}
	side := func(rs []*bench.Report) string {
		r := rs[len(rs)-1]
		s := fmt.Sprintf("%s, %s", r.Date.Format(time.RFC3339), r.Dataset)
		if len(rs) > 1 {
			s = fmt.Sprintf("%d reports, the last %s", len(rs), s)
		}
		return s
	}
	fmt.Fprintf(stdout, "old: %s\nnew: %s\n\n", side(old), side(cur))
	if err := bench.WriteDeltas(stdout, deltas); err != nil {
		fmt.Fprintln(stderr, "sediment bench compare:", err)
		return 1
	}
	return 0
}

// intList parses "1,2,3" (K/M suffixes allowed: 64K, 1M are binary).
func intList(s string) ([]int, error) {
	var out []int
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		mult := 1
		switch {
		case strings.HasSuffix(part, "K"), strings.HasSuffix(part, "k"):
			mult, part = 1<<10, part[:len(part)-1]
		case strings.HasSuffix(part, "M"):
			mult, part = 1<<20, part[:len(part)-1]
		}
		n, err := strconv.Atoi(part)
		if err != nil || n < 0 {
			return nil, fmt.Errorf("bad number %q", part)
		}
		out = append(out, n*mult)
	}
	return out, nil
}

// zstdList parses "1/3,1/4" (a single level means the same for both).
func zstdList(s string) ([][2]int, error) {
	var out [][2]int
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		a, b, pair := strings.Cut(part, "/")
		if !pair {
			b = a
		}
		x, err1 := strconv.Atoi(a)
		y, err2 := strconv.Atoi(b)
		if err1 != nil || err2 != nil || x < 1 || x > 4 || y < 1 || y > 4 {
			return nil, fmt.Errorf("bad zstd levels %q (flush/compaction, each 1..4)", part)
		}
		out = append(out, [2]int{x, y})
	}
	return out, nil
}
