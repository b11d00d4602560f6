//go:build !linux

package event

import "testing"

// threadCPU is Linux's only: elsewhere the benchmarks that report it skip.
func threadCPU(b *testing.B) int64 {
	b.Skip("the thread's CPU time is read on Linux only")
	return 0
}
