package bench

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"time"
)

// PeersOptions configure RunPeers.
type PeersOptions struct {
	// Dataset is what both servers get (PeersDataset's shape).
	Dataset Dataset
	// Spec places the queries (nil: DefaultPeersSpec).
	Spec *PeersSpec
	// Sediment starts Sediment (Binary, Args, Log); its data directory is
	// made under Dir.
	Sediment ServerOptions
	// VictoriaLogs starts VictoriaLogs (Binary, Args, Log); an empty
	// Binary leaves it out and measures Sediment alone.
	VictoriaLogs VLOptions
	// Senders and BatchSize: concurrent connections and events per
	// request, the same for both (default 2 and 5,000: Vector's 10 MB
	// batches hold about 7,000 of these 1.4 KB events).
	Senders   int
	BatchSize int
	// Runs per query after one warm-up run (default 10).
	Runs int
	// Dir holds the servers' data directories (default the system's
	// temporary directory); they are removed unless Keep.
	Dir      string
	Keep     bool
	Progress *Progress
}

// PeersReport is a side-by-side run: the same events into each server, the
// same questions asked of each, every answer checked against the truth.
type PeersReport struct {
	Truth     TruthSummary `json:"truth"`
	Senders   int          `json:"senders"`
	BatchSize int          `json:"batch_size"`
	Runs      int          `json:"runs"`
	Servers   []PeerResult `json:"servers"`
}

// PeerResult is what one server did.
type PeerResult struct {
	Name    string        `json:"name"`
	DataDir string        `json:"data_dir,omitempty"`
	Ingest  *IngestResult `json:"ingest,omitempty"`
	// IngestCPUSeconds is the server's CPU (utime+stime from /proc) from
	// the first request to the last answer; SettleCPUSeconds what it took
	// afterwards to flush and merge (for Sediment: its shutdown flush plus
	// the full compaction the benchmark runs in process on its directory).
	IngestCPUSeconds float64 `json:"ingest_cpu_s"`
	SettleCPUSeconds float64 `json:"settle_cpu_s"`
	// DiskBytes is every file of the data directory once settled.
	DiskBytes     int64   `json:"disk_bytes"`
	BytesPerEvent float64 `json:"bytes_per_event"`
	// StoredEvents is what the server counts after the run (it must be
	// every event sent).
	StoredEvents  int64        `json:"stored_events"`
	PeakRSSIngest int64        `json:"peak_rss_ingest"`
	PeakRSSQuery  int64        `json:"peak_rss_query"`
	Queries       []QueryStats `json:"queries"`
	// QueryCPUSeconds is the server's CPU over the queries' runs.
	QueryCPUSeconds float64 `json:"query_cpu_s"`
	// GCIngest and GCQuery are the Go runtime's own account of Sediment's
	// garbage collection while ingesting and while querying.
	GCIngest *GCUse   `json:"gc_ingest,omitempty"`
	GCQuery  *GCUse   `json:"gc_query,omitempty"`
	Error    string   `json:"error,omitempty"`
	Notes    []string `json:"notes,omitempty"`
}

// CPUPerMillion is the server's ingest CPU-seconds per 1M events; with
// settle, including the flush and merge that followed.
func (r *PeerResult) CPUPerMillion(settle bool) float64 {
	if r.Ingest == nil || r.Ingest.Events == 0 {
		return 0
	}
	s := r.IngestCPUSeconds
	if settle {
		s += r.SettleCPUSeconds
	}
	return s / float64(r.Ingest.Events) * 1e6
}

// Server names in a peers report.
const (
	PeerSediment     = "sediment"
	PeerVictoriaLogs = "victorialogs"
)

// RunPeers computes the truth of the dataset, then for Sediment and then
// VictoriaLogs (never both at once): starts the server on an empty
// directory, sends every event with Senders connections and measures the
// rate, the server's CPU and peak RSS; lets it flush and merge (Sediment:
// stop, which flushes, then a full compaction; VictoriaLogs: force flush
// and force merge, then stop) and measures the directory; restarts it on
// its data and runs the peers suite, every answer checked; and counts what
// it stored. A server that fails is reported with its error and the other
// still runs; the error returned names the failures.
func RunPeers(ctx context.Context, o PeersOptions) (*PeersReport, error) {
	o.Dataset = o.Dataset.WithDefaults()
	if o.Dataset.Events <= 0 {
		return nil, errNoEvents
	}
	if o.Senders <= 0 {
		o.Senders = 2
	}
	if o.BatchSize <= 0 {
		o.BatchSize = 5000
	}
	o.Runs = max(o.Runs, 1)
	spec := DefaultPeersSpec(o.Dataset)
	if o.Spec != nil {
		spec = *o.Spec
	}
	tr, err := ComputeTruth(ctx, o.Dataset, spec, o.Progress)
	if err != nil {
		return nil, err
	}
	rep := &PeersReport{Truth: tr.Summary(), Senders: o.Senders, BatchSize: o.BatchSize, Runs: o.Runs}
	suite := PeersSuite(tr)
	var errs []error
	run := func(name string, f func(r *PeerResult, dir string) error) {
		r := PeerResult{Name: name}
		dir, err := os.MkdirTemp(o.Dir, "sediment-peers-"+name+"-*")
		if err == nil {
			if o.Keep {
				r.DataDir = dir
			} else {
				defer os.RemoveAll(dir)
			}
			err = f(&r, dir)
		}
		if err != nil {
			if ctx.Err() != nil {
				err = ctx.Err()
			}
			r.Error = err.Error()
			errs = append(errs, fmt.Errorf("%s: %w", name, err))
		}
		rep.Servers = append(rep.Servers, r)
	}
	run(PeerSediment, func(r *PeerResult, dir string) error { return peerSediment(ctx, o, suite, r, dir) })
	if ctx.Err() == nil && o.VictoriaLogs.Binary != "" {
		run(PeerVictoriaLogs, func(r *PeerResult, dir string) error { return peerVictoriaLogs(ctx, o, suite, r, dir) })
	}
	return rep, errors.Join(errs...)
}

// cpuSince returns the CPU seconds a process used since before.
func cpuSince(c *child, before time.Duration) (float64, error) {
	now, err := c.CPU()
	return (now - before).Seconds(), err
}

// peerSediment runs the Sediment half of RunPeers.
func peerSediment(ctx context.Context, o PeersOptions, suite []Query, r *PeerResult, dir string) error {
	so := o.Sediment
	so.DataDir, so.Debug = dir, true
	srv, err := StartServer(ctx, so)
	if err != nil {
		return err
	}
	defer srv.Stop(stopTimeout) // a no-op once stopped
	m0, err := srv.RuntimeMetrics(ctx)
	if err != nil {
		return err
	}
	cpu0, err := srv.CPU()
	if err != nil {
		return err
	}
	r.Ingest, err = IngestHTTP(ctx, o.Dataset, IngestOptions{URL: srv.URL, Key: srv.PublicKey, Connections: o.Senders, BatchSize: o.BatchSize, Progress: o.Progress})
	if err != nil {
		return err
	}
	if r.IngestCPUSeconds, err = cpuSince(srv.child, cpu0); err != nil {
		return err
	}
	if r.PeakRSSIngest, err = srv.PeakRSS(); err != nil {
		return err
	}
	if m1, err := srv.RuntimeMetrics(ctx); err == nil {
		if u, err := gcUse(m0, m1); err == nil {
			r.GCIngest = &u
		}
	}
	cpuIngested, err := srv.CPU()
	if err != nil {
		return err
	}

	o.Progress.Start("sediment: stop (flush)", 0, "")
	err = srv.Stop(stopTimeout)
	o.Progress.Finish()
	if err != nil {
		return err
	}
	total, err := srv.TotalCPU()
	if err != nil {
		return err
	}
	o.Progress.Start("sediment: compact", 0, "")
	self0 := selfCPU()
	disk, err := CompactDataDir(dir, nil)
	selfSettle := selfCPU() - self0
	o.Progress.Finish()
	if err != nil {
		return err
	}
	r.SettleCPUSeconds = (total - cpuIngested + selfSettle).Seconds()
	r.Ingest.Disk, r.Ingest.BytesPerEvent = &disk, disk.BytesPerEvent()
	if r.DiskBytes, err = dirBytes(dir); err != nil {
		return err
	}
	r.BytesPerEvent = float64(r.DiskBytes) / float64(r.Ingest.Events)
	r.Notes = append(r.Notes, fmt.Sprintf("segment files alone: %.1f bytes/event in %d segments; the rest of the directory is the catalog and write-ahead logs",
		disk.BytesPerEvent(), disk.Segments))
	if err := SaveManifest(dir, o.Dataset); err != nil {
		return err
	}

	// Queries on the settled directory, by a fresh server.
	if srv, err = StartServer(ctx, so); err != nil {
		return err
	}
	defer srv.Stop(stopTimeout)
	if m0, err = srv.RuntimeMetrics(ctx); err != nil {
		return err
	}
	if cpu0, err = srv.CPU(); err != nil {
		return err
	}
	target := NewHTTPTarget(srv.URL, srv.PrivateKey)
	// Failed queries are reported per query (and by storedAll).
	if r.Queries, err = RunQueries(ctx, target, suite, o.Runs, o.Progress); err != nil && !errors.Is(err, ErrQueriesFailed) {
		return err
	}
	if r.QueryCPUSeconds, err = cpuSince(srv.child, cpu0); err != nil {
		return err
	}
	if m1, err := srv.RuntimeMetrics(ctx); err == nil {
		if u, err := gcUse(m0, m1); err == nil {
			r.GCQuery = &u
		}
	}
	if r.PeakRSSQuery, err = srv.PeakRSS(); err != nil {
		return err
	}
	if r.StoredEvents, err = storedEvents(ctx, target, Query{Name: "stored events", SQL: "select count(*) as count from `cloudflare.logs.prod`"}); err != nil {
		return err
	}
	if err := srv.Stop(stopTimeout); err != nil {
		return err
	}
	return storedAll(r)
}

// peerVictoriaLogs runs the VictoriaLogs half of RunPeers.
func peerVictoriaLogs(ctx context.Context, o PeersOptions, suite []Query, r *PeerResult, dir string) error {
	vo := o.VictoriaLogs
	vo.DataDir = dir
	vl, err := StartVictoriaLogs(ctx, vo)
	if err != nil {
		return err
	}
	defer vl.Stop(stopTimeout)
	cpu0, err := vl.CPU()
	if err != nil {
		return err
	}
	r.Ingest, err = IngestHTTP(ctx, o.Dataset, IngestOptions{URL: vl.URL, Protocol: VictoriaLogsJSONLine, Connections: o.Senders, BatchSize: o.BatchSize, Progress: o.Progress})
	if err != nil {
		return err
	}
	if r.IngestCPUSeconds, err = cpuSince(vl.child, cpu0); err != nil {
		return err
	}
	if r.PeakRSSIngest, err = vl.PeakRSS(); err != nil {
		return err
	}
	cpuIngested, err := vl.CPU()
	if err != nil {
		return err
	}
	o.Progress.Start("victorialogs: flush, merge, stop", 0, "")
	err = vl.Settle(ctx)
	if err == nil {
		err = vl.Stop(stopTimeout)
	}
	o.Progress.Finish()
	if err != nil {
		return err
	}
	total, err := vl.TotalCPU()
	if err != nil {
		return err
	}
	r.SettleCPUSeconds = (total - cpuIngested).Seconds()
	if r.DiskBytes, err = dirBytes(dir); err != nil {
		return err
	}
	r.BytesPerEvent = float64(r.DiskBytes) / float64(r.Ingest.Events)

	if vl, err = StartVictoriaLogs(ctx, vo); err != nil {
		return err
	}
	defer vl.Stop(stopTimeout)
	if cpu0, err = vl.CPU(); err != nil {
		return err
	}
	target := NewVLTarget(vl.URL)
	if r.Queries, err = RunQueries(ctx, target, suite, o.Runs, o.Progress); err != nil && !errors.Is(err, ErrQueriesFailed) {
		return err
	}
	if r.QueryCPUSeconds, err = cpuSince(vl.child, cpu0); err != nil {
		return err
	}
	if r.PeakRSSQuery, err = vl.PeakRSS(); err != nil {
		return err
	}
	count := Query{Name: "stored events", LogsQL: &LogsQL{Path: vlQueryPath, Query: "* | stats count() as count"}}
	if r.StoredEvents, err = storedEvents(ctx, target, count); err != nil {
		return err
	}
	if err := vl.Stop(stopTimeout); err != nil {
		return err
	}
	return storedAll(r)
}

// storedEvents runs a count query and returns its count.
func storedEvents(ctx context.Context, t Target, q Query) (int64, error) {
	body, _, err := t.Run(ctx, q, "")
	if err != nil {
		return 0, fmt.Errorf("count stored events: %w", err)
	}
	rows, err := t.Rows(q, body)
	if err != nil {
		return 0, fmt.Errorf("count stored events: %w", err)
	}
	if len(rows) != 1 {
		return 0, fmt.Errorf("count stored events: %d rows", len(rows))
	}
	return rows[0].Int("count")
}

// storedAll fails a server that lost events or failed a query.
func storedAll(r *PeerResult) error {
	if r.StoredEvents != r.Ingest.Events {
		return fmt.Errorf("stored %d events of the %d sent", r.StoredEvents, r.Ingest.Events)
	}
	var failed []string
	for _, q := range r.Queries {
		if q.Error != "" {
			failed = append(failed, strconv.Quote(q.Name)+": "+q.Error)
		}
	}
	if len(failed) > 0 {
		return fmt.Errorf("%w: %v", ErrQueriesFailed, failed)
	}
	return nil
}
