package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"io"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestServeFlagsFromEnvironment: every serve flag has a SEDIMENT_*
// variable; the command line wins over it, and it wins over Logflare's.
func TestServeFlagsFromEnvironment(t *testing.T) {
	env := map[string]string{
		"SEDIMENT_BLOCK_ROWS":    "4096",
		"SEDIMENT_ACK_MODE":      "buffered",
		"SEDIMENT_LISTEN":        "127.0.0.1:7000",
		"PHX_HTTP_PORT":          "4100",
		"SEDIMENT_LOG_LEVEL":     "debug",
		"LOGFLARE_LOG_LEVEL":     "error",
		"SEDIMENT_SUPABASE":      "false",
		"LOGFLARE_SUPABASE_MODE": "true",
		"SEDIMENT_REPAIR_WAL":    "true",
		"SEDIMENT_DRAIN_DELAY":   "3s",
		"SEDIMENT_LOG_FORMAT":    "json",
		"SEDIMENT_SYSLOG_UDP":    ":5514",
		"SEDIMENT_SYSLOG_SOURCE": "app",
		"SEDIMENT_DATA_DIR":      "/var/lib/sediment",
	}
	getenv := func(k string) string { return env[k] }
	cfg, err := parseServeConfig([]string{"--block-rows", "8192"}, getenv, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.BlockRows != 8192 {
		t.Errorf("block rows %d: the flag must win over SEDIMENT_BLOCK_ROWS", cfg.BlockRows)
	}
	if cfg.Listen != "127.0.0.1:7000" || cfg.LogLevel != slog.LevelDebug || cfg.Supabase {
		t.Errorf("SEDIMENT_* must win over Logflare's variables: listen %q level %v supabase %v", cfg.Listen, cfg.LogLevel, cfg.Supabase)
	}
	if cfg.AckMode.String() != "buffered" || !cfg.RepairWAL || cfg.DrainDelay != 3*time.Second || cfg.LogFormat != "json" ||
		cfg.Syslog.UDP != "127.0.0.1:5514" || cfg.Syslog.Source != "app" || cfg.DataDir != "/var/lib/sediment" {
		t.Errorf("environment not applied: %+v", cfg)
	}
	if cfg.SnapshotDir != filepath.Join("/var/lib/sediment", "snapshots") {
		t.Errorf("snapshot dir %q", cfg.SnapshotDir)
	}

	// Logflare's variables still apply when no SEDIMENT_* is set.
	cfg, err = parseServeConfig(nil, func(k string) string {
		return map[string]string{"LOGFLARE_SUPABASE_MODE": "true", "PHX_HTTP_PORT": "4100"}[k]
	}, io.Discard)
	if err != nil || !cfg.Supabase || cfg.Listen != ":4100" {
		t.Fatalf("Logflare's variables: %+v %v", cfg, err)
	}

	// A bad value names the variable.
	_, err = parseServeConfig(nil, func(k string) string {
		return map[string]string{"SEDIMENT_SHUTDOWN_TIMEOUT": "soon"}[k]
	}, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "SEDIMENT_SHUTDOWN_TIMEOUT") {
		t.Fatalf("bad environment value: %v", err)
	}
}

// serveHelp returns the text of `sediment serve --help`.
func serveHelp(t *testing.T) string {
	t.Helper()
	var out bytes.Buffer
	_, err := parseServeConfig([]string{"--help"}, func(string) string { return "" }, &out)
	if !errors.Is(err, flag.ErrHelp) {
		t.Fatalf("--help: %v", err)
	}
	return out.String()
}

// TestServeHelp: --help lists every flag once with its variable, a default
// at most once, and no value after a flag that takes none.
func TestServeHelp(t *testing.T) {
	help := serveHelp(t)
	entries := map[string]string{} // flag name -> its lines
	var cur string
	for _, line := range strings.Split(help, "\n") {
		if rest, ok := strings.CutPrefix(line, "  --"); ok {
			cur, _, _ = strings.Cut(rest, " ")
			if _, dup := entries[cur]; dup {
				t.Errorf("--%s listed twice", cur)
			}
			entries[cur] = line + "\n"
			continue
		}
		if cur != "" {
			entries[cur] += line + "\n"
		}
	}
	for _, name := range []string{"listen", "data-dir", "ack-mode", "supabase", "log-level", "log-format", "block-rows",
		"repair-wal", "memory-limit", "syslog-tcp", "snapshot-dir", "shutdown-timeout"} {
		e, ok := entries[name]
		if !ok {
			t.Errorf("--%s missing from --help", name)
			continue
		}
		if !strings.Contains(e, "env "+flagEnvName(name)) {
			t.Errorf("--%s: no environment variable shown:\n%s", name, e)
		}
		if n := strings.Count(e, "(default"); n > 1 {
			t.Errorf("--%s: the default is printed %d times:\n%s", name, n, e)
		}
	}
	for _, b := range []string{"supabase", "repair-wal"} {
		if first, _, _ := strings.Cut(entries[b], "\n"); first != "  --"+b {
			t.Errorf("boolean flag shown as taking a value: %q", first)
		}
	}
	for name, want := range map[string]string{"listen": "  --listen ADDR", "block-rows": "  --block-rows N", "drain-delay": "  --drain-delay DURATION"} {
		if first, _, _ := strings.Cut(entries[name], "\n"); first != want {
			t.Errorf("--%s heading %q, want %q", name, first, want)
		}
	}
	if !strings.Contains(entries["ack-mode"], "(default sync)") || !strings.Contains(entries["shutdown-timeout"], "(default 30s)") {
		t.Errorf("defaults not shown:\n%s%s", entries["ack-mode"], entries["shutdown-timeout"])
	}
	if !strings.Contains(help, "Precedence") {
		t.Error("--help does not state the precedence")
	}
}

// TestServeFlagRanges: numeric flags outside their range are refused with
// the range in the message.
func TestServeFlagRanges(t *testing.T) {
	bad := map[string][]string{
		"--block-rows 10":          {"--block-rows", "10"},
		"--block-rows 2^21":        {"--block-rows", "2097152"},
		"--segment-rows 5":         {"--segment-rows", "5"},
		"--segment < block":        {"--block-rows", "65536", "--segment-rows", "4096"},
		"--page-bytes 100":         {"--page-bytes", "100"},
		"--memory-limit 1MiB":      {"--memory-limit", "1MiB"},
		"--shutdown-timeout 0":     {"--shutdown-timeout", "0s"},
		"--drain-delay -1s":        {"--drain-delay", "-1s"},
		"--syslog-max-message 10":  {"--syslog-max-message", "10", "--syslog-udp", ":1", "--syslog-source", "a"},
		"--log-format xml":         {"--log-format", "xml"},
		"--block-rows -1":          {"--block-rows", "-1"},
		"--segment-rows 2^31":      {"--segment-rows", "2147483648"},
		"--drain-delay 2h":         {"--drain-delay", "2h"},
		"--memory-limit 10":        {"--memory-limit", "10"},
		"--page-bytes 1GiB":        {"--page-bytes", "1GiB"},
		"--syslog-max-message 1e9": {"--syslog-max-message", "1000000000", "--syslog-udp", ":1", "--syslog-source", "a"},
	}
	for name, args := range bad {
		_, err := parseServeConfig(args, func(string) string { return "" }, io.Discard)
		if err == nil {
			t.Errorf("%s accepted", name)
			continue
		}
		if strings.HasPrefix(args[0], "--") && !strings.Contains(err.Error(), args[0]) && !strings.Contains(err.Error(), "segment-rows") {
			t.Errorf("%s: the error does not name the flag: %v", name, err)
		}
	}
	_, err := parseServeConfig([]string{"--block-rows", "10"}, func(string) string { return "" }, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "from 256 to 1048576") {
		t.Fatalf("--block-rows 10: %v", err)
	}
	good := [][]string{{"--block-rows", "256"}, {"--block-rows", "1048576"}, {"--segment-rows", "1024"}, {"--memory-limit", "0"},
		{"--memory-limit", "32MiB"}, {"--page-bytes", "4KiB"}, {"--shutdown-timeout", "1s"}, {"--drain-delay", "0s"}}
	for _, args := range good {
		if _, err := parseServeConfig(args, func(string) string { return "" }, io.Discard); err != nil {
			t.Errorf("%v refused: %v", args, err)
		}
	}
}

// TestJSONLogFormat: --log-format json writes one JSON object per line.
func TestJSONLogFormat(t *testing.T) {
	var buf bytes.Buffer
	log := newLogger(&buf, "json", slog.LevelInfo)
	log.Info("listening", "addr", ":4000")
	log.Debug("hidden")
	var rec map[string]any
	if err := json.Unmarshal(buf.Bytes(), &rec); err != nil {
		t.Fatalf("not one JSON object: %q: %v", buf.String(), err)
	}
	if rec["msg"] != "listening" || rec["addr"] != ":4000" || rec["level"] != "INFO" {
		t.Fatalf("record %v", rec)
	}
	buf.Reset()
	newLogger(&buf, "text", slog.LevelInfo).Info("listening", "addr", ":4000")
	if !strings.Contains(buf.String(), `msg=listening addr=:4000`) {
		t.Fatalf("text format: %q", buf.String())
	}
}

// TestNoKeysWhenBindFails: a server that cannot listen leaves no generated
// keys behind.
func TestNoKeysWhenBindFails(t *testing.T) {
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	dir := t.TempDir()
	cfg := serveConfig{DataDir: dir, Listen: taken.Addr().String(), ShutdownTimeout: time.Second}
	if _, err := startServer(cfg, serveDeps{}, slog.New(slog.NewTextHandler(io.Discard, nil))); err == nil {
		t.Fatal("started on a port in use")
	}
	if _, err := os.Stat(filepath.Join(dir, generatedKeysFile)); !os.IsNotExist(err) {
		t.Fatalf("generated keys left behind after a failed bind: %v", err)
	}
	// The data directory is usable afterwards: the lock was released.
	r := start(t, serveConfig{DataDir: dir})
	if err := r.stop(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, generatedKeysFile)); err != nil {
		t.Fatalf("no keys once the server started: %v", err)
	}
}

// TestStaleGeneratedKeys: keys the environment replaced are marked stale
// in generated-keys.json, and the file goes once none of its keys works.
func TestStaleGeneratedKeys(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, generatedKeysFile)
	r := start(t, serveConfig{DataDir: dir})
	if err := r.stop(); err != nil {
		t.Fatal(err)
	}
	var keys generatedKeys
	data, _ := os.ReadFile(path)
	if err := json.Unmarshal(data, &keys); err != nil {
		t.Fatal(err)
	}

	r = start(t, serveConfig{DataDir: dir, PublicToken: "env-pub"})
	r.mustDo("GET", "/api/sources", keys.Private, "", 200) // still valid
	if err := r.stop(); err != nil {
		t.Fatal(err)
	}
	var now generatedKeys
	data, _ = os.ReadFile(path)
	if err := json.Unmarshal(data, &now); err != nil {
		t.Fatal(err)
	}
	if now.Public != "" || now.Private != keys.Private || len(now.Stale) != 1 || now.Stale[0] != "public_access_token" {
		t.Fatalf("after the public key was replaced: %s", data)
	}
	if st, _ := os.Stat(path); st.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v", st.Mode().Perm())
	}

	r = start(t, serveConfig{DataDir: dir, PublicToken: "env-pub", PrivateToken: "env-priv"})
	if err := r.stop(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Fatalf("keys file kept although none of its keys works: %v", err)
	}
}

// TestStartupHintsWork runs the lines `sediment serve` prints for a new
// user, as printed, in a shell: they create a source and ingest an event.
func TestStartupHintsWork(t *testing.T) {
	for _, tool := range []string{"sh", "curl", "sed"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not installed", tool)
		}
	}
	dir := t.TempDir()
	r := start(t, serveConfig{DataDir: dir})
	lines := startupHints(serveConfig{DataDir: dir}, r.a.cat, r.a.addr, func(string) string { return "" })
	if len(lines) != 3 || !strings.Contains(lines[0], generatedKeysFile) {
		t.Fatalf("hints: %q", lines)
	}
	for _, l := range lines {
		if strings.Contains(l, mustKeys(t, dir).Public) || strings.Contains(l, mustKeys(t, dir).Private) {
			t.Fatalf("a hint prints a key: %q", l)
		}
	}
	for _, l := range lines[1:] {
		_, cmd, _ := strings.Cut(l, ": ")
		out, err := exec.Command("sh", "-c", cmd+" -sS -w ' %{http_code}'").CombinedOutput()
		if err != nil {
			t.Fatalf("%s: %v: %s", cmd, err, out)
		}
		if !strings.HasSuffix(string(out), " 201") && !strings.HasSuffix(string(out), " 200") {
			t.Fatalf("%s: %s", cmd, out)
		}
	}
	src := r.a.cat.SourceByName(exampleSourceName)
	if src == nil {
		t.Fatal("the hint did not create the source")
	}
	if err := r.stop(); err != nil {
		t.Fatal(err)
	}
	if got := storedMessages(t, dir)[src.Token]; len(got) != 1 || got[0] != "hello from curl" {
		t.Fatalf("stored %q", got)
	}

	// With a source and keys from the environment: one line, reading the
	// environment variable.
	r = start(t, serveConfig{DataDir: dir, PublicToken: "env-pub", PrivateToken: "env-priv"})
	lines = startupHints(serveConfig{DataDir: dir}, r.a.cat, &net.TCPAddr{IP: net.IPv6unspecified, Port: 4000}, func(string) string { return "" })
	if len(lines) != 2 || !strings.Contains(lines[1], "$LOGFLARE_PUBLIC_ACCESS_TOKEN") || !strings.Contains(lines[1], "http://localhost:4000/api/logs?source_name=app.logs") {
		t.Fatalf("hints with environment keys: %q", lines)
	}
}

func mustKeys(t *testing.T, dir string) generatedKeys {
	t.Helper()
	var k generatedKeys
	data, err := os.ReadFile(filepath.Join(dir, generatedKeysFile))
	if err == nil {
		err = json.Unmarshal(data, &k)
	}
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// TestVersionCommand: `sediment version` prints the build, the link-time
// overrides winning.
func TestVersionCommand(t *testing.T) {
	var out bytes.Buffer
	if code := dispatch([]string{"version"}, &out, io.Discard); code != 0 || !strings.HasPrefix(out.String(), "sediment ") {
		t.Fatalf("version: %d %q", code, out.String())
	}
	version, commit = "v9.8.7", "abc123"
	t.Cleanup(func() { version, commit = "", "" })
	out.Reset()
	dispatch([]string{"version"}, &out, io.Discard)
	if !strings.HasPrefix(out.String(), "sediment v9.8.7 (commit abc123, go") {
		t.Fatalf("with overrides: %q", out.String())
	}
	if b := buildInfo(); b.Version != "v9.8.7" || b.Commit != "abc123" {
		t.Fatalf("buildInfo %+v", b)
	}
}

// TestHealthProbe: `sediment health` exits 0 against a ready server, found
// by --url or by the serve environment, and 1 when nothing answers.
func TestHealthProbe(t *testing.T) {
	r := start(t, serveConfig{DataDir: t.TempDir(), PrivateToken: "k"})
	var out, errb bytes.Buffer
	if code := probeHealth([]string{"--url", r.base}, func(string) string { return "" }, &out, &errb); code != 0 {
		t.Fatalf("probe: %d %s %s", code, out.String(), errb.String())
	}
	if !strings.HasPrefix(out.String(), `200 {"status":"ok","version":`) {
		t.Fatalf("probe output %q: /health should carry the version", out.String())
	}
	env := map[string]string{"SEDIMENT_LISTEN": r.a.addr.String()}
	if code := probeHealth(nil, func(k string) string { return env[k] }, io.Discard, io.Discard); code != 0 {
		t.Fatalf("probe through SEDIMENT_LISTEN: %d", code)
	}
	base := r.base
	if err := r.stop(); err != nil {
		t.Fatal(err)
	}
	if code := probeHealth([]string{"--url", base, "--timeout", "2s", "--quiet"}, func(string) string { return "" }, io.Discard, io.Discard); code != 1 {
		t.Fatalf("probe of a stopped server: %d", code)
	}
	for env, want := range map[[2]string]string{
		{"", ""}:                   "127.0.0.1:4000",
		{"", "4100"}:               "127.0.0.1:4100",
		{":4200", "4100"}:          "127.0.0.1:4200",
		{"0.0.0.0:4300", ""}:       "127.0.0.1:4300",
		{"10.1.2.3:4400", ""}:      "10.1.2.3:4400",
		{"[::]:4500", ""}:          "127.0.0.1:4500",
		{"localhost:4600", "4100"}: "localhost:4600",
	} {
		got := localServerAddr(func(k string) string {
			return map[string]string{"SEDIMENT_LISTEN": env[0], "PHX_HTTP_PORT": env[1]}[k]
		})
		if got != want {
			t.Errorf("listen %q port %q: %q, want %q", env[0], env[1], got, want)
		}
	}
}
