package sql

import (
	"fmt"

	"github.com/sediment/sediment/internal/vec"
	"github.com/sediment/sediment/sql/fn"
	"github.com/sediment/sediment/sql/scan"
)

// build turns a logical plan into operators.
func (q *queryRun) build(n Node) (operator, error) {
	// A chain of streaming nodes over a scan runs inside the scan's workers.
	if chain, sn := streamingChain(n); sn != nil {
		return q.buildScan(sn, chain)
	}
	switch n := n.(type) {
	case *ValuesNode:
		return &valuesOp{}, nil
	case *emptyNode:
		return &valuesOp{done: true}, nil
	case *projectCount:
		sc, err := q.openScan(n.scan)
		if err != nil {
			return nil, err
		}
		return &countOp{q: q, units: sc.Units(), workers: q.workers}, nil
	case *FilterNode, *ProjectNode, *RecordAliasNode, *UnnestNode:
		in, err := q.build(n.Inputs()[0])
		if err != nil {
			return nil, err
		}
		st, err := q.stageFor(n)
		if err != nil {
			return nil, err
		}
		return &stageOp{in: in, fn: st}, nil
	case *LimitNode:
		in, err := q.build(n.In)
		if err != nil {
			return nil, err
		}
		return &limitOp{in: in, count: n.Count, offset: n.Offset}, nil
	case *SortNode:
		in, err := q.build(n.In)
		if err != nil {
			return nil, err
		}
		keys, err := compileKeys(n.Keys, layoutOf(n.In.Cols()))
		if err != nil {
			return nil, err
		}
		return &sortOp{q: q, in: in, keys: keys, limit: -1, cols: n.In.Cols()}, nil
	case *TopKNode:
		in, err := q.build(n.In)
		if err != nil {
			return nil, err
		}
		keys, err := compileKeys(n.Keys, layoutOf(n.In.Cols()))
		if err != nil {
			return nil, err
		}
		op := &sortOp{q: q, in: in, keys: keys, limit: n.Count, offset: n.Offset, cols: n.In.Cols()}
		// Let the top-K prune scan units when it orders by the scan's time.
		if so, ok := in.(*scanOp); ok && len(n.Keys) > 0 {
			if idx, ok := timestampKey(n, so); ok {
				op.prune, op.pruneKey = so, idx
			}
		}
		return op, nil
	case *AggregateNode:
		in, err := q.build(n.In)
		if err != nil {
			return nil, err
		}
		return newAggOp(q, n, in)
	case *WindowNode:
		in, err := q.build(n.In)
		if err != nil {
			return nil, err
		}
		return newWindowOp(q, n, in)
	case *DistinctNode:
		in, err := q.build(n.In)
		if err != nil {
			return nil, err
		}
		return newDistinctOp(q, n, in), nil
	case *JoinNode:
		return q.buildJoin(n)
	case *UnionNode:
		u := &unionOp{}
		for i, in := range n.Ins {
			op, err := q.build(in)
			if err != nil {
				u.close()
				return nil, err
			}
			u.ins = append(u.ins, op)
			lay := layoutOf(in.Cols())
			m := make([]int, len(n.Out))
			for c := range n.Out {
				p, ok := lay[n.Maps[i][c]]
				if !ok {
					return nil, fmt.Errorf("internal: union column missing")
				}
				m[c] = p
			}
			u.maps = append(u.maps, m)
		}
		return u, nil
	case *ScanNode:
		return q.buildScan(n, nil)
	}
	return nil, fmt.Errorf("internal: cannot execute %T", n)
}

// streamingChain returns the streaming nodes from n down to a scan (top
// first), or nil if n is not such a chain.
func streamingChain(n Node) ([]Node, *ScanNode) {
	var chain []Node
	for {
		switch x := n.(type) {
		case *ScanNode:
			return chain, x
		case *FilterNode, *ProjectNode, *RecordAliasNode, *UnnestNode:
			chain = append(chain, n)
			n = n.Inputs()[0]
		default:
			return nil, nil
		}
	}
}

// stageFor compiles a streaming node into a stage over its input layout.
func (q *queryRun) stageFor(n Node) (stage, error) {
	in := n.Inputs()[0]
	lay := layoutOf(in.Cols())
	switch n := n.(type) {
	case *FilterNode:
		cond, err := compile(n.Cond, lay)
		if err != nil {
			return nil, err
		}
		return filterStage(cond), nil
	case *ProjectNode:
		evs := make([]evaluator, len(n.Exprs))
		for i, e := range n.Exprs {
			ev, err := compile(e, lay)
			if err != nil {
				return nil, err
			}
			evs[i] = ev
		}
		return projectStage(evs), nil
	case *RecordAliasNode:
		src, ok := lay[n.Src]
		if !ok {
			// Nothing reads the alias itself (only fields through it, which
			// are columns of their own): it stands as a NULL placeholder.
			if !n.Outer {
				return nil, fmt.Errorf("internal: record alias source missing")
			}
			return whole(func(ec *evalCtx, b *vec.Batch) (*vec.Batch, error) {
				cols := append(append([]*vec.Vector(nil), b.Cols...), constVector(nullRef, b.Len))
				return &vec.Batch{Len: b.Len, Sel: b.Sel, Cols: cols}, nil
			}), nil
		}
		return recordAliasStage(src, n.Outer), nil
	case *UnnestNode:
		arr, err := compile(n.Arr, lay)
		if err != nil {
			return nil, err
		}
		return unnestStage(n, arr, len(in.Cols()), q.account()), nil
	}
	return nil, fmt.Errorf("internal: %T is not a streaming node", n)
}

func (q *queryRun) openScan(n *ScanNode) (scan.Scan, error) {
	req := n.req
	req.NoIndex = q.opts.NoIndex
	sc, err := n.Table.Open(q.opts.ctx, &req)
	if err != nil {
		return nil, err
	}
	q.scansMu.Lock()
	q.scans = append(q.scans, sc)
	q.scansMu.Unlock()
	return sc, nil
}

func (q *queryRun) buildScan(sn *ScanNode, chain []Node) (operator, error) {
	sc, err := q.openScan(sn)
	if err != nil {
		return nil, err
	}
	op := &scanOp{q: q, node: sn, sc: sc, units: sc.Units(), workers: q.workers, order: sn.req.Order}
	switch op.order {
	case scan.Descending:
		op.threshold.Store(minInt64)
	case scan.Ascending:
		op.threshold.Store(maxInt64)
	}
	for i, c := range sn.req.Columns {
		if c.Kind == scan.Record {
			src, err := q.addRecordSource(sc, c.Path)
			if err != nil {
				return nil, err
			}
			op.refCols = append(op.refCols, i)
			op.refSrc = append(op.refSrc, src)
		}
	}
	if len(op.units) < 2 {
		op.workers = 1
	}
	// Stages run bottom-up; each worker compiles its own.
	op.stages = func() ([]stage, error) {
		var st []stage
		for i := len(chain) - 1; i >= 0; i-- {
			s, err := q.stageFor(chain[i])
			if err != nil {
				return nil, err
			}
			st = append(st, s)
		}
		return st, nil
	}
	return op, nil
}

var nullRef = fn.Datum{Type: vec.RowRef, Null: true}

const (
	minInt64 = -1 << 63
	maxInt64 = 1<<63 - 1
)

// timestampKey reports whether a top-K's first key is the scan's own
// timestamp column passed through unchanged, and its position.
func timestampKey(n *TopKNode, so *scanOp) (int, bool) {
	cr, ok := n.Keys[0].E.(*ColRef)
	if !ok || cr.T.V != vec.Timestamp {
		return 0, false
	}
	sn, ci := traceScanCol(n.In, cr.ID)
	if sn == nil || sn != so.node || sn.req.Columns[ci].Path != "timestamp" {
		return 0, false
	}
	if (so.order == scan.Descending) != n.Keys[0].Desc || so.order == scan.Unordered {
		return 0, false
	}
	idx := colIndex(n.In.Cols(), cr.ID)
	return idx, idx >= 0
}
