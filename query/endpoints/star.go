package endpoints

import (
	"fmt"
	"strings"

	"github.com/sediment/sediment/sql/parser"
)

// starExpander rewrites `*`, `t.*` and `* EXCEPT (...)` in select lists
// into the columns they stand for, for the local query tool (endpoint
// queries keep Logflare's rule that refuses them). columns returns a
// source's columns.
type starExpander struct {
	columns func(source string) ([]string, error)
}

// cteScope is the CTEs visible at a point of a query, innermost last, with
// their output columns.
type cteScope struct {
	parent *cteScope
	names  []string
	cols   [][]string
}

func (sc *cteScope) lookup(name string) ([]string, bool) {
	for ; sc != nil; sc = sc.parent {
		for i := len(sc.names) - 1; i >= 0; i-- {
			if strings.EqualFold(sc.names[i], name) {
				return sc.cols[i], true
			}
		}
	}
	return nil, false
}

// rangeVar is a FROM item's name and columns.
type rangeVar struct {
	alias string // "" for a subquery without alias
	cols  []string
}

// query expands the stars of q and returns its output column names.
func (x *starExpander) query(q *parser.Query, sc *cteScope) ([]string, error) {
	if q.With != nil {
		inner := &cteScope{parent: sc}
		for _, c := range q.With.CTEs {
			if q.With.Recursive {
				inner.names = append(inner.names, c.Name.Name)
				inner.cols = append(inner.cols, nil)
			}
			cols, err := x.query(c.Query, inner)
			if err != nil {
				return nil, err
			}
			if q.With.Recursive {
				inner.cols[len(inner.cols)-1] = cols
			} else {
				inner.names = append(inner.names, c.Name.Name)
				inner.cols = append(inner.cols, cols)
			}
		}
		sc = inner
	}
	return x.body(q.Body, sc)
}

func (x *starExpander) body(b parser.QueryBody, sc *cteScope) ([]string, error) {
	switch b := b.(type) {
	case *parser.Query:
		return x.query(b, sc)
	case *parser.SetOp:
		left, err := x.body(b.Left, sc)
		if err != nil {
			return nil, err
		}
		if _, err := x.body(b.Right, sc); err != nil {
			return nil, err
		}
		return left, nil
	case *parser.Select:
		return x.sel(b, sc)
	}
	return nil, nil
}

func (x *starExpander) sel(s *parser.Select, sc *cteScope) ([]string, error) {
	var vars []rangeVar
	if s.From != nil {
		var err error
		if vars, err = x.from(s.From, sc, nil); err != nil {
			return nil, err
		}
	}
	var items []*parser.SelectItem
	for _, it := range s.Items {
		if !it.Star {
			items = append(items, it)
			continue
		}
		expanded, err := expandStar(it, vars)
		if err != nil {
			return nil, err
		}
		items = append(items, expanded...)
	}
	s.Items = items
	// Subqueries in expressions see the same CTEs.
	var err error
	visit := func(n parser.Node) bool {
		if err != nil {
			return false
		}
		if q, ok := n.(*parser.Query); ok {
			_, err = x.query(q, sc)
			return false
		}
		return true
	}
	for _, it := range s.Items {
		if it.Expr != nil {
			parser.Inspect(it.Expr, visit)
		}
	}
	for _, e := range append([]parser.Expr{s.Where, s.Having, s.Qualify}, s.GroupBy...) {
		if e != nil {
			parser.Inspect(e, visit)
		}
	}
	if err != nil {
		return nil, err
	}
	names := make([]string, len(s.Items))
	for i, it := range s.Items {
		switch {
		case it.Alias != nil:
			names[i] = it.Alias.Name
		default:
			if cr, ok := it.Expr.(*parser.ColumnRef); ok {
				names[i] = cr.Parts[len(cr.Parts)-1].Name
			}
		}
	}
	return names, nil
}

// from returns the range variables of a FROM item, appended to vars.
func (x *starExpander) from(t parser.TableExpr, sc *cteScope, vars []rangeVar) ([]rangeVar, error) {
	alias := func(a *parser.Ident, def string) string {
		if a != nil {
			return a.Name
		}
		return def
	}
	switch t := t.(type) {
	case *parser.Join:
		vars, err := x.from(t.Left, sc, vars)
		if err != nil {
			return nil, err
		}
		if vars, err = x.from(t.Right, sc, vars); err != nil {
			return nil, err
		}
		if t.On != nil {
			parser.Inspect(t.On, func(n parser.Node) bool {
				if q, ok := n.(*parser.Query); ok && err == nil {
					_, err = x.query(q, sc)
					return false
				}
				return err == nil
			})
		}
		return vars, err
	case *parser.TableName:
		last := t.Parts[len(t.Parts)-1].Name
		if len(t.Parts) == 1 {
			if cols, ok := sc.lookup(last); ok {
				return append(vars, rangeVar{alias: alias(t.Alias, last), cols: cols}), nil
			}
		}
		cols, err := x.columns(t.Name())
		if err != nil {
			return nil, err
		}
		return append(vars, rangeVar{alias: alias(t.Alias, last), cols: cols}), nil
	case *parser.SubqueryTable:
		cols, err := x.query(t.Query, sc)
		if err != nil {
			return nil, err
		}
		return append(vars, rangeVar{alias: alias(t.Alias, ""), cols: cols}), nil
	case *parser.UnnestTable:
		// An UNNEST's element is a value under its alias, not columns a
		// star lists; `*` over it gives the element.
		if t.Alias == nil {
			return vars, nil
		}
		v := rangeVar{alias: "", cols: []string{t.Alias.Name}}
		if t.WithOffset && t.OffsetAlias != nil {
			v.cols = append(v.cols, t.OffsetAlias.Name)
		}
		return append(vars, v), nil
	}
	return vars, nil
}

// expandStar turns one star item into one item per column.
func expandStar(it *parser.SelectItem, vars []rangeVar) ([]*parser.SelectItem, error) {
	var from []rangeVar
	if it.Expr == nil {
		from = vars
	} else {
		cr, ok := it.Expr.(*parser.ColumnRef)
		if !ok || len(cr.Parts) != 1 {
			return nil, fmt.Errorf("%s: only * and <table>.* can be expanded", it.At)
		}
		for _, v := range vars {
			if v.alias != "" && strings.EqualFold(v.alias, cr.Parts[0].Name) {
				from = append(from, v)
			}
		}
		if len(from) == 0 {
			return nil, fmt.Errorf("%s: %s.* names no table of the FROM clause", it.At, cr.Parts[0].Name)
		}
	}
	except := map[string]bool{}
	for _, e := range it.Except {
		except[strings.ToLower(e.Name)] = true
	}
	var out []*parser.SelectItem
	for _, v := range from {
		for _, c := range v.cols {
			if c == "" || except[strings.ToLower(c)] {
				continue
			}
			ref := &parser.ColumnRef{At: it.At, Parts: []parser.Ident{{At: it.At, Name: c, Quoted: true}}}
			if v.alias != "" {
				ref.Parts = append([]parser.Ident{{At: it.At, Name: v.alias, Quoted: true}}, ref.Parts...)
			}
			out = append(out, &parser.SelectItem{At: it.At, Expr: ref, Alias: &parser.Ident{At: it.At, Name: c, Quoted: true}})
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: * selects no column", it.At)
	}
	return out, nil
}
