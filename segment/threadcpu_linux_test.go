package segment

import (
	"syscall"
	"time"
)

// rusageThread is Linux's RUSAGE_THREAD (not in package syscall).
const rusageThread = 1

// threadCPU returns the CPU time the calling OS thread has used. A
// benchmark that locks its goroutine to its thread reports it as
// cpu-ns/op: on a machine shared with other work, wall time measures the
// others too.
func threadCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(rusageThread, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
