package metrics

import (
	"bytes"
	"io"
	"log/slog"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/common/expfmt"
)

// Registry holds every metric of a server: the Go runtime's and the
// process's, the instruments of this package, and the collectors
// registered with Register. Its methods are safe for concurrent use.
type Registry struct {
	reg *prometheus.Registry
	log *slog.Logger

	walSync         prometheus.Histogram
	requests        *prometheus.CounterVec
	requestDuration *prometheus.HistogramVec
	queryDuration   *prometheus.HistogramVec
}

// Buckets of the latency histograms, in seconds. Requests and queries
// span a cached answer (well under a millisecond) to the query timeout
// (65 s); an fsync takes ~0.2 ms for a small write on a good disk and
// seconds on a struggling one.
var (
	requestBuckets = []float64{0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60}
	fsyncBuckets   = []float64{0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5}
)

// New returns a registry with the Go runtime and process collectors and
// this package's instruments. log receives the errors of scrapes (nil
// discards them).
func New(log *slog.Logger) *Registry {
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	r := &Registry{reg: prometheus.NewRegistry(), log: log}
	r.walSync = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    "sediment_wal_fsync_duration_seconds",
		Help:    "Time taken by the fsyncs of write-ahead logs that make acknowledged events durable (each group commit in --ack-mode sync, each periodic sync in buffered mode).",
		Buckets: fsyncBuckets,
	})
	r.requests = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "sediment_http_requests_total",
		Help: "HTTP requests answered, by route and status code.",
	}, []string{"route", "code"})
	r.requestDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "sediment_http_request_duration_seconds",
		Help:    "Time from a request's headers to its answer, by route (a live tail's is how long it streamed).",
		Buckets: requestBuckets,
	}, []string{"route"})
	r.queryDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "sediment_query_duration_seconds",
		Help:    "Time to answer a query (endpoint, ad-hoc SQL or search) that got an answer, queue wait included, by route and endpoint name (empty but for endpoint queries).",
		Buckets: requestBuckets,
	}, []string{"route", "endpoint"})
	r.reg.MustRegister(
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		r.walSync, r.requests, r.requestDuration, r.queryDuration,
	)
	return r
}

// ObserveWALSync records one write-ahead log fsync; it is what
// engine.Options.ObserveWALSync should call.
func (r *Registry) ObserveWALSync(d time.Duration) { r.walSync.Observe(d.Seconds()) }

// CountRequest counts an answered request of route with status code.
func (r *Registry) CountRequest(route string, code int) {
	r.requests.WithLabelValues(route, statusCode(code)).Inc()
}

// ObserveRequest counts an answered request and records how long it took.
func (r *Registry) ObserveRequest(route string, code int, d time.Duration) {
	r.CountRequest(route, code)
	r.requestDuration.WithLabelValues(route).Observe(d.Seconds())
}

// ObserveQuery records how long an answered query took; endpoint is the
// endpoint's name for endpoint queries and empty otherwise.
func (r *Registry) ObserveQuery(route, endpoint string, d time.Duration) {
	r.queryDuration.WithLabelValues(route, endpoint).Observe(d.Seconds())
}

// ForgetEndpoint drops the query series of an endpoint that was deleted
// or renamed, so that series of names no longer in use do not pile up.
func (r *Registry) ForgetEndpoint(name string) {
	r.queryDuration.DeletePartialMatch(prometheus.Labels{"endpoint": name})
}

// Register adds a collector. A panic in its Collect is recovered and
// logged, and the scrape goes on without its metrics: a broken collector
// must not take the process down (the registry collects on goroutines of
// its own, where no handler's recover reaches).
func (r *Registry) Register(c prometheus.Collector) error {
	return r.reg.Register(&safeCollector{c: c, log: r.log})
}

// Write gathers every metric and writes them in Prometheus's text format,
// returning the content type to answer with. When some collector fails,
// the metrics gathered are still written and the error is logged: a
// partial scrape is more use than none.
func (r *Registry) Write(w io.Writer) (contentType string, err error) {
	mfs, gerr := r.reg.Gather()
	if gerr != nil {
		r.log.Error("metrics: gathering failed for some metrics; serving the rest", "err", gerr)
	}
	format := expfmt.NewFormat(expfmt.TypeTextPlain)
	var buf bytes.Buffer
	enc := expfmt.NewEncoder(&buf, format)
	for _, mf := range mfs {
		if err := enc.Encode(mf); err != nil {
			return "", err
		}
	}
	_, err = w.Write(buf.Bytes())
	return string(format), err
}

// statusCodes holds the label value of every status code, so that
// counting a request allocates nothing.
var statusCodes = func() (t [600]string) {
	for c := range t {
		t[c] = strconv.Itoa(c)
	}
	return t
}()

func statusCode(code int) string {
	if code >= 0 && code < len(statusCodes) {
		return statusCodes[code]
	}
	return strconv.Itoa(code)
}
