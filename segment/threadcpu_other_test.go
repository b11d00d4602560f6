//go:build !linux

package segment

import "time"

// threadCPU is 0 where the thread's CPU time is not at hand: benchmarks
// then report no cpu-ns/op worth reading.
func threadCPU() time.Duration { return 0 }
