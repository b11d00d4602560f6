package bench

import (
	"context"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/sediment/sediment/bench/gen"
)

// TestChildServer builds the sediment binary and runs the ingest and query
// benchmarks against it as a child process, as `sediment bench` does.
func TestChildServer(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the sediment binary")
	}
	bin := filepath.Join(t.TempDir(), "sediment")
	if out, err := exec.Command("go", "build", "-o", bin, "../cmd/sediment").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
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
