package engine

import (
	"runtime"
	"sync"

	"github.com/sediment/sediment/internal/vec"
)

// Scratch vectors for predicates: a predicate's column is read only to
// decide rows, so the vector it is read into, and the buffer its strings
// are copied into, serve the next block's predicates too. A bounded free
// list (not a sync.Pool: collections near the memory limit come often
// enough to empty one between two blocks).
var predScratch = struct {
	mu   sync.Mutex
	free []*vec.Vector
}{}

// maxScratchBytes is the largest string buffer a free scratch vector
// keeps; larger ones go to the collector.
const maxScratchBytes = 16 << 20

func getScratch() *vec.Vector {
	predScratch.mu.Lock()
	defer predScratch.mu.Unlock()
	if n := len(predScratch.free); n > 0 {
		v := predScratch.free[n-1]
		predScratch.free[n-1] = nil
		predScratch.free = predScratch.free[:n-1]
		return v
	}
	return &vec.Vector{}
}

// putScratch gives back a scratch vector nothing refers to any more.
func putScratch(v *vec.Vector) {
	if cap(v.Bytes) > maxScratchBytes {
		return
	}
	// Keep the buffers, drop what points elsewhere (a dictionary).
	v.Dict, v.Strs, v.Elem, v.Children = nil, nil, nil, nil
	predScratch.mu.Lock()
	defer predScratch.mu.Unlock()
	if len(predScratch.free) < 2*runtime.GOMAXPROCS(0)+2 {
		predScratch.free = append(predScratch.free, v)
	}
}
