package sqlcheck

import (
	"context"
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/sediment/sediment/internal/recovered"
	"github.com/sediment/sediment/internal/vec"
	"github.com/sediment/sediment/sql"
	"github.com/sediment/sediment/sql/parser"
)

// variant is one way of running a query; every variant must give the
// default's rows (NoREC).
type variant struct {
	name string
	opts sql.Options
}

var variants = []variant{
	{"no rewrites", sql.Options{NoRewrites: true}},
	{"no pushdown", sql.Options{NoPushdown: true}},
	{"no index", sql.Options{NoIndex: true}},
	{"no rewrites, pushdown or index", sql.Options{NoRewrites: true, NoPushdown: true, NoIndex: true}},
	{"one worker", sql.Options{Workers: 1}},
}

// cell is one value of a result, typed for merging and canonical as text.
type cell struct {
	null bool
	t    vec.Type
	i    int64
	f    float64
	s    string
	text string
}

type outcome struct {
	names   []string
	rows    [][]cell
	err     error
	invalid bool // rejected before running (parse, validation)
}

// run validates and runs one form of a query (a consumer query of
// logs.all goes through parser.Sandbox, as the endpoint service does).
func (db *testDB) run(q *query, text string, o sql.Options) outcome {
	known := func(name string) bool { _, ok := db.shards[name]; return ok }
	vopts := parser.ValidateOptions{KnownSource: known}
	var pq *parser.Query
	var err error
	if q.sandbox {
		var sb *parser.Sandboxed
		if sb, err = parser.Sandbox(db.logsAll, text, vopts); err == nil {
			pq = sb.Query
		}
	} else {
		pq, err = parser.Validate(text, vopts)
	}
	if err != nil {
		return outcome{err: err, invalid: true}
	}
	o.Params, o.Now = q.params, db.now
	if o.Workers == 0 {
		o.Workers = 3
	}
	o.Timeout = time.Minute
	cat := &sqlCatalog{db: db}
	defer cat.release()
	res, err := sql.Run(context.Background(), pq, cat, o)
	if err != nil {
		return outcome{err: err}
	}
	out := outcome{names: res.Names}
	for r := 0; r < res.Len; r++ {
		row := make([]cell, len(res.Cols))
		for c, v := range res.Cols {
			row[c] = cellOf(res, v, c, r)
		}
		out.rows = append(out.rows, row)
	}
	return out
}

func cellOf(res *sql.Result, v *vec.Vector, c, r int) cell {
	x := cell{t: v.Type, null: v.IsNull(r)}
	if x.null {
		x.text = "null"
		return x
	}
	switch {
	case v.Type == vec.Float64:
		x.f = v.FloatAt(r)
		x.text = strconv.FormatFloat(x.f, 'g', 9, 64) // sums may differ in the last bits by order
		return x
	case v.Type.UsesInts():
		x.i = v.IntAt(r)
	case v.Type == vec.String:
		x.s = v.StringAt(r)
	}
	x.text = sql.CellJSON(res, c, r)
	return x
}

func rowText(row []cell) string {
	parts := make([]string, len(row))
	for i, c := range row {
		parts[i] = c.text
	}
	return strings.Join(parts, " | ")
}

func sortedRows(rows [][]cell) []string {
	out := make([]string, len(rows))
	for i, r := range rows {
		out[i] = rowText(r)
	}
	sort.Strings(out)
	return out
}

// diffRows describes how two row lists differ (first few lines).
func diffRows(want, got []string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d rows, want %d", len(got), len(want))
	wm := map[string]int{}
	for _, r := range want {
		wm[r]++
	}
	shown := 0
	for _, r := range got {
		if wm[r] > 0 {
			wm[r]--
			continue
		}
		if shown < 5 {
			fmt.Fprintf(&b, "\n  unexpected: %s", r)
		}
		shown++
	}
	for r, n := range wm {
		if n > 0 && shown < 10 {
			fmt.Fprintf(&b, "\n  missing (%d): %s", n, r)
			shown++
		}
	}
	if shown == 0 {
		b.WriteString(" (same rows, other order)")
	}
	return b.String()
}

// finding is a disagreement between forms of a query.
type finding struct {
	oracle string
	q      *query
	text   string
	detail string
}

func (f finding) String() string {
	return fmt.Sprintf("%s\nparams: %v\n%s\n-- %s", f.oracle, f.q.params, f.text, f.detail)
}

// checkStats counts what the checks did.
type checkStats struct {
	queries  int // generated queries checked
	runs     int // SQL executions
	invalid  int // rejected by the validator (generator limits)
	errored  int // failed the same way in every form
	features map[string]int
	examples []string // a few invalid or failing queries, for tuning the generator
}

// check runs every oracle on q and returns what disagreed.
func (db *testDB) check(q *query, st *checkStats) []finding {
	st.queries++
	for _, f := range q.features {
		st.features[f]++
	}
	var out []finding
	run := func(text string, o sql.Options) outcome {
		st.runs++
		return db.run(q, text, o)
	}
	text := q.text("(" + q.pred + ")")
	if q.lql != "" {
		text = q.raw + "\n-- lql: " + q.lql
	}
	base := run(text, sql.Options{})
	if base.invalid {
		st.invalid++
		if len(st.examples) < 20 {
			st.examples = append(st.examples, fmt.Sprintf("invalid: %v\n%s", base.err, text))
		}
		return nil
	}

	// NoREC: the same query without optimisations.
	var full outcome // for a LIMIT without ORDER BY: the rows it picks from
	if q.limit > 0 && q.order == orderNone {
		unlimited := *q
		unlimited.limit = 0
		full = run(unlimited.text("("+q.pred+")"), sql.Options{})
	}
	for _, v := range variants {
		got := run(text, v.opts)
		if isBug(got.err) && !isBug(base.err) {
			out = append(out, finding{"a bug, not a query error, with " + v.name, q, text, got.err.Error()})
			continue
		}
		if d := sameRows(q, base, got, full); d != "" {
			out = append(out, finding{"NoREC: default vs " + v.name, q, text, d})
		}
	}
	for _, o := range []outcome{base} {
		if isBug(o.err) {
			out = append(out, finding{"a bug, not a query error", q, text, o.err.Error()})
		}
	}
	if base.err != nil {
		st.errored++
		if len(st.examples) < 20 {
			st.examples = append(st.examples, fmt.Sprintf("error: %v\n%s", base.err, text))
		}
		return out
	}

	// TLP: the partitions on p add up to the whole.
	if !q.tlp || q.raw != "" {
		return out
	}
	var extra []item
	if q.shape != shapeRows {
		extra = []item{{expr: "countif(" + q.pred + ")", alias: "tlp_countif_p", agg: aggCountIfP}}
	}
	wholeText := q.text("", extra...)
	whole := run(wholeText, sql.Options{})
	parts := []outcome{base, run(q.text("not ("+q.pred+")"), sql.Options{}), run(q.text("("+q.pred+") is null"), sql.Options{})}
	if whole.err != nil {
		return append(out, finding{"TLP: the whole query fails where its partitions do not", q, wholeText, whole.err.Error()})
	}
	for i, p := range parts {
		if p.err != nil {
			return append(out, finding{"TLP: a partition fails where the whole does not", q, wholeText, fmt.Sprintf("partition %d: %v", i, p.err)})
		}
	}
	if d := tlpDiff(q, whole, parts); d != "" {
		out = append(out, finding{"TLP: partitions on p do not add up", q, wholeText, d + "\n  p: " + q.pred})
	}
	return out
}

// isBug reports errors that no query should get: a recovered panic, an
// internal inconsistency of the planner or executor.
func isBug(err error) bool {
	return err != nil && (recovered.As(err) != nil || strings.Contains(err.Error(), "internal"))
}

// sameRows compares a variant's outcome with the default's as far as the
// query fixes its answer.
func sameRows(q *query, want, got, full outcome) string {
	switch {
	case (want.err == nil) != (got.err == nil):
		return fmt.Sprintf("default error %v, variant error %v", want.err, got.err)
	case want.err != nil:
		return ""
	}
	switch {
	case q.limit > 0 && q.order == orderNone:
		// Any limit rows of the full answer.
		if full.err != nil {
			return "the query without its LIMIT fails: " + full.err.Error()
		}
		if len(got.rows) != min(q.limit, len(full.rows)) {
			return fmt.Sprintf("%d rows, want %d (LIMIT %d of %d)", len(got.rows), min(q.limit, len(full.rows)), q.limit, len(full.rows))
		}
		pool := map[string]int{}
		for _, r := range full.rows {
			pool[rowText(r)]++
		}
		for _, r := range got.rows {
			if pool[rowText(r)] == 0 {
				return "a row not in the query's answer: " + rowText(r)
			}
			pool[rowText(r)]--
		}
		return ""
	case q.order == orderTotal:
		w, g := rowsText(want.rows), rowsText(got.rows)
		if !slices.Equal(w, g) {
			return "ordered rows differ: " + diffRows(w, g) + firstDifference(w, g)
		}
	case q.order == orderLeading:
		w, g := columnText(want.rows, 0), columnText(got.rows, 0)
		if !slices.Equal(w, g) {
			return "the ordered leading column differs: " + diffRows(w, g) + firstDifference(w, g)
		}
		if q.limit == 0 {
			if w, g := sortedRows(want.rows), sortedRows(got.rows); !slices.Equal(w, g) {
				return diffRows(w, g)
			}
		}
	default:
		if w, g := sortedRows(want.rows), sortedRows(got.rows); !slices.Equal(w, g) {
			return diffRows(w, g)
		}
	}
	return ""
}

func rowsText(rows [][]cell) []string {
	out := make([]string, len(rows))
	for i, r := range rows {
		out[i] = rowText(r)
	}
	return out
}

func columnText(rows [][]cell, c int) []string {
	out := make([]string, len(rows))
	for i, r := range rows {
		out[i] = r[c].text
	}
	return out
}

func firstDifference(want, got []string) string {
	for i := range min(len(want), len(got)) {
		if want[i] != got[i] {
			return fmt.Sprintf("\n  first difference at row %d: %s, want %s", i, got[i], want[i])
		}
	}
	return ""
}

// tlpDiff merges the partitions and compares them with the whole.
func tlpDiff(q *query, whole outcome, parts []outcome) string {
	if q.shape == shapeRows {
		var union [][]cell
		for _, p := range parts {
			union = append(union, p.rows...)
		}
		g := sortedRows(union)
		if q.distinct {
			g = slices.Compact(g) // a value may come from rows of two partitions
		}
		if w := sortedRows(whole.rows); !slices.Equal(w, g) {
			return "rows of the partitions vs the whole: " + diffRows(w, g)
		}
		return ""
	}
	// Aggregates, per group (one group without GROUP BY).
	nItems := len(q.items)
	type group struct {
		key    string
		merged []cell
		seen   bool
		countP int64 // count(*) of the p partition
	}
	groups := map[string]*group{}
	keyOf := func(row []cell) string { return rowText(row[:q.keys]) }
	for pi, p := range parts {
		for _, row := range p.rows {
			k := keyOf(row)
			gr := groups[k]
			if gr == nil {
				gr = &group{key: k}
				groups[k] = gr
			}
			if pi == 0 {
				gr.countP = row[q.keys].i // the first aggregate is count(*)
			}
			if !gr.seen {
				gr.merged = slices.Clone(row[:nItems])
				gr.seen = true
				continue
			}
			for i := q.keys; i < nItems; i++ {
				gr.merged[i] = mergeCell(q.items[i].agg, gr.merged[i], row[i])
			}
		}
	}
	if q.shape == shapeAgg && len(whole.rows) != 1 {
		return fmt.Sprintf("an aggregate without GROUP BY gave %d rows", len(whole.rows))
	}
	var problems []string
	seen := map[string]bool{}
	for _, row := range whole.rows {
		k := keyOf(row)
		seen[k] = true
		gr := groups[k]
		if gr == nil {
			problems = append(problems, "group "+k+" is in no partition")
			continue
		}
		for i := q.keys; i < nItems; i++ {
			if !sameCell(row[i], gr.merged[i]) {
				problems = append(problems, fmt.Sprintf("group %s, %s (%s): whole %s, partitions merged %s", k, q.items[i].alias, q.items[i].expr, row[i].text, gr.merged[i].text))
			}
		}
		if cp := row[nItems]; cp.i != gr.countP {
			problems = append(problems, fmt.Sprintf("group %s: countif(p) %s, count(*) where p %d", k, cp.text, gr.countP))
		}
	}
	for k, gr := range groups {
		if !seen[k] && q.shape == shapeGroup {
			problems = append(problems, fmt.Sprintf("group %s is in a partition only (%s)", k, rowText(gr.merged)))
		}
	}
	if len(problems) > 5 {
		problems = append(problems[:5], fmt.Sprintf("and %d more", len(problems)-5))
	}
	return strings.Join(problems, "\n  ")
}

func mergeCell(k aggKind, a, b cell) cell {
	switch {
	case a.null:
		if k == aggCount {
			return b
		}
		return b
	case b.null:
		return a
	}
	switch k {
	case aggCount, aggSum:
		if a.t == vec.Float64 || b.t == vec.Float64 {
			x := cell{t: vec.Float64, f: num(a) + num(b)}
			x.text = strconv.FormatFloat(x.f, 'g', 9, 64)
			return x
		}
		x := cell{t: a.t, i: a.i + b.i}
		x.text = strconv.FormatInt(x.i, 10)
		return x
	case aggMin:
		if less(b, a) {
			return b
		}
		return a
	case aggMax:
		if less(a, b) {
			return b
		}
		return a
	}
	return a
}

func num(c cell) float64 {
	if c.t == vec.Float64 {
		return c.f
	}
	return float64(c.i)
}

func less(a, b cell) bool {
	switch {
	case a.t == vec.String:
		return a.s < b.s
	case a.t == vec.Float64 || b.t == vec.Float64:
		return num(a) < num(b)
	}
	return a.i < b.i
}

func sameCell(a, b cell) bool {
	if a.null || b.null {
		return a.null == b.null
	}
	if a.t == vec.Float64 || b.t == vec.Float64 {
		x, y := num(a), num(b)
		return math.Abs(x-y) <= 1e-6*math.Max(1, math.Max(math.Abs(x), math.Abs(y)))
	}
	return a.text == b.text
}
