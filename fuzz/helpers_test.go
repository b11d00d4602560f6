package fuzz

import (
	"runtime"
	"testing"
	"time"
)

// fixedNow is the clock every target normalises and queries with.
var fixedNow = time.Date(2025, 7, 10, 12, 0, 0, 0, time.UTC)

// maxInput skips inputs larger than this: they only exercise size limits,
// which the packages' own tests cover, and slow the fuzzer down.
const maxInput = 1 << 20

// allocLimit is how many bytes one input of n bytes may make a decoder
// allocate: a generous fixed allowance plus a multiple of the input. A
// decoder that trusts a length or count from the input allocates far more
// (a claimed 1 GiB unit, a billion-entry table).
func allocLimit(n int) uint64 { return 64<<20 + 64*uint64(n) }

// checkAlloc runs fn and fails if it allocated more than limit bytes. The
// fuzzer runs one input at a time per process, so TotalAlloc's growth is
// fn's (plus noise far below the limit).
func checkAlloc(t *testing.T, limit uint64, fn func()) {
	t.Helper()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	fn()
	runtime.ReadMemStats(&after)
	if got := after.TotalAlloc - before.TotalAlloc; got > limit {
		t.Fatalf("allocated %d bytes for one input (limit %d)", got, limit)
	}
}

// idSeq returns an id generator that never consults randomness, so that a
// crasher replays exactly.
func idSeq() func() string { return func() string { return "00000000-0000-4000-8000-000000000001" } }
