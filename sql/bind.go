package sql

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/sediment/sediment/internal/vec"
	"github.com/sediment/sediment/sql/fn"
	"github.com/sediment/sediment/sql/parser"
	"github.com/sediment/sediment/sql/scan"
)

// Catalog resolves source names to tables for one query. The engine gives
// each query a catalog that takes one snapshot per source, so that every
// reference to a source in the query sees the same data.
type Catalog interface {
	Table(name string) (scan.Table, error)
}

// QueryError is an error in a query that its author can fix: a name that
// does not resolve, a type mismatch, an unsupported construct. The message
// says what and where.
type QueryError struct {
	Msg string
	Pos parser.Pos
}

func (e *QueryError) Error() string {
	if e.Pos.Line > 0 {
		return fmt.Sprintf("%s at [%d:%d]", e.Msg, e.Pos.Line, e.Pos.Col)
	}
	return e.Msg
}

func errAt(pos parser.Pos, format string, args ...any) error {
	return &QueryError{Msg: fmt.Sprintf(format, args...), Pos: pos}
}

// binder turns a parsed query into a logical plan.
type binder struct {
	cat    Catalog
	params map[string]string
	now    time.Time
	nextID ColID
	// fromRoot is the FROM tree of the SELECT being bound: names of
	// records resolve through it.
	fromRoot Node
}

func (b *binder) newCol(name string, t ColType) Column {
	b.nextID++
	return Column{ID: b.nextID, Name: name, T: t}
}

// rangeVar is a name in a FROM clause: a source, a subquery or CTE, or an
// unnested element.
type rangeVar struct {
	name string
	kind rvKind
	node Node // the node producing the variable's columns
	scan *ScanNode
	cols []Column // subquery output columns
	elem Column   // unnest or record alias element
}

type rvKind uint8

const (
	rvTable rvKind = iota + 1
	rvSubquery
	rvElem
)

type scope struct {
	vars []*rangeVar
	// agg, when set, binds expressions after aggregation: aggregate calls
	// become aggregate outputs and other columns must match group keys.
	agg *aggCtx
	// aliases are the SELECT list's named expressions, visible to GROUP BY,
	// HAVING and ORDER BY.
	aliases map[string]parser.Expr
	// outer is the enclosing query's scope (for EXISTS over UNNEST of an
	// outer array).
	outer *scope
	// elemVars are extra names bound inside EXISTS(... UNNEST ...).
	clause string
	// win, when set, collects window function calls: they are allowed
	// here (SELECT list, QUALIFY, ORDER BY). Elsewhere winErr, if set,
	// says why a window call is not allowed.
	win    *winCtx
	winErr string
}

func (s *scope) find(name string) *rangeVar {
	for i := len(s.vars) - 1; i >= 0; i-- {
		if s.vars[i].name == name {
			return s.vars[i]
		}
	}
	for i := len(s.vars) - 1; i >= 0; i-- {
		if strings.EqualFold(s.vars[i].name, name) {
			return s.vars[i]
		}
	}
	return nil
}

// bindQuery binds a full query (WITH, body, ORDER BY, LIMIT).
func (b *binder) bindQuery(q *parser.Query, outer *scope) (Node, error) {
	if sel, ok := q.Body.(*parser.Select); ok {
		return b.bindSelect(sel, q.OrderBy, q.Limit, q.Offset, outer)
	}
	n, err := b.bindBody(q.Body, outer)
	if err != nil {
		return nil, err
	}
	if len(q.OrderBy) > 0 {
		cols := n.Cols()
		var keys []SortKey
		for _, o := range q.OrderBy {
			e, err := b.resolveOutputRef(o.Expr, cols)
			if err != nil {
				return nil, err
			}
			keys = append(keys, sortKey(e, o))
		}
		n = &SortNode{In: n, Keys: keys}
	}
	return b.applyLimit(n, q.Limit, q.Offset)
}

// bindBody binds a query body that is not a plain SELECT.
func (b *binder) bindBody(body parser.QueryBody, outer *scope) (Node, error) {
	switch body := body.(type) {
	case *parser.Select:
		return b.bindSelect(body, nil, nil, nil, outer)
	case *parser.Query:
		return b.bindQuery(body, outer)
	case *parser.SetOp:
		if body.Op != parser.Union {
			return nil, errAt(body.At, "%s is not supported; use UNION ALL", body.Op)
		}
		l, err := b.bindBody(body.Left, outer)
		if err != nil {
			return nil, err
		}
		r, err := b.bindBody(body.Right, outer)
		if err != nil {
			return nil, err
		}
		u, err := b.union(l, r, body.At)
		if err != nil {
			return nil, err
		}
		if body.Quantifier != parser.QuantAll {
			return &DistinctNode{In: u}, nil
		}
		return u, nil
	}
	return nil, fmt.Errorf("unsupported query body %T", body)
}

// union builds UNION ALL of two nodes (flattening nested unions), unifying
// column types.
func (b *binder) union(l, r Node, pos parser.Pos) (Node, error) {
	var ins []Node
	for _, n := range []Node{l, r} {
		if u, ok := n.(*UnionNode); ok && len(ins) == 0 {
			ins = append(ins, u.Ins...)
			continue
		}
		ins = append(ins, n)
	}
	width := len(ins[0].Cols())
	for _, in := range ins[1:] {
		if len(in.Cols()) != width {
			return nil, errAt(pos, "Queries in UNION ALL have mismatched column count; query 1 has %d columns, query %d has %d columns", width, len(ins), len(in.Cols()))
		}
	}
	u := &UnionNode{Ins: ins}
	for c := 0; c < width; c++ {
		t := ins[0].Cols()[c].T
		for _, in := range ins[1:] {
			nt, ok := commonType(t, in.Cols()[c].T)
			if !ok {
				return nil, errAt(pos, "Column %d in UNION ALL has incompatible types: %s, %s", c+1, t, in.Cols()[c].T)
			}
			t = nt
		}
		u.Out = append(u.Out, b.newCol(ins[0].Cols()[c].Name, t))
	}
	// Cast branches whose column type differs.
	for i, in := range ins {
		cols := in.Cols()
		var proj *ProjectNode
		m := make([]ColID, width)
		for c := 0; c < width; c++ {
			m[c] = cols[c].ID
			if cols[c].T != u.Out[c].T {
				if proj == nil {
					proj = &ProjectNode{In: in}
					for _, cc := range cols {
						proj.Exprs = append(proj.Exprs, &ColRef{ID: cc.ID, T: cc.T, Name: cc.Name})
						proj.Out = append(proj.Out, cc)
					}
				}
				e, err := b.coerce(&ColRef{ID: cols[c].ID, T: cols[c].T, Name: cols[c].Name}, u.Out[c].T)
				if err != nil {
					return nil, err
				}
				nc := b.newCol(cols[c].Name, u.Out[c].T)
				proj.Exprs[c] = e
				proj.Out[c] = nc
				m[c] = nc.ID
			}
		}
		if proj != nil {
			ins[i] = proj
		}
		u.Maps = append(u.Maps, m)
	}
	return u, nil
}

// commonType is the supertype two column types unify to.
func commonType(a, b ColType) (ColType, bool) {
	switch {
	case a == b:
		return a, true
	case a.V == vec.Unknown:
		return b, true
	case b.V == vec.Unknown:
		return a, true
	case a.V.IsNumeric() && b.V.IsNumeric():
		return ColType{V: vec.Float64}, true
	case a.V == vec.List && b.V == vec.List && (a.Elem == vec.Unknown || b.Elem == vec.Unknown):
		return ColType{V: vec.List}, true
	}
	return ColType{}, false
}

// coerce casts e to type t (for unifying branches).
func (b *binder) coerce(e Expr, t ColType) (Expr, error) {
	if e.Type() == t {
		return e, nil
	}
	if l, ok := e.(*Literal); ok && l.D.Null {
		return nullLit(t.V), nil
	}
	bound, err := fn.BindCast(argOf(e), t.V, false, fn.BindInfo{Now: b.now})
	if err != nil {
		return nil, err
	}
	return &Call{Name: "cast_" + strings.ToLower(t.V.String()), F: bound, Args: []Expr{e}, Info: []fn.Arg{argOf(e)}, T: t}, nil
}

func argOf(e Expr) fn.Arg {
	a := fn.Arg{Type: e.Type().V, Elem: e.Type().Elem}
	if l, ok := e.(*Literal); ok {
		d := l.D
		a.Const = &d
	}
	return a
}

func sortKey(e Expr, o *parser.OrderItem) SortKey {
	k := SortKey{E: e, Desc: o.Desc}
	// BigQuery: NULLs first ascending, last descending, unless written.
	switch o.Nulls {
	case parser.NullsFirst:
		k.NullsLast = false
	case parser.NullsLast:
		k.NullsLast = true
	default:
		k.NullsLast = o.Desc
	}
	return k
}

// resolveOutputRef binds an ORDER BY key over a set operation's output: an
// ordinal or an output column name.
func (b *binder) resolveOutputRef(e parser.Expr, cols []Column) (Expr, error) {
	switch x := e.(type) {
	case *parser.IntLit:
		if x.Value < 1 || int(x.Value) > len(cols) {
			return nil, errAt(x.At, "ORDER BY column number %d is out of range; there are %d columns", x.Value, len(cols))
		}
		c := cols[x.Value-1]
		return &ColRef{ID: c.ID, T: c.T, Name: c.Name}, nil
	case *parser.ColumnRef:
		if len(x.Parts) == 1 {
			for _, c := range cols {
				if strings.EqualFold(c.Name, x.Parts[0].Name) {
					return &ColRef{ID: c.ID, T: c.T, Name: c.Name}, nil
				}
			}
		}
	}
	return nil, errAt(e.Pos(), "ORDER BY of a set operation must name an output column or use a column number")
}

func (b *binder) applyLimit(n Node, limit, offset parser.Expr) (Node, error) {
	if limit == nil && offset == nil {
		return n, nil
	}
	count, off := int64(-1), int64(0)
	var err error
	if limit != nil {
		if count, err = b.constInt(limit, "LIMIT"); err != nil {
			return nil, err
		}
	}
	if offset != nil {
		if off, err = b.constInt(offset, "OFFSET"); err != nil {
			return nil, err
		}
	}
	return &LimitNode{In: n, Count: count, Offset: off}, nil
}

// constInt evaluates a LIMIT/OFFSET expression.
func (b *binder) constInt(e parser.Expr, what string) (int64, error) {
	x, err := b.bindExpr(e, &scope{clause: what})
	if err != nil {
		return 0, err
	}
	x, err = foldExpr(x, b.now)
	if err != nil {
		return 0, err
	}
	l, ok := x.(*Literal)
	if !ok || l.D.Null {
		return 0, errAt(e.Pos(), "%s expects an integer literal or parameter", what)
	}
	var v int64
	switch l.D.Type {
	case vec.Int64:
		v = l.D.Int
	case vec.String:
		n, err := strconv.ParseInt(strings.TrimSpace(l.D.Str), 10, 64)
		if err != nil {
			return 0, errAt(e.Pos(), "%s expects an integer, got %q", what, l.D.Str)
		}
		v = n
	default:
		return 0, errAt(e.Pos(), "%s expects an integer, got %s", what, l.D.Type)
	}
	if v < 0 {
		return 0, errAt(e.Pos(), "%s must not be negative", what)
	}
	return v, nil
}

// ---------------------------------------------------------------------------
// FROM

func aliasName(alias *parser.Ident, def string) string {
	if alias != nil {
		return alias.Name
	}
	return def
}

// bindFrom binds a FROM item, adding its range variables to sc, and returns
// the node producing its rows. left is the node of the items before it (for
// UNNEST of their arrays), nil for the first item.
func (b *binder) bindFrom(t parser.TableExpr, sc *scope, left Node) (Node, error) {
	switch t := t.(type) {
	case *parser.TableName:
		if t.Ref == parser.RefCTE && t.CTE != nil {
			n, err := b.bindQuery(t.CTE.Query, nil)
			if err != nil {
				return nil, err
			}
			sc.vars = append(sc.vars, &rangeVar{name: aliasName(t.Alias, t.CTE.Name.Name), kind: rvSubquery, node: n, cols: n.Cols()})
			return b.crossWith(left, n), nil
		}
		tb, err := b.cat.Table(t.Name())
		if err != nil {
			return nil, errAt(t.At, "%v", err)
		}
		def := t.Parts[len(t.Parts)-1].Name
		s := &ScanNode{Table: tb, Alias: aliasName(t.Alias, def), byPath: map[string]ColID{}}
		s.req.TimeMin, s.req.TimeMax = scan.MinTime, scan.MaxTime
		sc.vars = append(sc.vars, &rangeVar{name: s.Alias, kind: rvTable, node: s, scan: s})
		return b.crossWith(left, s), nil
	case *parser.SubqueryTable:
		n, err := b.bindQuery(t.Query, nil)
		if err != nil {
			return nil, err
		}
		sc.vars = append(sc.vars, &rangeVar{name: aliasName(t.Alias, ""), kind: rvSubquery, node: n, cols: n.Cols()})
		return b.crossWith(left, n), nil
	case *parser.UnnestTable:
		in := left
		if in == nil {
			in = &ValuesNode{}
		}
		return b.bindUnnest(t, sc, in, false)
	case *parser.Join:
		return b.bindFromItem(t, sc, left)
	case *parser.TableFunc:
		return nil, errAt(t.At, "Table-valued function %s is not supported", t.Call.FuncName())
	}
	return nil, fmt.Errorf("unsupported FROM item %T", t)
}

func (b *binder) crossWith(left, right Node) Node {
	if left == nil {
		return right
	}
	return &JoinNode{Kind: JoinCross, Left: left, Right: right}
}

func andOf(es []Expr) Expr {
	if len(es) == 1 {
		return es[0]
	}
	return &AndExpr{Args: es}
}

// bindUnnest binds UNNEST(expr) over the rows of in. An object (one record
// per row) becomes a RecordAliasNode; an array an UnnestNode.
func (b *binder) bindUnnest(u *parser.UnnestTable, sc *scope, in Node, outer bool) (Node, error) {
	arr, err := b.bindExprWant(u.Expr, sc, wantContainer)
	if err != nil {
		return nil, err
	}
	name := aliasName(u.Alias, "")
	if name == "" {
		if cr, ok := u.Expr.(*parser.ColumnRef); ok {
			name = cr.Parts[len(cr.Parts)-1].Name
		}
	}
	switch arr.Type().V {
	case vec.RowRef:
		src, ok := arr.(*ColRef)
		if !ok {
			return nil, errAt(u.At, "UNNEST of a computed record is not supported")
		}
		at := arr.Type()
		at.Single = true
		alias := b.newCol(name, at)
		if u.WithOffset {
			return nil, errAt(u.At, "WITH OFFSET over a record is not supported")
		}
		sc.vars = append(sc.vars, &rangeVar{name: name, kind: rvElem, elem: alias})
		return &RecordAliasNode{In: in, Src: src.ID, Alias: alias, Outer: outer}, nil
	case vec.List:
	case vec.Unknown:
		// A field that was never ingested: an empty array.
		arr = &Literal{D: fn.Datum{Type: vec.List, Null: true}}
	default:
		return nil, errAt(u.At, "Values referenced in UNNEST must be arrays. UNNEST contains expression of type %s", arr.Type())
	}
	et := ColType{V: arr.Type().Elem}
	if et.V == vec.Unknown {
		et.V = vec.JSON // record elements, read by field
	}
	un := &UnnestNode{In: in, Arr: arr, Elem: b.newCol(name, et), Outer: outer}
	if u.WithOffset {
		oc := b.newCol(aliasName(u.OffsetAlias, "offset"), ColType{V: vec.Int64})
		un.Offset = &oc
		sc.vars = append(sc.vars, &rangeVar{name: oc.Name, kind: rvElem, elem: oc})
	}
	un.elemChild = -1
	if cr, ok := arr.(*ColRef); ok {
		un.arrScan, un.arrCol = traceScanCol(in, cr.ID)
		if un.arrScan != nil && arr.Type().Elem == vec.Unknown {
			un.elemChild = wholeElemChild(&un.arrScan.req.Columns[un.arrCol])
		}
	}
	sc.vars = append(sc.vars, &rangeVar{name: name, kind: rvElem, node: un, elem: un.Elem})
	return un, nil
}

// wholeElemChild makes an array column's elements carry their whole value
// as JSON text (a child with an empty path) and returns its index.
func wholeElemChild(c *scan.Column) int {
	for i, e := range c.Elem {
		if e.Path == "" && e.Kind == scan.Record {
			return i
		}
	}
	c.Elem = append(c.Elem, scan.Column{Kind: scan.Record})
	return len(c.Elem) - 1
}

// traceScanCol follows pass-through columns down to the scan column that
// produces id, if there is one.
func traceScanCol(n Node, id ColID) (*ScanNode, int) {
	switch n := n.(type) {
	case *ScanNode:
		for i, c := range n.cols {
			if c.ID == id {
				return n, i
			}
		}
	case *ProjectNode:
		for i, c := range n.Out {
			if c.ID == id {
				if cr, ok := n.Exprs[i].(*ColRef); ok {
					return traceScanCol(n.In, cr.ID)
				}
				return nil, 0
			}
		}
	case *UnionNode:
		return nil, 0
	case *AggregateNode:
		return nil, 0
	default:
		for _, in := range n.Inputs() {
			if colIndex(in.Cols(), id) >= 0 {
				return traceScanCol(in, id)
			}
		}
	}
	return nil, 0
}

// ---------------------------------------------------------------------------
// Columns of sources and records

// want says what a name is needed as, when a path holds both a scalar and a
// record or array (events disagreed).
type want uint8

const (
	wantValue want = iota
	wantContainer
)

// requireScanPath makes the scan produce the field at path and returns it
// as an expression; a field no event ever had reads as NULL.
func (b *binder) requireScanPath(s *ScanNode, path string, w want) (Expr, error) {
	f := s.Table.Schema().Lookup(path)
	if f == nil {
		if w == wantContainer {
			return nullLit(vec.Unknown), nil
		}
		return nullLit(vec.Unknown), nil
	}
	var col scan.Column
	switch {
	case w == wantContainer && f.Array:
		col = scan.Column{Path: path, Kind: scan.ArrayOf, Type: f.ElemType}
	case w == wantContainer && f.Record:
		col = scan.Column{Path: path, Kind: scan.Record}
	case f.Type != vec.Unknown:
		col = scan.Column{Path: path, Type: f.Type}
	case f.Record:
		col = scan.Column{Path: path, Kind: scan.Record}
	case f.Array:
		col = scan.Column{Path: path, Kind: scan.ArrayOf, Type: f.ElemType}
	default:
		return nullLit(vec.Unknown), nil
	}
	c := b.scanColumn(s, col)
	return &ColRef{ID: c.ID, T: c.T, Name: lastPart(path)}, nil
}

func lastPart(path string) string {
	if i := strings.LastIndexByte(path, '.'); i >= 0 {
		return path[i+1:]
	}
	return path
}

func (b *binder) scanColumn(s *ScanNode, col scan.Column) Column {
	key := fmt.Sprintf("%d/%d/%s", col.Kind, col.Type, col.Path)
	if id, ok := s.byPath[key]; ok {
		return s.cols[colIndex(s.cols, id)]
	}
	var t ColType
	switch col.Kind {
	case scan.Value:
		t = ColType{V: col.Type}
	case scan.Record:
		t = ColType{V: vec.RowRef}
	case scan.ArrayOf:
		t = ColType{V: vec.List, Elem: col.Type}
	}
	c := b.newCol(lastPart(col.Path), t)
	s.req.Columns = append(s.req.Columns, col)
	s.cols = append(s.cols, c)
	s.byPath[key] = c.ID
	return c
}

// requireField makes the field at path (relative to record column id) a
// column available at n's output, threading it up from the scan through
// every node in between, and returns it.
func (b *binder) requireField(n Node, id ColID, path []string, w want) (Expr, error) {
	switch n := n.(type) {
	case *ScanNode:
		i := colIndex(n.cols, id)
		if i < 0 {
			return nil, fmt.Errorf("internal: column %d not in scan", id)
		}
		c := n.req.Columns[i]
		switch c.Kind {
		case scan.Record:
			return b.requireScanPath(n, c.Path+"."+strings.Join(path, "."), w)
		case scan.ArrayOf:
			return nil, fmt.Errorf("Cannot access field %s on a value with type ARRAY<STRUCT>", path[0])
		}
		return nil, fmt.Errorf("Cannot access field %s on a value with type %s", path[0], n.cols[i].T)
	case *ProjectNode:
		for i, c := range n.Out {
			if c.ID != id {
				continue
			}
			cr, ok := n.Exprs[i].(*ColRef)
			if !ok {
				if l, ok := n.Exprs[i].(*Literal); ok && l.D.Null {
					return nullLit(vec.Unknown), nil
				}
				return nil, fmt.Errorf("Cannot access field %s of a computed value", path[0])
			}
			e, err := b.requireField(n.In, cr.ID, path, w)
			if err != nil {
				return nil, err
			}
			return b.passThrough(n, e), nil
		}
		return nil, fmt.Errorf("internal: column %d not in projection", id)
	case *RecordAliasNode:
		if id == n.Alias.ID {
			return b.requireField(n.In, n.Src, path, w)
		}
		return b.requireField(n.In, id, path, w)
	case *UnnestNode:
		if id == n.Elem.ID {
			return b.requireElemField(n, path, w)
		}
		return b.requireField(n.In, id, path, w)
	case *UnionNode:
		ci := colIndex(n.Out, id)
		if ci < 0 {
			return nil, fmt.Errorf("internal: column %d not in union", id)
		}
		key := fmt.Sprintf("%d/%d/%s", id, w, strings.Join(path, "."))
		if fid, ok := n.fields[key]; ok {
			c := n.Out[colIndex(n.Out, fid)]
			return &ColRef{ID: c.ID, T: c.T, Name: c.Name}, nil
		}
		var t ColType
		var ids []ColID
		for i, in := range n.Ins {
			e, err := b.requireField(in, n.Maps[i][ci], path, w)
			if err != nil {
				return nil, err
			}
			e, err = b.materializeIn(in, e, i, n)
			if err != nil {
				return nil, err
			}
			cr := e.(*ColRef)
			if i == 0 {
				t = cr.T
			} else if nt, ok := commonType(t, cr.T); ok {
				t = nt
			} else {
				return nil, fmt.Errorf("Field %s has incompatible types in UNION ALL branches: %s, %s", strings.Join(path, "."), t, cr.T)
			}
			ids = append(ids, cr.ID)
		}
		nc := b.newCol(path[len(path)-1], t)
		n.Out = append(n.Out, nc)
		for i := range n.Ins {
			n.Maps[i] = append(n.Maps[i], ids[i])
		}
		if n.fields == nil {
			n.fields = map[string]ColID{}
		}
		n.fields[key] = nc.ID
		return &ColRef{ID: nc.ID, T: t, Name: nc.Name}, nil
	case *AggregateNode:
		for i, c := range n.Out {
			if c.ID == id && i < len(n.Keys) {
				return nil, fmt.Errorf("Cannot access field %s of a grouping key", path[0])
			}
		}
		return nil, fmt.Errorf("Cannot access field %s of an aggregate", path[0])
	case *WindowNode:
		if n.isOutput(id) {
			return nil, fmt.Errorf("Cannot access field %s of an analytic function result", path[0])
		}
		return b.requireField(n.In, id, path, w)
	default:
		for _, in := range n.Inputs() {
			if colIndex(in.Cols(), id) >= 0 {
				return b.requireField(in, id, path, w)
			}
		}
	}
	return nil, fmt.Errorf("internal: column %d not found", id)
}

// materializeIn makes a union branch expression a column of the branch
// (a NULL literal for a field the branch never had becomes a projected
// column), returning a ColRef.
func (b *binder) materializeIn(in Node, e Expr, branch int, u *UnionNode) (Expr, error) {
	if cr, ok := e.(*ColRef); ok {
		return cr, nil
	}
	p, ok := in.(*ProjectNode)
	if !ok {
		cols := in.Cols()
		p = &ProjectNode{In: in}
		for _, c := range cols {
			p.Exprs = append(p.Exprs, &ColRef{ID: c.ID, T: c.T, Name: c.Name})
			p.Out = append(p.Out, c)
		}
		u.Ins[branch] = p
	}
	c := b.newCol("f", e.Type())
	p.Exprs = append(p.Exprs, e)
	p.Out = append(p.Out, c)
	return &ColRef{ID: c.ID, T: c.T, Name: c.Name}, nil
}

// passThrough adds a column to a projection unchanged (same id), or a
// computed column for a constant, and returns its reference.
func (b *binder) passThrough(p *ProjectNode, e Expr) Expr {
	cr, ok := e.(*ColRef)
	if !ok {
		return e // a constant: usable anywhere
	}
	if colIndex(p.Out, cr.ID) < 0 {
		p.Exprs = append(p.Exprs, cr)
		p.Out = append(p.Out, Column{ID: cr.ID, Name: cr.Name, T: cr.T})
	}
	return cr
}

// requireElemField makes a field of an unnested record element a column of
// the unnest.
func (b *binder) requireElemField(u *UnnestNode, path []string, w want) (Expr, error) {
	p := strings.Join(path, ".")
	for _, f := range u.Fields {
		if f.path == p {
			return &ColRef{ID: f.col.ID, T: f.col.T, Name: f.col.Name}, nil
		}
	}
	if u.arrScan == nil {
		if l, ok := u.Arr.(*Literal); ok && l.D.Null {
			// The array is a field never ingested (a source with no events
			// yet, or none with this field): it has no elements, and their
			// fields read as NULL like any field that never arrived.
			return nullLit(vec.Unknown), nil
		}
		return nil, fmt.Errorf("Cannot access field %s of an array element that is not a stored record", path[0])
	}
	sc := &u.arrScan.req.Columns[u.arrCol]
	field := u.arrScan.Table.Schema().Lookup(sc.Path)
	var ft scan.Column
	found := false
	if field != nil {
		for _, ef := range field.ElemFields {
			if ef.Path == p {
				found = true
				if ef.Type != vec.Unknown && !(w == wantContainer && ef.Record) {
					ft = scan.Column{Path: p, Type: ef.Type}
				} else {
					ft = scan.Column{Path: p, Kind: scan.Record}
				}
			}
		}
	}
	if !found {
		return nullLit(vec.Unknown), nil
	}
	t := ColType{V: ft.Type}
	if ft.Kind == scan.Record {
		t = ColType{V: vec.JSON}
	}
	sc.Elem = append(sc.Elem, ft)
	c := b.newCol(path[len(path)-1], t)
	u.Fields = append(u.Fields, unnestField{path: p, col: c, child: len(sc.Elem) - 1})
	// The scan's element is now a struct: make sure the whole-element
	// child exists too when the element itself is read.
	return &ColRef{ID: c.ID, T: t, Name: c.Name}, nil
}

// resolveIn resolves a dotted name in a scope.
func (b *binder) resolveIn(cr *parser.ColumnRef, sc *scope, w want) (Expr, error) {
	parts := make([]string, len(cr.Parts))
	for i, p := range cr.Parts {
		parts[i] = p.Name
	}
	// A range variable named by the first part.
	if rv := sc.find(parts[0]); rv != nil {
		e, err := b.resolveVarPath(rv, parts[1:], w)
		if err != nil {
			return nil, errAt(cr.At, "%v", err)
		}
		return e, nil
	}
	// A column of exactly one range variable (tables and subqueries before
	// fields of unnested records).
	var hits []*rangeVar
	for _, rv := range sc.vars {
		if b.varHas(rv, parts[0]) {
			hits = append(hits, rv)
		}
	}
	if len(hits) > 1 {
		var direct []*rangeVar
		for _, h := range hits {
			if h.kind != rvElem {
				direct = append(direct, h)
			}
		}
		if len(direct) == 1 {
			hits = direct
		} else if len(direct) > 1 {
			return nil, errAt(cr.At, "Column name %s is ambiguous", parts[0])
		}
	}
	if len(hits) >= 1 {
		e, err := b.resolveColumn(hits[len(hits)-1], parts, w)
		if err != nil {
			return nil, errAt(cr.At, "%v", err)
		}
		return e, nil
	}
	if sc.outer != nil {
		return b.resolveIn(cr, sc.outer, w)
	}
	// A field no event of a source ever had reads as NULL (Studio names
	// fields that may never arrive). Names of subqueries and CTEs are fixed.
	for _, rv := range sc.vars {
		if rv.kind == rvTable || rv.kind == rvElem && rv.elem.T.V != vec.Int64 {
			return nullLit(vec.Unknown), nil
		}
	}
	return nil, errAt(cr.At, "Unrecognized name: %s", parts[0])
}

// varHas reports whether a range variable has a column named name.
func (b *binder) varHas(rv *rangeVar, name string) bool {
	switch rv.kind {
	case rvTable:
		return rv.scan.Table.Schema().Lookup(name) != nil || isBaseColumn(name)
	case rvSubquery:
		for _, c := range rv.cols {
			if strings.EqualFold(c.Name, name) {
				return true
			}
		}
	case rvElem:
		return b.elemHas(rv, name)
	}
	return false
}

func isBaseColumn(name string) bool {
	return name == "timestamp" || name == "id" || name == "event_message"
}

// elemHas reports whether an element record has a field, without adding
// columns.
func (b *binder) elemHas(rv *rangeVar, name string) bool {
	switch rv.elem.T.V {
	case vec.RowRef:
		s, path := b.recordOrigin(rv)
		if s == nil {
			return false
		}
		f := s.Table.Schema().Lookup(path + "." + name)
		return f != nil
	case vec.JSON:
		un, ok := rv.node.(*UnnestNode)
		if !ok || un.arrScan == nil {
			return false
		}
		f := un.arrScan.Table.Schema().Lookup(un.arrScan.req.Columns[un.arrCol].Path)
		if f == nil {
			return false
		}
		for _, ef := range f.ElemFields {
			if ef.Path == name || strings.HasPrefix(ef.Path, name+".") {
				return true
			}
		}
	}
	return false
}

// recordOrigin finds the scan and path a record alias reads.
func (b *binder) recordOrigin(rv *rangeVar) (*ScanNode, string) {
	return b.originOf(b.rootFor(rv), rv.elem.ID)
}

// rootFor is set while binding a SELECT: the FROM tree, used to trace
// columns to their origin.
func (b *binder) rootFor(rv *rangeVar) Node { return b.fromRoot }

func (b *binder) originOf(n Node, id ColID) (*ScanNode, string) {
	switch n := n.(type) {
	case nil:
		return nil, ""
	case *ScanNode:
		if i := colIndex(n.cols, id); i >= 0 && n.req.Columns[i].Kind == scan.Record {
			return n, n.req.Columns[i].Path
		}
		return nil, ""
	case *RecordAliasNode:
		if id == n.Alias.ID {
			return b.originOf(n.In, n.Src)
		}
		return b.originOf(n.In, id)
	case *ProjectNode:
		for i, c := range n.Out {
			if c.ID == id {
				if cr, ok := n.Exprs[i].(*ColRef); ok {
					return b.originOf(n.In, cr.ID)
				}
				return nil, ""
			}
		}
		return nil, ""
	default:
		for _, in := range n.Inputs() {
			if colIndex(in.Cols(), id) >= 0 {
				return b.originOf(in, id)
			}
		}
	}
	return nil, ""
}

// resolveVarPath resolves path inside range variable rv.
func (b *binder) resolveVarPath(rv *rangeVar, path []string, w want) (Expr, error) {
	switch rv.kind {
	case rvTable:
		if len(path) == 0 {
			return nil, fmt.Errorf("Selecting a whole table row (%s) is not supported; name its columns", rv.name)
		}
		return b.requireScanPath(rv.scan, strings.Join(path, "."), w)
	case rvSubquery:
		if len(path) == 0 {
			return nil, fmt.Errorf("Selecting a whole subquery row (%s) is not supported; name its columns", rv.name)
		}
		return b.resolveColumn(rv, path, w)
	case rvElem:
		e := Expr(&ColRef{ID: rv.elem.ID, T: rv.elem.T, Name: rv.elem.Name})
		if len(path) == 0 {
			return e, nil
		}
		return b.fieldOf(e, path, w)
	}
	return nil, fmt.Errorf("internal: bad range variable")
}

// resolveColumn resolves parts[0] as a column of rv and the rest as fields.
func (b *binder) resolveColumn(rv *rangeVar, parts []string, w want) (Expr, error) {
	switch rv.kind {
	case rvTable:
		return b.requireScanPath(rv.scan, strings.Join(parts, "."), w)
	case rvSubquery:
		var col *Column
		for i := range rv.cols {
			if rv.cols[i].Name == parts[0] {
				col = &rv.cols[i]
				break
			}
		}
		if col == nil {
			for i := range rv.cols {
				if strings.EqualFold(rv.cols[i].Name, parts[0]) {
					col = &rv.cols[i]
					break
				}
			}
		}
		if col == nil {
			return nil, fmt.Errorf("Name %s not found inside %s", parts[0], rv.name)
		}
		e := Expr(&ColRef{ID: col.ID, T: col.T, Name: col.Name})
		if len(parts) == 1 {
			return e, nil
		}
		return b.fieldOf(e, parts[1:], w)
	case rvElem:
		return b.fieldOf(&ColRef{ID: rv.elem.ID, T: rv.elem.T, Name: rv.elem.Name}, parts, w)
	}
	return nil, fmt.Errorf("internal: bad range variable")
}

// fieldOf resolves a field path on a record-valued expression.
func (b *binder) fieldOf(e Expr, path []string, w want) (Expr, error) {
	cr, ok := e.(*ColRef)
	if !ok {
		if l, ok := e.(*Literal); ok && l.D.Null {
			return nullLit(vec.Unknown), nil
		}
		return nil, fmt.Errorf("Cannot access field %s on a value with type %s", path[0], e.Type())
	}
	switch cr.T.V {
	case vec.RowRef, vec.JSON:
	case vec.Unknown:
		return nullLit(vec.Unknown), nil
	default:
		return nil, fmt.Errorf("Cannot access field %s on a value with type %s", path[0], cr.T)
	}
	if b.fromRoot == nil {
		return nil, fmt.Errorf("internal: no FROM to resolve field %s", path[0])
	}
	return b.requireField(b.fromRoot, cr.ID, path, w)
}

// ---------------------------------------------------------------------------
// SELECT

// aggCtx collects the aggregates and group keys of a SELECT.
type aggCtx struct {
	base  *scope
	keys  []Expr
	kcols []Column
	aggs  []*AggCall
}

func isAggregateCall(f *parser.FuncCall) bool {
	if f.Over != nil || len(f.Name) != 1 {
		return false
	}
	return aggregateNames[strings.ToLower(f.Name[0].Name)]
}

// hasAggregate reports whether an expression contains an aggregate call
// (not looking into subqueries).
func hasAggregate(e parser.Expr) bool {
	found := false
	parser.Inspect(e, func(n parser.Node) bool {
		switch n := n.(type) {
		case *parser.FuncCall:
			if isAggregateCall(n) {
				found = true
			}
		case *parser.Query:
			return false
		}
		return !found
	})
	return found
}

func (b *binder) bindSelect(sel *parser.Select, orderBy []*parser.OrderItem, limit, offset parser.Expr, outer *scope) (Node, error) {
	sc := &scope{outer: outer}
	var n Node
	saved := b.fromRoot
	defer func() { b.fromRoot = saved }()
	b.fromRoot = nil
	if sel.From != nil {
		var err error
		if n, err = b.bindFromWithRoot(sel.From, sc); err != nil {
			return nil, err
		}
	} else {
		n = &ValuesNode{}
		b.fromRoot = n
	}
	for _, it := range sel.Items {
		if it.Star {
			return nil, errAt(it.At, "restricted wildcard (*) in a result column")
		}
	}
	if sel.Where != nil {
		if hasAggregate(sel.Where) {
			return nil, errAt(sel.Where.Pos(), "Aggregate function not allowed in WHERE clause")
		}
		sc.clause = "WHERE"
		cond, err := b.bindBoolExpr(sel.Where, sc)
		if err != nil {
			return nil, err
		}
		n = &FilterNode{In: n, Cond: cond}
		b.fromRoot = n
	}
	sc.aliases = map[string]parser.Expr{}
	for _, it := range sel.Items {
		if it.Alias != nil {
			sc.aliases[strings.ToLower(it.Alias.Name)] = it.Expr
		}
	}
	aggregate := len(sel.GroupBy) > 0 || sel.Having != nil
	for _, it := range sel.Items {
		aggregate = aggregate || hasAggregate(it.Expr)
	}
	for _, o := range orderBy {
		aggregate = aggregate || hasAggregate(o.Expr)
	}
	if sel.Qualify != nil {
		aggregate = aggregate || hasAggregate(sel.Qualify)
	}
	// Window calls of the SELECT list, QUALIFY and ORDER BY.
	wc := &winCtx{}
	exprScope := sc
	if aggregate {
		ac := &aggCtx{base: sc}
		sc.clause = "GROUP BY"
		for _, g := range sel.GroupBy {
			ge, err := b.groupExpr(g, sel, sc)
			if err != nil {
				return nil, err
			}
			dup := false
			for _, k := range ac.keys {
				if exprEqual(k, ge) {
					dup = true
				}
			}
			if dup {
				continue
			}
			if ge.Type().V == vec.RowRef || ge.Type().V == vec.List {
				return nil, errAt(g.Pos(), "Grouping by expressions of type %s is not allowed", ge.Type())
			}
			ac.keys = append(ac.keys, ge)
			ac.kcols = append(ac.kcols, b.newCol(exprName(g), ge.Type()))
		}
		exprScope = &scope{vars: sc.vars, agg: ac, aliases: sc.aliases, outer: outer, win: wc}
		// Bind everything that reads aggregates first, so the aggregate
		// node knows all of them.
		items := make([]Expr, len(sel.Items))
		for i, it := range sel.Items {
			e, err := b.bindExpr(it.Expr, exprScope)
			if err != nil {
				return nil, err
			}
			items[i] = e
		}
		var having Expr
		if sel.Having != nil {
			hsc := *exprScope
			hsc.clause, hsc.win = "HAVING", nil
			h, err := b.bindBoolExpr(sel.Having, &hsc)
			if err != nil {
				return nil, err
			}
			having = h
		}
		qualify, err := b.bindQualify(sel, exprScope, wc)
		if err != nil {
			return nil, err
		}
		okeys, err := b.bindOrderKeys(orderBy, sel, items, exprScope)
		if err != nil {
			return nil, err
		}
		an := &AggregateNode{In: n, Keys: ac.keys}
		an.Out = append(an.Out, ac.kcols...)
		for _, a := range ac.aggs {
			an.Aggs = append(an.Aggs, a)
			an.Out = append(an.Out, a.Out)
		}
		n = an
		if having != nil {
			n = &FilterNode{In: n, Cond: having}
		}
		n = wc.windowNode(n)
		if qualify != nil {
			n = &FilterNode{In: n, Cond: qualify}
		}
		return b.finishSelect(sel, n, items, okeys, limit, offset)
	}
	sc.win = wc
	items := make([]Expr, len(sel.Items))
	for i, it := range sel.Items {
		sc.clause = "SELECT"
		e, err := b.bindExpr(it.Expr, sc)
		if err != nil {
			return nil, err
		}
		items[i] = e
	}
	qualify, err := b.bindQualify(sel, sc, wc)
	if err != nil {
		return nil, err
	}
	okeys, err := b.bindOrderKeys(orderBy, sel, items, sc)
	if err != nil {
		return nil, err
	}
	n = wc.windowNode(n)
	if qualify != nil {
		n = &FilterNode{In: n, Cond: qualify}
	}
	return b.finishSelect(sel, n, items, okeys, limit, offset)
}

// bindQualify binds the QUALIFY condition, which filters rows after the
// window functions; BigQuery requires one in the SELECT list or in QUALIFY
// itself.
func (b *binder) bindQualify(sel *parser.Select, sc *scope, wc *winCtx) (Expr, error) {
	if sel.Qualify == nil {
		return nil, nil
	}
	qsc := *sc
	qsc.clause = "QUALIFY"
	cond, err := b.bindBoolExpr(sel.Qualify, &qsc)
	if err != nil {
		return nil, err
	}
	if len(wc.funcs) == 0 {
		return nil, errAt(sel.Qualify.Pos(), "The QUALIFY clause requires analytic function to be present")
	}
	return cond, nil
}

func (b *binder) bindFromWithRoot(t parser.TableExpr, sc *scope) (Node, error) {
	// Bind FROM items left to right: a later UNNEST may read an earlier
	// item's arrays, so the tree so far is the root names resolve through.
	var n Node
	items := flattenComma(t)
	for _, it := range items {
		var err error
		n, err = b.bindFromItem(it, sc, n)
		if err != nil {
			return nil, err
		}
	}
	b.fromRoot = n
	return n, nil
}

// flattenComma splits top-level comma joins into items.
func flattenComma(t parser.TableExpr) []parser.TableExpr {
	if j, ok := t.(*parser.Join); ok && j.Kind == parser.JoinComma {
		return append(flattenComma(j.Left), j.Right)
	}
	return []parser.TableExpr{t}
}

// bindFromItem binds one FROM item with b.fromRoot tracking the tree, so
// names in ON conditions and UNNEST arguments resolve through it.
func (b *binder) bindFromItem(t parser.TableExpr, sc *scope, left Node) (Node, error) {
	if j, ok := t.(*parser.Join); ok {
		l, err := b.bindFromItem(j.Left, sc, left)
		if err != nil {
			return nil, err
		}
		b.fromRoot = l
		n, err := b.bindJoinBound(j, sc, l)
		if err != nil {
			return nil, err
		}
		b.fromRoot = n
		return n, nil
	}
	if u, ok := t.(*parser.UnnestTable); ok {
		in := left
		if in == nil {
			in = &ValuesNode{}
		}
		b.fromRoot = in
		n, err := b.bindUnnest(u, sc, in, false)
		if err != nil {
			return nil, err
		}
		b.fromRoot = n
		return n, nil
	}
	n, err := b.bindFrom(t, sc, left)
	if err != nil {
		return nil, err
	}
	b.fromRoot = n
	return n, nil
}

func (b *binder) bindJoinBound(j *parser.Join, sc *scope, l Node) (Node, error) {
	if u, ok := j.Right.(*parser.UnnestTable); ok {
		outer := j.Kind == parser.JoinLeft
		if j.On != nil {
			if bl, ok := j.On.(*parser.BoolLit); !ok || !bl.Value {
				if outer {
					return nil, errAt(j.At, "LEFT JOIN UNNEST supports only ON TRUE")
				}
				n, err := b.bindUnnest(u, sc, l, false)
				if err != nil {
					return nil, err
				}
				b.fromRoot = n
				cond, err := b.bindBoolExpr(j.On, sc)
				if err != nil {
					return nil, err
				}
				return &FilterNode{In: n, Cond: cond}, nil
			}
		}
		if j.Kind == parser.JoinRight || j.Kind == parser.JoinFull {
			return nil, errAt(j.At, "%s UNNEST is not supported", j.Kind)
		}
		return b.bindUnnest(u, sc, l, outer)
	}
	rs := &scope{}
	saved := b.fromRoot
	b.fromRoot = nil
	r, err := b.bindFromGroup(j.Right, rs)
	b.fromRoot = saved
	if err != nil {
		return nil, err
	}
	sc.vars = append(sc.vars, rs.vars...)
	jn := &JoinNode{Left: l, Right: r}
	switch j.Kind {
	case parser.JoinComma, parser.JoinCross:
		jn.Kind = JoinCross
	case parser.JoinInner:
		jn.Kind = JoinInner
	case parser.JoinLeft:
		jn.Kind = JoinLeft
	default:
		return nil, errAt(j.At, "%s is not supported", j.Kind)
	}
	b.fromRoot = jn
	if len(j.Using) > 0 {
		var conds []Expr
		ls := &scope{vars: sc.vars[:len(sc.vars)-len(rs.vars)]}
		for _, u := range j.Using {
			ref := &parser.ColumnRef{At: u.At, Parts: []parser.Ident{u}}
			le, err := b.resolveIn(ref, ls, wantValue)
			if err != nil {
				return nil, err
			}
			re, err := b.resolveIn(ref, rs, wantValue)
			if err != nil {
				return nil, err
			}
			eq, err := b.call("=", []Expr{le, re}, u.At, false)
			if err != nil {
				return nil, err
			}
			conds = append(conds, eq)
		}
		jn.Cond = andOf(conds)
	} else if j.On != nil {
		cond, err := b.bindBoolExpr(j.On, sc)
		if err != nil {
			return nil, err
		}
		jn.Cond = cond
	}
	if jn.Kind == JoinInner && (jn.Cond == nil || isTrueLit(jn.Cond)) {
		jn.Kind, jn.Cond = JoinCross, nil
	}
	if jn.Kind == JoinLeft && jn.Cond != nil && isTrueLit(jn.Cond) {
		jn.Cond = nil
	}
	return jn, nil
}

// bindFromGroup binds an independent FROM subtree (the right side of a
// join, possibly a parenthesised group).
func (b *binder) bindFromGroup(t parser.TableExpr, sc *scope) (Node, error) {
	saved := b.fromRoot
	defer func() { b.fromRoot = saved }()
	return b.bindFromWithRoot(t, sc)
}

// groupExpr binds a GROUP BY item: an ordinal, a SELECT alias, or an
// expression.
func (b *binder) groupExpr(g parser.Expr, sel *parser.Select, sc *scope) (Expr, error) {
	if il, ok := g.(*parser.IntLit); ok {
		if il.Value < 1 || int(il.Value) > len(sel.Items) {
			return nil, errAt(il.At, "GROUP BY column number %d is out of range; there are %d columns", il.Value, len(sel.Items))
		}
		return b.bindExpr(sel.Items[il.Value-1].Expr, sc)
	}
	if cr, ok := g.(*parser.ColumnRef); ok && len(cr.Parts) == 1 {
		if ae, ok := sc.aliases[strings.ToLower(cr.Parts[0].Name)]; ok && !hasAggregate(ae) {
			return b.bindExpr(ae, sc)
		}
	}
	return b.bindExpr(g, sc)
}

// orderSpec is an ORDER BY key before it is placed.
type orderSpec struct {
	item int // index into the select items, or -1
	e    Expr
	o    *parser.OrderItem
}

func (b *binder) bindOrderKeys(orderBy []*parser.OrderItem, sel *parser.Select, items []Expr, sc *scope) ([]orderSpec, error) {
	var out []orderSpec
	for _, o := range orderBy {
		if il, ok := o.Expr.(*parser.IntLit); ok {
			if il.Value < 1 || int(il.Value) > len(items) {
				return nil, errAt(il.At, "ORDER BY column number %d is out of range; there are %d columns", il.Value, len(items))
			}
			out = append(out, orderSpec{item: int(il.Value - 1), o: o})
			continue
		}
		if cr, ok := o.Expr.(*parser.ColumnRef); ok && len(cr.Parts) == 1 {
			found := -1
			for i, it := range sel.Items {
				if it.Alias != nil && strings.EqualFold(it.Alias.Name, cr.Parts[0].Name) {
					found = i
					break
				}
			}
			if found < 0 {
				for i, it := range sel.Items {
					if it.Alias == nil && strings.EqualFold(exprName(it.Expr), cr.Parts[0].Name) {
						if _, isRef := it.Expr.(*parser.ColumnRef); isRef {
							found = i
							break
						}
					}
				}
			}
			if found >= 0 {
				out = append(out, orderSpec{item: found, o: o})
				continue
			}
		}
		sc.clause = "ORDER BY"
		e, err := b.bindExpr(o.Expr, sc)
		if err != nil {
			return nil, err
		}
		spec := orderSpec{item: -1, e: e, o: o}
		for i, it := range items {
			if exprEqual(it, e) {
				spec.item = i
				break
			}
		}
		out = append(out, spec)
	}
	return out, nil
}

// finishSelect adds the projection, DISTINCT, ordering and limit.
func (b *binder) finishSelect(sel *parser.Select, n Node, items []Expr, order []orderSpec, limit, offset parser.Expr) (Node, error) {
	p := &ProjectNode{In: n}
	anon := 0
	for i, it := range sel.Items {
		name := ""
		if it.Alias != nil {
			name = it.Alias.Name
		} else if nm := exprName(it.Expr); nm != "" {
			name = nm
		} else {
			name = fmt.Sprintf("f%d_", anon)
			anon++
		}
		p.Exprs = append(p.Exprs, items[i])
		p.Out = append(p.Out, b.newCol(name, items[i].Type()))
	}
	visible := len(p.Out)
	var keys []SortKey
	for _, o := range order {
		if o.item >= 0 {
			c := p.Out[o.item]
			keys = append(keys, sortKey(&ColRef{ID: c.ID, T: c.T, Name: c.Name}, o.o))
			continue
		}
		if sel.Distinct {
			return nil, errAt(o.o.At, "ORDER BY clause expression references a column which is not visible after SELECT DISTINCT")
		}
		c := b.newCol("$order", o.e.Type())
		p.Exprs = append(p.Exprs, o.e)
		p.Out = append(p.Out, c)
		keys = append(keys, sortKey(&ColRef{ID: c.ID, T: c.T, Name: c.Name}, o.o))
	}
	var out Node = p
	if sel.Distinct {
		for _, c := range p.Out {
			if c.T.V == vec.RowRef || c.T.V == vec.List {
				return nil, errAt(sel.At, "Column %s of type %s cannot be used in SELECT DISTINCT", c.Name, c.T)
			}
		}
		out = &DistinctNode{In: out}
	}
	if len(keys) > 0 {
		for _, k := range keys {
			if t := k.E.Type().V; t == vec.RowRef || t == vec.List {
				return nil, errAt(sel.At, "ORDER BY does not support expressions of type %s", k.E.Type())
			}
		}
		out = &SortNode{In: out, Keys: keys}
	}
	if len(p.Out) > visible {
		fp := &ProjectNode{In: out}
		for _, c := range p.Out[:visible] {
			fp.Exprs = append(fp.Exprs, &ColRef{ID: c.ID, T: c.T, Name: c.Name})
			fp.Out = append(fp.Out, c)
		}
		out = fp
	}
	return b.applyLimit(out, limit, offset)
}

// exprName is the implicit output name of a SELECT expression: the last
// part of a column or field path, "" for anything else.
func exprName(e parser.Expr) string {
	switch e := e.(type) {
	case *parser.ColumnRef:
		return e.Parts[len(e.Parts)-1].Name
	case *parser.FieldAccess:
		return e.Field.Name
	}
	return ""
}
