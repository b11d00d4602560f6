package bench

import (
	"context"
	"os"
	"testing"
	"time"
)

// victoriaLogsBinary returns $SEDIMENT_VICTORIALOGS, the path of a
// victoria-logs binary, or skips the test.
func victoriaLogsBinary(t *testing.T) string {
	t.Helper()
	bin := os.Getenv("SEDIMENT_VICTORIALOGS")
	if bin == "" {
		t.Skip("SEDIMENT_VICTORIALOGS is not set (the path of a victoria-logs binary)")
	}
	return bin
}

// TestPeersSuiteOnVictoriaLogs: the LogsQL forms of the six queries give
// the generator's answers.
func TestPeersSuiteOnVictoriaLogs(t *testing.T) {
	bin := victoriaLogsBinary(t)
	ctx := context.Background()
	vl, err := StartVictoriaLogs(ctx, VLOptions{Binary: bin, DataDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer vl.Stop(time.Minute)
	ds := smallPeersDataset(20_000)
	res, err := IngestHTTP(ctx, ds, IngestOptions{URL: vl.URL, Protocol: VictoriaLogsJSONLine, Connections: 2, BatchSize: 1000})
	if err != nil || res.Events != 20_000 {
		t.Fatalf("ingest %+v: %v", res, err)
	}
	if err := vl.Settle(ctx); err != nil {
		t.Fatal(err)
	}
	tr, err := ComputeTruth(ctx, ds, DefaultPeersSpec(ds), nil)
	if err != nil {
		t.Fatal(err)
	}
	stats, err := RunQueries(ctx, NewVLTarget(vl.URL), PeersSuite(tr), 1, nil)
	for _, s := range stats {
		t.Logf("%s: %d rows via %s, %.1f ms %s", s.Name, s.Rows, s.Via, s.MedianMs, s.Error)
	}
	if err != nil {
		t.Fatal(err)
	}
}
