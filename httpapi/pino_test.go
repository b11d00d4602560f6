package httpapi

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// clientsDir is where the Node clients live; CI installs their packages
// with `npm ci --prefix httpapi/testdata/clients`.
const clientsDir = "testdata/clients"

// nodeClients returns a directory holding testdata/clients with its npm
// packages installed: testdata/clients itself when CI installed them, else
// a temporary copy installed now. It skips the test when node or npm is
// missing (or, outside CI, when the install fails, e.g. offline).
func nodeClients(t *testing.T) (node, dir string) {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node not found: skipping a real-client test (install Node.js and run `npm ci --prefix httpapi/testdata/clients`)")
	}
	if clientsInstalled(t, clientsDir) {
		return node, clientsDir
	}
	npm, err := exec.LookPath("npm")
	if err != nil {
		t.Skip("npm not found: skipping a real-client test (run `npm ci --prefix httpapi/testdata/clients`)")
	}
	dir = t.TempDir()
	scripts, err := filepath.Glob(filepath.Join(clientsDir, "*.js"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range append([]string{"package.json", "package-lock.json"}, scripts...) {
		f = filepath.Base(f)
		b, err := os.ReadFile(filepath.Join(clientsDir, f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, npm, "ci", "--no-audit", "--no-fund")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("npm ci: %v\n%s", err, out)
		}
		t.Skipf("npm ci failed (offline?): skipping a real-client test: %v\n%s", err, out)
	}
	return node, dir
}

// clientsInstalled reports whether every package of dir/package.json is
// installed under dir/node_modules.
func clientsInstalled(t *testing.T, dir string) bool {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "package.json"))
	if err != nil {
		t.Fatal(err)
	}
	var pkg struct {
		Dependencies map[string]string `json:"dependencies"`
	}
	if err := json.Unmarshal(b, &pkg); err != nil {
		t.Fatal(err)
	}
	for name := range pkg.Dependencies {
		if _, err := os.Stat(filepath.Join(dir, "node_modules", filepath.FromSlash(name), "package.json")); err != nil {
			return false
		}
	}
	return true
}

// runNode runs a client script of dir with args and returns its output,
// failing the test when it exits non-zero.
func runNode(t *testing.T, node, dir string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("node %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// TestPinoLogflare runs a Node program logging through pino and the real
// pino-logflare package (npm), with both its transport and its write
// stream, against the server; then checks what was stored: messages,
// metadata (pino fields, context, level) and millisecond timestamps.
func TestPinoLogflare(t *testing.T) {
	node, dir := nodeClients(t)
	ts := startServer(t, serverConfig{})
	viaTransport, viaStream := ts.source("deno-relay-logs"), ts.source("deno-subhosting-events")

	before := time.Now().UnixMilli()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "pino.js", ts.base, pubKey, viaTransport.Token, viaStream.Token)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("node pino.js: %v\n%s", err, out)
	}
	after := time.Now().UnixMilli()

	for _, src := range []string{viaTransport.Name, viaStream.Name} {
		t.Run(src, func(t *testing.T) {
			evs := ts.events(src)
			if src == viaTransport.Name {
				evs = dropClientResend(t, evs)
			}
			if len(evs) != 3 {
				t.Fatalf("%d events stored, want 3: %v\nclient output:\n%s", len(evs), evs, out)
			}
			checkPinoEvents(t, evs, before, after)
		})
	}
}

// dropClientResend removes one copy of the last event when it was stored
// twice: pino-logflare 0.5.2's transport sends a batch whose request is
// still in flight when it closes a second time (its close hook does not
// wait for the send), and pino.js's pause before closing cannot cover a
// loaded machine. Only an exact copy (message, time, metadata) of the
// newest event is taken for that resend; anything else stays and fails
// the count.
func dropClientResend(t *testing.T, evs []map[string]any) []map[string]any {
	t.Helper()
	if len(evs) != 4 {
		return evs
	}
	key := func(e map[string]any) string {
		c := map[string]any{}
		for k, v := range e {
			if k != "id" {
				c[k] = v
			}
		}
		b, _ := json.Marshal(c)
		return string(b)
	}
	newest := 0
	for i, e := range evs {
		if e["timestamp"].(float64) > evs[newest]["timestamp"].(float64) {
			newest = i
		}
	}
	for i, e := range evs {
		if i != newest && key(e) == key(evs[newest]) {
			t.Logf("pino-logflare sent its last batch twice (a known client bug): one copy of %q left out", e["event_message"])
			return append(evs[:i:i], evs[i+1:]...)
		}
	}
	return evs
}

func checkPinoEvents(t *testing.T, evs []map[string]any, before, after int64) {
	t.Helper()
	byMsg := map[string]map[string]any{}
	for _, e := range evs {
		msg, _ := e["event_message"].(string)
		byMsg[msg] = e
		us, _ := e["timestamp"].(float64)
		ms := int64(us) / 1000
		if int64(us)%1000 != 0 || ms < before || ms > after {
			t.Errorf("%q: timestamp %v is not pino's millisecond time in [%d, %d]", msg, us, before, after)
		}
	}
	want := map[string]map[string]any{
		"hello from pino": {"metadata.level": "info", "metadata.user.id": "u-1", "metadata.user.plan": "pro", "metadata.request_id": "r-1"},
		"payment failed":  {"metadata.level": "error", "metadata.code": float64(42), "metadata.retry": false},
		"low stock":       {"metadata.level": "warning"},
	}
	for msg, fields := range want {
		e := byMsg[msg]
		if e == nil {
			t.Fatalf("no event %q in %v", msg, evs)
		}
		fields["metadata.context.host"] = "web-1"
		fields["metadata.context.service"] = "checkout"
		fields["metadata.context.pid"] = float64(4242)
		for path, v := range fields {
			if got := at(e, path); got != v {
				t.Errorf("%q: %s = %#v, want %#v", msg, path, got, v)
			}
		}
		if at(e, "message") != nil || at(e, "metadata.msg") != nil {
			t.Errorf("%q: message kept as a field: %v", msg, e)
		}
	}
}
