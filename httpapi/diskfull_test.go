package httpapi

import (
	"net/url"
	"strings"
	"testing"
	"time"

	json "github.com/goccy/go-json"

	"github.com/sediment/sediment/engine"
	"github.com/sediment/sediment/internal/vfs"
	"github.com/sediment/sediment/query/endpoints"
)

// TestDiskFullAnswers507AndRecovers fills the engine's disk (an in-memory
// file system with a capacity): ingest answers 507 with Retry-After and a
// JSON error, /ready names the source and its disk_full condition while
// /health stays 200, queries keep answering every acknowledged event;
// once space is freed the engine's probe clears the condition by itself
// and ingest is accepted again, with nothing acknowledged missing.
func TestDiskFullAnswers507AndRecovers(t *testing.T) {
	mem := vfs.NewMemFS()
	clk := &clock{now: studioNow}
	ts := startServer(t, serverConfig{
		engine:  engine.Options{FS: mem, DiskCheckInterval: 5 * time.Millisecond},
		opts:    Options{Now: clk.Now},
		service: &endpoints.Options{Now: clk.Now, DisableBackground: true},
	})
	const source = "cloudflare.logs.prod"
	start := studioNow.Add(-2 * time.Hour)
	ingest := func() response {
		return ts.do("POST", "/api/logs?source_name="+source, edgeBatch(60, start, "default"),
			"x-api-key", pubKey, "Content-Type", "application/json")
	}
	count := func() int {
		r := ts.do("GET", "/api/query?sql="+url.QueryEscape("select count(*) as n from `"+source+"`"), nil, "x-api-key", privKey)
		var b struct {
			Result []struct{ N int } `json:"result"`
		}
		if err := json.Unmarshal([]byte(r.body), &b); err != nil || r.status != 200 || len(b.Result) != 1 {
			t.Fatalf("count: %d %s", r.status, r.body)
		}
		return b.Result[0].N
	}
	acked := 0
	for i := 0; i < 5; i++ {
		ingest().expect(t, 200, `{"message":"Logged!"}`)
		acked += 60
	}
	u, _ := mem.DiskUsage("/")
	mem.SetCapacity(u.Total - u.Free + 150_000)
	var full response
	for i := 0; ; i++ {
		if i == 1000 {
			t.Fatal("the disk never filled")
		}
		r := ingest()
		if r.status == 200 {
			acked += 60
			continue
		}
		full = r
		break
	}
	if full.status != 507 || full.header.Get("Retry-After") != "30" || !strings.Contains(full.body, `"error":"Insufficient Storage`) {
		t.Fatalf("ingest on a full disk: %d retry-after %q %s", full.status, full.header.Get("Retry-After"), full.body)
	}
	ingest().expect(t, 507, "")
	ts.do("GET", "/health", nil).expect(t, 200, `{"status":"ok"}`)
	r := ts.do("GET", "/ready", nil)
	var ready struct {
		Status  string
		Sources []struct {
			Name, Token string
			Conditions  []struct {
				Kind          string
				RefusesIngest bool `json:"refuses_ingest"`
				Detail        string
			}
		}
	}
	if err := json.Unmarshal([]byte(r.body), &ready); err != nil || r.status != 200 || ready.Status != "degraded" ||
		len(ready.Sources) != 1 || ready.Sources[0].Name != source || len(ready.Sources[0].Conditions) != 1 ||
		ready.Sources[0].Conditions[0].Kind != "disk_full" || !ready.Sources[0].Conditions[0].RefusesIngest ||
		strings.Contains(r.body, ts.dir) {
		t.Fatalf("/ready on a full disk: %d %s", r.status, r.body)
	}
	if n := count(); n != acked {
		t.Fatalf("query on a full disk counts %d, %d acknowledged", n, acked)
	}

	mem.SetCapacity(0) // space freed: no restart
	waitUntil(t, "ingest to resume", func() bool {
		r := ingest()
		if r.status == 200 {
			acked += 60
			return true
		}
		if r.status != 507 {
			t.Fatalf("ingest while recovering: %d %s", r.status, r.body)
		}
		return false
	})
	ts.do("GET", "/ready", nil).expect(t, 200, `{"status":"ok"}`)
	for i := 0; i < 3; i++ {
		ingest().expect(t, 200, `{"message":"Logged!"}`)
		acked += 60
	}
	if n := count(); n != acked {
		t.Fatalf("after recovery a query counts %d, %d acknowledged", n, acked)
	}
	if n := len(ts.events(source)); n != acked {
		t.Fatalf("%d events stored, %d acknowledged", n, acked)
	}
}

// waitUntil polls cond; the deadline only stops a broken build hanging.
func waitUntil(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("still waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
