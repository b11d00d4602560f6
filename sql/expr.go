package sql

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/sediment/sediment/internal/vec"
	"github.com/sediment/sediment/sql/fn"
	"github.com/sediment/sediment/sql/parser"
)

// Expr is a bound scalar expression: names resolved to column ids,
// functions bound to their argument types.
type Expr interface {
	Type() ColType
	String() string
}

// ColRef reads a column.
type ColRef struct {
	ID   ColID
	T    ColType
	Name string
}

// Literal is a constant.
type Literal struct {
	D fn.Datum
}

// Call is a bound scalar function or operator.
type Call struct {
	Name string
	F    *fn.Bound
	Args []Expr // nil entries for date part arguments
	Info []fn.Arg
	T    ColType
}

// AndExpr, OrExpr and NotExpr are the three-valued logic operators,
// evaluated lazily (the right side only for rows the left leaves open).
type AndExpr struct{ Args []Expr }
type OrExpr struct{ Args []Expr }
type NotExpr struct{ X Expr }

// When is one arm of a CaseExpr.
type When struct {
	Cond Expr
	Then Expr
}

// CaseExpr is a searched CASE (simple CASE, IF, IFNULL, COALESCE and
// NULLIF are bound to it); each arm is evaluated only for the rows that
// reach it.
type CaseExpr struct {
	Whens []When
	Else  Expr
	T     ColType
}

// IsNullExpr is X IS [NOT] NULL.
type IsNullExpr struct {
	X   Expr
	Not bool
}

// IsBoolExpr is X IS [NOT] TRUE|FALSE.
type IsBoolExpr struct {
	X     Expr
	Value bool
	Not   bool
}

// InExpr is X [NOT] IN (List); Eqs are the bound X = List[i] comparisons.
type InExpr struct {
	X    Expr
	List []Expr
	Not  bool
	Eqs  []Expr
}

// ListFieldExpr reads field Child of every record element of an array
// column (the scan produced the elements as a struct).
type ListFieldExpr struct {
	Arr   Expr
	Child int
	T     ColType
}

// InArrayExpr is X [NOT] IN UNNEST(Arr).
type InArrayExpr struct {
	X   Expr
	Arr Expr
	Not bool
}

// SubscriptExpr indexes an array: Mode says how (parser.SubscriptOffset ...).
type SubscriptExpr struct {
	X     Expr
	Index Expr
	Mode  parser.SubscriptMode
	T     ColType
}

// ArrayExpr builds an array from its elements.
type ArrayExpr struct {
	Elems []Expr
	T     ColType
}

// ExistsArrayExpr is EXISTS(SELECT ... FROM UNNEST(Arr) AS x WHERE Cond):
// true when some element satisfies Cond, where Cond refers to the element
// as column Elem.
type ExistsArrayExpr struct {
	Arr  Expr
	Elem Column
	Cond Expr
}

func (e *ColRef) Type() ColType          { return e.T }
func (e *Literal) Type() ColType         { return ColType{V: e.D.Type} }
func (e *Call) Type() ColType            { return e.T }
func (e *AndExpr) Type() ColType         { return ColType{V: vec.Bool} }
func (e *OrExpr) Type() ColType          { return ColType{V: vec.Bool} }
func (e *NotExpr) Type() ColType         { return ColType{V: vec.Bool} }
func (e *CaseExpr) Type() ColType        { return e.T }
func (e *IsNullExpr) Type() ColType      { return ColType{V: vec.Bool} }
func (e *IsBoolExpr) Type() ColType      { return ColType{V: vec.Bool} }
func (e *InExpr) Type() ColType          { return ColType{V: vec.Bool} }
func (e *InArrayExpr) Type() ColType     { return ColType{V: vec.Bool} }
func (e *SubscriptExpr) Type() ColType   { return e.T }
func (e *ArrayExpr) Type() ColType       { return e.T }
func (e *ExistsArrayExpr) Type() ColType { return ColType{V: vec.Bool} }
func (e *ListFieldExpr) Type() ColType   { return e.T }
func (e *ListFieldExpr) String() string  { return fmt.Sprintf("%s.#%d", e.Arr, e.Child) }

func (e *ColRef) String() string { return fmt.Sprintf("%s#%d", e.Name, e.ID) }

func (e *Literal) String() string { return datumString(e.D) }

func datumString(d fn.Datum) string {
	if d.Null {
		return "NULL"
	}
	switch d.Type {
	case vec.Bool:
		return strconv.FormatBool(d.Bool)
	case vec.Int64:
		return strconv.FormatInt(d.Int, 10)
	case vec.Float64:
		return strconv.FormatFloat(d.Flt, 'g', -1, 64)
	case vec.String, vec.JSON:
		return strconv.Quote(d.Str)
	case vec.Interval:
		return fmt.Sprintf("INTERVAL %d %s", d.Int, d.Str)
	}
	return fmt.Sprintf("%s(%d)", d.Type, d.Int)
}

func (e *Call) String() string {
	var parts []string
	for i, a := range e.Args {
		if a == nil {
			parts = append(parts, e.Info[i].Part)
			continue
		}
		parts = append(parts, a.String())
	}
	if len(e.Args) == 2 && !isIdentName(e.Name) {
		return "(" + parts[0] + " " + e.Name + " " + parts[1] + ")"
	}
	return e.Name + "(" + strings.Join(parts, ", ") + ")"
}

func isIdentName(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' || c >= '0' && c <= '9' || c == '.') {
			return false
		}
	}
	return s != ""
}

func joinExprs(es []Expr, sep string) string {
	var parts []string
	for _, e := range es {
		parts = append(parts, e.String())
	}
	return strings.Join(parts, sep)
}

func (e *AndExpr) String() string { return "(" + joinExprs(e.Args, " AND ") + ")" }
func (e *OrExpr) String() string  { return "(" + joinExprs(e.Args, " OR ") + ")" }
func (e *NotExpr) String() string { return "NOT " + e.X.String() }
func (e *CaseExpr) String() string {
	var b strings.Builder
	b.WriteString("CASE")
	for _, w := range e.Whens {
		fmt.Fprintf(&b, " WHEN %s THEN %s", w.Cond, w.Then)
	}
	if e.Else != nil {
		fmt.Fprintf(&b, " ELSE %s", e.Else)
	}
	b.WriteString(" END")
	return b.String()
}
func (e *IsNullExpr) String() string {
	if e.Not {
		return e.X.String() + " IS NOT NULL"
	}
	return e.X.String() + " IS NULL"
}
func (e *IsBoolExpr) String() string {
	not := ""
	if e.Not {
		not = "NOT "
	}
	return fmt.Sprintf("%s IS %s%v", e.X, not, e.Value)
}
func (e *InExpr) String() string {
	not := ""
	if e.Not {
		not = "NOT "
	}
	return fmt.Sprintf("%s %sIN (%s)", e.X, not, joinExprs(e.List, ", "))
}
func (e *InArrayExpr) String() string {
	return fmt.Sprintf("%s IN UNNEST(%s)", e.X, e.Arr)
}
func (e *SubscriptExpr) String() string   { return fmt.Sprintf("%s[%s]", e.X, e.Index) }
func (e *ArrayExpr) String() string       { return "[" + joinExprs(e.Elems, ", ") + "]" }
func (e *ExistsArrayExpr) String() string { return fmt.Sprintf("EXISTS(%s WHERE %s)", e.Arr, e.Cond) }

// children returns an expression's operands (nil entries skipped).
func children(e Expr) []Expr {
	var out []Expr
	add := func(xs ...Expr) {
		for _, x := range xs {
			if x != nil {
				out = append(out, x)
			}
		}
	}
	switch e := e.(type) {
	case *Call:
		add(e.Args...)
	case *AndExpr:
		add(e.Args...)
	case *OrExpr:
		add(e.Args...)
	case *NotExpr:
		add(e.X)
	case *CaseExpr:
		for _, w := range e.Whens {
			add(w.Cond, w.Then)
		}
		add(e.Else)
	case *IsNullExpr:
		add(e.X)
	case *IsBoolExpr:
		add(e.X)
	case *InExpr:
		add(e.X)
		add(e.List...)
	case *InArrayExpr:
		add(e.X, e.Arr)
	case *SubscriptExpr:
		add(e.X, e.Index)
	case *ArrayExpr:
		add(e.Elems...)
	case *ExistsArrayExpr:
		add(e.Arr)
	case *ListFieldExpr:
		add(e.Arr)
	}
	return out
}

// colRefs collects the column ids an expression reads (not counting the
// element column of an ExistsArrayExpr, which it binds itself).
func colRefs(e Expr, out map[ColID]bool) {
	if c, ok := e.(*ColRef); ok {
		out[c.ID] = true
		return
	}
	for _, ch := range children(e) {
		colRefs(ch, out)
	}
	if ex, ok := e.(*ExistsArrayExpr); ok {
		inner := map[ColID]bool{}
		colRefs(ex.Cond, inner)
		delete(inner, ex.Elem.ID)
		for id := range inner {
			out[id] = true
		}
	}
}

// isConst reports whether an expression reads no column and calls no
// non-deterministic function.
func isConst(e Expr) bool {
	switch e := e.(type) {
	case *Literal:
		return true
	case *ColRef:
		return false
	case *Call:
		if e.Name == "rand" || e.Name == "generate_uuid" {
			return false
		}
	case *ExistsArrayExpr, *errorExpr:
		return false
	}
	for _, ch := range children(e) {
		if !isConst(ch) {
			return false
		}
	}
	return true
}

// exprEqual compares bound expressions structurally (used to match SELECT
// expressions against GROUP BY keys).
func exprEqual(a, b Expr) bool {
	return a.String() == b.String() && a.Type() == b.Type()
}

func nullLit(t vec.Type) *Literal { return &Literal{D: fn.Datum{Type: t, Null: true}} }

func boolLit(b bool) *Literal { return &Literal{D: fn.Datum{Type: vec.Bool, Bool: b}} }

// isTrueLit reports whether e is the constant TRUE.
func isTrueLit(e Expr) bool {
	l, ok := e.(*Literal)
	return ok && l.D.Type == vec.Bool && !l.D.Null && l.D.Bool
}

func isFalseOrNullLit(e Expr) bool {
	l, ok := e.(*Literal)
	return ok && (l.D.Null || l.D.Type == vec.Bool && !l.D.Bool)
}

// rewrite rebuilds e bottom-up, replacing each node by f(node) after its
// children are rewritten. f returns its argument to keep a node.
func rewrite(e Expr, f func(Expr) Expr) Expr {
	if e == nil {
		return nil
	}
	rw := func(x Expr) Expr { return rewrite(x, f) }
	rws := func(xs []Expr) []Expr {
		out := make([]Expr, len(xs))
		for i, x := range xs {
			out[i] = rw(x)
		}
		return out
	}
	var n Expr
	switch x := e.(type) {
	case *Call:
		n = &Call{Name: x.Name, F: x.F, Args: rws(x.Args), Info: x.Info, T: x.T}
	case *AndExpr:
		n = &AndExpr{Args: rws(x.Args)}
	case *OrExpr:
		n = &OrExpr{Args: rws(x.Args)}
	case *NotExpr:
		n = &NotExpr{X: rw(x.X)}
	case *CaseExpr:
		c := &CaseExpr{Else: rw(x.Else), T: x.T}
		for _, w := range x.Whens {
			c.Whens = append(c.Whens, When{Cond: rw(w.Cond), Then: rw(w.Then)})
		}
		n = c
	case *IsNullExpr:
		n = &IsNullExpr{X: rw(x.X), Not: x.Not}
	case *IsBoolExpr:
		n = &IsBoolExpr{X: rw(x.X), Value: x.Value, Not: x.Not}
	case *InExpr:
		n = &InExpr{X: rw(x.X), List: rws(x.List), Not: x.Not, Eqs: rws(x.Eqs)}
	case *InArrayExpr:
		n = &InArrayExpr{X: rw(x.X), Arr: rw(x.Arr), Not: x.Not}
	case *SubscriptExpr:
		n = &SubscriptExpr{X: rw(x.X), Index: rw(x.Index), Mode: x.Mode, T: x.T}
	case *ArrayExpr:
		n = &ArrayExpr{Elems: rws(x.Elems), T: x.T}
	case *ExistsArrayExpr:
		n = &ExistsArrayExpr{Arr: rw(x.Arr), Elem: x.Elem, Cond: x.Cond}
	case *ListFieldExpr:
		n = &ListFieldExpr{Arr: rw(x.Arr), Child: x.Child, T: x.T}
	case *subqueryExpr:
		if x.in != nil {
			x.in = rw(x.in)
		}
		n = x
	default:
		n = e
	}
	return f(n)
}

// substitute replaces column references by the expressions in m.
func substitute(e Expr, m map[ColID]Expr) Expr {
	return rewrite(e, func(x Expr) Expr {
		if c, ok := x.(*ColRef); ok {
			if r, ok := m[c.ID]; ok {
				return r
			}
		}
		return x
	})
}

// errorExpr is a constant expression that failed to bind, such as
// CAST(” AS TIMESTAMP): the error is raised only if a row evaluates it, so
// that a CASE guarding it (Logflare's optional time bounds) still works.
type errorExpr struct {
	err error
	T   ColType
}

func (e *errorExpr) Type() ColType  { return e.T }
func (e *errorExpr) String() string { return "error(" + e.err.Error() + ")" }
