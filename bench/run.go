package bench

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"
)

// stopTimeout bounds a server's shutdown, which flushes every head.
const stopTimeout = 10 * time.Minute

// IngestBenchOptions configure RunIngestBench.
type IngestBenchOptions struct {
	Dataset Dataset
	// Ingest sets connections and batch size; with Ingest.URL set the run
	// drives that server instead of starting one.
	Ingest IngestOptions
	// Server says how to start the child server (Binary, Args, DataDir;
	// an empty DataDir is a temporary directory).
	Server ServerOptions
	// Keep keeps a temporary data directory (its path is in the report).
	Keep bool
	// ServerPID, with Ingest.URL, is the external server's process id, for
	// its peak RSS (0: not reported).
	ServerPID int
	Progress  *Progress
}

// IngestBench is the outcome of RunIngestBench.
type IngestBench struct {
	Result  *IngestResult
	Dataset Dataset
	Server  string // what was driven
	DataDir string // the data directory, if kept
	Notes   []string
}

// RunIngestBench measures ingest over HTTP. Without Ingest.URL it starts
// `sediment serve` as a child process on a data directory, sends the
// dataset, reads the server's peak RSS, stops it (the server flushes on
// shutdown), settles the data directory in process (full compaction) and
// measures bytes per event; it records the dataset in the directory for
// a later query run.
func RunIngestBench(ctx context.Context, o IngestBenchOptions) (*IngestBench, error) {
	o.Dataset = o.Dataset.WithDefaults()
	if o.Dataset.Events <= 0 {
		return nil, errNoEvents
	}
	out := &IngestBench{Dataset: o.Dataset}
	o.Ingest.Progress = o.Progress
	if o.Ingest.URL != "" {
		out.Server = o.Ingest.URL
		o.Ingest.ServerPID = o.ServerPID
		res, err := IngestHTTP(ctx, o.Dataset, o.Ingest)
		if err != nil {
			return nil, err
		}
		if o.ServerPID > 0 {
			if res.PeakRSSBytes, err = PeakRSS(o.ServerPID); err != nil {
				out.Notes = append(out.Notes, "peak RSS: "+err.Error())
			}
		}
		out.Notes = append(out.Notes, "bytes per event on disk are measured only when the benchmark runs the server itself")
		out.Result = res
		return out, nil
	}

	given := o.Server.DataDir != ""
	dir, cleanup, err := dataDir(o.Server.DataDir, o.Keep)
	if err != nil {
		return nil, err
	}
	defer cleanup()
	o.Server.DataDir = dir
	if u, err := measureFiles(dir); err == nil && u.Segments+int(u.WALBytes) > 0 {
		out.Notes = append(out.Notes, "the data directory already held data; bytes per event cover all of it")
	}
	res, err := ingestChild(ctx, o.Dataset, o.Server, o.Ingest, o.Progress)
	if err != nil {
		return nil, err
	}
	out.Result = res
	out.Server = "sediment serve (child process)"
	if o.Keep || given {
		out.DataDir = dir
	}
	return out, nil
}

// ingestChild starts a server on o.DataDir, ingests ds, stops the server,
// settles and measures the directory and records the dataset there.
func ingestChild(ctx context.Context, ds Dataset, so ServerOptions, iopts IngestOptions, p *Progress) (*IngestResult, error) {
	srv, err := StartServer(ctx, so)
	if err != nil {
		return nil, err
	}
	iopts.URL, iopts.Key, iopts.Progress, iopts.ServerPID = srv.URL, srv.PublicKey, p, srv.PID()
	res, err := IngestHTTP(ctx, ds, iopts)
	var rssErr error
	if err == nil {
		res.PeakRSSBytes, rssErr = srv.PeakRSS()
	}
	p.Start("stop server (flush)", 0, "")
	stopErr := srv.Stop(stopTimeout)
	p.Finish()
	if err := errors.Join(err, rssErr, stopErr); err != nil {
		return nil, err
	}
	p.Start("compact", 0, "")
	disk, err := CompactDataDir(so.DataDir, nil)
	p.Finish()
	if err != nil {
		return nil, err
	}
	res.Disk = &disk
	res.BytesPerEvent = disk.BytesPerEvent()
	if err := SaveManifest(so.DataDir, ds); err != nil {
		return nil, err
	}
	return res, nil
}

// dataDir returns dir, or a new temporary directory removed by cleanup
// unless keep is set.
func dataDir(dir string, keep bool) (string, func(), error) {
	if dir != "" {
		return dir, func() {}, os.MkdirAll(dir, 0o755)
	}
	tmp, err := os.MkdirTemp("", "sediment-bench-*")
	if err != nil {
		return "", nil, err
	}
	if keep {
		return tmp, func() {}, nil
	}
	return tmp, func() { os.RemoveAll(tmp) }, nil
}

// QueryBenchOptions configure RunQueryBench.
type QueryBenchOptions struct {
	// Dataset is loaded when the data directory holds none, or describes
	// the data of the server at URL (for the project to query).
	Dataset Dataset
	// URL and Key (a private key) select a running server with data; else
	// a child server runs on Server.DataDir.
	URL, Key string
	Server   ServerOptions
	// Ingest sets connections and batch size for loading.
	Ingest    IngestOptions
	Runs      int
	Keep      bool
	ServerPID int
	Progress  *Progress
	// Suite is SuiteStudio (default) or SuitePeers: issue 14's six queries
	// over PeersDataset-shaped data, every answer checked against the
	// generator's truth. With URL, the peers suite needs Dataset.End to be
	// the end of the data the server holds.
	Suite string
}

// QueryBench is the outcome of RunQueryBench.
type QueryBench struct {
	Queries []QueryStats `json:"queries"`
	// Loaded is the ingest that loaded the data, when this run did.
	Loaded       *IngestResult `json:"loaded,omitempty"`
	Disk         *DiskUsage    `json:"disk,omitempty"`
	PeakRSSBytes int64         `json:"peak_rss_bytes,omitempty"`
	Runs         int           `json:"runs"`
	Now          time.Time     `json:"now"` // the end of "the last hour"
	Dataset      Dataset       `json:"-"`
	Server       string        `json:"server"`
	DataDir      string        `json:"data_dir,omitempty"`
	Notes        []string      `json:"notes,omitempty"`
	// Suite names the queries; Truth describes what the peers suite's
	// answers were checked against.
	Suite string        `json:"suite,omitempty"`
	Truth *TruthSummary `json:"truth,omitempty"`
}

// RunQueryBench runs the Studio suite against a server holding a dataset.
// Without URL it uses a child server on Server.DataDir: when the directory
// holds no dataset recorded by a bench run, it loads Dataset first (as
// RunIngestBench does, then settled by a full compaction) and restarts the
// server, so that the queries read settled segments and the peak RSS is
// that of serving queries. The error is non-nil when a query failed; the
// result is returned with it.
func RunQueryBench(ctx context.Context, o QueryBenchOptions) (*QueryBench, error) {
	o.Dataset = o.Dataset.WithDefaults()
	if o.Suite == "" {
		o.Suite = SuiteStudio
	}
	if o.Suite != SuiteStudio && o.Suite != SuitePeers {
		return nil, fmt.Errorf("bench: unknown suite %q (studio or peers)", o.Suite)
	}
	out := &QueryBench{Runs: max(o.Runs, 1), Suite: o.Suite}
	if o.URL != "" {
		out.Server, out.Dataset, out.Now = o.URL, o.Dataset, time.Now().UTC()
		suite, err := out.suite(ctx, o)
		if err != nil {
			return nil, err
		}
		qs, err := RunQueries(ctx, NewHTTPTarget(o.URL, o.Key), suite, out.Runs, o.Progress)
		out.Queries = qs
		if o.ServerPID > 0 {
			if rss, rerr := PeakRSS(o.ServerPID); rerr == nil {
				out.PeakRSSBytes = rss
			}
		}
		return out, err
	}

	dir, cleanup, err := dataDir(o.Server.DataDir, o.Keep)
	if err != nil {
		return nil, err
	}
	defer cleanup()
	if o.Keep || o.Server.DataDir != "" {
		out.DataDir = dir
	}
	o.Server.DataDir = dir
	ds, ok, err := LoadManifest(dir)
	if err != nil {
		return nil, err
	}
	if !ok {
		if o.Dataset.Events <= 0 {
			return nil, errNoEvents
		}
		ds = o.Dataset
		if out.Loaded, err = ingestChild(ctx, ds, o.Server, o.Ingest, o.Progress); err != nil {
			return nil, err
		}
		out.Disk = out.Loaded.Disk
	} else {
		out.Notes = append(out.Notes, fmt.Sprintf("queried the dataset recorded in %s (%d events)", dir, ds.Events))
	}
	out.Dataset = ds
	out.Now = ds.End.Add(time.Second)
	if age := time.Since(ds.End); age > 10*time.Minute && o.Suite == SuiteStudio {
		out.Notes = append(out.Notes, fmt.Sprintf("the data end %s ago: logs.all windows are placed at the data, but usage.api-counts counts back from the server's clock and misses them", age.Round(time.Minute)))
	}
	suite, err := out.suite(ctx, o)
	if err != nil {
		return nil, err
	}

	srv, err := StartServer(ctx, o.Server)
	if err != nil {
		return nil, err
	}
	out.Server = "sediment serve (child process)"
	qs, qerr := RunQueries(ctx, NewHTTPTarget(srv.URL, srv.PrivateKey), suite, out.Runs, o.Progress)
	out.Queries = qs
	rss, rssErr := srv.PeakRSS()
	out.PeakRSSBytes = rss
	stopErr := srv.Stop(stopTimeout)
	if err := errors.Join(rssErr, stopErr); err != nil {
		return out, err
	}
	return out, qerr
}

// suite builds the queries of o.Suite for the dataset and time of q; the
// peers suite first computes its truth (one pass of the generator).
func (q *QueryBench) suite(ctx context.Context, o QueryBenchOptions) ([]Query, error) {
	if o.Suite != SuitePeers {
		return StudioSuite(SuiteOptions{Project: q.Dataset.Project(), Now: q.Now, Sources: sourcesOf(q.Dataset)}), nil
	}
	spec := DefaultPeersSpec(q.Dataset)
	q.Now = spec.Now
	tr, err := ComputeTruth(ctx, q.Dataset, spec, o.Progress)
	if err != nil {
		return nil, err
	}
	sum := tr.Summary()
	q.Truth = &sum
	return PeersSuite(tr), nil
}
