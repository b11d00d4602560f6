package main

import (
	"encoding/json"
	"log/slog"
	"math"
	"net"
	"net/http"
	"net/http/pprof"
	"runtime/metrics"
)

// startDebugListener serves Go's profiler and the runtime's metrics on
// their own listener, apart from the API: they expose internals, so the
// listener is off unless --debug-listen is set and belongs on a loopback
// address.
func startDebugListener(addr string, log *slog.Logger) (net.Listener, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	mux.HandleFunc("/debug/runtime-metrics", serveRuntimeMetrics)
	go func() {
		if err := http.Serve(ln, mux); err != nil {
			log.Debug("debug listener stopped", "err", err)
		}
	}()
	log.Info("debug listener", "addr", ln.Addr().String())
	return ln, nil
}

// serveRuntimeMetrics answers GET /debug/runtime-metrics with every scalar
// metric of runtime/metrics as one JSON object, name to number (e.g.
// "/cpu/classes/gc/total:cpu-seconds": 1.25), as expvar would: `sediment
// bench` reads the GC's share of the CPU from it. Histograms are left out.
func serveRuntimeMetrics(w http.ResponseWriter, _ *http.Request) {
	descs := metrics.All()
	samples := make([]metrics.Sample, len(descs))
	for i, d := range descs {
		samples[i].Name = d.Name
	}
	metrics.Read(samples)
	out := make(map[string]float64, len(samples))
	for _, s := range samples {
		switch s.Value.Kind() {
		case metrics.KindUint64:
			out[s.Name] = float64(s.Value.Uint64())
		case metrics.KindFloat64:
			if v := s.Value.Float64(); !math.IsNaN(v) && !math.IsInf(v, 0) {
				out[s.Name] = v
			}
		}
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(out)
}
