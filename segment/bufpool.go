package segment

import (
	"math/bits"
	"sync"
	"unsafe"
)

// Buffers for the bytes of units: what is read from the file, and the
// decompressed pages a read does not keep in the cache. They come from
// pools of a few size classes and go back once decoded, so that a scan
// allocates (and the collector clears and tracks) no page-sized buffer per
// page. A buffer goes back only when nothing refers to it any more: page
// decoders copy the values they return, and pages kept by the cache or
// dictionaries (whose entries are aliased) never go back.
const (
	minPoolShift = 12 // 4 KiB: smaller buffers come from the allocator
	maxPoolShift = 23 // 8 MiB: larger ones too (rare: pages are cut far below)
)

// bufPools hold the first byte of each free buffer (a pointer: putting it
// in a pool allocates nothing); the class gives its capacity.
var bufPools [maxPoolShift - minPoolShift + 1]sync.Pool // of *byte

// poolClass returns the pool of buffers of at least n bytes, or -1.
func poolClass(n int) int {
	if n > 1<<maxPoolShift {
		return -1
	}
	shift := max(bits.Len(uint(n-1)), minPoolShift)
	if n <= 1 {
		shift = minPoolShift
	}
	return shift - minPoolShift
}

// getBuf returns a buffer of length n (contents undefined).
func getBuf(n int) []byte {
	c := poolClass(n)
	if c < 0 {
		return make([]byte, n)
	}
	if p, ok := bufPools[c].Get().(*byte); ok {
		return unsafe.Slice(p, 1<<(c+minPoolShift))[:n]
	}
	return make([]byte, n, 1<<(c+minPoolShift))
}

// putBuf gives back a buffer from getBuf that nothing refers to any more.
func putBuf(b []byte) {
	c := poolClass(cap(b))
	if c < 0 || cap(b) != 1<<(c+minPoolShift) {
		return // not one of ours
	}
	bufPools[c].Put(unsafe.SliceData(b))
}
