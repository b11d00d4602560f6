package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"
)

// Runtime metric names (runtime/metrics) the benchmark reads from a
// server's debug listener (sediment serve --debug-listen,
// /debug/runtime-metrics).
const (
	metricCPUTotal = "/cpu/classes/total:cpu-seconds"
	metricCPUIdle  = "/cpu/classes/idle:cpu-seconds"
	metricCPUGC    = "/cpu/classes/gc/total:cpu-seconds"
	metricGCCycles = "/gc/cycles/total:gc-cycles"
	metricAllocs   = "/gc/heap/allocs:bytes"
)

// RuntimeMetrics reads the server's runtime metrics (name to value); it
// needs a server started with ServerOptions.Debug.
func (s *Server) RuntimeMetrics(ctx context.Context) (map[string]float64, error) {
	if s.DebugURL == "" {
		return nil, errors.New("the server has no debug listener")
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.DebugURL+"/debug/runtime-metrics", nil)
	if err != nil {
		return nil, err
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("runtime metrics: HTTP %d (a server without /debug/runtime-metrics?)", res.StatusCode)
	}
	var m map[string]float64
	if err := json.NewDecoder(res.Body).Decode(&m); err != nil {
		return nil, fmt.Errorf("runtime metrics: %w", err)
	}
	return m, nil
}

// GCUse is what the Go runtime says of a stretch of a server's work: the
// share of the CPU it used that went to garbage collection, from the
// runtime's CPU classes (GC over total minus idle: the CPU the process
// used, not what GOMAXPROCS made available), the collections and the
// bytes allocated. The runtime brings its CPU classes up to date at the
// end of each collection, so a stretch with few collections is rough.
type GCUse struct {
	Share      float64 `json:"share"`
	Cycles     int64   `json:"cycles"`
	AllocBytes int64   `json:"alloc_bytes"`
	// CPUSeconds is the runtime's estimate of the CPU used (not idle).
	CPUSeconds float64 `json:"cpu_seconds"`
}

// gcUse compares two readings of runtime metrics, before and after.
func gcUse(before, after map[string]float64) (GCUse, error) {
	for _, k := range []string{metricCPUTotal, metricCPUIdle, metricCPUGC, metricGCCycles, metricAllocs} {
		if _, ok := before[k]; !ok {
			return GCUse{}, fmt.Errorf("runtime metrics lack %s", k)
		}
		if _, ok := after[k]; !ok {
			return GCUse{}, fmt.Errorf("runtime metrics lack %s", k)
		}
	}
	d := func(k string) float64 { return after[k] - before[k] }
	u := GCUse{Cycles: int64(d(metricGCCycles)), AllocBytes: int64(d(metricAllocs)), CPUSeconds: d(metricCPUTotal) - d(metricCPUIdle)}
	if u.CPUSeconds > 0 {
		u.Share = d(metricCPUGC) / u.CPUSeconds
	}
	return u, nil
}
