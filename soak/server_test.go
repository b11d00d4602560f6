//go:build soak && linux

package soak

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// buildSediment builds the sediment binary of this module into dir.
func buildSediment(dir string) (string, error) {
	root, err := filepath.Abs("..")
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "sediment")
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/sediment")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build ./cmd/sediment: %v\n%s", err, out)
	}
	return bin, nil
}

// serveFlags are the flags `sediment serve --help` lists, with their help
// text, so that the harness uses only what the binary under test has
// (flags are being added while this test exists).
type serveFlags map[string]string

var (
	flagLine   = regexp.MustCompile(`^ {1,4}--?([a-z0-9-]+)(\s|$)`)
	defaultRE  = regexp.MustCompile(`\(default "?([^":)][^")]*)"?\)`)
	listenAddr = regexp.MustCompile(`msg=listening addr=(\S+)`)
	logKV      = regexp.MustCompile(`\b([a-z_]+)=("(?:[^"\\]|\\.)*"|\S+)`)
	goroutine  = regexp.MustCompile(`^goroutine \d+ \[`)
)

func readServeFlags(bin string) (serveFlags, error) {
	out, err := exec.Command(bin, "serve", "--help").CombinedOutput()
	if err != nil {
		return nil, fmt.Errorf("sediment serve --help: %v\n%s", err, out)
	}
	flags := parseServeHelp(string(out))
	if len(flags) == 0 {
		return nil, fmt.Errorf("sediment serve --help lists no flags:\n%s", out)
	}
	return flags, nil
}

// parseServeHelp reads the flags and their descriptions from the output
// of `sediment serve --help`.
func parseServeHelp(out string) serveFlags {
	flags := serveFlags{}
	name := ""
	for line := range strings.SplitSeq(out, "\n") {
		if m := flagLine.FindStringSubmatch(line); m != nil {
			name = m[1]
			flags[name] = ""
			continue
		}
		// The description follows, indented deeper (Go's flag package: a
		// tab; sediment's own usage: six spaces, then an "env" line).
		if t := strings.TrimSpace(line); name != "" && t != "" && !strings.HasPrefix(t, "env ") &&
			(strings.HasPrefix(line, "    \t") || strings.HasPrefix(line, "      ")) {
			flags[name] += " " + t
		}
	}
	return flags
}

// has reports whether the binary has --name.
func (f serveFlags) has(name string) bool { _, ok := f[name]; return ok }

// defaultOf returns the default --help prints for name ("" if none): the
// last "(default X)" of its description.
func (f serveFlags) defaultOf(name string) string {
	if m := defaultRE.FindAllStringSubmatch(f[name], -1); m != nil {
		return strings.TrimSpace(m[len(m)-1][1])
	}
	return ""
}

// parseSize reads a size as the server's flags write it: 256MiB, 1GiB,
// 512KB, 1048576.
func parseSize(s string) (int64, error) {
	s = strings.TrimSpace(s)
	i := 0
	for i < len(s) && (s[i] >= '0' && s[i] <= '9' || s[i] == '.') {
		i++
	}
	v, err := strconv.ParseFloat(s[:i], 64)
	if err != nil {
		return 0, fmt.Errorf("size %q: %v", s, err)
	}
	mult := map[string]float64{"": 1, "b": 1, "k": 1 << 10, "kb": 1e3, "kib": 1 << 10, "m": 1 << 20, "mb": 1e6, "mib": 1 << 20,
		"g": 1 << 30, "gb": 1e9, "gib": 1 << 30}[strings.ToLower(strings.TrimSpace(s[i:]))]
	if mult == 0 {
		return 0, fmt.Errorf("size %q: unknown unit", s)
	}
	return int64(v * mult), nil
}

// mib formats bytes as MiB.
func mib(b int64) string { return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20)) }

// serverProc runs `sediment serve` on one data directory, one process
// (a generation) at a time: started, killed, restarted, stopped. Clients
// wait for it to be up and learn its address from it; an epoch that
// changes whenever it goes down or up lets a client tell a connection the
// harness broke (a kill) from one the server dropped.
type serverProc struct {
	bin     string
	dataDir string
	env     []string
	fails   *failures
	rss     *rssPeak
	log     *serverLog

	mu    sync.Mutex
	cur   *generation
	gens  int
	up    bool
	base  string
	epoch int64
	upCh  chan struct{} // closed while up

	// crashed receives a generation that exited without being asked to.
	crashed chan *generation
	// listenInfo is the last "listening" log line's key=value pairs.
	listenInfo atomic.Pointer[map[string]string]
}

// generation is one server process.
type generation struct {
	n        int
	args     []string
	cmd      *exec.Cmd
	expected atomic.Bool // the harness killed or stopped it
	exited   chan struct{}
	state    *os.ProcessState
	addr     chan string
	started  time.Time
}

func newServerProc(bin, dataDir string, env []string, fails *failures, rss *rssPeak, log *serverLog) *serverProc {
	return &serverProc{bin: bin, dataDir: dataDir, env: env, fails: fails, rss: rss, log: log,
		upCh: make(chan struct{}), crashed: make(chan *generation, 4)}
}

// start starts a new generation with the serve flags args, waits for it
// to answer /health with 200 and marks the server up. It returns how long
// that took.
func (s *serverProc) start(args []string) (time.Duration, error) {
	s.mu.Lock()
	if s.cur != nil && !isClosed(s.cur.exited) {
		s.mu.Unlock()
		return 0, errors.New("start: a server is running")
	}
	s.gens++
	g := &generation{n: s.gens, exited: make(chan struct{}), addr: make(chan string, 1), started: time.Now()}
	s.cur = g
	s.mu.Unlock()

	g.args = append([]string{"serve", "--listen", "127.0.0.1:0", "--data-dir", s.dataDir, "--supabase"}, args...)
	g.cmd = exec.Command(s.bin, g.args...)
	g.cmd.Env = append(os.Environ(), s.env...)
	// stdout and stderr share one pipe, read here line by line (the
	// server writes its log to stderr, a Go crash too).
	output, w, err := os.Pipe()
	if err != nil {
		return 0, err
	}
	g.cmd.Stdout, g.cmd.Stderr = w, w
	s.log.note("=== generation %d: %s %s", g.n, s.bin, strings.Join(g.args, " "))
	err = g.cmd.Start()
	w.Close()
	if err != nil {
		output.Close()
		return 0, err
	}
	go s.rss.sample(g.cmd.Process.Pid, g.exited)
	go func() {
		s.scanLog(g, output)
		output.Close()
		g.state, _ = g.cmd.Process.Wait()
		s.log.note("=== generation %d exited: %v", g.n, g.state)
		close(g.exited)
		if !g.expected.Load() {
			s.markDown()
			s.fails.add("server exited unexpectedly", "generation %d exited by itself: %v (log: %s)", g.n, g.state, s.log.path)
			s.crashed <- g
		}
	}()

	var addr string
	select {
	case addr = <-g.addr:
	case <-g.exited:
		return 0, fmt.Errorf("generation %d exited before listening: %v", g.n, g.state)
	case <-time.After(5 * time.Minute):
		return 0, fmt.Errorf("generation %d did not listen within 5 minutes", g.n)
	}
	base := "http://" + addr
	c := &http.Client{Timeout: 5 * time.Second}
	for {
		res, err := c.Get(base + "/health")
		if err == nil {
			io.Copy(io.Discard, res.Body)
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				break
			}
		}
		select {
		case <-g.exited:
			return 0, fmt.Errorf("generation %d exited before /health answered 200: %v", g.n, g.state)
		case <-time.After(50 * time.Millisecond):
		}
		if time.Since(g.started) > 5*time.Minute {
			return 0, fmt.Errorf("generation %d: /health not 200 within 5 minutes", g.n)
		}
	}
	s.markUp(base)
	return time.Since(g.started), nil
}

// scanLog copies a generation's stderr into the log, counts its levels
// and messages, records panics and stack traces, and finds the address.
func (s *serverProc) scanLog(g *generation, r io.Reader) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for sc.Scan() {
		line := sc.Text()
		s.log.line(g.n, line)
		if m := listenAddr.FindStringSubmatch(line); m != nil {
			kv := map[string]string{}
			for _, p := range logKV.FindAllStringSubmatch(line, -1) {
				kv[p[1]] = strings.Trim(p[2], `"`)
			}
			s.listenInfo.Store(&kv)
			select {
			case g.addr <- m[1]:
			default:
			}
		}
		// A Go crash prints "panic:" or "fatal error:" and goroutine
		// stacks; a recovered panic is logged with "panic" in its message
		// and its stack. Upper-case PANIC is Postgres's severity, which
		// generated events and queries carry.
		if strings.Contains(line, "panic") || strings.HasPrefix(line, "fatal error:") || goroutine.MatchString(line) {
			s.log.panicLine(g.n, line)
		}
	}
	if err := sc.Err(); err != nil {
		s.log.note("=== generation %d: reading stderr: %v", g.n, err)
		io.Copy(io.Discard, r)
	}
}

// markUp makes base the server's address and wakes waiting clients.
func (s *serverProc) markUp(base string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.up, s.base = true, base
	s.epoch++
	close(s.upCh)
}

// markDown makes clients wait; requests in flight become expected to fail.
func (s *serverProc) markDown() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.up {
		return
	}
	s.up = false
	s.epoch++
	s.upCh = make(chan struct{})
}

// waitUp waits for the server to be up and returns its address and epoch;
// ok is false when ctx ends first.
func (s *serverProc) waitUp(ctx context.Context) (base string, epoch int64, ok bool) {
	for {
		s.mu.Lock()
		if s.up {
			base, epoch = s.base, s.epoch
			s.mu.Unlock()
			return base, epoch, true
		}
		ch := s.upCh
		s.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return "", 0, false
		}
	}
}

// upNow returns the server's address and epoch without waiting; ok is
// false while it is down.
func (s *serverProc) upNow() (base string, epoch int64, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.base, s.epoch, s.up
}

// steady reports whether the server has stayed up since epoch: a request
// started then that lost its connection was dropped by the server, not by
// the harness.
func (s *serverProc) steady(epoch int64) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.up && s.epoch == epoch
}

// current returns the running generation.
func (s *serverProc) current() *generation {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cur
}

// kill sends SIGKILL to the running generation and waits for it to die.
func (s *serverProc) kill() {
	g := s.current()
	if g == nil || isClosed(g.exited) {
		return
	}
	s.markDown()
	g.expected.Store(true)
	_ = g.cmd.Process.Signal(syscall.SIGKILL)
	<-g.exited
}

// stop sends SIGTERM and waits (up to timeout, then kills); it returns the
// exit code, or an error when the process had to be killed.
func (s *serverProc) stop(timeout time.Duration) (int, error) {
	g := s.current()
	if g == nil || isClosed(g.exited) {
		return 0, errors.New("no server running")
	}
	s.markDown()
	g.expected.Store(true)
	_ = g.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-g.exited:
		return g.state.ExitCode(), nil
	case <-time.After(timeout):
		_ = g.cmd.Process.Signal(syscall.SIGKILL)
		<-g.exited
		return -1, fmt.Errorf("generation %d did not exit within %s of SIGTERM; killed", g.n, timeout)
	}
}

func isClosed(ch chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// serverLog is every generation's output in one file outside the tmpfs,
// with the levels and messages counted and panic lines kept.
type serverLog struct {
	path string
	mu   sync.Mutex
	f    *os.File
	w    *bufio.Writer

	levels   counter // level=WARN, level=ERROR, ...
	messages counter // "ERROR background task failed; ..." (WARN and ERROR only)
	panics   atomic.Int64
	panicEx  []string
}

func newServerLog(path string) (*serverLog, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	return &serverLog{path: path, f: f, w: bufio.NewWriterSize(f, 64<<10)}, nil
}

func (l *serverLog) note(format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	fmt.Fprintf(l.w, "%s %s\n", time.Now().UTC().Format(time.RFC3339Nano), fmt.Sprintf(format, args...))
	l.w.Flush()
}

func (l *serverLog) line(gen int, line string) {
	lvl, msg := "", ""
	for _, p := range logKV.FindAllStringSubmatch(line, 3) {
		switch p[1] {
		case "level":
			lvl = p[2]
		case "msg":
			msg = strings.Trim(p[2], `"`)
		}
	}
	if lvl != "" {
		l.levels.add(lvl)
		if lvl == "WARN" || lvl == "ERROR" {
			l.messages.add(lvl + " " + msg)
		}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	fmt.Fprintf(l.w, "g%d %s\n", gen, line)
	l.w.Flush() // the server logs little; a crash's last lines must be in the file
}

func (l *serverLog) panicLine(gen int, line string) {
	l.panics.Add(1)
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.panicEx) < 20 {
		if len(line) > 400 {
			line = line[:400] + "…"
		}
		l.panicEx = append(l.panicEx, fmt.Sprintf("g%d %s", gen, line))
	}
}

func (l *serverLog) panicExamples() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.panicEx...)
}

func (l *serverLog) close() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.w.Flush()
	l.f.Close()
}
