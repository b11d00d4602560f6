//go:build linux

package event

import (
	"syscall"
	"testing"
)

// threadCPU returns the CPU time of the calling thread, in nanoseconds.
func threadCPU(b *testing.B) int64 {
	var ru syscall.Rusage
	const rusageThread = 1 // RUSAGE_THREAD
	if err := syscall.Getrusage(rusageThread, &ru); err != nil {
		b.Skipf("getrusage: %v", err)
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
