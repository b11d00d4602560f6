package fuzz

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sediment/sediment/engine"
	"github.com/sediment/sediment/event"
	"github.com/sediment/sediment/internal/vfs"
	"github.com/sediment/sediment/sql"
	"github.com/sediment/sediment/sql/parser"
	"github.com/sediment/sediment/sql/scan"
)

// execDB is a small fixed data set in a real engine on an in-memory file
// system: two segments of tiny blocks (so block pruning, dictionaries and
// the index all take part) and a head, with fields that are sometimes
// absent, a field whose type varies and nested metadata.
type execDB struct {
	eng   *engine.Engine
	shard *engine.Shard
}

var (
	execOnce sync.Once
	execData *execDB
	execErr  error
)

// execRows is the number of events in the data set.
const execRows = 240

func openExecDB() (*execDB, error) {
	execOnce.Do(func() {
		eng, err := engine.Open("/db", &engine.Options{FS: vfs.NewMemFS(), DisableBackground: true, BlockRows: 16, PageBytes: 256})
		if err != nil {
			execErr = err
			return
		}
		sh, err := eng.Shard("00000000-0000-4000-8000-000000000001")
		if err != nil {
			execErr = err
			return
		}
		evs := execEvents()
		for i, part := range [][2]int{{0, 100}, {100, 180}, {180, execRows}} {
			if err := sh.Append(context.Background(), evs[part[0]:part[1]]); err != nil {
				execErr = err
				return
			}
			if i < 2 { // the last part stays in the head
				if err := sh.Flush(); err != nil {
					execErr = err
					return
				}
			}
		}
		execData = &execDB{eng: eng, shard: sh}
	})
	return execData, execErr
}

// execEvents builds the data set: deterministic, every field absent now
// and then.
func execEvents() []event.Event {
	methods := []string{"GET", "POST", "PATCH", "DELETE"}
	levels := []string{"info", "warn", "error"}
	var out []event.Event
	x := uint32(7)
	rnd := func(n uint32) uint32 { x = x*1664525 + 1013904223; return (x >> 8) % n }
	for i := range execRows {
		var fields []event.Value
		if rnd(10) != 0 {
			fields = append(fields, event.Member("status", event.IntValue(int64([]int{200, 201, 204, 301, 404, 500, 503}[rnd(7)]))))
		}
		if rnd(8) != 0 {
			fields = append(fields, event.Member("method", event.StringValue(methods[rnd(4)])))
		}
		switch rnd(4) {
		case 0:
		case 1:
			fields = append(fields, event.Member("latency", event.IntValue(int64(rnd(1000)))))
		default:
			fields = append(fields, event.Member("latency", event.FloatValue(float64(rnd(100000))/100)))
		}
		if rnd(3) != 0 {
			fields = append(fields, event.Member("ok", event.BoolValue(rnd(2) == 0)))
		}
		switch rnd(3) { // a field that is a number in some events, text in others
		case 0:
			fields = append(fields, event.Member("mixed", event.IntValue(int64(rnd(50)))))
		case 1:
			fields = append(fields, event.Member("mixed", event.StringValue(fmt.Sprint("v", rnd(5)))))
		}
		if rnd(5) != 0 {
			var meta []event.Value
			if rnd(4) != 0 {
				meta = append(meta, event.Member("level", event.StringValue(levels[rnd(3)])))
			}
			meta = append(meta, event.Member("code", event.IntValue(int64(rnd(6)))))
			fields = append(fields, event.Member("metadata", event.ObjectValue(meta...)))
		}
		msg := fmt.Sprintf("%s /rest/v1/t%d?id=eq.%d %s", methods[i%4], rnd(5), rnd(1000), levels[rnd(3)])
		out = append(out, event.Event{
			ID:         fmt.Sprintf("00000000-0000-4000-8000-%012d", i),
			Timestamp:  fixedNow.Add(-time.Duration(execRows-i) * time.Minute).UnixMicro(),
			Message:    msg,
			HasMessage: true,
			Fields:     event.ObjectValue(fields...),
		})
	}
	return out
}

// oneTable is a sql.Catalog with one source, "src", over one snapshot.
type oneTable struct{ sn *engine.Snapshot }

func (c oneTable) Table(name string) (scan.Table, error) {
	if name != "src" {
		return nil, fmt.Errorf("can't find source %s", name)
	}
	return c.sn.Table(name), nil
}

// operand types of the predicate generator.
type opType uint8

const (
	tInt opType = iota
	tFloat
	tString
	tBool
	tTime
)

// column is an operand the generator may use.
type column struct {
	sql string
	typ opType
}

var execColumns = []column{
	{"t.status", tInt}, {"t.method", tString}, {"t.latency", tFloat}, {"t.ok", tBool},
	{"t.mixed", tString}, {"t.event_message", tString}, {"t.id", tString}, {"t.timestamp", tTime},
	{"m.level", tString}, {"m.code", tInt},
}

var literals = map[opType][]string{
	tInt:    {"0", "200", "204", "404", "500", "-1", "3", "null"},
	tFloat:  {"0.5", "10.25", "500", "1e9", "-2.5", "null"},
	tString: {"'GET'", "'POST'", "''", "'error'", "'v1'", "'v3'", "'200'", "null"},
	tBool:   {"true", "false", "null"},
	tTime:   {"timestamp '2025-07-10 10:00:00'", "timestamp '2025-07-10 11:59:00'", "timestamp '2025-07-09 00:00:00'"},
}

// predGen turns fuzz bytes into a boolean SQL expression over execColumns.
type predGen struct {
	in []byte
	i  int
}

func (g *predGen) next() byte {
	if g.i >= len(g.in) {
		return 0
	}
	b := g.in[g.i]
	g.i++
	return b
}

func (g *predGen) pick(n int) int { return int(g.next()) % n }

// operand returns a column, possibly wrapped in a function, and its type.
func (g *predGen) operand() (string, opType) {
	c := execColumns[g.pick(len(execColumns))]
	switch g.pick(6) {
	case 1:
		return "coalesce(" + c.sql + ", " + literals[c.typ][0] + ")", c.typ
	case 2:
		if c.typ != tTime {
			return "cast(" + c.sql + " as string)", tString
		}
	case 3:
		switch c.typ {
		case tInt:
			return "(" + c.sql + " + 1)", tInt
		case tFloat:
			return "(" + c.sql + " * 2)", tFloat
		case tString:
			return "lower(" + c.sql + ")", tString
		}
	case 4:
		if c.typ == tString {
			return "length(" + c.sql + ")", tInt
		}
	}
	return c.sql, c.typ
}

func (g *predGen) literal(t opType) string {
	l := literals[t]
	return l[g.pick(len(l))]
}

var compareOps = []string{"=", "!=", "<", "<=", ">", ">=", "<>"}

// pred returns a boolean expression; depth bounds nesting.
func (g *predGen) pred(depth int) string {
	k := g.pick(12)
	if depth >= 4 && k >= 8 {
		k %= 8
	}
	switch k {
	case 0, 1, 2:
		a, t := g.operand()
		return a + " " + compareOps[g.pick(len(compareOps))] + " " + g.literal(t)
	case 3:
		a, _ := g.operand()
		if g.pick(2) == 0 {
			return a + " is null"
		}
		return a + " is not null"
	case 4:
		a, t := g.operand()
		not := ""
		if g.pick(2) == 0 {
			not = "not "
		}
		return a + " " + not + "in (" + g.literal(t) + ", " + g.literal(t) + ")"
	case 5:
		a, t := g.operand()
		return a + " between " + g.literal(t) + " and " + g.literal(t)
	case 6:
		a, t := g.operand()
		if t != tString {
			a = "cast(" + a + " as string)"
		}
		switch g.pick(4) {
		case 0:
			return a + " like '" + []string{"%GET%", "v%", "%", "_", "%rest/v1/t1%"}[g.pick(5)] + "'"
		case 1:
			return "regexp_contains(" + a + ", '" + []string{"error", "^(GET|POST) ", "t[0-2]\\\\?", "", "v[13]$"}[g.pick(5)] + "')"
		case 2:
			return "starts_with(" + a + ", '" + []string{"GET", "v", "", "2"}[g.pick(4)] + "')"
		default:
			return a + " not like '%" + []string{"a", "1", "error"}[g.pick(3)] + "%'"
		}
	case 7:
		return []string{"true", "false", "null", "t.ok", "not t.ok", "(t.ok) is true", "t.ok is not false"}[g.pick(7)]
	case 8, 9:
		return "not (" + g.pred(depth+1) + ")"
	case 10:
		return "(" + g.pred(depth+1) + ") and (" + g.pred(depth+1) + ")"
	default:
		return "(" + g.pred(depth+1) + ") or (" + g.pred(depth+1) + ")"
	}
}

const execFrom = "from src t left join unnest(t.metadata) as m on true"

// FuzzSQLExecute plans and runs queries built from the input over the
// fixed data set. For the random predicate p, the rows where p is true,
// false and NULL partition the table:
//
//	count(*) = countif(p) + countif(not p) + countif(p is null)
//
// and a WHERE clause (pushed down into the scan: index, block statistics,
// dictionaries) must select exactly the rows countif counts (evaluated
// row by row), for p, not p and p is null alike. The newest-first top-k
// path and a GROUP BY must agree with the counts too. Query errors (an
// ill-typed comparison) are fine; panics and disagreements are not.
func FuzzSQLExecute(f *testing.F) {
	for _, s := range []string{"", "\x00", "\x01\x02\x03", "\x08\x00\x01\x02\x0a\x03\x01\x00", "\x0b\x06\x05\x01\x0a\x03\x04\x02",
		"\x06\x01\x01\x01\x06\x00\x00\x04", "\x04\x08\x00\x05\x09\x09\x03\x03", "\x02\x09\x05\x01\x00\x01\x07\x05"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		if len(in) > 256 {
			t.Skip()
		}
		db, err := openExecDB()
		if err != nil {
			t.Fatal(err)
		}
		g := &predGen{in: []byte(in)}
		workers := 1 + g.pick(2)
		p := g.pred(0)
		run := func(q string) (*sql.Result, error) {
			pq, err := parser.Validate(q, parser.ValidateOptions{KnownSource: func(n string) bool { return n == "src" }})
			if err != nil {
				return nil, err
			}
			sn := db.shard.Snapshot()
			defer sn.Release()
			return sql.Run(context.Background(), pq, oneTable{sn}, sql.Options{Now: fixedNow, Workers: workers, Timeout: 30 * time.Second})
		}
		counts, err := run("select count(*) as n, countif(" + p + ") as t, countif(not (" + p + ")) as f, countif((" + p + ") is null) as u " + execFrom)
		if err != nil {
			return
		}
		n, tr, fa, nu := intCell(t, counts, 0), intCell(t, counts, 1), intCell(t, counts, 2), intCell(t, counts, 3)
		if n != execRows {
			t.Fatalf("count(*) = %d, want %d (the left join keeps every row)", n, execRows)
		}
		if tr+fa+nu != n {
			t.Fatalf("p = %s\ncountif(p) %d + countif(not p) %d + countif(p is null) %d != count(*) %d", p, tr, fa, nu, n)
		}
		for _, c := range []struct {
			where string
			want  int64
		}{{p, tr}, {"not (" + p + ")", fa}, {"(" + p + ") is null", nu}} {
			res, err := run("select count(*) as c " + execFrom + " where " + c.where)
			if err != nil {
				t.Fatalf("where %s: %v (the same predicate ran in countif)", c.where, err)
			}
			if got := intCell(t, res, 0); got != c.want {
				t.Fatalf("where %s selects %d rows, countif counts %d", c.where, got, c.want)
			}
		}
		top, err := run("select t.id, t.timestamp " + execFrom + " where " + p + " order by t.timestamp desc limit 7")
		if err != nil {
			t.Fatalf("top-k with where %s: %v", p, err)
		}
		if want := min(tr, 7); int64(top.Len) != want {
			t.Fatalf("where %s order by timestamp desc limit 7: %d rows, want %d", p, top.Len, want)
		}
		for i := 1; i < top.Len; i++ {
			if top.Cols[1].Ints[i] > top.Cols[1].Ints[i-1] {
				t.Fatalf("where %s: top-k not newest first", p)
			}
		}
		groups, err := run("select t.method as k, countif(" + p + ") as c " + execFrom + " group by k")
		if err != nil {
			t.Fatalf("group by with countif(%s): %v", p, err)
		}
		var sum int64
		for i := range groups.Len {
			sum += groups.Cols[1].Ints[i]
		}
		if sum != tr {
			t.Fatalf("countif(%s) summed over groups %d, over the table %d", p, sum, tr)
		}
	})
}

// intCell returns row 0 of an integer column of a one-row result.
func intCell(t *testing.T, r *sql.Result, col int) int64 {
	t.Helper()
	if r.Len != 1 || col >= len(r.Cols) || r.Cols[col].IsNull(0) || len(r.Cols[col].Ints) == 0 {
		t.Fatalf("want one non-NULL integer in column %d, got %d rows", col, r.Len)
	}
	return r.Cols[col].Ints[0]
}

// TestExecPredicatesCover: the generator reaches every kind of predicate,
// so fuzzing explores more than comparisons.
func TestExecPredicatesCover(t *testing.T) {
	seen := map[string]bool{}
	x := uint32(1)
	for range 2000 {
		in := make([]byte, 40)
		for i := range in {
			x = x*1664525 + 1013904223
			in[i] = byte(x >> 24)
		}
		p := (&predGen{in: in}).pred(0)
		for _, k := range []string{" is null", " is not null", " not in (", " between ", " like ", " not like ", "regexp_contains(", "starts_with(",
			"not (", ") and (", ") or (", "coalesce(", "cast(", "lower(", "length(", "timestamp '", "(t.ok) is true"} {
			if strings.Contains(p, k) {
				seen[k] = true
			}
		}
	}
	if len(seen) != 17 {
		t.Fatalf("generator reaches only %v", seen)
	}
}
