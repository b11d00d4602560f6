package httpapi

import (
	"bytes"
	"compress/gzip"
	"compress/zlib"
	"context"
	"io"
	"net"
	"net/http"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	json "github.com/goccy/go-json"

	"github.com/sediment/sediment/catalog"
	"github.com/sediment/sediment/engine"
	"github.com/sediment/sediment/event"
	"github.com/sediment/sediment/query/endpoints"
	"github.com/sediment/sediment/sql/parser"
)

// Keys of the test server's tokens.
const (
	pubKey     = "test-public-key"
	privKey    = "test-private-key"
	ingestKey2 = "test-ingest-source-2" // scope ingest:source:2 (postgres.logs)
	queryKey   = "test-query-key"       // scope query
)

// testServer is a real server on a loopback port over a temporary data
// directory, with Supabase's sources seeded and four tokens.
type testServer struct {
	t       testing.TB
	dir     string
	eng     *engine.Engine
	cat     *catalog.Catalog
	srv     *Server
	runner  *fakeRunner
	service *endpoints.Service
	base    string
	served  chan error
	client  *http.Client
	stopped bool
}

type serverConfig struct {
	engine     engine.Options
	opts       Options
	noRunner   bool
	notReady   bool
	noSupabase bool
	// service, when set, makes the server run queries for real through an
	// endpoints.Service made with these options.
	service *endpoints.Options
	// dir, when set, is the data directory to use (prepared by the test,
	// or used by an earlier server); else a fresh one.
	dir string
	// catalog, when set, are the catalog's options (its file system).
	catalog *catalog.Options
}

func startServer(t testing.TB, cfg serverConfig) *testServer {
	t.Helper()
	ts := &testServer{t: t, dir: cfg.dir, served: make(chan error, 1)}
	if ts.dir == "" {
		ts.dir = t.TempDir()
	}
	eopts := cfg.engine
	var err error
	if ts.eng, err = engine.Open(ts.dir, &eopts); err != nil {
		t.Fatal(err)
	}
	if ts.cat, err = catalog.Open(ts.dir, cfg.catalog); err != nil {
		t.Fatal(err)
	}
	if !cfg.noSupabase {
		if _, err := ts.cat.SeedSupabase(); err != nil {
			t.Fatal(err)
		}
	}
	for key, scope := range map[string]string{pubKey: "public", privKey: "private", ingestKey2: "ingest:source:2", queryKey: "query"} {
		if _, err := ts.cat.CreateAccessToken(key, []string{scope}, "test", ""); err != nil && cfg.dir == "" {
			t.Fatal(err) // a reused directory has them already
		}
	}
	opts := cfg.opts
	opts.Engine, opts.Catalog = ts.eng, ts.cat
	switch {
	case cfg.service != nil:
		ts.service = endpoints.New(ts.eng, ts.cat, cfg.service)
		opts.Runner = ts.service
		ts.cat.SetSQLValidator(func(q string) error {
			_, err := parser.Validate(q, parser.ValidateOptions{KnownSource: ts.cat.HasSourceName})
			return err
		})
	case !cfg.noRunner:
		ts.runner = &fakeRunner{}
		opts.Runner = ts.runner
	}
	if ts.srv, err = New(opts); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ts.base = "http://" + ln.Addr().String()
	go func() { ts.served <- ts.srv.Serve(ln) }()
	if !cfg.notReady {
		ts.srv.SetReady()
	}
	ts.client = &http.Client{Timeout: 20 * time.Second, Transport: &http.Transport{DisableCompression: true}}
	t.Cleanup(ts.stop)
	return ts
}

// stop shuts the server down and closes the engine (once).
func (ts *testServer) stop() {
	if ts.stopped {
		return
	}
	ts.stopped = true
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := ts.srv.Shutdown(ctx); err != nil {
		ts.t.Errorf("shutdown: %v", err)
	}
	if err := <-ts.served; err != nil {
		ts.t.Errorf("serve: %v", err)
	}
	if ts.service != nil {
		ts.service.Close()
	}
	if err := ts.eng.Close(); err != nil {
		ts.t.Errorf("engine close: %v", err)
	}
}

// response is what a test request got back.
type response struct {
	status int
	header http.Header
	body   string
}

// do sends a request; headers alternate name, value.
func (ts *testServer) do(method, path string, body []byte, headers ...string) response {
	ts.t.Helper()
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequest(method, ts.base+path, rd)
	if err != nil {
		ts.t.Fatal(err)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	res, err := ts.client.Do(req)
	if err != nil {
		ts.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		ts.t.Fatal(err)
	}
	return response{status: res.StatusCode, header: res.Header, body: string(b)}
}

// expect fails unless r has status and, when body is not empty, that body.
func (r response) expect(t testing.TB, status int, body string) {
	t.Helper()
	if r.status != status || (body != "" && r.body != body) {
		t.Fatalf("got %d %s, want %d %s", r.status, r.body, status, body)
	}
}

// source returns the seeded source named name.
func (ts *testServer) source(name string) *catalog.Source {
	ts.t.Helper()
	s := ts.cat.SourceByName(name)
	if s == nil {
		ts.t.Fatalf("no source %q", name)
	}
	return s
}

// events returns the stored events of source name as generic JSON maps
// (event.AppendEventJSON), sorted by timestamp then message.
func (ts *testServer) events(name string) []map[string]any {
	ts.t.Helper()
	return readEvents(ts.t, ts.eng, ts.source(name).Token)
}

func readEvents(t testing.TB, eng *engine.Engine, token string) []map[string]any {
	t.Helper()
	sh, err := eng.Shard(token)
	if err != nil {
		t.Fatal(err)
	}
	sn := sh.Snapshot()
	defer sn.Release()
	var out []map[string]any
	err = sn.ForEachEvent(func(e *event.Event) error {
		var m map[string]any
		if err := json.Unmarshal(event.AppendEventJSON(nil, *e), &m); err != nil {
			return err
		}
		out = append(out, m)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.SliceStable(out, func(i, j int) bool {
		ti, tj := out[i]["timestamp"].(float64), out[j]["timestamp"].(float64)
		if ti != tj {
			return ti < tj
		}
		mi, _ := out[i]["event_message"].(string)
		mj, _ := out[j]["event_message"].(string)
		return mi < mj
	})
	return out
}

// at follows a dotted path through nested maps; nil when absent.
func at(m map[string]any, path string) any {
	var cur any = m
	for _, k := range strings.Split(path, ".") {
		mm, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		cur = mm[k]
	}
	return cur
}

// micros parses an RFC 3339 time into unix microseconds, as a JSON number.
func micros(t testing.TB, s string) float64 {
	t.Helper()
	ts, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		t.Fatal(err)
	}
	return float64(ts.UnixMicro())
}

func deflated(t testing.TB, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zlib.NewWriter(&buf)
	if _, err := zw.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func gzipped(t testing.TB, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if _, err := zw.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// fakeRunner records what the query routes hand to the runner and answers
// with a body naming the call. block, when set, is waited on before
// answering (for shutdown tests); started is signalled on entry; ended,
// when set, receives the query context's error once the call ends its
// wait. cached holds the answers CachedEndpoint gives, by endpoint name.
type fakeRunner struct {
	mu      sync.Mutex
	calls   []runnerCall
	block   chan struct{}
	started chan struct{}
	ended   chan error
	cached  map[string][]byte
}

// CachedEndpoint implements CachedRunner.
func (f *fakeRunner) CachedEndpoint(ep *catalog.Endpoint, _ map[string]string, _ bool) ([]byte, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	b, ok := f.cached[ep.Name]
	return b, ok
}

type runnerCall struct {
	endpoint *catalog.Endpoint
	params   map[string]string
	redact   bool
	sql      string
}

func (f *fakeRunner) RunEndpoint(ctx context.Context, ep *catalog.Endpoint, params map[string]string, redact bool) []byte {
	f.enter(ctx)
	f.mu.Lock()
	f.calls = append(f.calls, runnerCall{endpoint: ep, params: params, redact: redact})
	f.mu.Unlock()
	return []byte(`{"result":[{"endpoint":"` + ep.Name + `"}]}`)
}

func (f *fakeRunner) RunSQL(ctx context.Context, sql string) []byte {
	f.enter(ctx)
	f.mu.Lock()
	f.calls = append(f.calls, runnerCall{sql: sql})
	f.mu.Unlock()
	return []byte(`{"result":[{"sql":true}]}`)
}

func (f *fakeRunner) enter(ctx context.Context) {
	if f.started != nil {
		f.started <- struct{}{}
	}
	if f.block != nil {
		select {
		case <-f.block:
		case <-ctx.Done():
		}
	}
	if f.ended != nil {
		f.ended <- ctx.Err()
	}
}

// last returns the most recent call, failing if there was none.
func (f *fakeRunner) last(t testing.TB) runnerCall {
	t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.calls) == 0 {
		t.Fatal("runner not called")
	}
	return f.calls[len(f.calls)-1]
}

func (f *fakeRunner) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.calls)
}
