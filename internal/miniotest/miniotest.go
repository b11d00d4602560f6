// Package miniotest runs a MinIO server on loopback for integration tests
// of the object store: it finds the minio binary (installing it with `go
// install github.com/minio/minio@latest` when missing, into GOPATH/bin,
// where later runs find it), starts it on a free port over a temporary
// directory, and stops it by its PID.
//
// When MinIO cannot be had, tests skip, except under CI (CI set and not
// "false" or "0"), where they fail: .ci/run installs it before the tests.
package miniotest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// Credentials of every server this package starts.
const (
	AccessKey = "sediment-test"
	SecretKey = "sediment-test-secret"
)

// Server is a running MinIO.
type Server struct {
	// Endpoint is "127.0.0.1:port", plain HTTP.
	Endpoint string
	dir      string
	bin      string
	mu       sync.Mutex
	cmd      *exec.Cmd
	exited   chan struct{}
	logPath  string
}

var (
	binOnce sync.Once
	binPath string
	binErr  error
)

// inCI reports whether tests must fail rather than skip when MinIO is
// missing.
func inCI() bool {
	v := strings.ToLower(os.Getenv("CI"))
	return v != "" && v != "false" && v != "0"
}

// Binary returns the path of the minio binary, installing it if needed
// (once per process). MINIO_BIN names one explicitly.
func Binary() (string, error) {
	binOnce.Do(func() { binPath, binErr = findOrInstall() })
	return binPath, binErr
}

func findOrInstall() (string, error) {
	if p := os.Getenv("MINIO_BIN"); p != "" {
		return p, nil
	}
	if p, err := exec.LookPath("minio"); err == nil {
		return p, nil
	}
	gobin, err := goBinDir()
	if err != nil {
		return "", err
	}
	p := filepath.Join(gobin, "minio")
	if _, err := os.Stat(p); err == nil {
		return p, nil
	}
	// Building MinIO takes minutes on a small machine: .ci/run does it
	// before the tests, so this is for a developer's first run.
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", "install", "github.com/minio/minio@latest")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go install github.com/minio/minio@latest: %v\n%s", err, tail(out, 2000))
	}
	if _, err := os.Stat(p); err != nil {
		return "", fmt.Errorf("minio installed but not at %s: %w", p, err)
	}
	return p, nil
}

func goBinDir() (string, error) {
	out, err := exec.Command("go", "env", "GOBIN", "GOPATH").Output()
	if err != nil {
		return "", fmt.Errorf("go env: %w", err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) >= 1 && strings.TrimSpace(lines[0]) != "" {
		return strings.TrimSpace(lines[0]), nil
	}
	if len(lines) >= 2 {
		return filepath.Join(strings.Split(strings.TrimSpace(lines[1]), string(os.PathListSeparator))[0], "bin"), nil
	}
	return "", fmt.Errorf("go env printed %q", out)
}

func tail(b []byte, n int) []byte {
	if len(b) > n {
		return b[len(b)-n:]
	}
	return b
}

// NoBinaryError says MinIO could not be found or installed.
type NoBinaryError struct{ Err error }

func (e *NoBinaryError) Error() string { return "MinIO not available: " + e.Err.Error() }

// Launch starts a MinIO server keeping its data and log in dir; the
// caller stops it. An error is a *NoBinaryError when MinIO is missing.
func Launch(dir string) (*Server, error) {
	bin, err := Binary()
	if err != nil {
		return nil, &NoBinaryError{err}
	}
	s := &Server{dir: dir, bin: bin, logPath: filepath.Join(dir, "minio.log")}
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	s.Endpoint = fmt.Sprintf("127.0.0.1:%d", port)
	if err := s.start(); err != nil {
		return nil, err
	}
	return s, nil
}

// Start runs a MinIO server for the test and stops it when the test ends
// (Require says what happens when it cannot).
func Start(t testing.TB) *Server {
	t.Helper()
	s, err := Launch(t.TempDir())
	Require(t, err)
	t.Cleanup(s.Stop)
	return s
}

// Require ends the test when err (from Launch) is not nil: it skips when
// MinIO is missing, except under CI where it fails, and fails on any other
// error.
func Require(t testing.TB, err error) {
	t.Helper()
	if err == nil {
		return
	}
	var nb *NoBinaryError
	if errors.As(err, &nb) && !inCI() {
		t.Skip(err)
	}
	if errors.As(err, &nb) {
		t.Fatalf("MinIO is needed under CI (.ci/run installs it): %v", err)
	}
	t.Fatal(err)
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func (s *Server) start() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	console, err := freePort()
	if err != nil {
		return err
	}
	logf, err := os.OpenFile(s.logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer logf.Close()
	cmd := exec.Command(s.bin, "server", "--quiet", "--address", s.Endpoint,
		"--console-address", fmt.Sprintf("127.0.0.1:%d", console), filepath.Join(s.dir, "data"))
	cmd.Env = append(os.Environ(),
		"MINIO_ROOT_USER="+AccessKey, "MINIO_ROOT_PASSWORD="+SecretKey,
		"MINIO_BROWSER=off", "MINIO_UPDATE=off", "MINIO_CI_CD=1")
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start minio: %w", err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	s.cmd, s.exited = cmd, exited
	deadline := time.Now().Add(60 * time.Second)
	for {
		select {
		case <-exited:
			log, _ := os.ReadFile(s.logPath)
			return fmt.Errorf("minio exited at start:\n%s", tail(log, 4000))
		default:
		}
		if ready(s.Endpoint) {
			return nil
		}
		if time.Now().After(deadline) {
			s.killLocked()
			log, _ := os.ReadFile(s.logPath)
			return fmt.Errorf("minio not ready after 60s:\n%s", tail(log, 4000))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func ready(endpoint string) bool {
	c := http.Client{Timeout: time.Second}
	resp, err := c.Get("http://" + endpoint + "/minio/health/cluster")
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

// Stop kills the server by its PID and waits for it to exit; its data
// stays for Restart. Stopping a stopped server does nothing.
func (s *Server) Stop() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.killLocked()
}

func (s *Server) killLocked() {
	if s.cmd == nil {
		return
	}
	s.cmd.Process.Kill()
	<-s.exited
	s.cmd = nil
}

// Restart starts a stopped server again on the same address and data.
func (s *Server) Restart() error { return s.start() }

// Log returns what the server printed, for a failing test's message.
func (s *Server) Log() string {
	b, _ := os.ReadFile(s.logPath)
	return string(tail(b, 4000))
}
