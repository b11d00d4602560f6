package bench

import (
	"bufio"
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
	"syscall"
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
}

// Server is a `sediment serve` child process with the keys it was given.
type Server struct {
	URL        string // http://127.0.0.1:<port>
	PublicKey  string // may ingest
	PrivateKey string // may do everything
	DataDir    string

	cmd    *exec.Cmd
	exited chan struct{}
	err    error // the process's exit status, once exited is closed
	tail   *tailBuffer
}

// StartServer runs `<Binary> serve --supabase` on a free loopback port over
// DataDir, with fresh public and private access tokens, and returns once
// it reports that it is listening (it logs that after Supabase seeding,
// so the server is ready). The tokens replace any that earlier runs set
// on the same data directory.
func StartServer(ctx context.Context, o ServerOptions) (*Server, error) {
	if o.StartTimeout <= 0 {
		o.StartTimeout = 5 * time.Minute
	}
	pub, err := newKey()
	if err != nil {
		return nil, err
	}
	priv, err := newKey()
	if err != nil {
		return nil, err
	}
	args := append([]string{"serve", "--listen", "127.0.0.1:0", "--data-dir", o.DataDir, "--supabase", "--log-level", "info"}, o.Args...)
	cmd := exec.Command(o.Binary, args...)
	cmd.Env = append(serverEnv(os.Environ()),
		"LOGFLARE_PUBLIC_ACCESS_TOKEN="+pub,
		"LOGFLARE_PRIVATE_ACCESS_TOKEN="+priv,
	)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", o.Binary, err)
	}
	s := &Server{PublicKey: pub, PrivateKey: priv, DataDir: o.DataDir, cmd: cmd, exited: make(chan struct{}), tail: &tailBuffer{max: 40}}
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		sent := false
		for sc.Scan() {
			line := sc.Text()
			s.tail.add(line)
			if o.Log != nil {
				fmt.Fprintln(o.Log, line)
			}
			if !sent {
				if a, ok := listeningAddr(line); ok {
					addr <- a
					sent = true
				}
			}
		}
		// Drain whatever is left so the child never blocks on a full pipe.
		_, _ = io.Copy(io.Discard, stderr)
	}()
	go func() {
		s.err = cmd.Wait()
		close(s.exited)
	}()

	timer := time.NewTimer(o.StartTimeout)
	defer timer.Stop()
	select {
	case a := <-addr:
		s.URL = "http://" + a
		return s, nil
	case <-s.exited:
		return nil, fmt.Errorf("server exited during start-up (%v):\n%s", s.err, s.tail.String())
	case <-timer.C:
		_ = s.kill()
		return nil, fmt.Errorf("server did not start within %s:\n%s", o.StartTimeout, s.tail.String())
	case <-ctx.Done():
		_ = s.kill()
		return nil, ctx.Err()
	}
}

// serverEnv drops the variables that would override the server's
// configuration from the environment passed on.
func serverEnv(env []string) []string {
	out := env[:0:0]
	for _, kv := range env {
		if strings.HasPrefix(kv, "LOGFLARE_") || strings.HasPrefix(kv, "PHX_HTTP_PORT=") {
			continue
		}
		out = append(out, kv)
	}
	return out
}

// listeningAddr finds the address in the server's "listening" log line
// (slog's text form: msg=listening addr=127.0.0.1:4000 ...).
func listeningAddr(line string) (string, bool) {
	if !strings.Contains(line, "msg=listening") {
		return "", false
	}
	for _, f := range strings.Fields(line) {
		if a, ok := strings.CutPrefix(f, "addr="); ok {
			return a, true
		}
	}
	return "", false
}

// PID returns the server's process id.
func (s *Server) PID() int { return s.cmd.Process.Pid }

// PeakRSS returns the server's peak resident memory so far, in bytes.
func (s *Server) PeakRSS() (int64, error) { return PeakRSS(s.PID()) }

// Stop sends SIGTERM and waits for the server to drain and flush; past
// timeout it is killed. It returns the server's exit error, if any.
func (s *Server) Stop(timeout time.Duration) error {
	select {
	case <-s.exited:
		return s.exitErr()
	default:
	}
	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		return err
	}
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case <-s.exited:
		return s.exitErr()
	case <-t.C:
		_ = s.kill()
		return fmt.Errorf("server did not stop within %s; killed", timeout)
	}
}

func (s *Server) kill() error {
	err := s.cmd.Process.Kill()
	<-s.exited
	return err
}

func (s *Server) exitErr() error {
	if s.err != nil {
		return fmt.Errorf("server: %w\n%s", s.err, s.tail.String())
	}
	return nil
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

// ProcessCPU returns the CPU time (user and system) process pid has used so
// far, from /proc/<pid>/stat (Linux).
func ProcessCPU(pid int) (time.Duration, error) {
	path := "/proc/" + strconv.Itoa(pid) + "/stat"
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	// The command name (field 2) is in parentheses and may hold spaces:
	// the fields after its closing parenthesis are fixed.
	i := strings.LastIndexByte(string(b), ')')
	if i < 0 {
		return 0, errors.New(path + ": no command name")
	}
	f := strings.Fields(string(b[i+1:]))
	// f[0] is field 3 (state); utime and stime are fields 14 and 15.
	if len(f) < 13 {
		return 0, errors.New(path + ": too few fields")
	}
	var ticks int64
	for _, s := range f[11:13] {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("%s: %w", path, err)
		}
		ticks += n
	}
	// Linux reports in USER_HZ, 100 per second on every platform it runs.
	return time.Duration(ticks) * (time.Second / 100), nil
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
