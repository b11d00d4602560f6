package bench

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// child is a server process the benchmark started: its log lines are
// scanned for what start-up reports (an address), the last ones kept for
// error messages.
type child struct {
	name   string
	cmd    *exec.Cmd
	exited chan struct{}
	err    error // the process's exit status, once exited is closed
	tail   *tailBuffer
}

// startChild starts cmd with its stderr (and stdout, when it shares the
// pipe) scanned line by line: each line goes to log (if set), to the tail,
// and to watch, which reports whether start-up is complete. startChild
// returns once watch said so, or fails when the process exits, timeout
// passes or ctx ends first.
func startChild(ctx context.Context, name string, cmd *exec.Cmd, log io.Writer, timeout time.Duration, watch func(line string) bool) (*child, error) {
	pipe, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	cmd.Stdout = cmd.Stderr // VictoriaLogs logs to stderr, but keep any stdout too
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", cmd.Path, err)
	}
	c := &child{name: name, cmd: cmd, exited: make(chan struct{}), tail: &tailBuffer{max: 40}}
	ready := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(pipe)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		done := false
		for sc.Scan() {
			line := sc.Text()
			c.tail.add(line)
			if log != nil {
				fmt.Fprintln(log, line)
			}
			if !done && watch(line) {
				done = true
				close(ready)
			}
		}
		// Drain whatever is left so the child never blocks on a full pipe.
		_, _ = io.Copy(io.Discard, pipe)
	}()
	go func() {
		c.err = cmd.Wait()
		close(c.exited)
	}()
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	select {
	case <-ready:
		return c, nil
	case <-c.exited:
		return nil, fmt.Errorf("%s exited during start-up (%v):\n%s", name, c.err, c.tail.String())
	case <-timer.C:
		_ = c.kill()
		return nil, fmt.Errorf("%s did not start within %s:\n%s", name, timeout, c.tail.String())
	case <-ctx.Done():
		_ = c.kill()
		return nil, ctx.Err()
	}
}

// PID returns the process id.
func (c *child) PID() int { return c.cmd.Process.Pid }

// PeakRSS returns the process's peak resident memory so far, in bytes.
func (c *child) PeakRSS() (int64, error) { return PeakRSS(c.PID()) }

// CPU returns the CPU time (user and system) the process has used so far.
func (c *child) CPU() (time.Duration, error) { return ProcessCPU(c.PID()) }

// TotalCPU returns the CPU time of the whole life of a process that has
// exited (from its rusage), or an error while it runs.
func (c *child) TotalCPU() (time.Duration, error) {
	select {
	case <-c.exited:
	default:
		return 0, errors.New(c.name + " is still running")
	}
	st := c.cmd.ProcessState
	if st == nil {
		return 0, errors.New(c.name + ": no exit state")
	}
	return st.UserTime() + st.SystemTime(), nil
}

// Stop sends SIGTERM and waits for the process to drain and flush; past
// timeout it is killed. It returns the process's exit error, if any.
func (c *child) Stop(timeout time.Duration) error {
	select {
	case <-c.exited:
		return c.exitErr()
	default:
	}
	if err := c.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		return err
	}
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case <-c.exited:
		return c.exitErr()
	case <-t.C:
		_ = c.kill()
		return fmt.Errorf("%s did not stop within %s; killed", c.name, timeout)
	}
}

func (c *child) kill() error {
	err := c.cmd.Process.Kill()
	<-c.exited
	return err
}

func (c *child) exitErr() error {
	if c.err != nil {
		return fmt.Errorf("%s: %w\n%s", c.name, c.err, c.tail.String())
	}
	return nil
}

// clockTicks is USER_HZ, the unit of /proc/<pid>/stat's CPU times: 100 on
// every Linux architecture Go supports (the kernel fixes it for user
// space whatever its internal HZ).
const clockTicks = 100

// ProcessCPU returns the CPU time (utime + stime) process pid has used so
// far, from /proc/<pid>/stat (Linux only).
func ProcessCPU(pid int) (time.Duration, error) {
	path := "/proc/" + strconv.Itoa(pid) + "/stat"
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	return parseProcStatCPU(string(b))
}

// parseProcStatCPU reads utime and stime (fields 14 and 15) of a
// /proc/<pid>/stat line. The command name (field 2) is in parentheses and
// may contain spaces and parentheses, so fields are counted from the last
// ')'.
func parseProcStatCPU(stat string) (time.Duration, error) {
	i := strings.LastIndexByte(stat, ')')
	if i < 0 {
		return 0, fmt.Errorf("/proc stat: no command name in %q", snippet([]byte(stat)))
	}
	f := strings.Fields(stat[i+1:])
	// f[0] is field 3 (state), so field n is f[n-3].
	if len(f) < 13 {
		return 0, fmt.Errorf("/proc stat: %d fields after the command name", len(f))
	}
	utime, err1 := strconv.ParseInt(f[11], 10, 64)
	stime, err2 := strconv.ParseInt(f[12], 10, 64)
	if err := errors.Join(err1, err2); err != nil || utime < 0 || stime < 0 {
		return 0, fmt.Errorf("/proc stat: utime %q stime %q", f[11], f[12])
	}
	return time.Duration(utime+stime) * time.Second / clockTicks, nil
}

// selfCPU returns the CPU time this process has used so far (rusage).
func selfCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
