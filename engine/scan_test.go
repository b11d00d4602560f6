package engine

import (
	"fmt"
	"math"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/sediment/sediment/event"
	"github.com/sediment/sediment/internal/predicate"
	"github.com/sediment/sediment/internal/vec"
	"github.com/sediment/sediment/internal/vfs"
	"github.com/sediment/sediment/sql/scan"
)

// scanFixture is a shard with three segments (two overlapping in time) and
// a head, and the events it holds.
func scanFixture(t *testing.T, maxTerms int) (*Engine, *Shard, []event.Event) {
	t.Helper()
	fs := vfs.NewMemFS()
	opts := testOptions(fs)
	opts.IndexMaxValueTerms = maxTerms
	e := openTestEngine(t, fs, opts)
	s, _ := e.Shard(shardID)
	var all []event.Event
	base := int64(1_700_000_000_000_000)
	add := func(from, to int, t0 int64, flush bool) {
		var evs []event.Event
		for i := from; i < to; i++ {
			evs = append(evs, testEvent(i, t0+int64(i%250)*1000+int64(i)))
		}
		if err := s.Append(ctx, evs); err != nil {
			t.Fatal(err)
		}
		all = append(all, evs...)
		if flush {
			if err := s.Flush(); err != nil {
				t.Fatal(err)
			}
		}
	}
	add(0, 300, base, true)
	add(300, 600, base+100_000, true) // overlaps the first
	add(600, 900, base+10_000_000, true)
	add(900, 1000, base+20_000_000, false) // head
	return e, s, all
}

// refValue reads path from an event as a query would see it, widened to t.
func refValue(e *event.Event, path string, t vec.Type) (any, bool) {
	switch path {
	case "timestamp":
		return e.Timestamp, true
	case "id":
		return e.ID, true
	case "event_message":
		return e.Message, e.HasMessage
	}
	v := e.Fields.Path(strings.Split(path, ".")...)
	if v == nil {
		return nil, false
	}
	switch t {
	case vec.String:
		switch v.Kind {
		case event.String:
			return v.Str, true
		case event.Int:
			return strconv.FormatInt(v.Int(), 10), true
		case event.Float:
			return strconv.FormatFloat(v.Float(), 'g', -1, 64), true
		case event.Bool:
			return strconv.FormatBool(v.Bool()), true
		}
	case vec.Int64:
		if v.Kind == event.Int {
			return v.Int(), true
		}
	case vec.Float64:
		if v.Kind == event.Float {
			return v.Float(), true
		}
		if v.Kind == event.Int {
			return float64(v.Int()), true
		}
	case vec.Bool:
		if v.Kind == event.Bool {
			return v.Bool(), true
		}
	case vec.RowRef:
		return nil, v.Kind == event.Object
	case vec.List:
		return nil, v.Kind == event.Array
	}
	return nil, false
}

func refMatch(e *event.Event, p scan.Predicate) bool {
	v, ok := refValue(e, p.Path, p.Type)
	switch p.Op {
	case scan.IsNull:
		return !ok
	case scan.IsNotNull:
		return ok
	}
	if !ok {
		return false
	}
	var c int
	switch x := v.(type) {
	case string:
		var r bool
		switch p.Op {
		case scan.In:
			for _, a := range p.Args {
				r = r || a.Str == x
			}
			return r != p.Not
		case scan.Contains:
			return strings.Contains(x, p.Args[0].Str) != p.Not
		case scan.Regex:
			return regexp.MustCompile(p.Args[0].Str).MatchString(x) != p.Not
		case scan.StartsWith:
			return strings.HasPrefix(x, p.Args[0].Str) != p.Not
		case scan.Like:
			like, err := predicate.CompileLike(p.Args[0].Str)
			return err == nil && like.Match(x) != p.Not
		}
		c = strings.Compare(x, p.Args[0].Str)
	case int64:
		if p.Op == scan.In {
			r := false
			for _, a := range p.Args {
				r = r || a.Int == x
			}
			return r != p.Not
		}
		c = cmpInt(x, p.Args[0].Int)
	case float64:
		c = predicate.CompareFloat(x, p.Args[0].Flt)
	case bool:
		c = cmpInt(b2i(x), b2i(p.Args[0].Bool))
	}
	return cmpOK(p.Op, c)
}

func str(s string) scan.Const  { return scan.Const{Type: vec.String, Str: s} }
func num(i int64) scan.Const   { return scan.Const{Type: vec.Int64, Int: i} }
func flt(f float64) scan.Const { return scan.Const{Type: vec.Float64, Flt: f} }

// runScan reads every unit (concurrently, as the executor will) and returns
// the ids and the batches' columns as strings per id.
func runScan(t *testing.T, tb scan.Table, req *scan.Request) map[string][]string {
	t.Helper()
	sc, err := tb.Open(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	defer sc.Close()
	var mu sync.Mutex
	out := map[string][]string{}
	var wg sync.WaitGroup
	errs := make(chan error, len(sc.Units()))
	for _, u := range sc.Units() {
		wg.Add(1)
		go func(u scan.Unit) {
			defer wg.Done()
			n := 0
			err := u.Read(ctx, func(b *vec.Batch) error {
				b.ForEach(func(i int) {
					n++
					id := b.Cols[0].StringAt(i)
					var row []string
					for ci, c := range b.Cols[1:] {
						row = append(row, cellString(t, sc, req.Columns[ci+1], c, i))
					}
					mu.Lock()
					if _, dup := out[id]; dup {
						errs <- fmt.Errorf("row %s twice", id)
					}
					out[id] = row
					mu.Unlock()
				})
				return nil
			})
			if err != nil {
				errs <- err
				return
			}
			if req.Limit == 0 {
				cnt, err := u.Count(ctx)
				if err != nil || int(cnt) != n {
					errs <- fmt.Errorf("unit Count %d, Read %d rows (%v)", cnt, n, err)
				}
			}
		}(u)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	return out
}

func cellString(t *testing.T, sc scan.Scan, col scan.Column, v *vec.Vector, i int) string {
	if v.IsNull(i) {
		return "NULL"
	}
	switch v.Type {
	case vec.String, vec.JSON:
		return v.StringAt(i)
	case vec.Float64:
		return strconv.FormatFloat(v.Floats[i], 'g', -1, 64)
	case vec.Bool:
		return strconv.FormatBool(v.Bools[i])
	case vec.RowRef:
		dst := make([]string, 1)
		if err := sc.Materialize(ctx, col.Path, true, []int64{v.Ints[i]}, dst); err != nil {
			t.Fatal(err)
		}
		return dst[0]
	case vec.List:
		var parts []string
		for k := v.Offsets[i]; k < v.Offsets[i+1]; k++ {
			e := v.Elem
			if e.Type == vec.Struct {
				var f []string
				for ci, ch := range e.Children {
					f = append(f, e.Names[ci]+"="+cellString(t, sc, col, ch, int(k)))
				}
				parts = append(parts, strings.Join(f, ","))
			} else {
				parts = append(parts, cellString(t, sc, col, e, int(k)))
			}
		}
		return "[" + strings.Join(parts, ";") + "]"
	}
	return strconv.FormatInt(v.Ints[i], 10)
}

// refCell renders what a column should hold for an event.
func refCell(e *event.Event, col scan.Column) string {
	switch col.Kind {
	case scan.Record:
		v := e.Fields.Path(strings.Split(col.Path, ".")...)
		if v == nil || v.Kind != event.Object {
			return "NULL"
		}
		c := canon(*v)
		return string(appendBQJSON(nil, &c, true))
	case scan.ArrayOf:
		v := e.Fields.Path(strings.Split(col.Path, ".")...)
		if v == nil || v.Kind != event.Array {
			return "NULL"
		}
		var parts []string
		for _, el := range v.Kids {
			var f []string
			for _, ec := range col.Elem {
				x := el.Path(strings.Split(ec.Path, ".")...)
				s := "NULL"
				if x != nil {
					switch x.Kind {
					case event.String:
						s = x.Str
					case event.Int:
						s = strconv.FormatInt(x.Int(), 10)
					}
				}
				f = append(f, ec.Path+"="+s)
			}
			parts = append(parts, strings.Join(f, ","))
		}
		return "[" + strings.Join(parts, ";") + "]"
	}
	v, ok := refValue(e, col.Path, col.Type)
	if !ok {
		return "NULL"
	}
	switch x := v.(type) {
	case string:
		return x
	case int64:
		return strconv.FormatInt(x, 10)
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64)
	case bool:
		return strconv.FormatBool(x)
	}
	return "?"
}

// TestScanMatchesReference runs every kind of request against brute force
// over the events, with value indexes on every field (maxTerms 8192) and
// with high-cardinality fields left to the token index and scans (64).
func TestScanMatchesReference(t *testing.T) {
	for _, maxTerms := range []int{8192, 64} {
		t.Run(fmt.Sprintf("maxTerms=%d", maxTerms), func(t *testing.T) { testScanMatchesReference(t, scanFixture, maxTerms) })
	}
}

// TestHeadScanMatchesReference runs the same requests over a head of
// several chunks (sealed ones and an open tail) whose rows are not all in
// time order: in the first chunk and the tail every 50th event arrives
// about 100 events late; the second chunk is in order.
func TestHeadScanMatchesReference(t *testing.T) {
	testScanMatchesReference(t, headScanFixture, 64)
}

// headFixtureChunk is the head chunk size of headScanFixture.
const headFixtureChunk = 512

// headScanFixture is a shard whose events are all in its head: 2.5
// chunks of them, with late events.
func headScanFixture(t *testing.T, maxTerms int) (*Engine, *Shard, []event.Event) {
	t.Helper()
	fs := vfs.NewMemFS()
	opts := testOptions(fs)
	opts.IndexMaxValueTerms = maxTerms
	opts.HeadChunkRows = headFixtureChunk
	e := openTestEngine(t, fs, opts)
	s, _ := e.Shard(shardID)
	base := int64(1_700_000_000_000_000)
	var all []event.Event
	for i := 0; i < headFixtureChunk*5/2; i++ {
		ts := base + int64(i)*1000
		if i%50 == 0 && (i < headFixtureChunk || i >= 2*headFixtureChunk) {
			ts -= 99_993 // late, and no other event's time
		}
		all = append(all, testEvent(i, ts))
	}
	for off := 0; off < len(all); off += 100 {
		if err := s.Append(ctx, all[off:min(off+100, len(all))]); err != nil {
			t.Fatal(err)
		}
	}
	return e, s, all
}

func testScanMatchesReference(t *testing.T, fixture func(*testing.T, int) (*Engine, *Shard, []event.Event), maxTerms int) {
	e, s, all := fixture(t, maxTerms)
	defer e.Close()
	sn := s.Snapshot()
	defer sn.Release()
	tb := sn.Table("test")
	schema := tb.Schema()
	if f := schema.Lookup("metadata.level"); f == nil || f.Type != vec.String {
		t.Fatalf("mixed int/string field should read as STRING: %+v", f)
	}
	if f := schema.Lookup("metadata.origin_time"); f == nil || f.Type != vec.Float64 {
		t.Fatalf("origin_time: %+v", f)
	}
	if f := schema.Lookup("metadata.request"); f == nil || !f.Record {
		t.Fatalf("metadata.request should be a record: %+v", f)
	}
	if f := schema.Lookup("metadata.context"); f == nil || !f.Array || len(f.ElemFields) != 2 {
		t.Fatalf("metadata.context: %+v", f)
	}
	if schema.Lookup("metadata.never") != nil {
		t.Fatal("never-ingested field in schema")
	}
	cols := []scan.Column{
		{Path: "id", Type: vec.String},
		{Path: "timestamp", Type: vec.Timestamp},
		{Path: "metadata.response.status_code", Type: vec.Int64},
		{Path: "metadata.level", Type: vec.String},
		{Path: "metadata.origin_time", Type: vec.Float64},
		{Path: "metadata.never", Type: vec.String},
		{Path: "event_message", Type: vec.String},
		{Path: "metadata.request", Kind: scan.Record},
		{Path: "metadata.context", Kind: scan.ArrayOf, Elem: []scan.Column{{Path: "host", Type: vec.String}, {Path: "pid", Type: vec.Int64}}},
	}
	minT, maxT := int64(1_700_000_000_050_000), int64(1_700_000_010_100_000)
	if len(all) == headFixtureChunk*5/2 {
		// Across the first two chunks of the head fixture.
		minT, maxT = int64(1_700_000_000_050_000), int64(1_700_000_000_765_432)
	}
	cases := []struct {
		name    string
		filters []scan.Predicate
		tmin    int64
		tmax    int64
		order   scan.Order
		limit   int
	}{
		{name: "all"},
		{name: "status 500 (index)", filters: []scan.Predicate{{Path: "metadata.response.status_code", Type: vec.Int64, Op: scan.Eq, Args: []scan.Const{num(500)}}}},
		{name: "status >= 400", filters: []scan.Predicate{{Path: "metadata.response.status_code", Type: vec.Int64, Op: scan.Ge, Args: []scan.Const{num(400)}}}},
		{name: "status in", filters: []scan.Predicate{{Path: "metadata.response.status_code", Type: vec.Int64, Op: scan.In, Args: []scan.Const{num(404), num(201)}}}},
		{name: "project eq", filters: []scan.Predicate{{Path: "project", Type: vec.String, Op: scan.Eq, Args: []scan.Const{str("bravo")}}}},
		{name: "project not in", filters: []scan.Predicate{{Path: "project", Type: vec.String, Op: scan.In, Not: true, Args: []scan.Const{str("bravo"), str("alpha")}}}},
		{name: "message word (token index)", filters: []scan.Predicate{{Path: "event_message", Type: vec.String, Op: scan.Contains, Args: []scan.Const{str("POST")}}}},
		{name: "message part of token", filters: []scan.Predicate{{Path: "event_message", Type: vec.String, Op: scan.Contains, Args: []scan.Const{str("in 1")}}}},
		{name: "message regex", filters: []scan.Predicate{{Path: "event_message", Type: vec.String, Op: scan.Regex, Args: []scan.Const{str(`request \d+5 GET`)}}}},
		{name: "message not regex", filters: []scan.Predicate{{Path: "event_message", Type: vec.String, Op: scan.Regex, Not: true, Args: []scan.Const{str(`GET`)}}}},
		{name: "path regex literal", filters: []scan.Predicate{{Path: "metadata.request.path", Type: vec.String, Op: scan.Regex, Args: []scan.Const{str("/t3")}}}},
		{name: "path like", filters: []scan.Predicate{{Path: "metadata.request.path", Type: vec.String, Op: scan.Like, Args: []scan.Const{str("%/t_")}}}},
		{name: "mixed level as string", filters: []scan.Predicate{{Path: "metadata.level", Type: vec.String, Op: scan.In, Args: []scan.Const{str("2"), str("error")}}}},
		{name: "float range", filters: []scan.Predicate{{Path: "metadata.origin_time", Type: vec.Float64, Op: scan.Lt, Args: []scan.Const{flt(100.5)}}}},
		{name: "bool eq", filters: []scan.Predicate{{Path: "metadata.cached", Type: vec.Bool, Op: scan.Eq, Args: []scan.Const{{Type: vec.Bool, Bool: true}}}}},
		{name: "is null", filters: []scan.Predicate{{Path: "metadata.cached", Type: vec.Bool, Op: scan.IsNull}}},
		{name: "record present", filters: []scan.Predicate{{Path: "metadata.request", Type: vec.RowRef, Op: scan.IsNotNull}}},
		{name: "array present", filters: []scan.Predicate{{Path: "metadata.context", Type: vec.List, Op: scan.IsNotNull}}},
		{name: "never field eq", filters: []scan.Predicate{{Path: "metadata.never", Type: vec.String, Op: scan.Eq, Args: []scan.Const{str("x")}}}},
		{name: "never field is null", filters: []scan.Predicate{{Path: "metadata.never", Type: vec.String, Op: scan.IsNull}}},
		{name: "time range", tmin: minT, tmax: maxT},
		{name: "time + status + project", tmin: minT, tmax: maxT, filters: []scan.Predicate{
			{Path: "metadata.response.status_code", Type: vec.Int64, Op: scan.Eq, Args: []scan.Const{num(200)}},
			{Path: "project", Type: vec.String, Op: scan.Eq, Args: []scan.Const{str("alpha")}}}},
		{name: "newest 25", order: scan.Descending, limit: 25},
		{name: "newest 7 POST in range", order: scan.Descending, limit: 7, tmin: minT, tmax: maxT, filters: []scan.Predicate{
			{Path: "event_message", Type: vec.String, Op: scan.Regex, Args: []scan.Const{str("P.ST")}}}},
		// Index candidates only, no predicate left: the rows at the wanted
		// end are picked by rank.
		{name: "newest 9 project bravo", order: scan.Descending, limit: 9, filters: []scan.Predicate{
			{Path: "project", Type: vec.String, Op: scan.Eq, Args: []scan.Const{str("bravo")}}}},
		{name: "oldest 11 project alpha in range", order: scan.Ascending, limit: 11, tmin: minT, tmax: maxT, filters: []scan.Predicate{
			{Path: "project", Type: vec.String, Op: scan.Eq, Args: []scan.Const{str("alpha")}}}},
		{name: "newest 5 status 200 in range", order: scan.Descending, limit: 5, tmin: minT, tmax: maxT, filters: []scan.Predicate{
			{Path: "metadata.response.status_code", Type: vec.Int64, Op: scan.Eq, Args: []scan.Const{num(200)}}}},
		{name: "oldest 30 status 200", order: scan.Ascending, limit: 30, filters: []scan.Predicate{
			{Path: "metadata.response.status_code", Type: vec.Int64, Op: scan.Eq, Args: []scan.Const{num(200)}}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			req := &scan.Request{Columns: cols, Filters: tc.filters, TimeMin: scan.MinTime, TimeMax: scan.MaxTime, Order: tc.order, Limit: tc.limit}
			if tc.tmin != 0 {
				req.TimeMin, req.TimeMax = tc.tmin, tc.tmax
			}
			var want []event.Event
			for i := range all {
				ev := &all[i]
				if ev.Timestamp < req.TimeMin || ev.Timestamp > req.TimeMax {
					continue
				}
				ok := true
				for _, p := range tc.filters {
					ok = ok && refMatch(ev, p)
				}
				if ok {
					want = append(want, *ev)
				}
			}
			got := runScan(t, tb, req)
			if tc.limit > 0 {
				// The units return their own first rows; the executor keeps the
				// overall first `limit`. Check that those are all here.
				sort.SliceStable(want, func(i, j int) bool {
					if tc.order == scan.Descending {
						return want[i].Timestamp > want[j].Timestamp
					}
					return want[i].Timestamp < want[j].Timestamp
				})
				if len(want) > tc.limit {
					want = want[:tc.limit]
				}
				for _, w := range want {
					if _, ok := got[w.ID]; !ok {
						t.Fatalf("row %s (ts %d) of the first %d missing", w.ID, w.Timestamp, tc.limit)
					}
				}
				return
			}
			if len(got) != len(want) {
				t.Fatalf("%d rows, want %d", len(got), len(want))
			}
			for _, w := range want {
				row, ok := got[w.ID]
				if !ok {
					t.Fatalf("row %s missing", w.ID)
				}
				for ci, c := range cols[1:] {
					if exp := refCell(&w, c); row[ci] != exp {
						t.Fatalf("row %s column %s: got %q want %q", w.ID, c.Path, row[ci], exp)
					}
				}
			}
		})
	}
}

// TestStringMatchersAgreeWithRegexp: the literal shortcuts give the same
// answers as Go's regexp (RE2, BigQuery's engine) on every pattern.
func TestStringMatchersAgreeWithRegexp(t *testing.T) {
	patterns := []string{"POST", "(?i)post", "python-httpx|Dart", `(?i)(get|post) \|`, `\| 5\d\d \|`, "^GET", "rpc$", "a|", "(?i)ÉTÉ",
		"auth/v1/(token|user)", "(GET|POST) /rest", "[Pp]ost", "(?i)x(a|b)", "(?i)kelvin", "(?i)s"}
	texts := []string{"", "POST | 200", "post /x", "GET | 503 | x", "Dart/3.4", "python-httpx/0.25", "x rpc", "Post", "été", "ÉTÉ", "pOsT",
		"GET /auth/v1/user HTTP", "auth/v1/tok auth/v1/token", "auth/v1/auth/v1/use", "auth/v1/users", "GET /rest/v1", "PUT /rest", "XA", "xb",
		"\u212Aelvin", "ſ"}
	for _, pat := range patterns {
		p, err := compilePred(scan.Predicate{Path: "m", Type: vec.String, Op: scan.Regex, Args: []scan.Const{{Type: vec.String, Str: pat}}})
		if err != nil {
			t.Fatal(err)
		}
		re := regexp.MustCompile(pat)
		for _, s := range texts {
			if got, want := p.matchString(s), re.MatchString(s); got != want {
				t.Errorf("%q on %q: %v, regexp says %v", pat, s, got, want)
			}
		}
	}
}

func TestWithoutImpliedNotNull(t *testing.T) {
	notNull := func(p string) scan.Predicate { return scan.Predicate{Path: p, Op: scan.IsNotNull} }
	isNull := func(p string) scan.Predicate { return scan.Predicate{Path: p, Op: scan.IsNull} }
	eq := func(p string) scan.Predicate {
		return scan.Predicate{Path: p, Type: vec.Int64, Op: scan.Eq, Args: []scan.Const{{Type: vec.Int64, Int: 500}}}
	}
	paths := func(ps []scan.Predicate) (out []string) {
		for _, p := range ps {
			op := map[scan.Op]string{scan.IsNotNull: "IS NOT NULL", scan.IsNull: "IS NULL", scan.Eq: "="}[p.Op]
			out = append(out, op+" "+p.Path)
		}
		return out
	}
	for _, tc := range []struct {
		in   []scan.Predicate
		want string
	}{
		{[]scan.Predicate{notNull("metadata"), notNull("metadata.response"), eq("metadata.response.status_code")}, "[= metadata.response.status_code]"},
		{[]scan.Predicate{notNull("metadata"), isNull("metadata.response.status_code")}, "[IS NOT NULL metadata IS NULL metadata.response.status_code]"},
		{[]scan.Predicate{notNull("metadata"), eq("metadatax.a")}, "[IS NOT NULL metadata = metadatax.a]"},
		{[]scan.Predicate{notNull("m"), notNull("m.r")}, "[IS NOT NULL m.r]"},
	} {
		if got := fmt.Sprint(paths(withoutImpliedNotNull(tc.in))); got != tc.want {
			t.Errorf("got %s, want %s", got, tc.want)
		}
	}
}

// TestFloatPredicateNaN: a pushed-down comparison treats NaN as the
// evaluator does (IEEE: only != holds), so pushdown on and off return the
// same rows.
func TestFloatPredicateNaN(t *testing.T) {
	v := &vec.Vector{Type: vec.Float64, Len: 3, Floats: []float64{math.NaN(), 2, 0}}
	for _, tc := range []struct {
		op   scan.Op
		want []int32
	}{
		{scan.Gt, []int32{1}}, {scan.Ge, []int32{1}}, {scan.Lt, []int32{2}}, {scan.Le, []int32{2}},
		{scan.Eq, []int32{}}, {scan.Ne, []int32{0, 1, 2}},
	} {
		p, err := compilePred(scan.Predicate{Path: "x", Type: vec.Float64, Op: tc.op, Args: []scan.Const{{Type: vec.Float64, Flt: 1}}})
		if err != nil {
			t.Fatal(err)
		}
		if got := p.eval(v, nil); !slices.Equal(got, tc.want) {
			t.Errorf("op %d: rows %v, want %v", tc.op, got, tc.want)
		}
	}
}
