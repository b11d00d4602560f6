package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sediment/sediment/engine"
	"github.com/sediment/sediment/event"
	"github.com/sediment/sediment/httpapi"
)

func TestParseServeConfig(t *testing.T) {
	cases := []struct {
		name string
		args []string
		env  map[string]string
		want serveConfig
		err  bool
	}{
		{name: "defaults", want: serveConfig{Listen: ":4000", DataDir: "./data", ShutdownTimeout: 30 * time.Second, MemoryLimit: defaultMemoryLimit}},
		{name: "supabase env", env: map[string]string{
			"LOGFLARE_SUPABASE_MODE": "true", "LOGFLARE_SINGLE_TENANT": "true",
			"LOGFLARE_PUBLIC_ACCESS_TOKEN": "pub", "LOGFLARE_PRIVATE_ACCESS_TOKEN": "priv", "LOGFLARE_LOG_LEVEL": "warn",
		}, want: serveConfig{Listen: ":4000", DataDir: "./data", Supabase: true, PublicToken: "pub", PrivateToken: "priv", LogLevel: slog.LevelWarn, ShutdownTimeout: 30 * time.Second, MemoryLimit: defaultMemoryLimit}},
		{name: "api key fallback", env: map[string]string{"LOGFLARE_API_KEY": "legacy"},
			want: serveConfig{Listen: ":4000", DataDir: "./data", PublicToken: "legacy", ShutdownTimeout: 30 * time.Second, MemoryLimit: defaultMemoryLimit}},
		{name: "public token wins over api key", env: map[string]string{"LOGFLARE_API_KEY": "legacy", "LOGFLARE_PUBLIC_ACCESS_TOKEN": "pub"},
			want: serveConfig{Listen: ":4000", DataDir: "./data", PublicToken: "pub", ShutdownTimeout: 30 * time.Second, MemoryLimit: defaultMemoryLimit}},
		{name: "phx port", env: map[string]string{"PHX_HTTP_PORT": "4100"},
			want: serveConfig{Listen: ":4100", DataDir: "./data", ShutdownTimeout: 30 * time.Second, MemoryLimit: defaultMemoryLimit}},
		{name: "flags win", args: []string{"--listen", "127.0.0.1:9", "--data-dir", "/d", "--ack-mode", "buffered", "--supabase", "--log-level", "debug", "--drain-delay", "2s"},
			env:  map[string]string{"PHX_HTTP_PORT": "4100", "LOGFLARE_LOG_LEVEL": "error"},
			want: serveConfig{Listen: "127.0.0.1:9", DataDir: "/d", AckMode: engine.AckBuffered, Supabase: true, LogLevel: slog.LevelDebug, DrainDelay: 2 * time.Second, ShutdownTimeout: 30 * time.Second, MemoryLimit: defaultMemoryLimit}},
		{name: "elixir level", env: map[string]string{"LOGFLARE_LOG_LEVEL": "critical"},
			want: serveConfig{Listen: ":4000", DataDir: "./data", LogLevel: slog.LevelError, ShutdownTimeout: 30 * time.Second, MemoryLimit: defaultMemoryLimit}},
		{name: "operator flags", args: []string{"--repair-wal", "--debug-listen", "127.0.0.1:6060"},
			want: serveConfig{Listen: ":4000", DataDir: "./data", RepairWAL: true, DebugListen: "127.0.0.1:6060", ShutdownTimeout: 30 * time.Second, MemoryLimit: defaultMemoryLimit}},
		{name: "memory limit", args: []string{"--memory-limit", "1GiB"},
			want: serveConfig{Listen: ":4000", DataDir: "./data", ShutdownTimeout: 30 * time.Second, MemoryLimit: 1 << 30}},
		{name: "memory limit off", args: []string{"--memory-limit", "0"},
			want: serveConfig{Listen: ":4000", DataDir: "./data", ShutdownTimeout: 30 * time.Second}},
		{name: "bad memory limit", args: []string{"--memory-limit", "lots"}, err: true},
		{name: "storage settings", args: []string{"--block-rows", "16384", "--page-bytes", "256KiB", "--segment-rows", "1000000", "--zstd", "2/4"},
			want: serveConfig{Listen: ":4000", DataDir: "./data", ShutdownTimeout: 30 * time.Second, MemoryLimit: defaultMemoryLimit,
				BlockRows: 16384, PageBytes: 256 << 10, SegmentRows: 1000000, ZstdFlush: 2, ZstdCompact: 4}},
		{name: "free disk floor", args: []string{"--min-free-disk", "1GiB"},
			want: serveConfig{Listen: ":4000", DataDir: "./data", ShutdownTimeout: 30 * time.Second, MemoryLimit: defaultMemoryLimit, MinFreeDisk: 1 << 30}},
		{name: "free disk floor off", args: []string{"--min-free-disk", "0"},
			want: serveConfig{Listen: ":4000", DataDir: "./data", ShutdownTimeout: 30 * time.Second, MemoryLimit: defaultMemoryLimit}},
		{name: "bad free disk floor", args: []string{"--min-free-disk", "-5MiB"}, err: true},
		{name: "event field cap", args: []string{"--max-event-fields", "200"},
			want: serveConfig{Listen: ":4000", DataDir: "./data", ShutdownTimeout: 30 * time.Second, MemoryLimit: defaultMemoryLimit, MaxEventFields: 200}},
		{name: "negative event field cap", args: []string{"--max-event-fields", "-1"}, err: true},
		{name: "predicate cache", args: []string{"--predicate-cache", "64MiB"},
			want: serveConfig{Listen: ":4000", DataDir: "./data", ShutdownTimeout: 30 * time.Second, MemoryLimit: defaultMemoryLimit, PredicateCache: 64 << 20}},
		{name: "predicate cache off", args: []string{"--predicate-cache", "0"},
			want: serveConfig{Listen: ":4000", DataDir: "./data", ShutdownTimeout: 30 * time.Second, MemoryLimit: defaultMemoryLimit, PredicateCache: -1}},
		{name: "bad predicate cache", args: []string{"--predicate-cache", "big"}, err: true},
		{name: "limits", args: []string{"--max-concurrent-queries", "3", "--max-queued-queries", "-1", "--query-queue-wait", "2s", "--max-inflight-body-bytes", "64MiB", "--max-body-bytes", "1MB"},
			want: serveConfig{Listen: ":4000", DataDir: "./data", ShutdownTimeout: 30 * time.Second, MemoryLimit: defaultMemoryLimit,
				Limits: httpLimits{MaxConcurrentQueries: 3, MaxQueuedQueries: -1, QueryQueueWait: 2 * time.Second, MaxInflightBodyBytes: 64 << 20, MaxBodyBytes: 1e6}}},
		{name: "bad inflight bytes", args: []string{"--max-inflight-body-bytes", "lots"}, err: true},
		{name: "negative concurrency", args: []string{"--max-concurrent-queries", "-2"}, err: true},
		{name: "query memory", args: []string{"--query-memory", "32MiB", "--query-memory-total", "96MiB"},
			want: serveConfig{Listen: ":4000", DataDir: "./data", ShutdownTimeout: 30 * time.Second, MemoryLimit: defaultMemoryLimit,
				QueryMemory: 32 << 20, QueryMemoryTotal: 96 << 20}},
		{name: "zero query memory", args: []string{"--query-memory", "0"}, err: true},
		{name: "bad query memory total", args: []string{"--query-memory-total", "most"}, err: true},
		{name: "query memory over total", args: []string{"--query-memory", "256MiB", "--query-memory-total", "128MiB"}, err: true},
		{name: "metrics to loopback", args: []string{"--metrics-public", "loopback"},
			want: serveConfig{Listen: ":4000", DataDir: "./data", ShutdownTimeout: 30 * time.Second, MemoryLimit: defaultMemoryLimit, MetricsAccess: httpapi.MetricsLoopback}},
		{name: "metrics to all", args: []string{"--metrics-public=all"},
			want: serveConfig{Listen: ":4000", DataDir: "./data", ShutdownTimeout: 30 * time.Second, MemoryLimit: defaultMemoryLimit, MetricsAccess: httpapi.MetricsPublic}},
		{name: "bad metrics access", args: []string{"--metrics-public", "yes"}, err: true},
		{name: "bad zstd", args: []string{"--zstd", "9"}, err: true},
		{name: "two zstd pairs", args: []string{"--zstd", "1/3,1/4"}, err: true},
		{name: "bad page bytes", args: []string{"--page-bytes", "big"}, err: true},
		{name: "negative block rows", args: []string{"--block-rows", "-1"}, err: true},
		{name: "bad port", env: map[string]string{"PHX_HTTP_PORT": "http"}, err: true},
		{name: "bad ack mode", args: []string{"--ack-mode", "never"}, err: true},
		{name: "bad level", env: map[string]string{"LOGFLARE_LOG_LEVEL": "loud"}, err: true},
		{name: "stray argument", args: []string{"now"}, err: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseServeConfig(tc.args, func(k string) string { return tc.env[k] }, io.Discard)
			if tc.err {
				if err == nil {
					t.Fatalf("no error, got %+v", got)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Contains(tc.args, "--min-free-disk") {
				tc.want.MinFreeDisk = defaultMinFreeDisk
			}
			tc.want.LogFormat = "text"
			tc.want.SnapshotDir = filepath.Join(tc.want.DataDir, "snapshots")
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

func TestDispatch(t *testing.T) {
	var out, errb bytes.Buffer
	if code := dispatch(nil, &out, &errb); code != 2 || !strings.Contains(errb.String(), "serve") {
		t.Fatalf("no args: %d %q", code, errb.String())
	}
	errb.Reset()
	if code := dispatch([]string{"frobnicate"}, &out, &errb); code != 2 || !strings.Contains(errb.String(), `unknown command "frobnicate"`) {
		t.Fatalf("unknown: %d %q", code, errb.String())
	}
	if code := dispatch([]string{"serve", "-h"}, &out, &errb); code != 0 {
		t.Fatalf("serve -h: %d", code)
	}
	if code := dispatch([]string{"serve", "--ack-mode", "x"}, &out, &errb); code != 2 {
		t.Fatalf("bad flag: %d", code)
	}
}

// running is a server started by startServer for a test.
type running struct {
	t    *testing.T
	a    *app
	base string
}

func start(t *testing.T, cfg serveConfig) *running {
	t.Helper()
	return startWith(t, cfg, serveDeps{})
}

// startWith starts a server wired with deps (productionDeps for the SQL
// engine).
func startWith(t *testing.T, cfg serveConfig, deps serveDeps) *running {
	t.Helper()
	cfg.Listen = "127.0.0.1:0"
	if cfg.ShutdownTimeout == 0 {
		cfg.ShutdownTimeout = 10 * time.Second
	}
	a, err := startServer(cfg, deps, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	r := &running{t: t, a: a, base: "http://" + a.addr.String()}
	t.Cleanup(func() {
		if a != nil {
			_ = r.stop()
		}
	})
	return r
}

func (r *running) stop() error {
	if r.a == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err := r.a.shutdown(ctx)
	r.a = nil
	return err
}

func (r *running) do(method, path, key, body string) (int, string) {
	r.t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, _ := http.NewRequest(method, r.base+path, rd)
	req.Header.Set("Content-Type", "application/json")
	if key != "" {
		req.Header.Set("x-api-key", key)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		r.t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b)
}

func (r *running) mustDo(method, path, key, body string, status int) string {
	r.t.Helper()
	got, b := r.do(method, path, key, body)
	if got != status {
		r.t.Fatalf("%s %s: %d %s, want %d", method, path, got, b, status)
	}
	return b
}

// storedMessages reads every event of every source straight from the data
// directory: source token → sorted messages.
func storedMessages(t *testing.T, dir string) map[string][]string {
	t.Helper()
	eng, err := engine.Open(dir, &engine.Options{DisableBackground: true})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	out := map[string][]string{}
	for _, sh := range eng.Shards() {
		sn := sh.Snapshot()
		err := sn.ForEachEvent(func(e *event.Event) error {
			out[sh.ID()] = append(out[sh.ID()], e.Message)
			return nil
		})
		sn.Release()
		if err != nil {
			t.Fatal(err)
		}
		sort.Strings(out[sh.ID()])
	}
	return out
}

// TestRestartKeepsEverything: sources, endpoints, keys and every
// acknowledged event survive a shutdown and start on the same data dir;
// Supabase seeding does not duplicate anything.
func TestRestartKeepsEverything(t *testing.T) {
	dir := t.TempDir()
	cfg := serveConfig{DataDir: dir, Supabase: true, PublicToken: "pub-key", PrivateToken: "priv-key"}
	r := start(t, cfg)
	created := r.mustDo("POST", "/api/sources", "priv-key", `{"name":"my.app","retention_days":30}`, 201)
	r.mustDo("POST", "/api/endpoints", "priv-key", `{"name":"mine","query":"select id from `+"`my.app`"+`"}`, 201)
	var acked []string
	for i := range 20 {
		msg := "event " + string(rune('a'+i))
		r.mustDo("POST", "/api/logs?source_name=my.app", "pub-key", `[{"message":"`+msg+`"}]`, 200)
		acked = append(acked, msg)
	}
	r.mustDo("POST", "/api/logs?source_name=gotrue.logs.prod", "pub-key", `{"event_message":"auth"}`, 200)
	endpointsBefore := r.mustDo("GET", "/api/endpoints", "priv-key", "", 200)
	sourcesBefore := r.mustDo("GET", "/api/sources", "priv-key", "", 200)
	if err := r.stop(); err != nil {
		t.Fatal(err)
	}

	var src struct{ Token string }
	if err := json.Unmarshal([]byte(created), &src); err != nil {
		t.Fatal(err)
	}
	stored := storedMessages(t, dir)
	sort.Strings(acked)
	if !reflect.DeepEqual(stored[src.Token], acked) {
		t.Fatalf("stored %v, want %v", stored[src.Token], acked)
	}

	r = start(t, cfg)
	if got := r.mustDo("GET", "/api/sources", "priv-key", "", 200); got != sourcesBefore {
		t.Fatalf("sources changed across restart:\n%s\n%s", got, sourcesBefore)
	}
	if got := r.mustDo("GET", "/api/endpoints", "priv-key", "", 200); got != endpointsBefore {
		t.Fatalf("endpoints changed across restart")
	}
	var list []map[string]any
	_ = json.Unmarshal([]byte(sourcesBefore), &list)
	if len(list) != 10 {
		t.Fatalf("%d sources, want 9 seeded + 1", len(list))
	}
	r.mustDo("POST", "/api/logs?source_name=my.app", "pub-key", `{"message":"after restart"}`, 200)
	if err := r.stop(); err != nil {
		t.Fatal(err)
	}
	if n := len(storedMessages(t, dir)[src.Token]); n != 21 {
		t.Fatalf("%d events after restart, want 21", n)
	}
}

// TestGeneratedKeys: with no token configured, keys are generated once,
// written to a 0600 file and work; environment tokens replace them.
func TestGeneratedKeys(t *testing.T) {
	dir := t.TempDir()
	r := start(t, serveConfig{DataDir: dir, Supabase: true})
	path := filepath.Join(dir, generatedKeysFile)
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Fatalf("keys file mode %v", st.Mode().Perm())
	}
	var keys generatedKeys
	data, _ := os.ReadFile(path)
	if err := json.Unmarshal(data, &keys); err != nil || len(keys.Public) < 40 || len(keys.Private) < 40 {
		t.Fatalf("keys file %s: %v", data, err)
	}
	catalogFile, _ := os.ReadFile(filepath.Join(dir, "catalog.json"))
	if bytes.Contains(catalogFile, []byte(keys.Public)) || bytes.Contains(catalogFile, []byte(keys.Private)) {
		t.Fatal("keys stored in clear in the catalog")
	}
	r.mustDo("POST", "/api/logs?source_name=postgres.logs", keys.Public, `{"message":"x"}`, 200)
	r.mustDo("GET", "/api/sources", keys.Public, "", 401)
	r.mustDo("GET", "/api/sources", keys.Private, "", 200)
	r.mustDo("GET", "/api/sources", "", "", 401)
	if err := r.stop(); err != nil {
		t.Fatal(err)
	}

	// Restart: same keys, file unchanged.
	r = start(t, serveConfig{DataDir: dir})
	again, _ := os.ReadFile(path)
	if !bytes.Equal(again, data) {
		t.Fatal("keys file rewritten on restart")
	}
	r.mustDo("GET", "/api/sources", keys.Private, "", 200)
	if err := r.stop(); err != nil {
		t.Fatal(err)
	}

	// Environment tokens replace the generated ones.
	r = start(t, serveConfig{DataDir: dir, PublicToken: "env-pub", PrivateToken: "env-priv"})
	r.mustDo("GET", "/api/sources", keys.Private, "", 401)
	r.mustDo("POST", "/api/logs?source_name=postgres.logs", keys.Public, `{"message":"x"}`, 401)
	r.mustDo("GET", "/api/sources", "env-priv", "", 200)
	r.mustDo("POST", "/api/logs?source_name=postgres.logs", "env-pub", `{"message":"x"}`, 200)
	if err := r.stop(); err != nil {
		t.Fatal(err)
	}

	// A changed environment value replaces the earlier one; the other stays.
	r = start(t, serveConfig{DataDir: dir, PublicToken: "env-pub-2", PrivateToken: "env-priv"})
	r.mustDo("POST", "/api/logs?source_name=postgres.logs", "env-pub", `{"message":"x"}`, 401)
	r.mustDo("POST", "/api/logs?source_name=postgres.logs", "env-pub-2", `{"message":"x"}`, 200)
	r.mustDo("GET", "/api/endpoints/query/logs.all", "env-pub-2", "", 401) // public tokens may not query
	r.mustDo("GET", "/api/sources", "env-priv", "", 200)
}

// TestSingleKeyLikeSupabaseCLI: the CLI configures only the private token
// and uses it for Vector and Studio; no key is generated.
func TestSingleKeyLikeSupabaseCLI(t *testing.T) {
	dir := t.TempDir()
	r := start(t, serveConfig{DataDir: dir, Supabase: true, PrivateToken: "cli-key"})
	r.mustDo("POST", "/api/logs?source_name=postgREST.logs.prod", "cli-key", `[{"event_message":"Config reloaded"}]`, 200)
	r.mustDo("GET", "/api/sources", "cli-key", "", 200)
	if _, err := os.Stat(filepath.Join(dir, generatedKeysFile)); !os.IsNotExist(err) {
		t.Fatalf("keys generated although a token is configured: %v", err)
	}
}

// TestShutdownFlushes: a SIGTERM-style shutdown (the function runServe
// calls on the signal) with ingest in flight acknowledges what it accepted,
// stops accepting, and leaves every acknowledged event readable.
func TestShutdownFlushes(t *testing.T) {
	dir := t.TempDir()
	r := start(t, serveConfig{DataDir: dir, Supabase: true, PrivateToken: "k"})
	// Four clients keep sending until after the shutdown; each reports the
	// messages it got 200 for.
	ackedBy := make(chan []string, 4)
	stopSending := make(chan struct{})
	for w := range 4 {
		go func() {
			var mine []string
			for i := 0; ; i++ {
				select {
				case <-stopSending:
					ackedBy <- mine
					return
				default:
				}
				msg := "w" + strconv.Itoa(w) + "-" + strconv.Itoa(i)
				req, _ := http.NewRequest("POST", r.base+"/api/logs?source_name=postgres.logs", strings.NewReader(`[{"message":"`+msg+`"}]`))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("x-api-key", "k")
				res, err := http.DefaultClient.Do(req)
				if err != nil {
					continue // the listener is closed: nothing was acknowledged
				}
				io.Copy(io.Discard, res.Body)
				res.Body.Close()
				if res.StatusCode != 200 {
					t.Errorf("status %d during shutdown", res.StatusCode)
					continue
				}
				mine = append(mine, msg)
			}
		}()
	}
	time.Sleep(200 * time.Millisecond)
	src := r.a.cat.SourceByName("postgres.logs")
	if err := r.stop(); err != nil {
		t.Fatal(err)
	}
	close(stopSending)
	var acked []string
	for range 4 {
		acked = append(acked, <-ackedBy...)
	}
	if len(acked) == 0 {
		t.Fatal("nothing was ingested before the shutdown")
	}
	stored := map[string]bool{}
	for _, m := range storedMessages(t, dir)[src.Token] {
		stored[m] = true
	}
	for _, m := range acked {
		if !stored[m] {
			t.Fatalf("acknowledged event %q lost", m)
		}
	}
}

func TestParseBytes(t *testing.T) {
	for in, want := range map[string]int64{"0": 0, "512": 512, "256MiB": 256 << 20, "1GiB": 1 << 30, "300MB": 300e6, "64 KiB": 64 << 10, "2GB": 2e9, "2TiB": 2 << 40, "3TB": 3e12} {
		if got, err := parseBytes(in); err != nil || got != want {
			t.Errorf("parseBytes(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "MiB", "-1MiB", "1.5GiB", "ten", "99999999999TiB"} {
		if _, err := parseBytes(in); err == nil {
			t.Errorf("parseBytes(%q): no error", in)
		}
	}
}

// The memory limit sizes the heads: a quarter for all, a twelfth for one.
func TestMemoryOptions(t *testing.T) {
	var o engine.Options
	memoryOptions(256<<20, &o)
	if o.HeadMemoryBudget != 64<<20 || o.HeadMaxBytes != 256<<20/12 || o.DictCacheBytes != 16<<20 || o.PageCacheBytes != 32<<20 ||
		o.FooterCacheBytes != 32<<20 {
		t.Fatalf("256 MiB: %+v", o)
	}
	o = engine.Options{}
	memoryOptions(16<<20, &o)
	if o.HeadMemoryBudget != 8<<20 || o.HeadMaxBytes != 4<<20 {
		t.Fatalf("16 MiB: heads floor not applied: %+v", o)
	}
	o = engine.Options{}
	memoryOptions(0, &o)
	if o.HeadMemoryBudget != 0 || o.HeadMaxBytes != 0 {
		t.Fatalf("no limit must leave the engine defaults: %+v", o)
	}
}

// TestShutdownWithIdleConnection: a client connected without sending
// anything does not hold the shutdown that SIGTERM starts: it returns nil
// (runServe exits 0) within 3 s, where it used to wait out the shutdown
// timeout and fail with `context deadline exceeded` (exit 1). Nothing in
// that path waits on a timer of ours; 3 s is slack for a loaded machine.
func TestShutdownWithIdleConnection(t *testing.T) {
	r := start(t, serveConfig{DataDir: t.TempDir(), PrivateToken: "k"})
	c, err := net.Dial("tcp", strings.TrimPrefix(r.base, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	r.mustDo("GET", "/health", "", "", 200) // the server is up; c has sent nothing
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	err = r.a.shutdown(ctx)
	r.a = nil
	if err != nil {
		t.Fatalf("shutdown: %v", err)
	}
}

func TestHTTPLimitsDefaults(t *testing.T) {
	var o httpapi.Options
	httpLimits{}.apply(&o, defaultMemoryLimit)
	if o.MaxInflightBodyBytes != 64<<20 || o.MaxConcurrentQueries != 0 || o.MaxBodyBytes != 0 {
		t.Fatalf("%+v", o)
	}
	httpLimits{}.apply(&o, 64<<20)
	if o.MaxInflightBodyBytes != 32<<20 {
		t.Fatalf("small memory limit: %d", o.MaxInflightBodyBytes)
	}
	httpLimits{}.apply(&o, 0)
	if o.MaxInflightBodyBytes != httpapi.DefaultMaxInflightBodyBytes {
		t.Fatalf("no memory limit: %d", o.MaxInflightBodyBytes)
	}
	httpLimits{MaxInflightBodyBytes: 5 << 20, MaxBodyBytes: 1 << 20}.apply(&o, defaultMemoryLimit)
	if o.MaxInflightBodyBytes != 5<<20 || o.MaxBodyBytes != 1<<20 {
		t.Fatalf("flags: %+v", o)
	}
}
