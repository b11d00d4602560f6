package httpapi

import "sync"

// workerPool keeps ingest workers between requests. A worker's buffers
// grow to the largest request it served (the encoded events of a 12 MB
// body are about 10 MB), so losing them costs that much allocation and
// copying again: a sync.Pool would, since the collector empties it, and
// under a memory limit a busy server collects several times a second. The
// pool keeps up to idleWorkers idle workers whose buffers hold at most
// budget bytes together (the server's in-flight body budget: the bodies
// those buffers were sized for), until Release, which a server gone idle
// calls to give their memory back; other workers are dropped on return.
type workerPool struct {
	fresh  func() *ingestWorker
	budget int

	mu        sync.Mutex
	idle      []*ingestWorker
	idleBytes int
}

// idleWorkers is how many idle workers the pool keeps at most: enough for
// the requests of a few bulk senders in flight at once.
const idleWorkers = 8

func newWorkerPool(budget int, fresh func() *ingestWorker) *workerPool {
	return &workerPool{fresh: fresh, budget: budget}
}

// get returns an idle worker, or a new one.
func (p *workerPool) get() *ingestWorker {
	p.mu.Lock()
	if n := len(p.idle); n > 0 {
		w := p.idle[n-1]
		p.idle[n-1] = nil
		p.idle = p.idle[:n-1]
		p.idleBytes -= w.retainedBytes
		p.mu.Unlock()
		return w
	}
	p.mu.Unlock()
	return p.fresh()
}

// put returns a worker once its request is answered.
func (p *workerPool) put(w *ingestWorker) {
	w.retainedBytes = w.retained()
	p.mu.Lock()
	if len(p.idle) < idleWorkers && p.idleBytes+w.retainedBytes <= p.budget {
		p.idle = append(p.idle, w)
		p.idleBytes += w.retainedBytes
	}
	p.mu.Unlock()
}

// release drops the idle workers and their memory.
func (p *workerPool) release() {
	p.mu.Lock()
	clear(p.idle)
	p.idle, p.idleBytes = p.idle[:0], 0
	p.mu.Unlock()
}

// retained returns the bytes the worker's reusable buffers hold.
func (w *ingestWorker) retained() int {
	n := w.dec.RetainedBytes() + cap(w.msg)
	if w.batch != nil {
		n += w.batch.RetainedBytes()
	}
	return n
}

// ReleaseIdleMemory drops what the server keeps between requests to serve
// the next ones faster (ingest workers' buffers). A server whose ingest
// has gone quiet calls it, so that an idle server does not keep the
// footprint of its busiest minute.
func (s *Server) ReleaseIdleMemory() { s.workers.release() }
