//go:build soak && linux

package soak

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// The server's /metrics (when the binary has it) says what the storage
// did: flushes, compactions, retention, background failures and panics.
// Counters start at zero with every process, so the harness keeps each
// generation's last reading (taken every 10 s, and just before a kill or a
// stop) and adds them up.

// scrapedCounters are summed over the sources and labels of a series and
// over generations; scrapedPeaks are the highest any generation showed.
var (
	scrapedCounters = []string{
		"sediment_flushes_total", "sediment_compactions_total",
		"sediment_retention_expired_events_total", "sediment_retention_deleted_segments_total",
		"sediment_background_failures_total", "sediment_background_panics_total",
	}
	scrapedPeaks = []string{"sediment_query_memory_peak_bytes"}
)

// metricsScraper keeps the last reading of each generation.
type metricsScraper struct {
	mu          sync.Mutex
	unsupported bool // the binary has no /metrics
	perGen      map[int]map[string]float64
	scrapes     int
}

// scrape reads /metrics of the running generation, if it is up.
func (m *metricsScraper) scrape(ctx context.Context, h *harness) {
	m.mu.Lock()
	if m.unsupported {
		m.mu.Unlock()
		return
	}
	m.mu.Unlock()
	g := h.srv.current()
	base, epoch, ok := h.srv.upNow()
	if !ok || g == nil || h.srv.current() != g {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+"/metrics", nil)
	req.Header.Set("X-API-KEY", h.privateKey)
	res, err := h.queryClient.Do(req)
	if err != nil {
		return
	}
	body, err := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode == http.StatusNotFound {
		m.mu.Lock()
		m.unsupported = true
		m.mu.Unlock()
		return
	}
	if err != nil || res.StatusCode != http.StatusOK || !h.srv.steady(epoch) {
		return
	}
	vals := parseMetrics(body)
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.perGen == nil {
		m.perGen = map[int]map[string]float64{}
	}
	m.perGen[g.n] = vals
	m.scrapes++
}

// loop scrapes every 10 s until ctx ends.
func (m *metricsScraper) loop(ctx context.Context, h *harness) {
	for sleepCtx(ctx, 10*time.Second) {
		m.scrape(ctx, h)
	}
}

// totals returns the counters summed over generations and the peaks.
func (m *metricsScraper) totals() (vals map[string]float64, ok bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.unsupported || m.scrapes == 0 {
		return nil, false
	}
	vals = map[string]float64{}
	for _, g := range m.perGen {
		for _, name := range scrapedCounters {
			vals[name] += g[name]
		}
		for _, name := range scrapedPeaks {
			vals[name] = max(vals[name], g[name])
		}
	}
	return vals, true
}

// parseMetrics sums, per series name, the samples of the names the harness
// reads from a Prometheus text exposition.
func parseMetrics(body []byte) map[string]float64 {
	want := map[string]bool{}
	for _, n := range append(append([]string(nil), scrapedCounters...), scrapedPeaks...) {
		want[n] = true
	}
	out := map[string]float64{}
	sc := bufio.NewScanner(bytes.NewReader(body))
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || line[0] == '#' {
			continue
		}
		name, rest, _ := strings.Cut(line, " ")
		if i := strings.IndexByte(line, '{'); i >= 0 && i < len(name) {
			name = line[:i]
			j := strings.LastIndexByte(line, '}')
			if j < 0 {
				continue
			}
			rest = strings.TrimSpace(line[j+1:])
		}
		if !want[name] {
			continue
		}
		fields := strings.Fields(rest)
		if len(fields) == 0 {
			continue
		}
		if v, err := strconv.ParseFloat(fields[0], 64); err == nil {
			out[name] += v
		}
	}
	return out
}
