package bench

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
)

// IngestNodesOptions configure RunIngestNodes: Nodes `sediment serve
// --role ingest` processes sharing one object store, each on its own data
// directory, and the events sent over HTTP, half of the connections (and
// of the events) to each of two nodes.
type IngestNodesOptions struct {
	// Dataset is the whole run's events; node i sends Events/Nodes of
	// them, generated with Seed+i (so no two nodes receive the same ids).
	Dataset Dataset
	// Server is every node's process: Binary, Log and Args (which must
	// name the object store: --object-store s3://bucket/prefix and its
	// endpoint and credentials flags). --role ingest is added.
	Server ServerOptions
	// Nodes is how many ingest nodes run (default 1).
	Nodes int
	// Connections is the senders in all (default 4), split evenly
	// between the nodes; BatchSize is the events per request (default
	// 500).
	Connections, BatchSize int
	// Dir holds the nodes' data directories (default a temporary
	// directory, removed).
	Dir string
	// PublishTimeout bounds the wait, after the last acknowledgement,
	// until every node has published all it flushed (default 5 minutes).
	PublishTimeout time.Duration
	// StorePID, when set, is the object store's process on this machine
	// (MinIO): its CPU time while the events are sent is reported.
	StorePID int
	Progress *Progress
}

// IngestNodesResult is what RunIngestNodes measured.
type IngestNodesResult struct {
	Nodes  int   `json:"nodes"`
	Events int64 `json:"events"`
	// Seconds runs from the first request sent to the last acknowledged,
	// over all nodes; EventsPerS is Events over it.
	Seconds    float64 `json:"seconds"`
	EventsPerS float64 `json:"events_per_s"`
	// ServerCPUSeconds is the nodes' CPU time (user and system) while the
	// events were sent, summed; per million events below. Available CPU
	// is the machine's cores times Seconds.
	ServerCPUSeconds      float64 `json:"server_cpu_s"`
	ServerCPUPerMillionEv float64 `json:"server_cpu_s_per_1m_events"`
	// ClientCPUSeconds is this process's CPU time meanwhile: generating
	// and sending the events, on the same cores as the nodes.
	ClientCPUSeconds float64 `json:"client_cpu_s"`
	// StoreCPUSeconds is the object store's CPU time meanwhile, when
	// IngestNodesOptions.StorePID names it.
	StoreCPUSeconds float64 `json:"store_cpu_s,omitempty"`
	// BodyBytes is the request bodies' size (uncompressed JSON).
	BodyBytes int64 `json:"body_bytes"`
	// PublishedAfterSeconds is how long after the last acknowledgement
	// every node had published what it flushed (its
	// sediment_object_store_publish_pending reached 0), -1 if it did not
	// within the timeout.
	PublishedAfterSeconds float64 `json:"published_after_s"`
	// StoppedAfterSeconds is how long the nodes' clean stop took, which
	// flushes their heads and publishes them.
	StoppedAfterSeconds float64 `json:"stopped_after_s"`
	// PerNode are each node's sender results (its own rate and CPU).
	PerNode []*IngestResult `json:"per_node"`
}

// RunIngestNodes starts the nodes (one after the other: the first seeds
// the shared catalog, the others adopt it), sends the events to all of
// them at once, waits until they have published, and stops them.
func RunIngestNodes(ctx context.Context, o IngestNodesOptions) (*IngestNodesResult, error) {
	o.Dataset = o.Dataset.WithDefaults()
	if o.Nodes <= 0 {
		o.Nodes = 1
	}
	if o.Connections <= 0 {
		o.Connections = 4
	}
	if o.Connections < o.Nodes {
		return nil, fmt.Errorf("%d connections cannot be split between %d nodes", o.Connections, o.Nodes)
	}
	if o.Dataset.Events < o.Nodes {
		return nil, errNoEvents
	}
	if o.PublishTimeout <= 0 {
		o.PublishTimeout = 5 * time.Minute
	}
	dir := o.Dir
	if dir == "" {
		d, err := os.MkdirTemp("", "sediment-ingest-nodes-")
		if err != nil {
			return nil, err
		}
		defer os.RemoveAll(d)
		dir = d
	}
	pub, err := newKey()
	if err != nil {
		return nil, err
	}
	priv, err := newKey()
	if err != nil {
		return nil, err
	}
	var nodes []*Server
	defer func() {
		for _, s := range nodes {
			s.Stop(stopTimeout) // a no-op once stopped
		}
	}()
	for i := range o.Nodes {
		so := o.Server
		so.DataDir = filepath.Join(dir, fmt.Sprintf("node%d", i+1))
		so.Args = append(append([]string(nil), o.Server.Args...), "--role", "ingest")
		so.PublicKey, so.PrivateKey = pub, priv
		o.Progress.Start(fmt.Sprintf("start ingest node %d", i+1), 0, "")
		s, err := StartServer(ctx, so)
		o.Progress.Finish()
		if err != nil {
			return nil, fmt.Errorf("ingest node %d: %w", i+1, err)
		}
		nodes = append(nodes, s)
	}

	res := &IngestNodesResult{Nodes: o.Nodes, PerNode: make([]*IngestResult, o.Nodes)}
	errs := make([]error, o.Nodes)
	var wg sync.WaitGroup
	client0, clientErr := ProcessCPU(os.Getpid())
	var store0 time.Duration
	storeErr := errors.New("no store process")
	if o.StorePID > 0 {
		store0, storeErr = ProcessCPU(o.StorePID)
	}
	start := time.Now()
	for i, s := range nodes {
		ds := o.Dataset
		ds.Seed += int64(i)
		ds.Events = o.Dataset.Events / o.Nodes
		if i < o.Dataset.Events%o.Nodes {
			ds.Events++
		}
		conns := o.Connections / o.Nodes
		if i < o.Connections%o.Nodes {
			conns++
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			res.PerNode[i], errs[i] = IngestHTTP(ctx, ds, IngestOptions{URL: s.URL, Key: pub, Connections: conns,
				BatchSize: o.BatchSize, ServerPID: s.PID()})
		}()
	}
	wg.Wait()
	res.Seconds = time.Since(start).Seconds()
	if client1, err := ProcessCPU(os.Getpid()); err == nil && clientErr == nil {
		res.ClientCPUSeconds = (client1 - client0).Seconds()
	}
	if storeErr == nil {
		if store1, err := ProcessCPU(o.StorePID); err == nil {
			res.StoreCPUSeconds = (store1 - store0).Seconds()
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	for _, r := range res.PerNode {
		res.Events += r.Events
		res.BodyBytes += r.BodyBytes
		res.ServerCPUSeconds += r.ServerCPUSeconds
	}
	res.EventsPerS = float64(res.Events) / res.Seconds
	res.ServerCPUPerMillionEv = res.ServerCPUSeconds / float64(res.Events) * 1e6

	// Published: every node's queue of segment changes drained. A node
	// publishes what it flushed; what is still in its head is published
	// at its next flush (or at a clean stop).
	acked := time.Now()
	res.PublishedAfterSeconds = -1
	deadline := time.Now().Add(o.PublishTimeout)
	for time.Now().Before(deadline) {
		pending := 0.0
		for _, s := range nodes {
			v, err := metricValue(ctx, s.URL, priv, "sediment_object_store_publish_pending")
			if err != nil {
				return nil, err
			}
			pending += v
		}
		if pending == 0 {
			res.PublishedAfterSeconds = time.Since(acked).Seconds()
			break
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
	// A clean stop flushes the heads and publishes them (the nodes give
	// the store up to 10 s): stopped, every acknowledged event is in the
	// store.
	stopped := time.Now()
	stopErrs := make([]error, len(nodes))
	for i, s := range nodes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			stopErrs[i] = s.Stop(stopTimeout)
		}()
	}
	wg.Wait()
	res.StoppedAfterSeconds = time.Since(stopped).Seconds()
	return res, errors.Join(stopErrs...)
}

// metricValue reads one unlabelled metric from a server's /metrics, with
// key (one that may manage the server).
func metricValue(ctx context.Context, base, key, name string) (float64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/metrics", nil)
	if err != nil {
		return 0, err
	}
	req.Header.Set("x-api-key", key)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("%s/metrics: %s", base, res.Status)
	}
	return parseMetric(res.Body, name)
}

// parseMetric finds an unlabelled sample of name in Prometheus' text
// format ("name value" on a line of its own).
func parseMetric(r io.Reader, name string) (float64, error) {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), name+" "); ok {
			return strconv.ParseFloat(strings.TrimSpace(v), 64)
		}
	}
	if err := sc.Err(); err != nil {
		return 0, err
	}
	return 0, fmt.Errorf("no %s in the metrics", name)
}
