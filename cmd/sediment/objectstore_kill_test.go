package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/sediment/sediment/engine"
	"github.com/sediment/sediment/event"
	"github.com/sediment/sediment/internal/miniotest"
	"github.com/sediment/sediment/internal/vfs"
	"github.com/sediment/sediment/objstore"
	"github.com/sediment/sediment/remote"
)

// childServeEnv, set to a head size, makes the test binary run `sediment
// serve` with the arguments it was given, its heads flushed every that
// many events (TestMain): a server the test can kill -9.
const childServeEnv = "SEDIMENT_TEST_CHILD_SERVE_HEAD_ROWS"

func TestMain(m *testing.M) {
	if rows := os.Getenv(childServeEnv); rows != "" {
		n, _ := strconv.Atoi(rows)
		testEngineOptions = func(o *engine.Options) { o.HeadMaxRows = n }
		os.Exit(runServe(os.Args[1:], os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

// holdingProxy forwards to MinIO, holding every segment upload while
// hold is set (until the client goes away) and saying when one came.
type holdingProxy struct {
	*httptest.Server
	hold      atomic.Bool
	uploading chan struct{}
}

func newHoldingProxy(t *testing.T, endpoint string) *holdingProxy {
	target, _ := url.Parse("http://" + endpoint)
	rp := httputil.NewSingleHostReverseProxy(target)
	p := &holdingProxy{uploading: make(chan struct{}, 1)}
	p.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPut && strings.Contains(r.URL.Path, "/segments/") && p.hold.Load() {
			select {
			case p.uploading <- struct{}{}:
			default:
			}
			// Never forwarded. The body is read first: only then does
			// the server notice the client going away.
			if _, err := io.Copy(io.Discard, r.Body); err == nil {
				<-r.Context().Done()
			}
			return
		}
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(p.Close)
	return p
}

// child is a `sediment serve` process.
type child struct {
	cmd  *exec.Cmd
	base string
	done chan struct{}
}

func startChild(t *testing.T, dir, endpoint string, store objectStoreConfig) *child {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	cmd := exec.Command(os.Args[0], "--listen", addr, "--data-dir", dir, "--object-store", store.S3.String(),
		"--object-store-endpoint", endpoint, "--object-store-path-style", "--role", "ingest", "--min-free-disk", "0")
	cmd.Env = append(os.Environ(), childServeEnv+"=50", "LOGFLARE_PRIVATE_ACCESS_TOKEN=k",
		"AWS_ACCESS_KEY_ID="+miniotest.AccessKey, "AWS_SECRET_ACCESS_KEY="+miniotest.SecretKey)
	log, err := os.Create(dir + ".log")
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	c := &child{cmd: cmd, base: "http://" + addr, done: make(chan struct{})}
	go func() { cmd.Wait(); log.Close(); close(c.done) }()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-c.done
	})
	deadline := time.Now().Add(30 * time.Second)
	for {
		if res, err := http.Get(c.base + "/health"); err == nil {
			res.Body.Close()
			if res.StatusCode == 200 {
				return c
			}
		}
		select {
		case <-c.done:
			b, _ := os.ReadFile(dir + ".log")
			t.Fatalf("server exited at start:\n%s", b)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatal("server not healthy after 30s")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (c *child) post(t *testing.T, path, body string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest("POST", c.base+path, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("x-api-key", "k")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b)
}

// storedIDs reads the ids of every event the source's manifest lists,
// through a query engine over the store; an id listed twice fails.
func storedIDs(t *testing.T, store objstore.Store, source string) map[string]bool {
	t.Helper()
	cache, err := objstore.OpenCache(store, objstore.CacheOptions{FS: vfs.NewMemFS(), Dir: "/cache"})
	if err != nil {
		t.Fatal(err)
	}
	defer cache.Close()
	qs, _ := remote.NewQuerySource(remote.QueryOptions{Store: store, Cache: cache})
	eng, err := engine.Open("/q", &engine.Options{FS: vfs.NewMemFS(), DisableBackground: true, External: qs})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	sh, _ := eng.Shard(source)
	sn := sh.Snapshot()
	defer sn.Release()
	ids := map[string]bool{}
	err = sn.ForEachEvent(func(e *event.Event) error {
		if ids[e.ID] {
			return fmt.Errorf("event %s stored twice", e.ID)
		}
		ids[e.ID] = true
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return ids
}

// TestKillIngestNodeMidUpload: an ingest node is killed (SIGKILL) while
// it uploads a segment; restarted on the same data directory it
// publishes what it had, and after a clean stop the store holds every
// acknowledged event exactly once.
func TestKillIngestNodeMidUpload(t *testing.T) {
	srv := miniotest.Start(t)
	store := minioConfig(t, srv)
	st, err := objstore.OpenS3(store.S3)
	if err != nil {
		t.Fatal(err)
	}
	proxy := newHoldingProxy(t, srv.Endpoint)
	dir := t.TempDir() + "/ingest"
	c := startChild(t, dir, proxy.URL, store)
	code, body := c.post(t, "/api/sources", `{"name":"app"}`)
	if code != 201 {
		t.Fatalf("create source: %d %s", code, body)
	}
	var src struct{ Token string }
	json.Unmarshal([]byte(body), &src)

	// The first 100 events are published normally (two heads of 50).
	acked := map[string]bool{}
	// send posts events from..from+n (n a multiple of 10), ten a request.
	send := func(c *child, from, n int) {
		for i := from; i < from+n; i += 10 {
			var evs []string
			for j := i; j < i+10; j++ {
				id := fmt.Sprintf("00000000-0000-4000-8000-%012d", j)
				evs = append(evs, fmt.Sprintf(`{"id":%q,"message":"event %d"}`, id, j))
				acked[id] = false
			}
			if code, body := c.post(t, "/api/logs?source_name=app", "["+strings.Join(evs, ",")+"]"); code != 200 {
				t.Fatalf("ingest: %d %s", code, body)
			}
			for j := i; j < i+10; j++ {
				acked[fmt.Sprintf("00000000-0000-4000-8000-%012d", j)] = true
			}
		}
	}
	send(c, 0, 100)
	deadline := time.Now().Add(time.Minute)
	for len(storedIDs(t, st, src.Token)) < 100 {
		if time.Now().After(deadline) {
			t.Fatal("the first 100 events were not published within a minute")
		}
		time.Sleep(50 * time.Millisecond)
	}
	// Then uploads hang; the node is killed while one is under way.
	proxy.hold.Store(true)
	send(c, 100, 120)
	select {
	case <-proxy.uploading:
	case <-time.After(time.Minute):
		t.Fatal("no upload started")
	}
	c.cmd.Process.Signal(syscall.SIGKILL)
	<-c.done
	proxy.hold.Store(false)
	if n := len(storedIDs(t, st, src.Token)); n != 100 {
		t.Fatalf("after the kill the store lists %d events, want the 100 published", n)
	}

	// Restart on the same directory, then stop cleanly: everything
	// acknowledged is in the store, once.
	c = startChild(t, dir, "http://"+srv.Endpoint, store)
	send(c, 220, 10)
	c.cmd.Process.Signal(syscall.SIGTERM)
	<-c.done
	if code := c.cmd.ProcessState.ExitCode(); code != 0 {
		b, _ := os.ReadFile(dir + ".log")
		t.Fatalf("clean stop exited %d:\n%s", code, b)
	}
	ids := storedIDs(t, st, src.Token)
	for id, ok := range acked {
		if ok && !ids[id] {
			t.Errorf("acknowledged event %s is not in the store", id)
		}
	}
	if len(ids) != 230 {
		t.Fatalf("the store holds %d events, want the 230 acknowledged", len(ids))
	}
}
