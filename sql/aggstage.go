package sql

import "fmt"

// aggExprsIntoWorkers moves the computed grouping keys and aggregate
// arguments of an aggregation over a scan into a projection below it. The
// aggregation itself runs in one goroutine, but a projection over a scan
// runs inside the scan's workers, on every core: for a chart such as
// `timestamp_trunc(timestamp, minute)` with `countif(regexp_contains(path,
// '/rest'))` the expressions are most of the work, and the aggregation is
// left with adding up ready columns.
func aggExprsIntoWorkers(n Node) Node {
	var maxID ColID
	transform(n, func(x Node) Node {
		for _, c := range x.Cols() {
			maxID = max(maxID, c.ID)
		}
		return x
	})
	return transform(n, func(x Node) Node {
		a, ok := x.(*AggregateNode)
		if !ok {
			return x
		}
		if _, sn := streamingChain(a.In); sn == nil {
			return x
		}
		in := a.In.Cols()
		p := &ProjectNode{In: a.In}
		for _, c := range in {
			p.Exprs = append(p.Exprs, &ColRef{ID: c.ID, T: c.T, Name: c.Name})
			p.Out = append(p.Out, c)
		}
		lift := func(prefix string, e Expr) Expr {
			switch e.(type) {
			case *ColRef, *Literal, nil:
				return e
			}
			maxID++
			c := Column{ID: maxID, Name: fmt.Sprintf("$%s%d", prefix, len(p.Out)-len(in)+1), T: e.Type()}
			p.Exprs = append(p.Exprs, e)
			p.Out = append(p.Out, c)
			return &ColRef{ID: c.ID, T: c.T, Name: c.Name}
		}
		keys := make([]Expr, len(a.Keys))
		for i, k := range a.Keys {
			keys[i] = lift("key", k)
		}
		aggs := make([]*AggCall, len(a.Aggs))
		for i, c := range a.Aggs {
			cc := *c
			cc.Args = make([]Expr, len(c.Args))
			for j, arg := range c.Args {
				cc.Args[j] = lift("arg", arg)
			}
			aggs[i] = &cc
		}
		if len(p.Out) == len(in) {
			return x // nothing computed
		}
		// Pass on only the input columns the aggregation still reads.
		used := map[ColID]bool{}
		for _, k := range keys {
			colRefs(k, used)
		}
		for _, c := range aggs {
			for _, arg := range c.Args {
				if arg != nil {
					colRefs(arg, used)
				}
			}
		}
		var exprs []Expr
		var out []Column
		for i, c := range p.Out {
			if i >= len(in) || used[c.ID] {
				exprs = append(exprs, p.Exprs[i])
				out = append(out, c)
			}
		}
		p.Exprs, p.Out = exprs, out
		return &AggregateNode{In: p, Keys: keys, Aggs: aggs, Out: a.Out}
	})
}
