package bench

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// VictoriaLogs is driven only through its command line and HTTP API; no
// code of it is used here. Build it from its public source (see
// docs/benchmarking.md).

// VLOptions say how to start VictoriaLogs as a child process.
type VLOptions struct {
	// Binary is the victoria-logs executable.
	Binary  string
	DataDir string
	// Args are extra flags, e.g. -memory.allowedPercent=30.
	Args []string
	// Log receives VictoriaLogs' log (default: kept only for errors).
	Log io.Writer
	// StartTimeout bounds start-up (default 5 minutes).
	StartTimeout time.Duration
}

// VLServer is a VictoriaLogs child process.
type VLServer struct {
	*child
	URL     string // http://127.0.0.1:<port>
	DataDir string
	client  *http.Client
}

// StartVictoriaLogs runs the binary on DataDir, on a free loopback port,
// with a retention long enough for any generated data (its default, 7
// days, would drop the oldest events of a 7-day data set as the run goes
// on), and returns once it reports its HTTP address.
func StartVictoriaLogs(ctx context.Context, o VLOptions) (*VLServer, error) {
	if o.StartTimeout <= 0 {
		o.StartTimeout = 5 * time.Minute
	}
	args := []string{"-storageDataPath=" + o.DataDir, "-httpListenAddr=127.0.0.1:0", "-retentionPeriod=100y", "-loggerLevel=INFO"}
	cmd := exec.Command(o.Binary, append(args, o.Args...)...)
	s := &VLServer{DataDir: o.DataDir, client: &http.Client{Timeout: 10 * time.Minute}}
	c, err := startChild(ctx, "victoria-logs", cmd, o.Log, o.StartTimeout, func(line string) bool {
		// "... started server at http://127.0.0.1:40549/"
		_, rest, ok := strings.Cut(line, "started server at http://")
		f := strings.Fields(rest)
		if !ok || len(f) == 0 {
			return false
		}
		s.URL = "http://" + strings.TrimSuffix(f[0], "/")
		return true
	})
	if err != nil {
		return nil, err
	}
	s.child = c
	return s, nil
}

// get sends GET path (with its query string) and returns the body.
func (s *VLServer) get(ctx context.Context, path string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.URL+path, nil)
	if err != nil {
		return nil, err
	}
	res, err := s.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err == nil && res.StatusCode != http.StatusOK {
		err = fmt.Errorf("GET %s: HTTP %d: %s", path, res.StatusCode, snippet(body))
	}
	return body, err
}

// Settle makes VictoriaLogs' data searchable and merged as far as it
// goes: /internal/force_flush, then /internal/force_merge for every
// per-day partition, then waits until no merge is running (polled from
// its /metrics) for a few seconds in a row.
func (s *VLServer) Settle(ctx context.Context) error {
	if _, err := s.get(ctx, "/internal/force_flush"); err != nil {
		return err
	}
	parts, _ := filepath.Glob(filepath.Join(s.DataDir, "partitions", "*"))
	for _, p := range parts {
		if _, err := s.get(ctx, "/internal/force_merge?partition_prefix="+url.QueryEscape(filepath.Base(p))); err != nil {
			return err
		}
	}
	quiet := 0
	for quiet < 3 {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Second):
		}
		n, err := s.activeMerges(ctx)
		if err != nil {
			return err
		}
		if n == 0 {
			quiet++
		} else {
			quiet = 0
		}
	}
	return nil
}

// activeMerges sums vl_active_merges and vl_active_force_merges.
func (s *VLServer) activeMerges(ctx context.Context) (float64, error) {
	body, err := s.get(ctx, "/metrics")
	if err != nil {
		return 0, err
	}
	var n float64
	found := false
	sc := bufio.NewScanner(bytes.NewReader(body))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "vl_active_merges") && !strings.HasPrefix(line, "vl_active_force_merges") {
			continue
		}
		f := strings.Fields(line)
		v, err := strconv.ParseFloat(f[len(f)-1], 64)
		if err != nil {
			return 0, fmt.Errorf("metrics: %q", line)
		}
		n += v
		found = true
	}
	if !found {
		return 0, fmt.Errorf("metrics: no vl_active_merges")
	}
	return n, nil
}

// VLTarget runs queries' LogsQL forms against VictoriaLogs.
type VLTarget struct {
	URL    string
	Client *http.Client
}

// NewVLTarget returns a target for VictoriaLogs at baseURL.
func NewVLTarget(baseURL string) *VLTarget {
	return &VLTarget{URL: baseURL, Client: &http.Client{Timeout: 5 * time.Minute}}
}

// Run implements Target: POST the LogsQL and its arguments as a form.
func (t *VLTarget) Run(ctx context.Context, q Query, _ string) ([]byte, string, error) {
	if q.LogsQL == nil {
		return nil, "", fmt.Errorf("%s has no LogsQL form", q.Name)
	}
	form := url.Values{"query": {q.LogsQL.Query}}
	for k, v := range q.LogsQL.Args {
		form.Set(k, v)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, t.URL+q.LogsQL.Path, strings.NewReader(form.Encode()))
	if err != nil {
		return nil, "", err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	res, err := t.Client.Do(req)
	if err != nil {
		return nil, "", err
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	via := q.LogsQL.Path
	if err == nil && res.StatusCode != http.StatusOK {
		err = fmt.Errorf("HTTP %d: %s", res.StatusCode, snippet(body))
	}
	return body, via, err
}

// Rows implements Target: JSON lines (one object each, every value a
// string) from /select/logsql/query, or the buckets of
// /select/logsql/hits as rows {timestamp, count}. VictoriaLogs' _time and
// _msg are renamed timestamp and event_message.
func (t *VLTarget) Rows(q Query, body []byte) ([]Row, error) {
	if q.LogsQL != nil && q.LogsQL.Path == vlHitsPath {
		return vlHitsRows(body)
	}
	var rows []Row
	sc := bufio.NewScanner(bytes.NewReader(body))
	sc.Buffer(make([]byte, 64<<10), 64<<20)
	for sc.Scan() {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		var r Row
		if err := decodeJSON(line, &r); err != nil {
			return nil, fmt.Errorf("answer line is not JSON: %s", snippet(line))
		}
		for from, to := range map[string]string{"_time": "timestamp", "_msg": "event_message"} {
			if v, ok := r[from]; ok {
				r[to] = v
				delete(r, from)
			}
		}
		rows = append(rows, r)
	}
	return rows, sc.Err()
}

// vlHitsRows reads {"hits":[{"fields":{},"timestamps":[...],"values":[...]}]}
// into one row per bucket, adding up groups.
func vlHitsRows(body []byte) ([]Row, error) {
	var h struct {
		Hits []struct {
			Timestamps []string      `json:"timestamps"`
			Values     []json.Number `json:"values"`
		} `json:"hits"`
	}
	if err := decodeJSON(body, &h); err != nil {
		return nil, fmt.Errorf("hits answer is not JSON: %s", snippet(body))
	}
	sums := map[string]int64{}
	var order []string
	for _, g := range h.Hits {
		if len(g.Timestamps) != len(g.Values) {
			return nil, fmt.Errorf("hits: %d timestamps, %d values", len(g.Timestamps), len(g.Values))
		}
		for i, ts := range g.Timestamps {
			n, err := g.Values[i].Int64()
			if err != nil {
				return nil, fmt.Errorf("hits: value %v", g.Values[i])
			}
			if _, ok := sums[ts]; !ok {
				order = append(order, ts)
			}
			sums[ts] += n
		}
	}
	rows := make([]Row, len(order))
	for i, ts := range order {
		rows[i] = Row{"timestamp": ts, "count": json.Number(strconv.FormatInt(sums[ts], 10))}
	}
	return rows, nil
}

// dirBytes sums the sizes of the regular files under dir.
func dirBytes(dir string) (int64, error) {
	var n int64
	err := filepath.WalkDir(dir, func(_ string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type().IsRegular() {
			fi, err := d.Info()
			if err != nil {
				return err
			}
			n += fi.Size()
		}
		return nil
	})
	return n, err
}
