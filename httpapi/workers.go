package httpapi

// workerPool keeps ingest workers between requests. A worker's buffers
// grow to the largest request it served (the encoded events of a 12 MB
// body are about 10 MB), so losing them costs that much allocation and
// copying again: a sync.Pool would, since the collector empties it, and
// under a memory limit a busy server collects every second or so. The
// pool keeps up to its capacity of idle workers until Release, which a
// server gone idle calls to give their memory back; workers beyond the
// capacity are dropped on return.
type workerPool struct {
	free  chan *ingestWorker
	fresh func() *ingestWorker
}

// idleWorkers is how many idle workers the pool keeps: enough for the
// requests of a few bulk senders in flight at once.
const idleWorkers = 8

func newWorkerPool(fresh func() *ingestWorker) *workerPool {
	return &workerPool{free: make(chan *ingestWorker, idleWorkers), fresh: fresh}
}

// get returns an idle worker, or a new one.
func (p *workerPool) get() *ingestWorker {
	select {
	case w := <-p.free:
		return w
	default:
		return p.fresh()
	}
}

// put returns a worker once its request is answered.
func (p *workerPool) put(w *ingestWorker) {
	select {
	case p.free <- w:
	default: // enough are idle already
	}
}

// release drops the idle workers and their memory.
func (p *workerPool) release() {
	for {
		select {
		case <-p.free:
		default:
			return
		}
	}
}

// ReleaseIdleMemory drops what the server keeps between requests to serve
// the next ones faster (ingest workers' buffers). A server whose ingest
// has gone quiet calls it, so that an idle server does not keep the
// footprint of its busiest minute.
func (s *Server) ReleaseIdleMemory() { s.workers.release() }
