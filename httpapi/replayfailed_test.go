package httpapi

import (
	"path/filepath"
	"strings"
	"testing"

	json "github.com/goccy/go-json"

	"github.com/sediment/sediment/engine"
	"github.com/sediment/sediment/internal/vfs"
)

// panicReplayFS panics when a file under dir is opened: a bug in the
// startup replay of one source's write-ahead log.
type panicReplayFS struct {
	vfs.FS
	dir string
}

func (p *panicReplayFS) Open(name string) (vfs.File, error) {
	if strings.HasPrefix(name, p.dir) {
		panic("injected: replay panics")
	}
	return p.FS.Open(name)
}

// TestReplayPanicLeavesOneSourceReadOnly restarts the server (after a
// kill -9: events only in the logs) with replay panicking for one source:
// the server starts, /ready names that source with its replay_failed
// condition, its ingest answers 503 saying why, and another source takes
// events as usual.
func TestReplayPanicLeavesOneSourceReadOnly(t *testing.T) {
	mem := vfs.NewMemFS()
	ts := startServer(t, serverConfig{engine: engine.Options{FS: mem}})
	const broken, healthy = "cloudflare.logs.prod", "postgres.logs"
	ingest := func(ts *testServer, source string) response {
		return ts.do("POST", "/api/logs?source_name="+source, edgeBatch(10, studioNow, "default"),
			"x-api-key", pubKey, "Content-Type", "application/json")
	}
	ingest(ts, broken).expect(t, 200, "")
	ingest(ts, healthy).expect(t, 200, "")
	img := mem.CrashClone() // kill -9
	ts.stop()

	walDir := filepath.Join(ts.dir, "sources", ts.source(broken).Token, "wal")
	ts2 := startServer(t, serverConfig{dir: ts.dir, engine: engine.Options{FS: &panicReplayFS{FS: img, dir: walDir}}})
	r := ts2.do("GET", "/ready", nil)
	var ready struct {
		Status  string
		Sources []struct {
			Name       string
			Conditions []struct {
				Kind          string
				RefusesIngest bool `json:"refuses_ingest"`
			}
		}
	}
	if err := json.Unmarshal([]byte(r.body), &ready); err != nil || r.status != 200 || ready.Status != "degraded" ||
		len(ready.Sources) != 1 || ready.Sources[0].Name != broken || len(ready.Sources[0].Conditions) != 1 ||
		ready.Sources[0].Conditions[0].Kind != "replay_failed" || !ready.Sources[0].Conditions[0].RefusesIngest ||
		strings.Contains(r.body, ts.dir) {
		t.Fatalf("/ready: %d %s", r.status, r.body)
	}
	r = ingest(ts2, broken)
	if r.status != 503 || !strings.Contains(r.body, "replaying its write-ahead log at startup failed") {
		t.Fatalf("ingest to the source whose replay panicked: %d %s", r.status, r.body)
	}
	ingest(ts2, healthy).expect(t, 200, "")
}
