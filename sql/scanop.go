package sql

import (
	"errors"
	"math"
	"sync"
	"sync/atomic"

	"github.com/sediment/sediment/internal/recovered"
	"github.com/sediment/sediment/internal/vec"
	"github.com/sediment/sediment/sql/scan"
)

// scanOp reads a scan's units on worker goroutines, running the streaming
// stages fused above the scan (filters, projections, unnests) in the
// workers too, and hands the results to its consumer.
//
// A top-K above it may set a time threshold: units that cannot hold a row
// newer (or older) than the current K-th row are skipped.
type scanOp struct {
	q       *queryRun
	node    *ScanNode
	sc      scan.Scan
	units   []scan.Unit
	stages  func() ([]stage, error) // built per worker
	workers int

	// refCols are the Record columns whose RowRefs get the source id.
	refCols []int
	refSrc  []int64

	// Dynamic pruning: with order Descending, skip units whose newest row is
	// older than threshold (and the mirror for Ascending).
	threshold atomic.Int64
	order     scan.Order

	once   sync.Once
	out    chan scanResult
	stop   chan struct{}
	wg     sync.WaitGroup
	closed bool
}

type scanResult struct {
	b   *vec.Batch
	err error
}

func (o *scanOp) setThreshold(t int64) { o.threshold.Store(t) }

func (o *scanOp) skip(u scan.Unit) bool {
	th := o.threshold.Load()
	minT, maxT := u.TimeRange()
	switch o.order {
	case scan.Descending:
		return th != math.MinInt64 && maxT < th
	case scan.Ascending:
		return th != math.MaxInt64 && minT > th
	}
	return false
}

func (o *scanOp) start(ec *evalCtx) {
	o.out = make(chan scanResult, 2*o.workers)
	o.stop = make(chan struct{})
	var nextUnit atomic.Int64
	for w := 0; w < o.workers; w++ {
		o.wg.Add(1)
		go func() {
			defer o.wg.Done()
			defer func() {
				// A bug in a unit's read or a fused stage fails this query,
				// not the process.
				if r := recover(); r != nil {
					o.send(scanResult{err: recovered.New(r)})
				}
			}()
			stages, err := o.stages()
			if err != nil {
				o.send(scanResult{err: err})
				return
			}
			for {
				i := int(nextUnit.Add(1) - 1)
				if i >= len(o.units) {
					return
				}
				if err := ec.ctx.Err(); err != nil {
					o.send(scanResult{err: err})
					return
				}
				if o.stopped() {
					return
				}
				u := o.units[i]
				if o.skip(u) {
					continue
				}
				err := u.Read(ec.ctx, func(b *vec.Batch) error {
					if o.stopped() {
						return errScanStopped
					}
					o.tagRefs(b)
					return runStages(ec, stages, b, func(out *vec.Batch) error {
						if !o.send(scanResult{b: out}) {
							return errScanStopped
						}
						return nil
					})
				})
				if err == errScanStopped {
					return
				}
				if err != nil {
					o.send(scanResult{err: err})
					return
				}
			}
		}()
	}
	go func() {
		o.wg.Wait()
		close(o.out)
	}()
}

// errScanStopped ends a unit's read once the consumer has closed the scan
// (a LIMIT was met): the workers must not go on to read every other unit.
var errScanStopped = errors.New("scan stopped")

// stopped reports whether the consumer closed the scan.
func (o *scanOp) stopped() bool {
	select {
	case <-o.stop:
		return true
	default:
		return false
	}
}

// send delivers a result unless the operator is closing.
func (o *scanOp) send(r scanResult) bool {
	select {
	case o.out <- r:
		return true
	case <-o.stop:
		return false
	}
}

// tagRefs stamps the record source into RowRefs of Record columns.
func (o *scanOp) tagRefs(b *vec.Batch) {
	for k, ci := range o.refCols {
		v := b.Cols[ci]
		tag := o.refSrc[k] << refSourceShift
		for i := range v.Ints {
			v.Ints[i] |= tag
		}
	}
}

func (o *scanOp) next(ec *evalCtx) (*vec.Batch, error) {
	o.once.Do(func() { o.start(ec) })
	if err := ec.ctx.Err(); err != nil {
		return nil, err
	}
	var r scanResult
	var ok bool
	select {
	case r, ok = <-o.out:
	case <-ec.ctx.Done():
		// A worker may be inside a long unit read: do not wait for it.
		return nil, ec.ctx.Err()
	}
	if !ok {
		return nil, nil
	}
	if r.err != nil {
		return nil, r.err
	}
	return r.b, nil
}

func (o *scanOp) close() {
	if o.closed {
		return
	}
	o.closed = true
	if o.stop != nil {
		close(o.stop)
		// Drain so that workers blocked on send can exit.
		go func() {
			for range o.out {
			}
		}()
		o.wg.Wait()
	}
}

// countOp answers COUNT(*) over a scan from its units' counts (index
// cardinalities where possible), in parallel.
type countOp struct {
	q       *queryRun
	units   []scan.Unit
	workers int
	done    bool
}

func (o *countOp) next(ec *evalCtx) (*vec.Batch, error) {
	if o.done {
		return nil, nil
	}
	o.done = true
	var total atomic.Int64
	var firstErr error
	var mu sync.Mutex
	var wg sync.WaitGroup
	var next atomic.Int64
	for w := 0; w < o.workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() {
				if r := recover(); r != nil {
					mu.Lock()
					if firstErr == nil {
						firstErr = recovered.New(r)
					}
					mu.Unlock()
				}
			}()
			for {
				i := int(next.Add(1) - 1)
				if i >= len(o.units) {
					return
				}
				err := ec.ctx.Err()
				var n int64
				if err == nil {
					n, err = o.units[i].Count(ec.ctx)
				}
				if err != nil {
					mu.Lock()
					if firstErr == nil {
						firstErr = err
					}
					mu.Unlock()
					return
				}
				total.Add(n)
			}
		}()
	}
	wg.Wait()
	if firstErr != nil {
		return nil, firstErr
	}
	return &vec.Batch{Len: 1, Cols: []*vec.Vector{{Type: vec.Int64, Len: 1, Ints: []int64{total.Load()}}}}, nil
}

func (o *countOp) close() {}
