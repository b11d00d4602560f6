package lql

import (
	"errors"
	"strconv"
	"strings"
)

// SQLOptions shape the SELECT that ToSQL writes.
type SQLOptions struct {
	// Limit appends `LIMIT n` to non-chart queries; 0 means no LIMIT.
	Limit int
	// Sandboxed applies the rules of docs/compat/logflare.md §6.9 for an
	// endpoint's `lql=` parameter: without s: rules the columns are the
	// filtered paths, each once and named like an s: column
	// (`metadata_status`), or just `timestamp` when there are no filters;
	// rows are not ordered. Otherwise the query is a
	// search: default columns timestamp, id, event_message, newest first.
	Sandboxed bool
}

// ToSQL translates q into one BigQuery-dialect SELECT over table (a source
// name or a CTE name; quoted with backticks unless a plain identifier). The
// table's rows are aliased `t`; q.From is not consulted (callers resolve it,
// see ForSandbox).
//
// Translation (docs/compat/logflare.md §9.3):
//   - word / "phrase"     STRPOS(t.event_message, 'x') > 0
//   - ~re                 REGEXP_CONTAINS(t.event_message, 're')
//   - f:v, f:NULL         f = v, f IS NULL
//   - f:>v ... f:a..b     f > v ..., f BETWEEN a AND b
//   - m.level:a..b        m0.level IN ('a', ..., 'b')
//   - f:~re               REGEXP_CONTAINS(f, 're')
//   - f:@>v               v IN UNNEST(f)
//   - f:@>~re             EXISTS(SELECT 1 FROM UNNEST(f) AS x WHERE REGEXP_CONTAINS(x, 're'))
//   - -clause             (f IS NULL OR NOT (clause)); -f:NULL is NOT (f IS NULL)
//   - timestamps          TIMESTAMP_MICROS(<µs>)
//
// A dotted path unnests every step but the last: `metadata.a.b` reads m1.b
// from `CROSS JOIN UNNEST(t.metadata) AS m0 CROSS JOIN UNNEST(m0.a) AS m1`.
// One chain per path prefix is shared by all clauses, so clauses on fields
// of the same array of records must hold for the same element. A step is
// joined with `LEFT JOIN UNNEST(...) ON TRUE` instead when nothing under it
// needs a value there — select and chart paths, and filters that hold on
// NULL (negations, `:NULL`) — so that an absent record reads as NULL rather
// than dropping the event; where a filter does need a value the two joins
// select the same events.
//
// A chart is `SELECT TIMESTAMP_TRUNC(t.timestamp, <PERIOD>) AS timestamp,
// <aggregate> AS count ... GROUP BY 1 ORDER BY 1`.
func ToSQL(q *Query, table string, opts SQLOptions) (string, error) {
	if q == nil {
		q = &Query{}
	}
	if table == "" {
		return "", errors.New("lql: no table to query")
	}
	if opts.Limit < 0 {
		return "", errors.New("lql: negative limit")
	}
	var jt joinTree

	// Filters first: they decide which unnest steps must be inner joins.
	where := make([]string, 0, len(q.Filters))
	for i := range q.Filters {
		f := &q.Filters[i]
		col, err := jt.column(f.Path, !f.AcceptsNull())
		if err != nil {
			return "", err
		}
		cond, err := condition(f, col)
		if err != nil {
			return "", err
		}
		where = append(where, cond)
	}

	var cols []string
	chart := q.Chart
	if chart != nil {
		col, err := jt.column(chart.Path, false)
		if err != nil {
			return "", err
		}
		agg, err := aggregateSQL(chart.Aggregate, col)
		if err != nil {
			return "", err
		}
		part := chart.Period.sqlPart()
		if part == "" {
			return "", errors.New("lql: unknown chart period " + chart.Period.String())
		}
		cols = []string{"TIMESTAMP_TRUNC(t.timestamp, " + part + ") AS timestamp", agg + " AS count"}
	} else {
		var err error
		if cols, err = selectColumns(q, &jt, opts.Sandboxed); err != nil {
			return "", err
		}
	}

	var b strings.Builder
	b.WriteString("SELECT ")
	b.WriteString(strings.Join(cols, ", "))
	b.WriteString(" FROM ")
	b.WriteString(quoteIdent(table))
	b.WriteString(" AS t")
	jt.writeJoins(&b)
	if len(where) > 0 {
		b.WriteString(" WHERE ")
		b.WriteString(strings.Join(where, " AND "))
	}
	if chart != nil {
		b.WriteString(" GROUP BY 1 ORDER BY 1")
		return b.String(), nil
	}
	if !opts.Sandboxed {
		b.WriteString(" ORDER BY t.timestamp DESC, t.id DESC")
	}
	if opts.Limit > 0 {
		b.WriteString(" LIMIT ")
		b.WriteString(strconv.Itoa(opts.Limit))
	}
	return b.String(), nil
}

// ForSandbox translates q for an endpoint's `lql=` parameter
// (docs/compat/logflare.md §6.9): the query reads the CTE named by its
// f:/from: clause, or the endpoint's only CTE. ctes are the endpoint
// query's CTE names in order.
func ForSandbox(q *Query, ctes []string) (string, error) {
	if q == nil {
		q = &Query{}
	}
	table, err := sandboxTable(q.From, ctes)
	if err != nil {
		return "", err
	}
	return ToSQL(q, table, SQLOptions{Sandboxed: true})
}

// sandboxTable picks the CTE, with Logflare's messages.
func sandboxTable(from string, ctes []string) (string, error) {
	list := strings.Join(ctes, ", ")
	switch {
	case from != "":
		for _, c := range ctes {
			if c == from {
				return c, nil
			}
		}
		return "", errors.New("Table '" + from + "' not found in available CTEs: " + list)
	case len(ctes) == 1:
		return ctes[0], nil
	case len(ctes) == 0:
		return "", errors.New("No CTEs found in query")
	}
	return "", errors.New("Multiple CTEs available (" + list + "). You must specify which one to query using `f:name`")
}

// selectColumns lists the result columns of a non-chart query.
func selectColumns(q *Query, jt *joinTree, sandboxed bool) ([]string, error) {
	sel := q.Selects
	for _, s := range sel {
		if s.Path == Wildcard {
			sel = nil // s:* leaves the projection as if there were no s: rules
			break
		}
	}
	if sel == nil {
		switch {
		case !sandboxed:
			sel = []Select{{Path: "timestamp"}, {Path: "id"}, {Path: "event_message"}}
		case len(q.Filters) == 0:
			sel = []Select{{Path: "timestamp"}}
		default:
			seen := make(map[string]bool, len(q.Filters))
			for _, f := range q.Filters {
				if !seen[f.Path] {
					seen[f.Path] = true
					sel = append(sel, Select{Path: f.Path})
				}
			}
		}
	}
	cols := make([]string, 0, len(sel))
	names := make(map[string]bool, len(sel))
	for _, s := range sel {
		col, err := jt.column(s.Path, false)
		if err != nil {
			return nil, err
		}
		name := s.Alias
		if name == "" {
			name = strings.ReplaceAll(s.Path, ".", "_")
		}
		if names[name] {
			return nil, errors.New("lql: two selected columns are named `" + name + "`; give one an @alias")
		}
		names[name] = true
		if name != s.Path {
			col += " AS " + quoteIdent(name)
		}
		cols = append(cols, col)
	}
	return cols, nil
}

func aggregateSQL(a Aggregate, col string) (string, error) {
	switch a {
	case AggCount:
		return "COUNT(" + col + ")", nil
	case AggCountDistinct:
		return "COUNT(DISTINCT " + col + ")", nil
	case AggAvg:
		return "AVG(" + col + ")", nil
	case AggSum:
		return "SUM(" + col + ")", nil
	case AggMax:
		return "MAX(" + col + ")", nil
	case AggP50:
		return "APPROX_QUANTILES(" + col + ", 100)[OFFSET(50)]", nil
	case AggP95:
		return "APPROX_QUANTILES(" + col + ", 100)[OFFSET(95)]", nil
	case AggP99:
		return "APPROX_QUANTILES(" + col + ", 100)[OFFSET(99)]", nil
	}
	return "", errors.New("lql: unknown chart aggregate " + a.String())
}

// condition is the SQL predicate of one filter over the column col.
func condition(f *Filter, col string) (string, error) {
	if f.IsNullTest() {
		if f.Negate {
			return "NOT (" + col + " IS NULL)", nil
		}
		return col + " IS NULL", nil
	}
	var c string
	switch f.Op {
	case OpContains, OpRegex, OpArrayRegex:
		if f.Value.Kind != KindString {
			return "", errors.New("lql: " + f.Op.String() + " needs a string operand on " + f.Path)
		}
		lit := quoteString(f.Value.Str)
		switch f.Op {
		case OpContains:
			c = "STRPOS(" + col + ", " + lit + ") > 0"
		case OpRegex:
			c = "REGEXP_CONTAINS(" + col + ", " + lit + ")"
		default:
			c = "EXISTS(SELECT 1 FROM UNNEST(" + col + ") AS x WHERE REGEXP_CONTAINS(x, " + lit + "))"
		}
	case OpEq, OpGt, OpGte, OpLt, OpLte, OpArrayContains:
		if f.Value.Kind == KindNull {
			return "", errors.New("lql: NULL needs the `:` operator on " + f.Path)
		}
		lit, err := literal(f.Value)
		if err != nil {
			return "", err
		}
		switch f.Op {
		case OpEq:
			c = col + " = " + lit
		case OpGt:
			c = col + " > " + lit
		case OpGte:
			c = col + " >= " + lit
		case OpLt:
			c = col + " < " + lit
		case OpLte:
			c = col + " <= " + lit
		default:
			c = lit + " IN UNNEST(" + col + ")"
		}
	case OpRange:
		if len(f.Values) != 2 {
			return "", errors.New("lql: a range needs two values on " + f.Path)
		}
		lo, err := literal(f.Values[0])
		if err != nil {
			return "", err
		}
		hi, err := literal(f.Values[1])
		if err != nil {
			return "", err
		}
		c = col + " BETWEEN " + lo + " AND " + hi
	case OpIn:
		if len(f.Values) == 0 {
			return "", errors.New("lql: an IN filter needs values on " + f.Path)
		}
		lits := make([]string, len(f.Values))
		for i, v := range f.Values {
			lit, err := literal(v)
			if err != nil {
				return "", err
			}
			lits[i] = lit
		}
		c = col + " IN (" + strings.Join(lits, ", ") + ")"
	default:
		return "", errors.New("lql: unknown operator " + f.Op.String())
	}
	if f.Negate {
		return "(" + col + " IS NULL OR NOT (" + c + "))", nil
	}
	return c, nil
}

// joinTree assigns one UNNEST alias per path prefix.
type joinTree struct {
	nodes    []*joinNode
	byPrefix map[string]*joinNode
}

type joinNode struct {
	alias  string // m0, m1, ...
	source string // parent alias and field: "t.metadata", "m0.request"
	// inner is set when some filter below this step needs a value: the
	// step is then a CROSS JOIN, else a LEFT JOIN ... ON TRUE.
	inner bool
}

// column returns the SQL expression of a field path, adding the unnest
// steps it needs.
func (jt *joinTree) column(path string, needsValue bool) (string, error) {
	segs := strings.Split(path, ".")
	for _, s := range segs {
		if s == "" || !allNameChars(s) {
			return "", errors.New("lql: invalid field path " + strconv.Quote(path))
		}
	}
	parent := "t"
	prefixLen := -1
	for i := 1; i < len(segs); i++ {
		prefixLen += 1 + len(segs[i-1])
		prefix := path[:prefixLen] // a substring: no copy per step
		n := jt.byPrefix[prefix]
		if n == nil {
			if jt.byPrefix == nil {
				jt.byPrefix = make(map[string]*joinNode)
			}
			n = &joinNode{alias: "m" + strconv.Itoa(len(jt.nodes)), source: parent + "." + quoteIdent(segs[i-1])}
			jt.nodes = append(jt.nodes, n)
			jt.byPrefix[prefix] = n
		}
		n.inner = n.inner || needsValue
		parent = n.alias
	}
	return parent + "." + quoteIdent(segs[len(segs)-1]), nil
}

func (jt *joinTree) writeJoins(b *strings.Builder) {
	for _, n := range jt.nodes {
		if n.inner {
			b.WriteString(" CROSS JOIN UNNEST(" + n.source + ") AS " + n.alias)
		} else {
			b.WriteString(" LEFT JOIN UNNEST(" + n.source + ") AS " + n.alias + " ON TRUE")
		}
	}
}
