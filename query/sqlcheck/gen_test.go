package sqlcheck

import (
	"fmt"
	"math/rand/v2"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/sediment/sediment/event"
	"github.com/sediment/sediment/internal/vec"
	"github.com/sediment/sediment/lql"
)

// A generated query: a FROM (a source, logs.all's CTE or an ad-hoc CTE
// with ORDER BY, then UNNESTs), a select list of one shape, a WHERE that
// is always there (w) and a predicate p that the checks partition on.

type shape uint8

const (
	shapeRows  shape = iota // plain rows
	shapeAgg                // aggregates, one row
	shapeGroup              // aggregates per group
)

// aggKind says how the partitions' values of a select item merge (TLP).
type aggKind uint8

const (
	aggNone     aggKind = iota // a plain value or group key
	aggCount                   // count(*), count(x), countif(q): summed
	aggSum                     // sum(x): summed, NULL when all are
	aggMin                     // min(x)
	aggMax                     // max(x)
	aggOpaque                  // avg, count(distinct): not mergeable
	aggCountIfP                // countif(p) in the base query: the count WHERE p
)

type item struct {
	expr, alias string
	agg         aggKind
}

// orderMode says what an ORDER BY fixes about the rows.
type orderMode uint8

const (
	orderNone    orderMode = iota // any order
	orderTotal                    // on every output column: the sequence is fixed
	orderLeading                  // on the first output column only
)

type query struct {
	raw      string // the whole query text (an lql= translation), or ""
	lql      string // the LQL raw was translated from
	with     string // an ad-hoc CTE ("with c as (...)"), or ""
	sandbox  bool   // a consumer query of logs.all
	params   map[string]string
	items    []item
	from     string
	where    string // w, part of every form ("" none)
	pred     string // p
	groupBy  string
	having   string
	distinct bool
	order    orderMode
	orderBy  string
	limit    int
	offset   int
	shape    shape
	keys     int  // leading items that are group keys
	tlp      bool // the select list merges over partitions
	features []string
}

// text renders the query with cond ANDed to w (cond "" for none) and the
// extra items appended to the select list.
func (q *query) text(cond string, extra ...item) string {
	if q.raw != "" {
		return q.raw
	}
	var b strings.Builder
	if q.with != "" {
		b.WriteString(q.with)
		b.WriteString("\n")
	}
	b.WriteString("select ")
	if q.distinct {
		b.WriteString("distinct ")
	}
	for i, it := range append(append([]item(nil), q.items...), extra...) {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(it.expr)
		b.WriteString(" as ")
		b.WriteString(it.alias)
	}
	b.WriteString("\nfrom ")
	b.WriteString(q.from)
	var conds []string
	if q.where != "" {
		conds = append(conds, "("+q.where+")")
	}
	if cond != "" {
		conds = append(conds, cond)
	}
	if len(conds) > 0 {
		b.WriteString("\nwhere ")
		b.WriteString(strings.Join(conds, " and "))
	}
	if q.groupBy != "" {
		b.WriteString("\ngroup by ")
		b.WriteString(q.groupBy)
	}
	if q.having != "" {
		b.WriteString("\nhaving ")
		b.WriteString(q.having)
	}
	if q.orderBy != "" {
		b.WriteString("\norder by ")
		b.WriteString(q.orderBy)
	}
	if q.limit > 0 {
		fmt.Fprintf(&b, "\nlimit %d", q.limit)
	}
	if q.offset > 0 {
		fmt.Fprintf(&b, " offset %d", q.offset)
	}
	return b.String()
}

// alias is a range variable of the FROM and the fields it reaches.
type alias struct {
	name string
	node *field
}

type qgen struct {
	r       *rand.Rand
	db      *testDB
	src     *source
	aliases []alias
	q       *query
	n       int // alias counter
}

func (g *qgen) chance(p float64) bool { return g.r.Float64() < p }
func (g *qgen) pick(n int) int        { return g.r.IntN(n) }
func (g *qgen) feature(f string)      { g.q.features = append(g.q.features, f) }

// generate draws one query.
func generate(r *rand.Rand, db *testDB) *query {
	g := &qgen{r: r, db: db, src: db.sources[r.IntN(len(db.sources))], q: &query{params: map[string]string{}}}
	if g.chance(0.1) {
		g.lqlQuery()
		return g.q
	}
	g.fromClause()
	if g.chance(0.65) {
		g.q.where = g.predicate(0)
	}
	g.q.pred = g.predicate(2)
	switch n := g.pick(10); {
	case n < 4:
		g.rowsShape()
	case n < 7:
		g.aggShape()
	default:
		g.groupShape()
	}
	return g.q
}

// fromClause picks the row source and its UNNESTs.
func (g *qgen) fromClause() {
	s := g.src
	base := "t"
	rowNode := s.root
	union := false
	switch n := g.pick(20); {
	case n < 7: // the source itself
		g.q.from = "`" + s.name + "` as t"
	case n < 14: // logs.all's CTE, as Studio reads it
		g.q.sandbox = true
		g.feature("logs.all CTE")
		g.q.from = s.cte + " as t"
		rowNode = onlyKids(s.root, "timestamp", "id", "event_message", "metadata")
		g.logsAllParams()
	case n < 16: // UNION ALL of two sources' rows
		g.feature("UNION ALL")
		union = true
		other := g.db.sources[g.pick(len(g.db.sources))]
		branch := func(src *source, a string) string {
			return fmt.Sprintf("select %[1]s.timestamp, %[1]s.id, %[1]s.event_message, %[1]s.metadata from `%[2]s` as %[1]s", a, src.name)
		}
		g.q.from = "(" + branch(s, "t1") + "\nunion all " + branch(other, "t2") + ") as t"
		rowNode = onlyKids(s.root, "timestamp", "id", "event_message", "metadata")
	default: // an ad-hoc CTE with ORDER BY
		g.feature("CTE with ORDER BY")
		cols := []string{"timestamp", "id", "event_message", "metadata"}
		if s.root.child("project") != nil && g.chance(0.5) {
			cols = append(cols, "project")
		}
		var sel []string
		for _, c := range cols {
			sel = append(sel, "t."+c)
		}
		inner := "select " + strings.Join(sel, ", ") + " from `" + s.name + "` as t"
		g.aliases = []alias{{"t", s.root}}
		if g.chance(0.5) {
			inner += " where " + g.predicate(0)
		}
		inner += " order by t.timestamp desc, t.id"
		if g.chance(0.3) {
			inner += fmt.Sprintf(" limit %d", 50+g.pick(400))
		}
		g.q.with = "with c as (" + inner + ")"
		g.q.from = "c as t"
		rowNode = onlyKids(s.root, cols...)
	}
	g.aliases = []alias{{base, rowNode}}
	if g.chance(0.08) {
		// Studio's LEFT JOIN to a derived table with GROUP BY.
		g.feature("JOIN of a derived table")
		kind := []string{"left join", "join"}[g.pick(2)]
		table := "`" + s.name + "`"
		if g.q.sandbox {
			table = s.cte // a sandboxed query reads the CTEs only
		}
		g.q.from += "\n" + kind + " (select t2.id as jid, length(t2.event_message) as jlen, count(*) as jn from " + table + " as t2 group by jid, jlen) as j on j.jid = t.id"
		g.aliases = append(g.aliases, alias{"j", &field{record: true, kids: []*field{
			{name: "jid", path: "id", scalar: vec.String},
			{name: "jlen", path: "-", scalar: vec.Int64},
			{name: "jn", path: "-", scalar: vec.Int64},
		}}})
	}
	md := rowNode.child("metadata")
	if md == nil || !md.record || g.chance(0.12) {
		return
	}
	if g.chance(0.8) {
		g.q.from += "\ncross join unnest(t.metadata) as m"
	} else {
		g.feature("LEFT JOIN UNNEST")
		g.q.from += "\nleft join unnest(t.metadata) as m on true"
	}
	g.aliases = append(g.aliases, alias{"m", md})
	mIndex := len(g.aliases) - 1
	// Up to two records or arrays under metadata, and one level below.
	for range g.pick(3) {
		parent := g.aliases[len(g.aliases)-1]
		if g.chance(0.4) {
			parent = g.aliases[mIndex]
		}
		var cands []*field
		for _, k := range parent.node.kids {
			if k.array && len(k.kids) > 0 && union {
				continue // not supported: elements of an array read through UNION ALL
			}
			if k.record || k.array && (len(k.kids) > 0 || k.elemType != vec.Unknown) {
				cands = append(cands, k)
			}
		}
		if len(cands) == 0 {
			continue
		}
		k := cands[g.pick(len(cands))]
		g.n++
		name := fmt.Sprintf("u%d", g.n)
		join := "cross join unnest"
		if g.chance(0.45) {
			join = "left join unnest"
			g.feature("LEFT JOIN UNNEST")
		} else {
			g.feature("CROSS JOIN UNNEST")
		}
		on := ""
		if strings.HasPrefix(join, "left") {
			on = " on true"
		}
		g.q.from += fmt.Sprintf("\n%s(%s.%s) as %s%s", join, parent.name, k.name, name, on)
		if k.array && len(k.kids) > 0 {
			// Under metadata's UNNEST, as Studio reads storage's context.
			g.feature("nested UNNEST of an array of records")
		}
		if k.array && len(k.kids) == 0 {
			// An array of scalars: the alias is the value itself.
			g.aliases = append(g.aliases, alias{name, &field{name: name, path: k.path + "[]", scalar: k.elemType, kids: nil}})
			continue
		}
		g.aliases = append(g.aliases, alias{name, k})
	}
}

// lqlQuery draws an lql= query of a logs.all CTE, translated to the SQL
// the endpoint runs (NoREC only: it has no predicate to partition on).
func (g *qgen) lqlQuery() {
	g.feature("LQL")
	q := g.q
	q.sandbox = true
	g.logsAllParams()
	if q.params["project"] == "" {
		q.params["project"] = "default"
	}
	type leaf struct {
		path, sample string
		t            vec.Type
	}
	var leaves []leaf
	var walk func(f *field, prefix string)
	walk = func(f *field, prefix string) {
		for _, k := range f.kids {
			p := prefix + "." + k.name
			if k.scalar != vec.Unknown && k.scalar != vec.JSON {
				leaves = append(leaves, leaf{p, k.path, k.scalar})
			}
			if k.record || k.array && len(k.kids) > 0 {
				walk(k, p)
			}
		}
	}
	if md := g.src.root.child("metadata"); md != nil {
		walk(md, "m")
	}
	clauses := []string{"f:" + g.src.cte}
	for range 1 + g.pick(3) {
		neg := []string{"", "", "", "-"}[g.pick(4)]
		if len(leaves) == 0 || g.chance(0.15) {
			switch g.pick(3) {
			case 0:
				clauses = append(clauses, neg+`"`+lqlEscape(prefix(valueText(g.sampleOf("event_message")), 1+g.pick(6)))+`"`)
			case 1:
				clauses = append(clauses, neg+`~"`+lqlEscape(regexp.QuoteMeta(substr(g.r, valueText(g.sampleOf("event_message")), 2)))+`"`)
			default:
				at := g.db.first.Add(time.Duration(g.r.Int64N(int64(g.db.last.Sub(g.db.first)))))
				clauses = append(clauses, "t:"+[]string{">", "<", ">=", "<="}[g.pick(4)]+at.Format("2006-01-02T15:04:05Z"))
			}
			continue
		}
		l := leaves[g.pick(len(leaves))]
		v := valueText(g.sampleOf(l.sample))
		switch {
		case g.chance(0.1):
			clauses = append(clauses, neg+l.path+":NULL")
		case l.t == vec.String && g.chance(0.3):
			clauses = append(clauses, neg+l.path+`:~"`+lqlEscape(regexp.QuoteMeta(prefix(v, 1+g.pick(4))))+`"`)
		case l.t == vec.String:
			clauses = append(clauses, neg+l.path+`:"`+lqlEscape(v)+`"`)
		case l.t == vec.Int64 || l.t == vec.Float64:
			if _, err := strconv.ParseFloat(v, 64); err != nil || v == "" {
				v = "1"
			}
			clauses = append(clauses, neg+l.path+":"+[]string{"", ">", ">=", "<", "<="}[g.pick(5)]+v)
		case l.t == vec.Bool:
			clauses = append(clauses, neg+l.path+":"+[]string{"true", "false"}[g.pick(2)])
		}
	}
	if g.chance(0.3) && len(leaves) > 0 {
		clauses = append(clauses, "s:"+leaves[g.pick(len(leaves))].path)
	}
	if g.chance(0.25) {
		clauses = append(clauses, "c:count(*)", "c:group_by(t::"+[]string{"minute", "hour", "day"}[g.pick(3)]+")")
	}
	q.lql = strings.Join(clauses, " ")
	lq, err := lql.Parse(q.lql, lql.Options{Now: g.db.now})
	if err == nil {
		q.raw, err = lql.ForSandbox(lq, g.db.ctes())
	}
	if err != nil {
		q.raw = "-- lql: " + err.Error() // counted as rejected
	}
}

func (g *qgen) sampleOf(path string) event.Value {
	vs := g.samples(path)
	if len(vs) == 0 {
		return event.StringValue("x")
	}
	return vs[g.pick(len(vs))]
}

func lqlEscape(s string) string {
	s = strings.ReplaceAll(s, `\`, `\\`)
	return strings.ReplaceAll(s, `"`, `\"`)
}

// onlyKids is a copy of a record node with just the named fields.
func onlyKids(f *field, names ...string) *field {
	out := &field{name: f.name, path: f.path, record: true}
	for _, n := range names {
		if k := f.child(n); k != nil {
			out.kids = append(out.kids, k)
		}
	}
	return out
}

// logsAllParams sets logs.all's parameters as Studio sends them, or not.
func (g *qgen) logsAllParams() {
	p := g.q.params
	switch n := g.pick(12); {
	case n == 0: // missing: no project matches
	case n == 1:
		p["project"] = ""
	case n < 7:
		p["project"] = "default"
	default:
		p["project"] = g.db.projects[g.pick(len(g.db.projects))]
	}
	span := g.db.last.Sub(g.db.first)
	iso := func() string {
		at := g.db.first.Add(time.Duration(g.r.Int64N(int64(span))))
		if g.chance(0.3) {
			at = at.Truncate(time.Hour) // Studio's "last hour" starts on the hour
		}
		return at.Format("2006-01-02T15:04:05.000Z")
	}
	for _, name := range []string{"iso_timestamp_start", "iso_timestamp_end"} {
		switch g.pick(4) {
		case 0:
		case 1:
			p[name] = ""
		default:
			p[name] = iso()
		}
	}
	// Studio's window ends after it starts (mostly).
	if a, b := p["iso_timestamp_start"], p["iso_timestamp_end"]; a != "" && b != "" && a > b && g.chance(0.9) {
		p["iso_timestamp_start"], p["iso_timestamp_end"] = b, a
	}
}

// column is a scalar a query can read, with where its samples are.
type column struct {
	expr   string
	t      vec.Type
	sample string // path in source.samples
}

func (g *qgen) columns() []column {
	var out []column
	for _, a := range g.aliases {
		if a.node.scalar != vec.Unknown && a.node.kids == nil && a.name != "t" && a.node.path != "" && !a.node.record {
			out = append(out, column{a.name, a.node.scalar, a.node.path})
		}
		for _, k := range a.node.kids {
			if k.scalar == vec.Unknown || k.scalar == vec.JSON {
				continue
			}
			out = append(out, column{a.name + "." + k.name, k.scalar, k.path})
		}
	}
	return out
}

func (g *qgen) column(types ...vec.Type) (column, bool) {
	var cs []column
	for _, c := range g.columns() {
		if len(types) == 0 {
			cs = append(cs, c)
			continue
		}
		for _, t := range types {
			if c.t == t {
				cs = append(cs, c)
			}
		}
	}
	if len(cs) == 0 {
		return column{}, false
	}
	return cs[g.pick(len(cs))], true
}

// predicate draws a boolean expression (it may be NULL on some rows).
func (g *qgen) predicate(depth int) string {
	if depth > 0 && g.chance(0.35) {
		switch g.pick(3) {
		case 0:
			return "(" + g.predicate(depth-1) + " and " + g.predicate(depth-1) + ")"
		case 1:
			return "(" + g.predicate(depth-1) + " or " + g.predicate(depth-1) + ")"
		default:
			return "not (" + g.predicate(depth-1) + ")"
		}
	}
	for range 8 {
		if p := g.atom(); p != "" {
			return p
		}
	}
	return "t.timestamp is not null"
}

// atom draws one comparison, match or test.
func (g *qgen) atom() string {
	if g.chance(0.12) {
		return g.timeAtom()
	}
	if g.chance(0.06) {
		return g.paramAtom()
	}
	if g.chance(0.08) {
		if a := g.arrayAtom(); a != "" {
			return a
		}
	}
	if g.chance(0.15) {
		e, t := g.value()
		switch t {
		case vec.String:
			return e + " " + cmpOps[g.pick(len(cmpOps))] + " " + []string{"''", "'a'", "'default'", "'GET'", "'2025-07-09 03'"}[g.pick(5)]
		case vec.Int64:
			return e + " " + cmpOps[g.pick(len(cmpOps))] + " " + strconv.Itoa(g.pick(200))
		}
	}
	c, ok := g.column()
	if !ok {
		return ""
	}
	if g.chance(0.1) {
		if g.chance(0.5) {
			return c.expr + " is null"
		}
		return c.expr + " is not null"
	}
	switch c.t {
	case vec.String:
		return g.stringAtom(c)
	case vec.Int64, vec.Float64:
		return g.numberAtom(c)
	case vec.Bool:
		switch g.pick(4) {
		case 0:
			return c.expr
		case 1:
			return "not " + c.expr
		case 2:
			return c.expr + " = " + []string{"true", "false"}[g.pick(2)]
		default:
			return c.expr + " is " + []string{"true", "false", "not true", "not false"}[g.pick(4)]
		}
	case vec.Timestamp:
		return g.timeAtom()
	}
	return ""
}

var cmpOps = []string{"=", "!=", "<>", "<", "<=", ">", ">="}

func (g *qgen) samples(path string) []event.Value { return g.src.samples[path] }

// stringConst is a sample of the column (or another string), as SQL.
func (g *qgen) stringConst(c column) (string, string) {
	vs := g.samples(c.sample)
	var s string
	if len(vs) > 0 && g.chance(0.85) {
		v := vs[g.pick(len(vs))]
		s = valueText(v)
	} else {
		s = []string{"", "default", "info", "GET", "error", "/rest/v1/", "zzz"}[g.pick(7)]
	}
	return sqlString(s), s
}

func (g *qgen) stringAtom(c column) string {
	lit, raw := g.stringConst(c)
	switch g.pick(12) {
	case 0, 1, 2:
		return c.expr + " " + cmpOps[g.pick(len(cmpOps))] + " " + lit
	case 3, 4, 5:
		g.feature("regexp_contains")
		return "regexp_contains(" + c.expr + ", " + sqlString(g.regex(raw)) + ")"
	case 6:
		return c.expr + " like " + sqlString(g.likePattern(raw))
	case 7:
		var list []string
		for range 1 + g.pick(3) {
			l, _ := g.stringConst(c)
			list = append(list, l)
		}
		not := ""
		if g.chance(0.3) {
			not = "not "
		}
		return c.expr + " " + not + "in (" + strings.Join(list, ", ") + ")"
	case 8:
		return "starts_with(" + c.expr + ", " + sqlString(prefix(raw, 1+g.pick(4))) + ")"
	case 9:
		return "coalesce(" + c.expr + ", 'none') = " + []string{"'none'", lit}[g.pick(2)]
	case 10:
		return "lower(" + c.expr + ") = lower(" + lit + ")"
	default:
		return "length(" + c.expr + ") " + cmpOps[g.pick(len(cmpOps))] + " " + strconv.Itoa(utf8.RuneCountInString(raw))
	}
}

// regex builds a pattern from a sample: a literal piece, an alternation,
// an anchored prefix or a case-insensitive piece.
func (g *qgen) regex(raw string) string {
	piece := func() string {
		return regexp.QuoteMeta(substr(g.r, raw, 1+g.pick(6)))
	}
	switch g.pick(5) {
	case 0:
		return piece() + "|" + regexp.QuoteMeta(substr(g.r, raw, 2))
	case 1:
		return "^" + regexp.QuoteMeta(prefix(raw, 1+g.pick(5)))
	case 2:
		return "(?i)" + strings.ToUpper(piece())
	case 3:
		return piece() + ".*" + regexp.QuoteMeta(substr(g.r, raw, 1))
	}
	return piece()
}

func (g *qgen) likePattern(raw string) string {
	esc := func(s string) string {
		s = strings.ReplaceAll(s, `\`, `\\`)
		s = strings.ReplaceAll(s, "%", `\%`)
		return strings.ReplaceAll(s, "_", `\_`)
	}
	switch g.pick(4) {
	case 0:
		return esc(prefix(raw, 1+g.pick(6))) + "%"
	case 1:
		return "%" + esc(substr(g.r, raw, 1+g.pick(5))) + "%"
	case 2:
		return "%" + esc(suffix(raw, 1+g.pick(4)))
	}
	return esc(raw)
}

func (g *qgen) numberAtom(c column) string {
	vs := g.samples(c.sample)
	num := strconv.Itoa(g.pick(600))
	if len(vs) > 0 && g.chance(0.85) {
		num = valueText(vs[g.pick(len(vs))])
	}
	if _, err := strconv.ParseFloat(num, 64); err != nil {
		num = "0"
	}
	switch g.pick(8) {
	case 0, 1, 2, 3:
		return c.expr + " " + cmpOps[g.pick(len(cmpOps))] + " " + num
	case 4:
		return c.expr + " between " + num + " and " + num + " + " + strconv.Itoa(g.pick(100))
	case 5:
		return c.expr + " in (" + num + ", " + strconv.Itoa(g.pick(600)) + ")"
	case 6:
		return "coalesce(" + c.expr + ", -1) " + cmpOps[g.pick(len(cmpOps))] + " " + num
	default:
		return "cast(" + c.expr + " as string) = " + sqlString(num)
	}
}

// timeAtom compares the event time: with an ISO string, a truncation, a
// window back from now.
func (g *qgen) timeAtom() string {
	at := g.db.first.Add(time.Duration(g.r.Int64N(int64(g.db.last.Sub(g.db.first)))))
	if vs := g.samples("timestamp"); len(vs) > 0 && g.chance(0.3) {
		at = time.UnixMicro(vs[g.pick(len(vs))].Int()).UTC() // exactly an event's time
	}
	op := cmpOps[g.pick(len(cmpOps))]
	switch g.pick(5) {
	case 0:
		return "t.timestamp " + op + " '" + at.Format("2006-01-02T15:04:05.000000Z") + "'"
	case 1:
		g.feature("timestamp_trunc")
		unit := []string{"minute", "hour", "day"}[g.pick(3)]
		return "timestamp_trunc(t.timestamp, " + unit + ") " + op + " timestamp '" + at.Format("2006-01-02 15:04:05") + "+00'"
	case 2:
		return "t.timestamp " + op + " timestamp_sub(current_timestamp(), interval " + strconv.Itoa(1+g.pick(40)) + " hour)"
	case 3:
		return "cast(t.timestamp as timestamp) " + op + " cast('" + at.Format(time.RFC3339) + "' as timestamp)"
	}
	return "t.timestamp between '" + at.Format(time.RFC3339) + "' and '" + at.Add(time.Duration(1+g.pick(600))*time.Minute).Format(time.RFC3339) + "'"
}

// arrayAtom tests an array of scalars of a record alias: membership,
// EXISTS over its UNNEST, its length.
func (g *qgen) arrayAtom() string {
	var cands []string
	var paths []string
	for _, a := range g.aliases {
		for _, k := range a.node.kids {
			if k.array && len(k.kids) == 0 && k.elemType != vec.Unknown {
				cands = append(cands, a.name+"."+k.name)
				paths = append(paths, k.path+"[]")
			}
		}
	}
	if len(cands) == 0 {
		return ""
	}
	i := g.pick(len(cands))
	arr := cands[i]
	val := "'a'"
	if vs := g.samples(paths[i]); len(vs) > 0 {
		v := vs[g.pick(len(vs))]
		if v.Kind == event.String {
			val = sqlString(v.Str)
		} else {
			val = valueText(v)
		}
	}
	switch g.pick(3) {
	case 0:
		return val + " in unnest(" + arr + ")"
	case 1:
		return "exists(select 1 from unnest(" + arr + ") as x where cast(x as string) >= " + sqlString(strings.Trim(val, "'")) + ")"
	}
	return "array_length(" + arr + ") " + cmpOps[g.pick(len(cmpOps))] + " " + strconv.Itoa(g.pick(3))
}

// paramAtom is one of the @param CASE forms of the seeded SQL, with the
// parameter set, empty or missing.
func (g *qgen) paramAtom() string {
	g.feature("@param CASE")
	g.n++
	name := fmt.Sprintf("p%d", g.n)
	switch g.pick(3) {
	case 0:
	case 1:
		g.q.params[name] = ""
	default:
		at := g.db.first.Add(time.Duration(g.r.Int64N(int64(g.db.last.Sub(g.db.first)))))
		g.q.params[name] = at.Format("2006-01-02T15:04:05.000Z")
	}
	switch g.pick(3) {
	case 0:
		return "CASE WHEN COALESCE(@" + name + ", '') = '' THEN TRUE ELSE cast(t.timestamp as timestamp) > cast(@" + name + " as timestamp) END"
	case 1:
		return "CASE WHEN COALESCE(@" + name + ", '') = '' THEN TRUE ELSE cast(t.timestamp as timestamp) <= cast(@" + name + " as timestamp) END"
	}
	// usage.api-counts' window form, on an interval parameter.
	delete(g.q.params, name)
	if g.chance(0.8) {
		g.q.params[name] = []string{"minutely", "hourly", "daily", "1day", "7day", "weekly"}[g.pick(6)]
	}
	return "t.timestamp >= CASE WHEN @" + name + " IN ('minutely', '1hr') THEN timestamp_sub(current_timestamp(), interval 60 minute) " +
		"WHEN @" + name + " = 'hourly' THEN timestamp_sub(current_timestamp(), interval 1 hour) " +
		"WHEN @" + name + " = '1day' THEN timestamp_sub(current_timestamp(), interval 24 hour) " +
		"WHEN @" + name + " IN ('daily', '7day') THEN timestamp_sub(current_timestamp(), interval 7 day) END"
}

// value draws a scalar expression over a column: the column itself or a
// function of it, with the type it has.
func (g *qgen) value() (string, vec.Type) {
	c, ok := g.column()
	if !ok {
		return "t.id", vec.String
	}
	if g.chance(0.55) {
		return c.expr, c.t
	}
	lit, raw := "'x'", "x"
	if c.t == vec.String {
		lit, raw = g.stringConst(c)
	}
	switch c.t {
	case vec.String:
		switch g.pick(14) {
		case 0:
			return "lower(" + c.expr + ")", vec.String
		case 1:
			return "upper(" + c.expr + ")", vec.String
		case 2:
			return "concat(" + c.expr + ", '-', " + lit + ")", vec.String
		case 3:
			return fmt.Sprintf("substr(%s, %d, %d)", c.expr, 1+g.pick(4), 1+g.pick(8)), vec.String
		case 4:
			return fmt.Sprintf("left(%s, %d)", c.expr, 1+g.pick(6)), vec.String
		case 5:
			return "replace(" + c.expr + ", " + sqlString(substr(g.r, raw, 1)) + ", '_')", vec.String
		case 6:
			return "regexp_extract(" + c.expr + ", " + sqlString("("+regexp.QuoteMeta(substr(g.r, raw, 1+g.pick(3)))+")") + ")", vec.String
		case 7:
			return "ifnull(" + c.expr + ", " + lit + ")", vec.String
		case 8:
			return "if(" + g.predicate(0) + ", " + c.expr + ", " + lit + ")", vec.String
		case 9:
			return "split(" + c.expr + ", " + sqlString(substr(g.r, raw, 1)) + ")[safe_offset(" + strconv.Itoa(g.pick(3)) + ")]", vec.String
		case 10:
			return "length(" + c.expr + ")", vec.Int64
		case 11:
			return "strpos(" + c.expr + ", " + sqlString(substr(g.r, raw, 1)) + ")", vec.Int64
		case 12:
			return "safe_cast(" + c.expr + " as int64)", vec.Int64
		default:
			return "trim(" + c.expr + ")", vec.String
		}
	case vec.Int64:
		switch g.pick(6) {
		case 0:
			return c.expr + " + " + strconv.Itoa(g.pick(100)), vec.Int64
		case 1:
			return "mod(" + c.expr + ", " + strconv.Itoa(2+g.pick(9)) + ")", vec.Int64
		case 2:
			return "abs(" + c.expr + ")", vec.Int64
		case 3:
			return "cast(" + c.expr + " as string)", vec.String
		case 4:
			return "greatest(" + c.expr + ", " + strconv.Itoa(g.pick(300)) + ")", vec.Int64
		default:
			return "div(" + c.expr + ", " + strconv.Itoa(1+g.pick(9)) + ")", vec.Int64
		}
	case vec.Timestamp:
		switch g.pick(6) {
		case 0:
			return "format_timestamp('%Y-%m-%d %H', t.timestamp)", vec.String
		case 1:
			return "cast(datetime(t.timestamp, 'UTC') as string)", vec.String
		case 2:
			return "timestamp_diff(current_timestamp(), t.timestamp, minute)", vec.Int64
		case 3:
			return "extract(hour from t.timestamp)", vec.Int64
		case 4:
			return "unix_seconds(t.timestamp)", vec.Int64
		default:
			g.feature("timestamp_trunc")
			return "timestamp_trunc(t.timestamp, " + []string{"minute", "hour", "day"}[g.pick(3)] + ")", vec.Timestamp
		}
	}
	return c.expr, c.t
}

// rowsShape selects plain values, maybe ordered, maybe limited.
func (g *qgen) rowsShape() {
	q := g.q
	q.shape = shapeRows
	q.items = []item{{expr: "t.timestamp", alias: "c0"}}
	for i := 1; i <= 1+g.pick(3); i++ {
		expr, t := g.value()
		if t == vec.String && g.chance(0.15) {
			expr = "case when " + g.predicate(0) + " then " + expr + " else 'other' end"
		}
		q.items = append(q.items, item{expr: expr, alias: "c" + strconv.Itoa(i)})
	}
	if g.chance(0.3) {
		q.items = append(q.items, item{expr: "t.id", alias: "cid"})
	}
	window := false
	if g.chance(0.1) {
		g.feature("window function")
		window = true
		part, _ := g.value()
		fn := []string{"count(*)", "max(t.timestamp)", "min(t.id)", "count(" + part + ")"}[g.pick(4)]
		q.items = append(q.items, item{expr: fn + " over (partition by " + part + ")", alias: "w"})
	} else if g.chance(0.12) {
		g.feature("DISTINCT")
		q.distinct = true
	}
	defer func() {
		if window {
			q.tlp = false // a window sees the partition's rows only
		}
	}()
	switch n := g.pick(10); {
	case n < 4:
		q.tlp = true
	case n < 7:
		q.order = orderTotal
		var keys []string
		for _, it := range q.items {
			keys = append(keys, it.alias+[]string{"", " desc"}[g.pick(2)])
		}
		q.orderBy = strings.Join(keys, ", ")
		if g.chance(0.7) {
			q.limit = 1 + g.pick(60)
			if g.chance(0.2) {
				q.offset = g.pick(20)
			}
		} else {
			q.tlp = true // ordered, whole: partitions still add up
		}
	case n < 9:
		// Studio's newest-first list: ORDER BY the time alone, with a
		// LIMIT; only the times are fixed.
		q.order = orderLeading
		q.orderBy = "c0 desc"
		switch g.pick(4) {
		case 0:
			q.orderBy = "t.timestamp desc"
		case 1:
			q.orderBy = "c0" // oldest first
		}
		q.limit = 1 + g.pick(120)
	default:
		q.limit = 1 + g.pick(40) // LIMIT without ORDER BY: any rows
	}
}

// aggShape selects mergeable aggregates, one row.
func (g *qgen) aggShape() {
	q := g.q
	q.shape = shapeAgg
	q.tlp = true
	q.items = append(q.items, item{expr: "count(*)", alias: "n", agg: aggCount})
	q.items = append(q.items, g.aggregates(1+g.pick(4))...)
	for _, it := range q.items {
		if it.agg == aggOpaque {
			q.tlp = false
		}
	}
}

// groupShape groups by a truncated time alias or a column.
func (g *qgen) groupShape() {
	q := g.q
	q.shape = shapeGroup
	q.tlp = true
	var keys []string
	if g.chance(0.6) {
		g.feature("GROUP BY a truncated alias")
		unit := []string{"minute", "hour", "day"}[g.pick(3)]
		name := []string{"bucket", "timestamp"}[g.pick(2)]
		q.items = append(q.items, item{expr: "timestamp_trunc(t.timestamp, " + unit + ")", alias: name})
		keys = append(keys, name)
	}
	if c, ok := g.column(vec.String, vec.Int64, vec.Bool); ok && (len(keys) == 0 || g.chance(0.4)) {
		alias := "k" + strconv.Itoa(len(keys))
		q.items = append(q.items, item{expr: c.expr, alias: alias})
		keys = append(keys, alias)
	}
	q.keys = len(q.items)
	if g.chance(0.3) {
		var ords []string
		for i := range keys {
			ords = append(ords, strconv.Itoa(i+1))
		}
		q.groupBy = strings.Join(ords, ", ")
	} else {
		q.groupBy = strings.Join(keys, ", ")
	}
	q.items = append(q.items, item{expr: "count(*)", alias: "n", agg: aggCount})
	q.items = append(q.items, g.aggregates(g.pick(3))...)
	for _, it := range q.items {
		if it.agg == aggOpaque {
			q.tlp = false
		}
	}
	if g.chance(0.15) {
		g.feature("HAVING")
		q.having = []string{"count(*) > " + strconv.Itoa(g.pick(4)), "countif(" + g.predicate(0) + ") >= 1", "max(t.timestamp) > '" + g.db.first.Add(g.db.last.Sub(g.db.first)/2).Format(time.RFC3339) + "'"}[g.pick(3)]
		q.tlp = false // a group's partitions need not pass it
	}
	if g.chance(0.5) {
		q.order = orderTotal
		var ords []string
		for _, k := range keys {
			ords = append(ords, k+[]string{"", " desc"}[g.pick(2)])
		}
		q.orderBy = strings.Join(ords, ", ")
		if g.chance(0.3) {
			q.limit = 1 + g.pick(20)
			q.tlp = false
		}
	}
}

func (g *qgen) aggregates(n int) []item {
	var out []item
	for i := range n {
		alias := "a" + strconv.Itoa(i)
		switch g.pick(8) {
		case 0, 1:
			g.feature("countif")
			out = append(out, item{expr: "countif(" + g.predicate(1) + ")", alias: alias, agg: aggCount})
		case 2:
			if c, ok := g.column(); ok {
				out = append(out, item{expr: "count(" + c.expr + ")", alias: alias, agg: aggCount})
			}
		case 3:
			if c, ok := g.column(vec.Int64, vec.Float64); ok {
				expr := c.expr
				if g.large(c) {
					// Ids and hashes would overflow INT64 (an error that
					// depends on which rows are summed).
					expr = "mod(" + c.expr + ", 100000)"
				}
				out = append(out, item{expr: "sum(" + expr + ")", alias: alias, agg: aggSum})
			}
		case 4:
			if c, ok := g.column(vec.Int64, vec.Float64, vec.String, vec.Timestamp); ok {
				out = append(out, item{expr: "min(" + c.expr + ")", alias: alias, agg: aggMin})
			}
		case 5:
			if c, ok := g.column(vec.Int64, vec.Float64, vec.String, vec.Timestamp); ok {
				out = append(out, item{expr: "max(" + c.expr + ")", alias: alias, agg: aggMax})
			}
		case 6:
			out = append(out, item{expr: "max(t.timestamp)", alias: alias, agg: aggMax})
		default:
			if c, ok := g.column(vec.Int64, vec.Float64); ok && g.chance(0.5) {
				out = append(out, item{expr: "avg(" + c.expr + ")", alias: alias, agg: aggOpaque})
			} else if c, ok := g.column(); ok {
				out = append(out, item{expr: "count(distinct " + c.expr + ")", alias: alias, agg: aggOpaque})
			}
		}
	}
	return out
}

// large reports whether a numeric column holds values too large to sum
// safely.
func (g *qgen) large(c column) bool {
	for _, v := range g.samples(c.sample) {
		switch v.Kind {
		case event.Int:
			if x := v.Int(); x > 1e12 || x < -1e12 {
				return true
			}
		case event.Float:
			return true // sums of floats are compared with a tolerance; keep them small
		}
	}
	return false
}

// valueText is a sample's text as a SQL literal's content would read it.
func valueText(v event.Value) string {
	switch v.Kind {
	case event.String:
		return v.Str
	case event.Int:
		return strconv.FormatInt(v.Int(), 10)
	case event.Float:
		return strconv.FormatFloat(v.Float(), 'g', -1, 64)
	case event.Bool:
		return strconv.FormatBool(v.Bool())
	}
	return ""
}

// sqlString quotes s as a SQL string literal.
func sqlString(s string) string {
	var b strings.Builder
	b.WriteByte('\'')
	for _, r := range s {
		switch r {
		case '\\':
			b.WriteString(`\\`)
		case '\'':
			b.WriteString(`\'`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		default:
			if r < 0x20 {
				fmt.Fprintf(&b, `\x%02x`, r)
			} else {
				b.WriteRune(r)
			}
		}
	}
	b.WriteByte('\'')
	return b.String()
}

func prefix(s string, n int) string {
	r := []rune(s)
	return string(r[:min(n, len(r))])
}

func suffix(s string, n int) string {
	r := []rune(s)
	return string(r[len(r)-min(n, len(r)):])
}

func substr(rng *rand.Rand, s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	i := rng.IntN(len(r) - n + 1)
	return string(r[i : i+n])
}
