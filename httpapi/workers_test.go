package httpapi

import (
	"testing"

	"github.com/sediment/sediment/httpapi/ingest"
)

// TestWorkerPoolBudget: idle workers are kept while their buffers fit the
// budget (and up to idleWorkers of them), handed out again, and dropped by
// release.
func TestWorkerPoolBudget(t *testing.T) {
	made := 0
	p := newWorkerPool(1000, func() *ingestWorker {
		made++
		return newIngestWorker(ingest.DefaultMaxBodyBytes)
	})
	withBytes := func(n int) *ingestWorker {
		w := p.get()
		w.msg = make([]byte, 0, n)
		return w
	}
	a, b, c := withBytes(600), withBytes(300), withBytes(300)
	p.put(a)
	p.put(b)
	p.put(c) // 600+300+300 > 1000: dropped
	if len(p.idle) != 2 || p.idleBytes != 900 {
		t.Fatalf("%d idle workers holding %d bytes, want 2 holding 900", len(p.idle), p.idleBytes)
	}
	if got := p.get(); got != b {
		t.Fatal("the last worker returned is not the first handed out")
	}
	if got := p.get(); got != a || p.idleBytes != 0 {
		t.Fatalf("second get: %p (a %p), %d bytes idle", got, a, p.idleBytes)
	}
	var many []*ingestWorker
	for range idleWorkers + 2 {
		many = append(many, withBytes(1))
	}
	for _, w := range many {
		p.put(w)
	}
	if len(p.idle) != idleWorkers {
		t.Fatalf("%d idle workers, want at most %d", len(p.idle), idleWorkers)
	}
	p.release()
	before := made
	p.get()
	if len(p.idle) != 0 || made != before+1 {
		t.Fatal("release kept idle workers")
	}
}
