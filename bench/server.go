package bench

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"
)

// ServerOptions say how to start a server as a child process.
type ServerOptions struct {
	// Binary is the sediment executable (cmd/sediment passes its own).
	Binary  string
	DataDir string
	// Args are extra `serve` flags, e.g. --ack-mode buffered.
	Args []string
	// Log receives the server's log (default: kept only for error messages).
	Log io.Writer
	// StartTimeout bounds start-up, which replays the write-ahead logs of a
	// large data directory (default 5 minutes).
	StartTimeout time.Duration
	// Debug starts the server's debug listener (--debug-listen) on a free
	// loopback port, for its runtime metrics (Server.RuntimeMetrics).
	Debug bool
	// PublicKey and PrivateKey are the access tokens the server is given
	// (default new random ones): servers sharing a catalog share them.
	PublicKey, PrivateKey string
}

// Server is a `sediment serve` child process with the keys it was given.
type Server struct {
	*child
	URL        string // http://127.0.0.1:<port>
	PublicKey  string // may ingest
	PrivateKey string // may do everything
	DataDir    string
	// DebugURL is the debug listener's base URL (with ServerOptions.Debug).
	DebugURL string
}

// StartServer runs `<Binary> serve --supabase` on a free loopback port over
// DataDir, with fresh public and private access tokens, and returns once
// it reports that it is listening (it logs that after Supabase seeding,
// so the server is ready) and, with Debug, that its debug listener is up.
// The tokens replace any that earlier runs set on the same data directory.
func StartServer(ctx context.Context, o ServerOptions) (*Server, error) {
	if o.StartTimeout <= 0 {
		o.StartTimeout = 5 * time.Minute
	}
	pub, priv := o.PublicKey, o.PrivateKey
	var err error
	if pub == "" {
		if pub, err = newKey(); err != nil {
			return nil, err
		}
	}
	if priv == "" {
		if priv, err = newKey(); err != nil {
			return nil, err
		}
	}
	args := []string{"serve", "--listen", "127.0.0.1:0", "--data-dir", o.DataDir, "--supabase", "--log-level", "info"}
	if o.Debug {
		args = append(args, "--debug-listen", "127.0.0.1:0")
	}
	cmd := exec.Command(o.Binary, append(args, o.Args...)...)
	cmd.Env = append(serverEnv(os.Environ()),
		"LOGFLARE_PUBLIC_ACCESS_TOKEN="+pub,
		"LOGFLARE_PRIVATE_ACCESS_TOKEN="+priv,
	)
	s := &Server{PublicKey: pub, PrivateKey: priv, DataDir: o.DataDir}
	// Lines are scanned by one goroutine, one at a time, before start-up
	// returns: the fields need no lock.
	c, err := startChild(ctx, "sediment serve", cmd, o.Log, o.StartTimeout, func(line string) bool {
		if a, ok := listeningAddr(line, "listening"); ok && s.URL == "" {
			s.URL = "http://" + a
		}
		if a, ok := listeningAddr(line, `"debug listener"`); ok && s.DebugURL == "" {
			s.DebugURL = "http://" + a
		}
		return s.URL != "" && (!o.Debug || s.DebugURL != "")
	})
	if err != nil {
		return nil, err
	}
	s.child = c
	return s, nil
}

// serverEnv drops the variables that would override the server's
// configuration from the environment passed on.
func serverEnv(env []string) []string {
	out := env[:0:0]
	for _, kv := range env {
		if strings.HasPrefix(kv, "LOGFLARE_") || strings.HasPrefix(kv, "PHX_HTTP_PORT=") || strings.HasPrefix(kv, "SEDIMENT_") {
			continue
		}
		out = append(out, kv)
	}
	return out
}

// listeningAddr finds the address in a server log line with message msg
// (slog's text form: msg=listening addr=127.0.0.1:4000 ...; a message
// with spaces is quoted).
func listeningAddr(line, msg string) (string, bool) {
	if !strings.Contains(line, "msg="+msg+" ") {
		return "", false
	}
	for _, f := range strings.Fields(line) {
		if a, ok := strings.CutPrefix(f, "addr="); ok {
			return a, true
		}
	}
	return "", false
}

// Healthy reports whether the server answers /health.
func (s *Server) Healthy(ctx context.Context) bool {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.URL+"/health", nil)
	if err != nil {
		return false
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return false
	}
	res.Body.Close()
	return res.StatusCode == http.StatusOK
}

// PeakRSS returns the peak resident set size (VmHWM) of process pid, in
// bytes, from /proc (Linux only).
func PeakRSS(pid int) (int64, error) {
	path := "/proc/self/status"
	if pid > 0 {
		path = "/proc/" + strconv.Itoa(pid) + "/status"
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			if err != nil {
				return 0, fmt.Errorf("%s: VmHWM %q", path, v)
			}
			return kb << 10, nil
		}
	}
	return 0, errors.New(path + ": no VmHWM")
}

func newKey() (string, error) {
	b := make([]byte, 24)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return "bench-" + hex.EncodeToString(b), nil
}

// tailBuffer keeps the last lines of a log.
type tailBuffer struct {
	mu    sync.Mutex
	max   int
	lines []string
}

func (t *tailBuffer) add(line string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.lines = append(t.lines, line)
	if len(t.lines) > t.max {
		t.lines = t.lines[len(t.lines)-t.max:]
	}
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return strings.Join(t.lines, "\n")
}
