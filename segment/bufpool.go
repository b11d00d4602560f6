package segment

import (
	"math/bits"
	"runtime"
	"sync"
)

// Buffers for the bytes of units: what is read from the file, and the
// decompressed pages a read does not keep in the cache. They come from
// free lists of a few size classes and go back once decoded, so that a
// scan allocates (and the collector clears and tracks) no page-sized
// buffer per page. Unlike a sync.Pool, a free list survives garbage
// collections, which come often near the memory limit. A buffer goes back
// only when nothing refers to it any more: page decoders copy the values
// they return, and pages kept by the cache or dictionaries (whose entries
// are aliased) never go back.
const (
	minPoolShift = 12 // 4 KiB: smaller buffers come from the allocator
	maxPoolShift = 23 // 8 MiB: larger ones too (rare: pages are cut far below)
	// freeListBytes bounds the bytes one size class keeps free.
	freeListBytes = 4 << 20
)

type freeList struct {
	mu   sync.Mutex
	bufs [][]byte
	max  int // buffers kept at most
}

var freeLists [maxPoolShift - minPoolShift + 1]freeList

func init() {
	for c := range freeLists {
		// At least a few per reading goroutine, at most freeListBytes.
		freeLists[c].max = max(2, min(2*runtime.GOMAXPROCS(0)+2, freeListBytes>>(c+minPoolShift)))
	}
}

// poolClass returns the size class of buffers of at least n bytes, or -1.
func poolClass(n int) int {
	if n > 1<<maxPoolShift {
		return -1
	}
	shift := minPoolShift
	if n > 1 {
		shift = max(bits.Len(uint(n-1)), minPoolShift)
	}
	return shift - minPoolShift
}

// getBuf returns a buffer of length n (contents undefined).
func getBuf(n int) []byte {
	c := poolClass(n)
	if c < 0 {
		return make([]byte, n)
	}
	l := &freeLists[c]
	l.mu.Lock()
	if k := len(l.bufs); k > 0 {
		b := l.bufs[k-1]
		l.bufs[k-1] = nil
		l.bufs = l.bufs[:k-1]
		l.mu.Unlock()
		return b[:n]
	}
	l.mu.Unlock()
	return make([]byte, n, 1<<(c+minPoolShift))
}

// putBuf gives back a buffer from getBuf that nothing refers to any more.
func putBuf(b []byte) {
	c := poolClass(cap(b))
	if c < 0 || cap(b) != 1<<(c+minPoolShift) {
		return // not one of ours
	}
	l := &freeLists[c]
	l.mu.Lock()
	if len(l.bufs) < l.max {
		l.bufs = append(l.bufs, b[:0])
	}
	l.mu.Unlock()
}
