package sql

import (
	"fmt"
	"strings"

	"github.com/sediment/sediment/internal/vec"
	"github.com/sediment/sediment/sql/parser"
	"github.com/sediment/sediment/sql/scan"
)

// Columns of sources and records: resolving a name or a dotted path to a
// range variable, a column of the scan, a field of a record or of an
// UNNEST element, and making the nodes below produce it.

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
		return b.requireScanField(n, id, path, w)
	case *ProjectNode:
		return b.requireProjectField(n, id, path, w)
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
		return b.requireUnionField(n, id, path, w)
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

// requireScanField makes the scan produce a field of its record column id.
func (b *binder) requireScanField(n *ScanNode, id ColID, path []string, w want) (Expr, error) {
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
}

// requireProjectField passes a field of a projected column through the
// projection (a projected NULL has only NULL fields).
func (b *binder) requireProjectField(n *ProjectNode, id ColID, path []string, w want) (Expr, error) {
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
}

// requireUnionField makes every branch of a UNION ALL produce the field
// (NULL where a branch never had it) and the union a column of their common
// type, once per column, path and want.
func (b *binder) requireUnionField(n *UnionNode, id ColID, path []string, w want) (Expr, error) {
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
