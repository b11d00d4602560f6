package bench

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sediment/sediment/bench/gen"
)

// builtBinary is the sediment binary the tests build once (see
// sedimentBinary); TestMain removes its directory.
var builtBinary struct {
	once sync.Once
	dir  string
	path string
	err  error
}

func TestMain(m *testing.M) {
	code := m.Run()
	if builtBinary.dir != "" {
		os.RemoveAll(builtBinary.dir)
	}
	os.Exit(code)
}

// sedimentBinary builds cmd/sediment once per test run and returns its
// path; it skips the test in -short mode.
func sedimentBinary(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the sediment binary")
	}
	b := &builtBinary
	b.once.Do(func() {
		if b.dir, b.err = os.MkdirTemp("", "sediment-bench-test-*"); b.err != nil {
			return
		}
		b.path = filepath.Join(b.dir, "sediment")
		if out, err := exec.Command("go", "build", "-o", b.path, "../cmd/sediment").CombinedOutput(); err != nil {
			b.err = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if b.err != nil {
		t.Fatal(b.err)
	}
	return b.path
}

// TestChildServer runs the ingest and query benchmarks against the sediment
// binary as a child process, as `sediment bench` does.
func TestChildServer(t *testing.T) {
	bin := sedimentBinary(t)
	dir := t.TempDir()
	ctx := context.Background()
	ds := Dataset{Shape: gen.Platform, Seed: 5, Projects: 3, Events: 3000, Span: time.Hour}
	ing, err := RunIngestBench(ctx, IngestBenchOptions{
		Dataset: ds,
		Ingest:  IngestOptions{Connections: 2, BatchSize: 200},
		Server:  ServerOptions{Binary: bin, DataDir: dir, Args: []string{"--ack-mode", "buffered"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	r := ing.Result
	if r.Events != 3000 || r.PeakRSSBytes <= 0 || r.Disk == nil || r.Disk.Rows != 3000 || r.BytesPerEvent <= 0 || ing.DataDir != dir {
		t.Fatalf("ingest %+v disk %+v", r, r.Disk)
	}

	// The query run finds the dataset recorded in the directory.
	qb, err := RunQueryBench(ctx, QueryBenchOptions{Server: ServerOptions{Binary: bin, DataDir: dir}, Runs: 1})
	if err != nil {
		t.Fatalf("%v\n%+v", err, qb)
	}
	if qb.Loaded != nil || qb.PeakRSSBytes <= 0 || qb.Dataset.Events != 3000 || qb.Dataset.Project() != gen.ProjectRefs(5, 3)[0] {
		t.Fatalf("query bench %+v", qb)
	}
	for _, q := range qb.Queries {
		if q.Name == "edge newest 100 + regexp, 1h" && q.Rows == 0 {
			t.Errorf("%s: no rows", q.Name)
		}
	}

	// A server that cannot start reports its log.
	_, err = StartServer(ctx, ServerOptions{Binary: bin, DataDir: dir, Args: []string{"--ack-mode", "never"}})
	if err == nil {
		t.Fatal("started with a bad flag")
	}
}

// TestRunPeers runs the side-by-side benchmark at test size: Sediment
// alone, and VictoriaLogs too when $SEDIMENT_VICTORIALOGS names its
// binary. Every figure the table shows is measured and every answer right.
func TestRunPeers(t *testing.T) {
	bin := sedimentBinary(t)
	o := PeersOptions{
		Dataset:   smallPeersDataset(4000),
		Sediment:  ServerOptions{Binary: bin, Args: []string{"--ack-mode", "buffered"}},
		Senders:   2,
		BatchSize: 500,
		Runs:      2,
		Dir:       t.TempDir(),
	}
	want := []string{PeerSediment}
	if vl := os.Getenv("SEDIMENT_VICTORIALOGS"); vl != "" {
		o.VictoriaLogs.Binary = vl
		want = append(want, PeerVictoriaLogs)
	}
	rep, err := RunPeers(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Servers) != len(want) || rep.Truth.Events != 4000 || rep.Truth.Rare == 0 {
		t.Fatalf("report %+v", rep)
	}
	for i, s := range rep.Servers {
		if s.Name != want[i] || s.Error != "" || s.Ingest == nil || s.Ingest.Events != 4000 || s.StoredEvents != 4000 {
			t.Fatalf("%s: %+v", s.Name, s)
		}
		if !(s.IngestCPUSeconds > 0 && s.BytesPerEvent > 0 && s.PeakRSSIngest > 0 && s.PeakRSSQuery > 0 && s.CPUPerMillion(true) >= s.CPUPerMillion(false)) {
			t.Errorf("%s: cpu %v s, %v B/event, rss %d/%d", s.Name, s.IngestCPUSeconds, s.BytesPerEvent, s.PeakRSSIngest, s.PeakRSSQuery)
		}
		if len(s.Queries) != 6 {
			t.Fatalf("%s: %d queries", s.Name, len(s.Queries))
		}
		for _, q := range s.Queries {
			if !q.Checked || q.Error != "" || len(q.SamplesMs) != 2 {
				t.Errorf("%s: %s: %+v", s.Name, q.Name, q)
			}
		}
	}
	sd := rep.Servers[0]
	if sd.GCIngest == nil || sd.GCQuery == nil || !(sd.GCQuery.Share >= 0 && sd.GCQuery.Share <= 1) || sd.GCIngest.AllocBytes <= 0 {
		t.Errorf("sediment GC: ingest %+v, queries %+v", sd.GCIngest, sd.GCQuery)
	}
	r := NewReport(KindPeers, o.Dataset)
	r.Peers = rep
	var buf bytes.Buffer
	if err := r.Write(&buf, "table"); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{PeersQ3 + ", median / p99 ms", "bytes per event on disk", "GC share of CPU, queries", "6 of 6 right"} {
		if !strings.Contains(buf.String(), s) {
			t.Errorf("table lacks %q:\n%s", s, buf.String())
		}
	}
}
