package bench

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sync"
	"sync/atomic"
	"time"
)

// Protocol is how IngestHTTP sends events.
type Protocol int

const (
	// LogflareAPI is Vector's way: POST /api/logs?source_name=<source>
	// with x-api-key and a JSON array body.
	LogflareAPI Protocol = iota
	// VictoriaLogsJSONLine is VictoriaLogs' JSON lines API: POST
	// /insert/jsonline with one event per line, the project as the stream,
	// timestamp as the time field and event_message as the message.
	VictoriaLogsJSONLine
)

// vlInsertPath is VictoriaLogs' JSON lines ingest route with the fields
// it needs to know: the project is the log stream (as a sort key is for
// Sediment), timestamp the time, event_message the message.
const vlInsertPath = "/insert/jsonline?_stream_fields=project&_time_field=timestamp&_msg_field=event_message"

// IngestOptions configure IngestHTTP.
type IngestOptions struct {
	URL string // the server, e.g. http://127.0.0.1:4000
	// Protocol is how events are sent (default LogflareAPI).
	Protocol    Protocol
	Key         string // an access token that may ingest (x-api-key)
	Connections int    // concurrent keep-alive connections (default 4)
	BatchSize   int    // events per request (default 500)
	Progress    *Progress
	// MaxRetryWait bounds the back-off after a 429/503 (default 1s).
	MaxRetryWait time.Duration
	// ServerPID, when known, is the server's process: its CPU time while
	// the events are sent is reported.
	ServerPID int
}

// IngestResult is what an ingest run measured.
type IngestResult struct {
	Events      int64   `json:"events"`
	Requests    int64   `json:"requests"`
	BodyBytes   int64   `json:"body_bytes"` // request bodies, uncompressed JSON
	Retries     int64   `json:"retries"`    // 429/503 answers, retried after a back-off
	Seconds     float64 `json:"seconds"`
	EventsPerS  float64 `json:"events_per_s"`
	MBPerS      float64 `json:"mb_per_s"` // 10^6 bytes of request body per second
	LatencyP50  float64 `json:"latency_p50_ms"`
	LatencyP99  float64 `json:"latency_p99_ms"`
	LatencyMax  float64 `json:"latency_max_ms"`
	Connections int     `json:"connections"`
	BatchSize   int     `json:"batch_size"`
	// Filled by RunIngestBench when it knows the server's process: its
	// CPU time while the events were sent (user and system, all threads),
	// and that per million events.
	ServerCPUSeconds      float64 `json:"server_cpu_s,omitempty"`
	ServerCPUPerMillionEv float64 `json:"server_cpu_s_per_1m_events,omitempty"`
	// Filled by RunIngestBench when it ran the server itself.
	PeakRSSBytes  int64      `json:"peak_rss_bytes,omitempty"`
	Disk          *DiskUsage `json:"disk,omitempty"`
	BytesPerEvent float64    `json:"bytes_per_event,omitempty"`
}

// IngestHTTP sends every event of ds to a server as Vector does: POST
// /api/logs?source_name=<source> with x-api-key and a JSON array body (or,
// for VictoriaLogs, as JSON lines to /insert/jsonline), over Connections
// connections at once. One goroutine generates the batches
// (so the data do not depend on the number of connections) a little ahead
// of the senders. A 429 or 503 answer is retried after a back-off (and
// counted); any other non-200 answer stops the run with an error.
// Latencies are of the requests that succeeded, measured from sending to
// reading the whole answer.
func IngestHTTP(ctx context.Context, ds Dataset, o IngestOptions) (*IngestResult, error) {
	ds = ds.WithDefaults()
	if o.Connections <= 0 {
		o.Connections = 4
	}
	if o.BatchSize <= 0 {
		o.BatchSize = 500
	}
	if o.MaxRetryWait <= 0 {
		o.MaxRetryWait = time.Second
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)

	client := &http.Client{Transport: &http.Transport{
		MaxIdleConns:        o.Connections,
		MaxIdleConnsPerHost: o.Connections,
		MaxConnsPerHost:     o.Connections,
		DisableCompression:  true,
		IdleConnTimeout:     90 * time.Second,
	}}
	defer client.CloseIdleConnections()

	// Bodies circulate between the producer and the senders through free,
	// so memory stays at a few batches whatever the event count.
	work := make(chan Batch, 2*o.Connections)
	free := make(chan []byte, 3*o.Connections)
	go func() {
		defer close(work)
		p := ds.NewProducer(o.BatchSize)
		p.NDJSON = o.Protocol == VictoriaLogsJSONLine
		for {
			var buf []byte
			select {
			case buf = <-free:
			default:
			}
			b, ok := p.Next(buf)
			if !ok {
				return
			}
			select {
			case work <- b:
			case <-ctx.Done():
				return
			}
		}
	}()

	res := &IngestResult{Connections: o.Connections, BatchSize: o.BatchSize}
	var events, requests, bodyBytes, retries atomic.Int64
	lat := make([][]time.Duration, o.Connections)
	o.Progress.Start("ingest", int64(ds.Events), "events")
	var cpu0 time.Duration
	cpuErr := errors.New("no server process")
	if o.ServerPID > 0 {
		cpu0, cpuErr = ProcessCPU(o.ServerPID)
	}
	start := time.Now()
	var wg sync.WaitGroup
	for w := range o.Connections {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for b := range work {
				if ctx.Err() != nil {
					continue // drain
				}
				d, tries, err := postBatch(ctx, client, o, b)
				retries.Add(int64(tries))
				if err != nil {
					cancel(err)
					continue
				}
				lat[w] = append(lat[w], d)
				events.Add(int64(b.Events))
				requests.Add(1)
				bodyBytes.Add(int64(len(b.Body)))
				o.Progress.Add(int64(b.Events))
				select {
				case free <- b.Body:
				default:
				}
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	var serverCPU time.Duration
	if cpuErr == nil {
		var cpu1 time.Duration
		if cpu1, cpuErr = ProcessCPU(o.ServerPID); cpuErr == nil {
			serverCPU = cpu1 - cpu0
		}
	}
	o.Progress.Finish()
	if err := context.Cause(ctx); err != nil {
		return nil, err
	}

	var all []time.Duration
	for _, l := range lat {
		all = append(all, l...)
	}
	res.Events, res.Requests, res.BodyBytes, res.Retries = events.Load(), requests.Load(), bodyBytes.Load(), retries.Load()
	res.Seconds = elapsed.Seconds()
	res.EventsPerS = float64(res.Events) / res.Seconds
	res.MBPerS = float64(res.BodyBytes) / 1e6 / res.Seconds
	res.LatencyP50 = ms(Percentile(all, 50))
	res.LatencyP99 = ms(Percentile(all, 99))
	res.LatencyMax = ms(Percentile(all, 100))
	if cpuErr == nil && res.Events > 0 {
		res.ServerCPUSeconds = serverCPU.Seconds()
		res.ServerCPUPerMillionEv = serverCPU.Seconds() / float64(res.Events) * 1e6
	}
	return res, nil
}

// postBatch sends one batch until it is accepted, backing off on 429/503.
// It returns the latency of the accepted request and how many were
// refused before it.
func postBatch(ctx context.Context, client *http.Client, o IngestOptions, b Batch) (time.Duration, int, error) {
	u := o.URL + "/api/logs?source_name=" + url.QueryEscape(b.Source.Name())
	if o.Protocol == VictoriaLogsJSONLine {
		u = o.URL + vlInsertPath
	}
	wait := 10 * time.Millisecond
	for tries := 0; ; tries++ {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, bytes.NewReader(b.Body))
		if err != nil {
			return 0, tries, err
		}
		if o.Protocol == VictoriaLogsJSONLine {
			// Not a form content type: Go's form parsing would read (and
			// cap at 10 MB) the body before VictoriaLogs sees it.
			req.Header.Set("Content-Type", "application/stream+json")
		} else {
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("X-Api-Key", o.Key)
		}
		t0 := time.Now()
		resp, err := client.Do(req)
		if err != nil {
			return 0, tries, err
		}
		body, err := io.ReadAll(io.LimitReader(resp.Body, 4096))
		resp.Body.Close()
		d := time.Since(t0)
		if err != nil {
			return 0, tries, err
		}
		switch resp.StatusCode {
		case http.StatusOK, http.StatusNoContent:
			return d, tries, nil
		case http.StatusTooManyRequests, http.StatusServiceUnavailable:
			select {
			case <-time.After(wait):
			case <-ctx.Done():
				return 0, tries, ctx.Err()
			}
			wait = min(2*wait, o.MaxRetryWait)
		default:
			return 0, tries, fmt.Errorf("POST %s: %d %s", u, resp.StatusCode, bytes.TrimSpace(body))
		}
	}
}

// errNoEvents is returned for a dataset without events.
var errNoEvents = errors.New("bench: the dataset has no events (--events)")
