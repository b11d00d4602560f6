package sql

import (
	"fmt"
	"math"
	"time"

	"github.com/sediment/sediment/internal/vec"
	"github.com/sediment/sediment/sql/fn"
	"github.com/sediment/sediment/sql/scan"
)

// emptyNode produces no rows (a filter that can never be TRUE).
type emptyNode struct{ cols []Column }

func (n *emptyNode) Cols() []Column { return n.cols }
func (n *emptyNode) Inputs() []Node { return nil }

// countNode is COUNT(*) over a scan whose filters were all pushed down:
// answered from the units' counts.
type countNode struct {
	scan *ScanNode
	out  Column
}

func (n *countNode) Cols() []Column { return []Column{n.out} }
func (n *countNode) Inputs() []Node { return nil }

// optimize rewrites a bound plan for execution: folds constants, pushes
// filters into scans (predicates and time bounds), replaces ORDER BY +
// LIMIT by top-K and lets scans read newest-first and stop early, answers
// COUNT(*) from indexes, and drops unread columns. opts' NoRewrites and
// NoPushdown leave out the steps they name.
func optimize(n Node, opts *Options, needed []ColID) (Node, error) {
	var err error
	rewrites, pushdown := !opts.NoRewrites, !opts.NoPushdown
	if rewrites {
		if n, err = foldPlan(n, opts.Now); err != nil {
			return nil, err
		}
		n = presenceFilters(n)
	}
	for i := 0; pushdown && i < 8; i++ {
		var changed bool
		n, changed = pushFilters(n)
		if !changed {
			break
		}
	}
	if rewrites {
		n = removeSorts(n, false)
		n = limitsToTopK(n)
	}
	if pushdown {
		n = topKIntoScans(n)
		n = limitsIntoScans(n)
	}
	if rewrites {
		n = countFastPath(n)
	}
	need := map[ColID]bool{}
	for _, id := range needed {
		need[id] = true
	}
	calls := windowCalls(n)
	pruneColumns(n, need)
	if windowCalls(n) < calls {
		// With window calls nothing reads gone, filters on the partition
		// keys of the calls left may now go below them.
		n = dropEmptyWindows(n)
		for i := 0; pushdown && i < 8; i++ {
			var changed bool
			if n, changed = pushFilters(n); !changed {
				break
			}
		}
		pruneColumns(n, need)
	}
	if rewrites {
		n = aggExprsIntoWorkers(n)
	}
	return n, nil
}

// windowCalls counts the window function calls of a plan.
func windowCalls(n Node) int {
	c := 0
	if w, ok := n.(*WindowNode); ok {
		c = len(w.Funcs)
	}
	for _, in := range n.Inputs() {
		c += windowCalls(in)
	}
	return c
}

// dropEmptyWindows removes window nodes whose calls were all pruned.
func dropEmptyWindows(n Node) Node {
	return transform(n, func(n Node) Node {
		if w, ok := n.(*WindowNode); ok && len(w.Funcs) == 0 {
			return w.In
		}
		return n
	})
}

// mapExprs applies f to every expression of every node.
func mapExprs(n Node, f func(Expr) (Expr, error)) error {
	var err error
	do := func(e Expr) Expr {
		if e == nil || err != nil {
			return e
		}
		var r Expr
		r, err = f(e)
		return r
	}
	switch x := n.(type) {
	case *FilterNode:
		x.Cond = do(x.Cond)
	case *ProjectNode:
		for i := range x.Exprs {
			x.Exprs[i] = do(x.Exprs[i])
		}
	case *AggregateNode:
		for i := range x.Keys {
			x.Keys[i] = do(x.Keys[i])
		}
		for _, a := range x.Aggs {
			for i := range a.Args {
				a.Args[i] = do(a.Args[i])
			}
		}
	case *SortNode:
		for i := range x.Keys {
			x.Keys[i].E = do(x.Keys[i].E)
		}
	case *TopKNode:
		for i := range x.Keys {
			x.Keys[i].E = do(x.Keys[i].E)
		}
	case *JoinNode:
		x.Cond = do(x.Cond)
	case *UnnestNode:
		x.Arr = do(x.Arr)
	case *WindowNode:
		for _, f := range x.Funcs {
			for i := range f.Args {
				f.Args[i] = do(f.Args[i])
			}
			if f.Agg != nil {
				f.Agg.Args = f.Args
			}
			f.Default = do(f.Default)
			for i := range f.Partition {
				f.Partition[i] = do(f.Partition[i])
			}
			for i := range f.Order {
				f.Order[i].E = do(f.Order[i].E)
			}
		}
	}
	if err != nil {
		return err
	}
	for _, in := range n.Inputs() {
		if err := mapExprs(in, f); err != nil {
			return err
		}
	}
	return nil
}

func foldPlan(n Node, now time.Time) (Node, error) {
	err := mapExprs(n, func(e Expr) (Expr, error) { return foldExpr(e, now) })
	return n, err
}

// presenceFilters turns the row-dropping of CROSS JOIN UNNEST(object) into
// an IS NOT NULL filter the scan can answer.
func presenceFilters(n Node) Node {
	return transform(n, func(n Node) Node {
		ra, ok := n.(*RecordAliasNode)
		if !ok || ra.Outer {
			return n
		}
		ra.Outer = true
		src := ra.In.Cols()[colIndex(ra.In.Cols(), ra.Src)]
		ra.In = &FilterNode{In: ra.In, Cond: &IsNullExpr{X: &ColRef{ID: src.ID, T: src.T, Name: src.Name}, Not: true}}
		return ra
	})
}

// transform rebuilds a plan bottom-up through f.
func transform(n Node, f func(Node) Node) Node {
	switch x := n.(type) {
	case *FilterNode:
		x.In = transform(x.In, f)
	case *ProjectNode:
		x.In = transform(x.In, f)
	case *AggregateNode:
		x.In = transform(x.In, f)
	case *SortNode:
		x.In = transform(x.In, f)
	case *LimitNode:
		x.In = transform(x.In, f)
	case *TopKNode:
		x.In = transform(x.In, f)
	case *DistinctNode:
		x.In = transform(x.In, f)
	case *JoinNode:
		x.Left = transform(x.Left, f)
		x.Right = transform(x.Right, f)
	case *UnnestNode:
		x.In = transform(x.In, f)
	case *RecordAliasNode:
		x.In = transform(x.In, f)
	case *WindowNode:
		x.In = transform(x.In, f)
	case *UnionNode:
		for i := range x.Ins {
			x.Ins[i] = transform(x.Ins[i], f)
		}
	}
	return f(n)
}

func refsOf(e Expr) map[ColID]bool {
	m := map[ColID]bool{}
	colRefs(e, m)
	return m
}

func allIn(refs map[ColID]bool, cols []Column) bool {
	for id := range refs {
		if colIndex(cols, id) < 0 {
			return false
		}
	}
	return true
}

// pushFilters moves filter conjuncts as far down as they can go, into
// scans at the bottom. It reports whether anything moved.
func pushFilters(n Node) (Node, bool) {
	changed := false
	out := transform(n, func(n Node) Node {
		f, ok := n.(*FilterNode)
		if !ok {
			return n
		}
		conds := conjuncts(f.Cond)
		for _, c := range conds {
			if isFalseOrNullLit(c) {
				changed = changed || f.In != nil
				return &emptyNode{cols: f.In.Cols()}
			}
		}
		var keep []Expr
		in := f.In
		switch c := in.(type) {
		case *FilterNode:
			c.Cond = andOf(append(conjuncts(c.Cond), conds...))
			changed = true
			return c
		case *ScanNode:
			keep = pushIntoScan(c, conds)
			if len(keep) != len(conds) {
				changed = true
			}
		case *ProjectNode:
			m := map[ColID]Expr{}
			for i, e := range c.Exprs {
				switch e.(type) {
				case *ColRef, *Literal:
					m[c.Out[i].ID] = e
				}
			}
			var down []Expr
			for _, cd := range conds {
				ok := true
				for id := range refsOf(cd) {
					if _, found := m[id]; !found {
						ok = false
					}
				}
				if ok && !hasSubquery(cd) {
					down = append(down, substitute(cd, m))
				} else {
					keep = append(keep, cd)
				}
			}
			if len(down) > 0 {
				c.In = &FilterNode{In: c.In, Cond: andOf(down)}
				changed = true
			}
		case *SortNode, *RecordAliasNode, *UnnestNode:
			below := in.Inputs()[0]
			var down []Expr
			for _, cd := range conds {
				if allIn(refsOf(cd), below.Cols()) {
					down = append(down, cd)
				} else {
					keep = append(keep, cd)
				}
			}
			if len(down) > 0 {
				nb := &FilterNode{In: below, Cond: andOf(down)}
				switch c := in.(type) {
				case *SortNode:
					c.In = nb
				case *RecordAliasNode:
					c.In = nb
				case *UnnestNode:
					c.In = nb
				}
				changed = true
			}
		case *WindowNode:
			// Only a condition on the partition keys of every call may go
			// below: it keeps or drops whole partitions, so the results of
			// the rows it keeps do not change.
			keys := windowPartitionCols(c)
			var down []Expr
			for _, cd := range conds {
				refs := refsOf(cd)
				ok := len(refs) > 0 && !hasSubquery(cd) && !hasVolatile(cd)
				for id := range refs {
					ok = ok && keys[id]
				}
				if ok {
					down = append(down, cd)
				} else {
					keep = append(keep, cd)
				}
			}
			if len(down) > 0 {
				c.In = &FilterNode{In: c.In, Cond: andOf(down)}
				changed = true
			}
		case *JoinNode:
			var toL, toR, toJ []Expr
			for _, cd := range conds {
				refs := refsOf(cd)
				switch {
				case allIn(refs, c.Left.Cols()):
					toL = append(toL, cd)
				case allIn(refs, c.Right.Cols()) && c.Kind != JoinLeft:
					toR = append(toR, cd)
				case c.Kind != JoinLeft:
					toJ = append(toJ, cd)
				default:
					keep = append(keep, cd)
				}
			}
			if len(toL) > 0 {
				c.Left = &FilterNode{In: c.Left, Cond: andOf(toL)}
				changed = true
			}
			if len(toR) > 0 {
				c.Right = &FilterNode{In: c.Right, Cond: andOf(toR)}
				changed = true
			}
			if len(toJ) > 0 {
				if c.Cond != nil {
					toJ = append(conjuncts(c.Cond), toJ...)
				}
				c.Cond = andOf(toJ)
				if c.Kind == JoinCross {
					c.Kind = JoinInner
				}
				changed = true
			}
		case *UnionNode:
			for i, b := range c.Ins {
				m := map[ColID]Expr{}
				bc := b.Cols()
				for k, oc := range c.Out {
					id := c.Maps[i][k]
					m[oc.ID] = &ColRef{ID: id, T: bc[colIndex(bc, id)].T}
				}
				var down []Expr
				for _, cd := range conds {
					down = append(down, substitute(cd, m))
				}
				c.Ins[i] = &FilterNode{In: b, Cond: andOf(down)}
			}
			changed = true
			return c
		default:
			return n
		}
		if len(keep) == 0 {
			return in
		}
		f.Cond = andOf(keep)
		return f
	})
	return out, changed
}

// windowPartitionCols returns the columns that are a PARTITION BY key of
// every call of a WindowNode.
func windowPartitionCols(w *WindowNode) map[ColID]bool {
	var common map[ColID]bool
	for _, f := range w.Funcs {
		mine := map[ColID]bool{}
		for _, p := range f.Partition {
			if cr, ok := p.(*ColRef); ok && (common == nil || common[cr.ID]) {
				mine[cr.ID] = true
			}
		}
		common = mine
	}
	return common
}

// hasVolatile reports whether an expression calls a function whose value
// changes from call to call.
func hasVolatile(e Expr) bool {
	found := false
	rewrite(e, func(x Expr) Expr {
		if c, ok := x.(*Call); ok && (c.Name == "rand" || c.Name == "generate_uuid") {
			found = true
		}
		return x
	})
	return found
}

func hasSubquery(e Expr) bool {
	found := false
	rewrite(e, func(x Expr) Expr {
		if _, ok := x.(*subqueryExpr); ok {
			found = true
		}
		return x
	})
	return found
}

// pushIntoScan turns conjuncts into scan predicates and time bounds and
// returns the ones the scan cannot take.
func pushIntoScan(s *ScanNode, conds []Expr) []Expr {
	var keep []Expr
	for _, c := range conds {
		if isTrueLit(c) {
			continue
		}
		if !s.pushOne(c) {
			keep = append(keep, c)
		}
	}
	return keep
}

// scanCol returns the scan column a ColRef reads.
func (s *ScanNode) scanCol(e Expr) (scan.Column, bool) {
	cr, ok := e.(*ColRef)
	if !ok {
		return scan.Column{}, false
	}
	i := colIndex(s.cols, cr.ID)
	if i < 0 {
		return scan.Column{}, false
	}
	return s.req.Columns[i], true
}

var flipOp = map[string]string{"=": "=", "!=": "!=", "<": ">", "<=": ">=", ">": "<", ">=": "<="}

var cmpOps = map[string]scan.Op{"=": scan.Eq, "!=": scan.Ne, "<": scan.Lt, "<=": scan.Le, ">": scan.Gt, ">=": scan.Ge}

// constFor converts a literal to a scan constant of column type t.
func constFor(l *Literal, t vec.Type) (scan.Const, bool) {
	d := l.D
	if d.Null {
		return scan.Const{}, false
	}
	c := scan.Const{Type: t}
	switch {
	case d.Type == t:
		c.Int, c.Flt, c.Str, c.Bool = d.Int, d.Flt, d.Str, d.Bool
	case t == vec.Float64 && d.Type == vec.Int64:
		c.Flt = float64(d.Int)
	case t == vec.Timestamp && d.Type == vec.String:
		ts, err := fn.ParseTimestamp(d.Str)
		if err != nil {
			return c, false
		}
		c.Int = ts
	default:
		return c, false
	}
	return c, true
}

func (s *ScanNode) pushOne(c Expr) bool {
	switch x := c.(type) {
	case *ColRef:
		if col, ok := s.scanCol(x); ok && col.Kind == scan.Value && col.Type == vec.Bool {
			s.addPred(scan.Predicate{Path: col.Path, Type: vec.Bool, Op: scan.Eq, Args: []scan.Const{{Type: vec.Bool, Bool: true}}}, c)
			return true
		}
	case *IsNullExpr:
		col, ok := s.scanCol(x.X)
		if !ok {
			return false
		}
		t := col.Type
		switch col.Kind {
		case scan.Record:
			t = vec.RowRef
		case scan.ArrayOf:
			t = vec.List
		}
		op := scan.IsNull
		if x.Not {
			op = scan.IsNotNull
		}
		s.addPred(scan.Predicate{Path: col.Path, Type: t, Op: op}, c)
		return true
	case *InExpr:
		col, ok := s.scanCol(x.X)
		if !ok || col.Kind != scan.Value {
			return false
		}
		p := scan.Predicate{Path: col.Path, Type: col.Type, Op: scan.In, Not: x.Not}
		for _, it := range x.List {
			l, ok := it.(*Literal)
			if !ok {
				return false
			}
			k, ok := constFor(l, col.Type)
			if !ok {
				return false
			}
			p.Args = append(p.Args, k)
		}
		s.addPred(p, c)
		return true
	case *OrExpr:
		// a = 1 OR a = 2 ... on one column: IN.
		var path string
		var t vec.Type
		var args []scan.Const
		for _, a := range x.Args {
			call, ok := a.(*Call)
			if !ok || call.Name != "=" {
				return false
			}
			col, ok := s.scanCol(call.Args[0])
			l, lok := call.Args[1].(*Literal)
			if !ok || !lok || col.Kind != scan.Value || (path != "" && col.Path != path) {
				return false
			}
			k, ok := constFor(l, col.Type)
			if !ok {
				return false
			}
			path, t = col.Path, col.Type
			args = append(args, k)
		}
		s.addPred(scan.Predicate{Path: path, Type: t, Op: scan.In, Args: args}, c)
		return true
	case *NotExpr:
		if inner, ok := x.X.(*Call); ok {
			if p, ok := s.stringPred(inner); ok {
				p.Not = true
				s.addPred(p, c)
				return true
			}
		}
		if col, ok := s.scanCol(x.X); ok && col.Kind == scan.Value && col.Type == vec.Bool {
			s.addPred(scan.Predicate{Path: col.Path, Type: vec.Bool, Op: scan.Eq, Args: []scan.Const{{Type: vec.Bool}}}, c)
			return true
		}
	case *Call:
		if op, ok := cmpOps[x.Name]; ok && len(x.Args) == 2 {
			a, b := x.Args[0], x.Args[1]
			name := x.Name
			if _, isLit := a.(*Literal); isLit {
				a, b = b, a
				name = flipOp[name]
				op = cmpOps[name]
			}
			// strpos(col, 'x') > 0 is a substring test.
			if inner, ok := a.(*Call); ok && inner.Name == "strpos" && name == ">" {
				if l, ok := b.(*Literal); ok && l.D.Type == vec.Int64 && l.D.Int == 0 && !l.D.Null {
					if col, ok := s.scanCol(inner.Args[0]); ok && col.Kind == scan.Value && col.Type == vec.String {
						if needle, ok := inner.Args[1].(*Literal); ok && needle.D.Type == vec.String && !needle.D.Null {
							s.addPred(scan.Predicate{Path: col.Path, Type: vec.String, Op: scan.Contains, Args: []scan.Const{{Type: vec.String, Str: needle.D.Str}}}, c)
							return true
						}
					}
				}
			}
			col, ok := s.scanCol(a)
			l, lok := b.(*Literal)
			if !ok || !lok || col.Kind != scan.Value {
				return false
			}
			k, ok := constFor(l, col.Type)
			if !ok {
				return false
			}
			if col.Path == "timestamp" && col.Type == vec.Timestamp && op != scan.Ne {
				s.timeBound(op, k.Int)
				s.Pushed = append(s.Pushed, c.String())
				return true
			}
			if col.Type == vec.Float64 && math.IsNaN(k.Flt) {
				return false
			}
			s.addPred(scan.Predicate{Path: col.Path, Type: col.Type, Op: op, Args: []scan.Const{k}}, c)
			return true
		}
		if p, ok := s.stringPred(x); ok {
			s.addPred(p, c)
			return true
		}
	}
	return false
}

// stringPred recognises regexp_contains, starts_with, ends_with and LIKE
// of a column and a constant.
func (s *ScanNode) stringPred(x *Call) (scan.Predicate, bool) {
	var op scan.Op
	switch x.Name {
	case "regexp_contains":
		op = scan.Regex
	case "starts_with":
		op = scan.StartsWith
	case "ends_with":
		op = scan.EndsWith
	case "like":
		op = scan.Like
	default:
		return scan.Predicate{}, false
	}
	if len(x.Args) != 2 {
		return scan.Predicate{}, false
	}
	col, ok := s.scanCol(x.Args[0])
	l, lok := x.Args[1].(*Literal)
	if !ok || !lok || col.Kind != scan.Value || col.Type != vec.String || l.D.Null || l.D.Type != vec.String {
		return scan.Predicate{}, false
	}
	return scan.Predicate{Path: col.Path, Type: vec.String, Op: op, Args: []scan.Const{{Type: vec.String, Str: l.D.Str}}}, true
}

func (s *ScanNode) addPred(p scan.Predicate, src Expr) {
	s.req.Filters = append(s.req.Filters, p)
	s.Pushed = append(s.Pushed, src.String())
}

func (s *ScanNode) timeBound(op scan.Op, t int64) {
	lo, hi := s.req.TimeMin, s.req.TimeMax
	switch op {
	case scan.Eq:
		lo, hi = max(lo, t), min(hi, t)
	case scan.Gt:
		if t < math.MaxInt64 {
			lo = max(lo, t+1)
		} else {
			lo = t
			hi = t - 1
		}
	case scan.Ge:
		lo = max(lo, t)
	case scan.Lt:
		if t > math.MinInt64 {
			hi = min(hi, t-1)
		} else {
			hi, lo = t, t+1
		}
	case scan.Le:
		hi = min(hi, t)
	}
	s.req.TimeMin, s.req.TimeMax = lo, hi
}

// removeSorts drops sorts whose order nothing observes: under another sort
// (through order-insensitive nodes), under an aggregation or a union.
func removeSorts(n Node, ordered bool) Node {
	switch x := n.(type) {
	case *SortNode:
		x.In = removeSorts(x.In, true)
		if ordered {
			return x.In
		}
		return x
	case *TopKNode:
		x.In = removeSorts(x.In, true)
	case *AggregateNode:
		x.In = removeSorts(x.In, true)
	case *DistinctNode:
		x.In = removeSorts(x.In, true)
	case *UnionNode:
		for i := range x.Ins {
			x.Ins[i] = removeSorts(x.Ins[i], true)
		}
	case *FilterNode:
		x.In = removeSorts(x.In, ordered)
	case *ProjectNode:
		x.In = removeSorts(x.In, ordered)
	case *RecordAliasNode:
		x.In = removeSorts(x.In, ordered)
	case *UnnestNode:
		x.In = removeSorts(x.In, ordered)
	case *WindowNode:
		// The window operator emits its input in arrival order.
		x.In = removeSorts(x.In, ordered)
	case *LimitNode:
		x.In = removeSorts(x.In, false)
	case *JoinNode:
		x.Left = removeSorts(x.Left, ordered)
		x.Right = removeSorts(x.Right, true)
	}
	return n
}

// limitsToTopK turns LIMIT over ORDER BY (possibly through projections,
// which keep order) into a top-K.
func limitsToTopK(n Node) Node {
	return transform(n, func(n Node) Node {
		l, ok := n.(*LimitNode)
		if !ok || l.Count < 0 {
			return n
		}
		// Walk down through projections to a sort.
		var projs []*ProjectNode
		cur := l.In
		for {
			if p, ok := cur.(*ProjectNode); ok {
				projs = append(projs, p)
				cur = p.In
				continue
			}
			break
		}
		s, ok := cur.(*SortNode)
		if !ok {
			return n
		}
		tk := &TopKNode{In: s.In, Keys: s.Keys, Count: l.Count, Offset: l.Offset}
		if len(projs) == 0 {
			return tk
		}
		projs[len(projs)-1].In = tk
		return projs[0]
	})
}

// topKIntoScans lets a top-K ordered by a scan's timestamp read the scan
// newest-first (or oldest-first); when nothing between them drops or
// multiplies rows, each unit also stops after K rows.
func topKIntoScans(n Node) Node {
	return transform(n, func(n Node) Node {
		tk, ok := n.(*TopKNode)
		if !ok || len(tk.Keys) == 0 {
			return n
		}
		cr, ok := tk.Keys[0].E.(*ColRef)
		if !ok || cr.T.V != vec.Timestamp {
			return n
		}
		chain, sn := streamingChain(tk.In)
		if sn == nil {
			return n
		}
		s2, ci := traceScanCol(tk.In, cr.ID)
		if s2 != sn || sn.req.Columns[ci].Path != "timestamp" {
			return n
		}
		if tk.Keys[0].Desc {
			sn.req.Order = scan.Descending
		} else {
			sn.req.Order = scan.Ascending
		}
		exact := true
		for _, c := range chain {
			switch c.(type) {
			case *FilterNode, *UnnestNode:
				exact = false
			}
		}
		if exact && len(tk.Keys) == 1 {
			sn.req.Limit = int(tk.Count + tk.Offset)
		} else if exact {
			// Ties on the time need the later keys: keep every row at the
			// boundary time by not limiting units (order still prunes).
		}
		return n
	})
}

// limitsIntoScans tells a scan under a plain LIMIT (no ORDER BY) that each
// unit needs at most LIMIT+OFFSET rows, when nothing between them drops or
// multiplies rows; the first unit then usually satisfies the query.
func limitsIntoScans(n Node) Node {
	return transform(n, func(n Node) Node {
		l, ok := n.(*LimitNode)
		if !ok || l.Count < 0 {
			return n
		}
		chain, sn := streamingChain(l.In)
		if sn == nil {
			return n
		}
		for _, c := range chain {
			switch c := c.(type) {
			case *FilterNode, *UnnestNode:
				return n
			case *RecordAliasNode:
				if !c.Outer {
					return n // drops rows whose record is NULL
				}
			}
		}
		want := int(l.Count + l.Offset)
		if sn.req.Limit == 0 || want < sn.req.Limit {
			sn.req.Limit = want
		}
		return n
	})
}

// countFastPath answers COUNT(*) (without GROUP BY) over a scan whose
// filters were all pushed down from the units' counts.
func countFastPath(n Node) Node {
	return transform(n, func(n Node) Node {
		a, ok := n.(*AggregateNode)
		if !ok || len(a.Keys) != 0 || len(a.Aggs) != 1 || !a.Aggs[0].Star || a.Aggs[0].Name != "count" {
			return n
		}
		cur := a.In
		for {
			switch x := cur.(type) {
			case *ProjectNode:
				cur = x.In
				continue
			case *RecordAliasNode:
				if x.Outer {
					cur = x.In
					continue
				}
			}
			break
		}
		s, ok := cur.(*ScanNode)
		if !ok {
			return n
		}
		return &projectCount{countNode{scan: s, out: a.Out[0]}}
	})
}

// projectCount wraps countNode so it reports the aggregate's column.
type projectCount struct{ countNode }

func (p *projectCount) Cols() []Column { return []Column{p.out} }

// pruneColumns removes projection outputs and scan columns nothing reads.
func pruneColumns(n Node, need map[ColID]bool) {
	switch x := n.(type) {
	case *ProjectNode:
		var exprs []Expr
		var out []Column
		for i, c := range x.Out {
			if need[c.ID] {
				exprs = append(exprs, x.Exprs[i])
				out = append(out, c)
			}
		}
		if len(out) == 0 && len(x.Out) > 0 {
			// Keep one column so row counts survive.
			exprs, out = x.Exprs[:1], x.Out[:1]
		}
		x.Exprs, x.Out = exprs, out
		inNeed := map[ColID]bool{}
		for _, e := range x.Exprs {
			colRefs(e, inNeed)
		}
		pruneColumns(x.In, inNeed)
	case *FilterNode:
		m := copyNeed(need)
		colRefs(x.Cond, m)
		pruneColumns(x.In, m)
	case *SortNode:
		m := copyNeed(need)
		for _, k := range x.Keys {
			colRefs(k.E, m)
		}
		pruneColumns(x.In, m)
	case *TopKNode:
		m := copyNeed(need)
		for _, k := range x.Keys {
			colRefs(k.E, m)
		}
		pruneColumns(x.In, m)
	case *LimitNode:
		pruneColumns(x.In, need)
	case *DistinctNode:
		m := copyNeed(need)
		for _, c := range x.Cols() {
			m[c.ID] = true
		}
		pruneColumns(x.In, m)
	case *AggregateNode:
		m := map[ColID]bool{}
		for _, k := range x.Keys {
			colRefs(k, m)
		}
		for _, a := range x.Aggs {
			for _, e := range a.Args {
				colRefs(e, m)
			}
		}
		pruneColumns(x.In, m)
	case *JoinNode:
		m := copyNeed(need)
		if x.Cond != nil {
			colRefs(x.Cond, m)
		}
		pruneColumns(x.Left, m)
		pruneColumns(x.Right, m)
	case *UnnestNode:
		m := copyNeed(need)
		colRefs(x.Arr, m)
		pruneColumns(x.In, m)
	case *RecordAliasNode:
		m := copyNeed(need)
		if need[x.Alias.ID] || !x.Outer {
			// A cross join reads the record to drop rows without it.
			m[x.Src] = true
		}
		pruneColumns(x.In, m)
	case *WindowNode:
		// Calls nothing reads are dropped (dropEmptyWindows removes the
		// node when none is left).
		m := copyNeed(need)
		var keep []*WindowFunc
		for _, f := range x.Funcs {
			if !need[f.Out.ID] {
				continue
			}
			keep = append(keep, f)
			for _, e := range f.Args {
				colRefs(e, m)
			}
			if f.Default != nil {
				colRefs(f.Default, m)
			}
			for _, e := range f.Partition {
				colRefs(e, m)
			}
			for _, k := range f.Order {
				colRefs(k.E, m)
			}
		}
		x.Funcs = keep
		pruneColumns(x.In, m)
	case *UnionNode:
		for i, in := range x.Ins {
			m := map[ColID]bool{}
			for _, id := range x.Maps[i] {
				m[id] = true
			}
			pruneColumns(in, m)
		}
	case *ScanNode:
		var cols []scan.Column
		var out []Column
		for i, c := range x.cols {
			if need[c.ID] {
				cols = append(cols, x.req.Columns[i])
				out = append(out, c)
			}
		}
		x.req.Columns, x.cols = cols, out
		x.byPath = map[string]ColID{}
		for i, c := range x.req.Columns {
			x.byPath[fmt.Sprintf("%d/%d/%s", c.Kind, c.Type, c.Path)] = x.cols[i].ID
		}
	case *projectCount:
		// counts need no column
		x.scan.req.Columns, x.scan.cols = nil, nil
	}
}

func copyNeed(m map[ColID]bool) map[ColID]bool {
	out := make(map[ColID]bool, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}
