package parser

import (
	"strings"
)

// ValidateOptions configures Validate and Sandbox.
type ValidateOptions struct {
	// KnownSource reports whether name is a source the query may read. name
	// is the table's full name as written, parts joined with "." (e.g.
	// "cloudflare.logs.prod" for `cloudflare.logs.prod` or for
	// cloudflare.logs.prod). Names that are not CTEs in scope must satisfy it.
	// nil means no source is known.
	KnownSource func(name string) bool
}

func (o ValidateOptions) known(name string) bool {
	return o.KnownSource != nil && o.KnownSource(name)
}

// restrictedFunctions are the functions a query may not call (BigQuery
// dialect), lower case. A call is rejected when any part of its dotted name
// is on the list, compared case-insensitively. This is the only list.
var restrictedFunctions = map[string]bool{
	"session_user":   true,
	"external_query": true,
}

// Validate parses sql and applies Logflare's rules for endpoint and ad-hoc
// queries, in Logflare's order:
//
//  1. the text holds a statement            "Query cannot be empty"
//  2. every statement is a query            "Only SELECT queries allowed"
//  3. there is exactly one statement        "Only singular query allowed"
//  4. no restricted function is called      "Restricted function <name>"
//  5. no select list has `*` or `t.*`       "restricted wildcard (*) in a result column"
//  6. every table is a CTE in scope or a    "can't find source <name>"
//     known source
//
// Syntax errors come first, as *Error. Rule violations are
// *ValidationError. On success every TableName in the query has Ref set
// (RefCTE with CTE pointing at its definition, or RefSource).
func Validate(sql string, opts ValidateOptions) (*Query, error) {
	q, err := Parse(sql)
	if err != nil {
		return nil, err
	}
	if err := ValidateQuery(q, opts); err != nil {
		return nil, err
	}
	return q, nil
}

// ValidateQuery applies rules 4 to 6 of Validate to a parsed query and
// resolves its table names. The error, if any, is a *ValidationError.
func ValidateQuery(q *Query, opts ValidateOptions) error {
	if err := checkFunctionsAndWildcards(q); err != nil {
		return err
	}
	r := resolver{unresolved: func(t *TableName) *ValidationError {
		if opts.known(t.Name()) {
			t.Ref = RefSource
			return nil
		}
		return &ValidationError{Kind: KindUnknownSource, Name: t.Name(), Pos: t.At}
	}}
	if err := r.query(q, nil); err != nil {
		return err
	}
	return nil
}

// checkFunctionsAndWildcards applies, in one pass, the restricted function
// rule and then (Logflare checks them in this order, each over the whole
// query) the wildcard rule.
func checkFunctionsAndWildcards(n Node) *ValidationError {
	var c ruleChecker
	c.visit(n)
	if c.restricted != nil {
		return c.restricted
	}
	return c.wildcard
}

type ruleChecker struct {
	restricted *ValidationError // first restricted call found
	wildcard   *ValidationError // first wildcard found
}

func (c *ruleChecker) visit(n Node) {
	switch x := n.(type) {
	case *FuncCall:
		var names []string
		for _, part := range x.Name {
			if _, ok := lookupLower(restrictedFunctions, part.Name); ok {
				names = append(names, strings.ToLower(part.Name))
			}
		}
		if len(names) > 0 {
			c.restricted = &ValidationError{Kind: KindRestrictedFunction, Name: strings.Join(names, ", "), Pos: x.At}
			return // nothing can change the outcome now
		}
	case *SelectItem:
		if x.Star && c.wildcard == nil {
			c.wildcard = &ValidationError{Kind: KindWildcard, Pos: x.At}
		}
	}
	var buf [8]Node
	for _, child := range appendChildren(buf[:0], n) {
		if c.visit(child); c.restricted != nil {
			return
		}
	}
}

// scope is the set of CTE names visible at some point of a query: a WITH
// clause's CTEs (as far as defined so far) and the enclosing scopes.
type scope struct {
	parent *scope
	ctes   []*CTE
}

// lookup finds the CTE a table name refers to. Only one-part names can
// name a CTE; like BigQuery aliases, CTE names match case-insensitively.
// The innermost, latest definition wins.
func (s *scope) lookup(t *TableName) *CTE {
	if len(t.Parts) != 1 {
		return nil
	}
	name := t.Parts[0].Name
	for ; s != nil; s = s.parent {
		for i := len(s.ctes) - 1; i >= 0; i-- {
			if strings.EqualFold(s.ctes[i].Name.Name, name) {
				return s.ctes[i]
			}
		}
	}
	return nil
}

// resolver binds every TableName of a query to a CTE in scope, and hands the
// others to unresolved, which decides (and sets Ref) or returns an error.
type resolver struct {
	unresolved func(*TableName) *ValidationError
}

func (r *resolver) query(q *Query, sc *scope) *ValidationError {
	if q.With != nil {
		inner := &scope{parent: sc}
		for _, c := range q.With.CTEs {
			if q.With.Recursive {
				inner.ctes = append(inner.ctes, c)
			}
			if err := r.query(c.Query, inner); err != nil {
				return err
			}
			if !q.With.Recursive {
				inner.ctes = append(inner.ctes, c)
			}
		}
		sc = inner
	}
	if err := r.body(q.Body, sc); err != nil {
		return err
	}
	for _, it := range q.OrderBy {
		if err := r.expr(it.Expr, sc); err != nil {
			return err
		}
	}
	if err := r.expr(q.Limit, sc); err != nil {
		return err
	}
	return r.expr(q.Offset, sc)
}

func (r *resolver) body(b QueryBody, sc *scope) *ValidationError {
	switch x := b.(type) {
	case *Select:
		// Source order, so the first unknown name reported is the first
		// written.
		for _, it := range x.Items {
			if err := r.expr(it.Expr, sc); err != nil {
				return err
			}
		}
		if x.From != nil {
			if err := r.table(x.From, sc); err != nil {
				return err
			}
		}
		if err := r.expr(x.Where, sc); err != nil {
			return err
		}
		for _, e := range x.GroupBy {
			if err := r.expr(e, sc); err != nil {
				return err
			}
		}
		if err := r.expr(x.Having, sc); err != nil {
			return err
		}
		if err := r.expr(x.Qualify, sc); err != nil {
			return err
		}
	case *SetOp:
		if err := r.body(x.Left, sc); err != nil {
			return err
		}
		return r.body(x.Right, sc)
	case *Query:
		return r.query(x, sc)
	}
	return nil
}

func (r *resolver) table(t TableExpr, sc *scope) *ValidationError {
	switch x := t.(type) {
	case *TableName:
		if c := sc.lookup(x); c != nil {
			x.Ref, x.CTE = RefCTE, c
			return nil
		}
		x.Ref, x.CTE = RefUnresolved, nil
		return r.unresolved(x)
	case *SubqueryTable:
		return r.query(x.Query, sc)
	case *UnnestTable:
		return r.expr(x.Expr, sc)
	case *TableFunc:
		// Logflare reads a table function as a table named like the
		// function, which is never a source.
		return &ValidationError{Kind: KindUnknownSource, Name: x.Call.FuncName(), Pos: x.At}
	case *Join:
		if err := r.table(x.Left, sc); err != nil {
			return err
		}
		if err := r.table(x.Right, sc); err != nil {
			return err
		}
		return r.expr(x.On, sc)
	}
	return nil
}

// expr resolves the subqueries inside an expression.
func (r *resolver) expr(e Expr, sc *scope) *ValidationError {
	if e == nil {
		return nil
	}
	return r.subqueries(e, sc)
}

// subqueries resolves every query nested in n (which is not itself a
// query).
func (r *resolver) subqueries(n Node, sc *scope) *ValidationError {
	var buf [8]Node
	for _, child := range appendChildren(buf[:0], n) {
		var err *ValidationError
		if q, ok := child.(*Query); ok {
			err = r.query(q, sc)
		} else {
			err = r.subqueries(child, sc)
		}
		if err != nil {
			return err
		}
	}
	return nil
}
