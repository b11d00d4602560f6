package search

import (
	"context"
	"errors"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	json "github.com/goccy/go-json"

	"github.com/sediment/sediment/engine"
	"github.com/sediment/sediment/lql"
	"github.com/sediment/sediment/sql"
)

func testSearcher() *Searcher {
	return New(Options{Now: func() time.Time { return fixtureNow }})
}

func minute(i int) time.Time { return fixtureStart.Add(time.Duration(i) * time.Minute) }

func usOf(t time.Time) *int64 { v := t.UnixMicro(); return &v }

// body is a decoded search response.
type body struct {
	Result []map[string]any `json:"result"`
	Chart  []map[string]any `json:"chart"`
}

// run searches sh as the HTTP API does and decodes the response JSON.
func run(t *testing.T, s *Searcher, sh *engine.Shard, req Request) (body, *Plan) {
	t.Helper()
	sn := sh.Snapshot()
	defer sn.Release()
	tbl := sn.Table("fixture")
	p, err := s.Prepare(context.Background(), tbl, req)
	if err != nil {
		t.Fatalf("%q: %v", req.LQL, err)
	}
	res, err := s.Run(context.Background(), tbl, p)
	if err != nil {
		t.Fatalf("%q: %v\n%s", req.LQL, err, p.SearchSQL)
	}
	var b body
	raw := res.AppendJSON(nil)
	if err := json.Unmarshal(raw, &b); err != nil {
		t.Fatalf("%q: response %s: %v", req.LQL, raw, err)
	}
	if b.Result == nil {
		t.Fatalf("%q: no result array in %s", req.LQL, raw)
	}
	return b, p
}

// ids lists the result's ids in order.
func ids(rows []map[string]any) []string {
	out := make([]string, len(rows))
	for i, r := range rows {
		out[i], _ = r["id"].(string)
	}
	return out
}

// want lists, newest first, the ids of the fixture rows pred accepts.
func want(pred func(r row) bool) []string {
	var out []string
	rows := fixture()
	for i := len(rows) - 1; i >= 0; i-- {
		if pred(rows[i]) {
			out = append(out, rows[i].id)
		}
	}
	return out
}

func hasTag(r row, re *regexp.Regexp) bool {
	return slices.ContainsFunc(r.tags, re.MatchString)
}

// TestSearchClauses runs every kind of LQL clause over the fixture and
// compares the events found with the rows a Go predicate accepts.
func TestSearchClauses(t *testing.T) {
	sh := fixtureShard(t)
	s := testSearcher()
	between := func(a, b int) func(r row) bool { return func(r row) bool { return r.i >= a && r.i <= b } }
	cases := []struct {
		lql  string
		pred func(r row) bool
	}{
		{``, func(row) bool { return true }},
		// Field equality on integers, strings, floats, booleans.
		{`m.response.status_code:500`, func(r row) bool { return r.status == 500 }},
		{`metadata.response.status_code:404`, func(r row) bool { return r.status == 404 }},
		{`m.request.method:POST`, func(r row) bool { return r.method == "POST" }},
		{`m.request.path:"/auth/v1/token"`, func(r row) bool { return r.path == "/auth/v1/token" }},
		{`project:alpha`, func(r row) bool { return r.project == "alpha" }},
		{`id:"00000000-0000-4000-8000-000000000042"`, func(r row) bool { return r.i == 42 }},
		{`m.latency:25`, func(r row) bool { return r.latency == 25 }},
		{`m.cached:true`, func(r row) bool { return r.cached != nil && *r.cached }},
		{`m.cached:false`, func(r row) bool { return r.cached != nil && !*r.cached }},
		// Comparisons and ranges.
		{`m.response.status_code:>=404`, func(r row) bool { return r.status >= 404 }},
		{`m.response.status_code:<201`, func(r row) bool { return r.status < 201 }},
		{`m.latency:>150`, func(r row) bool { return r.latency > 150 }},
		{`m.latency:<=12.5`, func(r row) bool { return r.latency <= 12.5 }},
		{`m.latency:50..100`, func(r row) bool { return r.latency >= 50 && r.latency <= 100 }},
		{`m.response.status_code:201..404`, func(r row) bool { return r.status >= 201 && r.status <= 404 }},
		{`m.level:info..error`, func(r row) bool { return slices.Contains([]string{"info", "warning", "error"}, r.level) }},
		// NULL and negation, with Logflare's NULL semantics: a negated
		// clause holds where the field is absent.
		{`m.level:NULL`, func(r row) bool { return r.level == "" }},
		{`-m.level:NULL`, func(r row) bool { return r.level != "" }},
		{`-m.level:info`, func(r row) bool { return r.level != "info" }},
		{`-m.user_id:"user-1"`, func(r row) bool { return r.user != "user-1" }},
		{`-m.response.status_code:200`, func(r row) bool { return r.status != 200 }},
		{`-m.latency:0..100`, func(r row) bool { return r.latency > 100 }},
		{`-POST`, func(r row) bool { return !strings.Contains(r.msg, "POST") }},
		// Regular expressions.
		{`m.request.path:~^/rest`, func(r row) bool { return strings.HasPrefix(r.path, "/rest") }},
		{`m.request.path:~"(?i)AUTH|storage"`, func(r row) bool {
			return regexp.MustCompile(`(?i)AUTH|storage`).MatchString(r.path)
		}},
		{`~upstream\s+time`, func(r row) bool { return strings.Contains(r.msg, "upstream time") }},
		{`~"in [0-9]ms"`, func(r row) bool { return regexp.MustCompile(`in [0-9]ms`).MatchString(r.msg) }},
		{`-~"^GET"`, func(r row) bool { return !strings.HasPrefix(r.msg, "GET") }},
		// Bare words and quoted phrases (case-sensitive contains).
		{`timeout`, func(r row) bool { return strings.Contains(r.msg, "timeout") }},
		{`Timeout`, func(row) bool { return false }},
		{`DELETE send`, func(r row) bool { return strings.Contains(r.msg, "DELETE") && strings.Contains(r.msg, "send") }},
		{`"hello world"`, func(r row) bool { return strings.Contains(r.msg, "hello world") }},
		{`"said \"hello"`, func(r row) bool { return strings.Contains(r.msg, `said "hello`) }},
		{`/rest/v1/todos`, func(r row) bool { return strings.Contains(r.msg, "/rest/v1/todos") }},
		// Arrays.
		{`m.tags:@>shared`, func(r row) bool { return r.tags != nil }},
		{`m.tags:@>t1`, func(r row) bool { return slices.Contains(r.tags, "t1") }},
		{`m.tags:@>~"^t[12]$"`, func(r row) bool { return hasTag(r, regexp.MustCompile(`^t[12]$`)) }},
		// Timestamps: ISO values, ranges, brace ranges, unix values and
		// shorthands against the injected clock (fixtureNow is 10 minutes
		// after the last event).
		{`t:>2024-03-15T11:00:00Z`, func(r row) bool { return r.i > 60 }},
		{`timestamp:<=2024-03-15T10:05:00`, func(r row) bool { return r.i <= 5 }},
		{`t:2024-03-15T10:30:00..2024-03-15T10:40:00`, between(30, 40)},
		{`t:2024-03-15T10:{30..40}:00`, between(30, 40)},
		{`t:2024-03-15`, func(row) bool { return true }},
		{`t:2024-03-14`, func(row) bool { return false }},
		{`t:>1710500400`, func(r row) bool { return r.i > 60 }},
		{`t:>=1710500400000`, func(r row) bool { return r.i >= 60 }},
		{`t:<1710496980000000`, func(r row) bool { return r.i < 3 }},
		{`t:last@30m`, func(r row) bool { return r.i >= 100 }},
		{`t:last@1h`, func(r row) bool { return r.i >= 60 }},
		{`t:this@hour`, func(row) bool { return false }}, // 12:00 to 12:10
		{`t:this@day`, func(row) bool { return true }},
		{`t:today`, func(row) bool { return true }},
		{`t:yesterday`, func(row) bool { return false }},
		{`-t:last@1h`, func(r row) bool { return r.i < 60 }},
		// Combinations.
		{`m.response.status_code:500 -project:bravo upstream`, func(r row) bool {
			return r.status == 500 && r.project != "bravo" && strings.Contains(r.msg, "upstream")
		}},
		{`m.request.method:GET m.latency:>=100 t:>2024-03-15T10:30:00Z`, func(r row) bool {
			return r.method == "GET" && r.latency >= 100 && r.i > 30
		}},
	}
	for _, tc := range cases {
		t.Run(tc.lql, func(t *testing.T) {
			b, _ := run(t, s, sh, Request{LQL: tc.lql, Limit: MaxLimit})
			got, exp := ids(b.Result), want(tc.pred)
			if !slices.Equal(got, exp) {
				t.Fatalf("got %d events %v\nwant %d %v", len(got), got, len(exp), exp)
			}
			for _, r := range b.Result {
				if len(r) != 3 || r["timestamp"] == nil || r["event_message"] == nil {
					t.Fatalf("row %v: want timestamp, id, event_message", r)
				}
			}
		})
	}
}

// TestSearchRangeAndLimit checks the request's from/to (ANDed with t:),
// the newest-first order and the limit.
func TestSearchRangeAndLimit(t *testing.T) {
	sh := fixtureShard(t)
	s := testSearcher()
	b, p := run(t, s, sh, Request{LQL: "m.request.method:GET", From: usOf(minute(10)), To: usOf(minute(50)), Limit: 5})
	exp := want(func(r row) bool { return r.method == "GET" && r.i >= 10 && r.i <= 50 })[:5]
	if got := ids(b.Result); !slices.Equal(got, exp) {
		t.Fatalf("got %v, want %v", got, exp)
	}
	if !strings.Contains(p.SearchSQL, "ORDER BY t.timestamp DESC, t.id DESC LIMIT 5") {
		t.Fatalf("search SQL %s", p.SearchSQL)
	}
	if ts := b.Result[0]["timestamp"].(float64); int64(ts) != minute(50).UnixMicro() {
		t.Fatalf("newest timestamp %v, want %d µs", ts, minute(50).UnixMicro())
	}
	// The range and a t: clause both apply.
	b, _ = run(t, s, sh, Request{LQL: "t:<2024-03-15T10:20:00Z", From: usOf(minute(15)), Limit: 100})
	if got, exp := ids(b.Result), want(func(r row) bool { return r.i >= 15 && r.i < 20 }); !slices.Equal(got, exp) {
		t.Fatalf("got %v, want %v", got, exp)
	}
	// Default limit.
	b, _ = run(t, s, sh, Request{})
	if len(b.Result) != DefaultLimit {
		t.Fatalf("default limit: %d rows", len(b.Result))
	}
}

// TestSearchSameTimestamp: events at the same instant come by id,
// descending, also when the limit falls among them and they are spread
// over a segment and the head.
func TestSearchSameTimestamp(t *testing.T) {
	sh, err := openEngine(t).Shard("fixture")
	if err != nil {
		t.Fatal(err)
	}
	t1, t2 := fixtureStart.Format(time.RFC3339), fixtureStart.Add(time.Second).Format(time.RFC3339)
	doc := func(id, ts string) string {
		return fmt.Sprintf(`{"id":%q,"timestamp":%q,"event_message":"x"}`, id, ts)
	}
	first := []string{doc("b", t1), doc("e", t1), doc("y", t2), doc("a", t1)}
	second := []string{doc("d", t1), doc("z", t2), doc("c", t1), doc("x", t2)}
	if err := sh.Append(context.Background(), parseEvents(t, first, fixtureNow)); err != nil {
		t.Fatal(err)
	}
	if err := sh.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := sh.Append(context.Background(), parseEvents(t, second, fixtureNow)); err != nil {
		t.Fatal(err)
	}
	all := []string{"z", "y", "x", "e", "d", "c", "b", "a"}
	for limit := 1; limit <= len(all)+1; limit++ {
		b, _ := run(t, testSearcher(), sh, Request{LQL: "x", Limit: limit})
		if got := ids(b.Result); !slices.Equal(got, all[:min(limit, len(all))]) {
			t.Fatalf("limit %d: got %v", limit, got)
		}
	}
}

// TestSearchSelects checks s: columns: after timestamp, id and
// event_message, named by alias or by path with dots as underscores, NULL
// where absent.
func TestSearchSelects(t *testing.T) {
	sh := fixtureShard(t)
	s := testSearcher()
	b, _ := run(t, s, sh, Request{LQL: "s:m.request.method@method s:m.level s:project m.response.status_code:500", Limit: 3})
	exp := want(func(r row) bool { return r.status == 500 })[:3]
	if got := ids(b.Result); !slices.Equal(got, exp) {
		t.Fatalf("got %v, want %v", got, exp)
	}
	rows := fixture()
	for k, res := range b.Result {
		var i int
		fmt.Sscanf(exp[k][len(exp[k])-12:], "%d", &i)
		r := rows[i]
		keys := make([]string, 0, len(res))
		for key := range res {
			keys = append(keys, key)
		}
		slices.Sort(keys)
		if !slices.Equal(keys, []string{"event_message", "id", "metadata_level", "method", "project", "timestamp"}) {
			t.Fatalf("columns %v", keys)
		}
		var level any
		if r.level != "" {
			level = r.level
		}
		if res["method"] != r.method || res["metadata_level"] != level || res["project"] != r.project {
			t.Fatalf("row %v, want method %s level %v project %s", res, r.method, level, r.project)
		}
	}
	// A select that takes a base column's name replaces it; s:* is the
	// default columns.
	b, _ = run(t, s, sh, Request{LQL: "s:project@id s:timestamp", Limit: 1})
	if len(b.Result[0]) != 3 || b.Result[0]["id"] != fixtureRow(fixtureRows-1).project {
		t.Fatalf("row %v", b.Result[0])
	}
	b, _ = run(t, s, sh, Request{LQL: "s:* s:project", Limit: 1})
	if len(b.Result[0]) != 3 || b.Result[0]["project"] != nil {
		t.Fatalf("s:* row %v", b.Result[0])
	}
}

// bucketsOf computes the chart oracle: per period bucket of the rows pred
// accepts, agg over them.
func bucketsOf(period time.Duration, pred func(r row) bool, agg func([]row) float64) [][2]float64 {
	groups := map[int64][]row{}
	var keys []int64
	for _, r := range fixture() {
		if !pred(r) {
			continue
		}
		k := r.ts.Truncate(period).UnixMicro()
		if groups[k] == nil {
			keys = append(keys, k)
		}
		groups[k] = append(groups[k], r)
	}
	slices.Sort(keys)
	out := make([][2]float64, len(keys))
	for i, k := range keys {
		out[i] = [2]float64{float64(k), agg(groups[k])}
	}
	return out
}

func chartOf(t *testing.T, b body) [][2]float64 {
	t.Helper()
	if b.Chart == nil {
		t.Fatal("no chart in the response")
	}
	out := make([][2]float64, len(b.Chart))
	for i, c := range b.Chart {
		if len(c) != 2 {
			t.Fatalf("chart row %v", c)
		}
		ts, ok1 := c["timestamp"].(float64)
		n, ok2 := c["count"].(float64)
		if !ok1 || !ok2 {
			t.Fatalf("chart row %v", c)
		}
		out[i] = [2]float64{ts, n}
	}
	return out
}

func count(rs []row) float64 { return float64(len(rs)) }

// TestSearchChart checks c: charts: the buckets and aggregates over the
// same filters and range as the events, the period written or chosen.
func TestSearchChart(t *testing.T) {
	sh := fixtureShard(t)
	s := testSearcher()
	is500 := func(r row) bool { return r.status == 500 }
	cases := []struct {
		name    string
		req     Request
		period  lql.Period
		written bool
		want    [][2]float64
	}{
		{"count per minute", Request{LQL: "m.response.status_code:500 c:count(*) c:group_by(t::minute)"},
			lql.PeriodMinute, true, bucketsOf(time.Minute, is500, count)},
		{"count per hour", Request{LQL: "c:count(*) c:group_by(t::h) POST"},
			lql.PeriodHour, true, bucketsOf(time.Hour, func(r row) bool { return strings.Contains(r.msg, "POST") }, count)},
		{"avg per hour", Request{LQL: "c:avg(m.latency) c:group_by(t::hour) -m.request.method:GET"},
			lql.PeriodHour, true, bucketsOf(time.Hour, func(r row) bool { return r.method != "GET" }, func(rs []row) float64 {
				sum := 0.0
				for _, r := range rs {
					sum += r.latency
				}
				return sum / float64(len(rs))
			})},
		{"max per day", Request{LQL: "chart:max(m.response.status_code) chart:group_by(timestamp::day)"},
			lql.PeriodDay, true, bucketsOf(24*time.Hour, func(row) bool { return true }, func(rs []row) float64 {
				m := 0
				for _, r := range rs {
					m = max(m, r.status)
				}
				return float64(m)
			})},
		{"countd per hour", Request{LQL: "c:countd(m.user_id) c:group_by(t::hour)"},
			lql.PeriodHour, true, bucketsOf(time.Hour, func(row) bool { return true }, func(rs []row) float64 {
				seen := map[string]bool{}
				for _, r := range rs {
					if r.user != "" {
						seen[r.user] = true
					}
				}
				return float64(len(seen))
			})},
		// Without c:group_by the period follows the span searched: the
		// range, narrowed to the data (2 hours here).
		{"default: data span", Request{LQL: "c:count(*) m.response.status_code:404"},
			lql.PeriodMinute, false, bucketsOf(time.Minute, func(r row) bool { return r.status == 404 }, count)},
		{"default: wide range narrowed to data", Request{LQL: "c:count(*)", From: usOf(fixtureStart.AddDate(0, -1, 0)), To: usOf(fixtureNow.AddDate(0, 1, 0))},
			lql.PeriodMinute, false, bucketsOf(time.Minute, func(row) bool { return true }, count)},
		{"default: short t: range", Request{LQL: "c:count(*) t:last@2m"},
			lql.PeriodSecond, false, nil},
		{"default: 4 minutes", Request{LQL: "c:count(*) t:2024-03-15T10:{10..14}:00"},
			lql.PeriodSecond, false, bucketsOf(time.Second, func(r row) bool { return r.i >= 10 && r.i <= 14 }, count)},
		{"written minute", Request{LQL: "c:group_by(t::m) c:count(*) t:2024-03-15T10:{10..14}:00"},
			lql.PeriodMinute, true, bucketsOf(time.Minute, func(r row) bool { return r.i >= 10 && r.i <= 14 }, count)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b, p := run(t, s, sh, tc.req)
			if p.Period != tc.period || p.PeriodWritten != tc.written {
				t.Fatalf("period %v written %v, want %v %v", p.Period, p.PeriodWritten, tc.period, tc.written)
			}
			got := chartOf(t, b)
			if len(got) != len(tc.want) {
				t.Fatalf("chart %v\nwant %v", got, tc.want)
			}
			for i := range got {
				if got[i][0] != tc.want[i][0] || math.Abs(got[i][1]-tc.want[i][1]) > 1e-9 {
					t.Fatalf("bucket %d: %v, want %v\n%s", i, got[i], tc.want[i], p.ChartSQL)
				}
			}
		})
	}
	// No c: clause, no chart.
	b, p := run(t, s, sh, Request{LQL: "m.response.status_code:500"})
	if b.Chart != nil || p.ChartSQL != "" {
		t.Fatalf("unexpected chart %v %q", b.Chart, p.ChartSQL)
	}
}

// TestSearchChartBucketLimit: a chart spanning more than MaxChartBuckets
// buckets is refused with a request error.
func TestSearchChartBucketLimit(t *testing.T) {
	sh, err := openEngine(t).Shard("fixture")
	if err != nil {
		t.Fatal(err)
	}
	docs := []string{
		`{"timestamp":"2024-01-01T00:00:00Z","event_message":"a"}`,
		`{"timestamp":"2024-03-01T00:00:00Z","event_message":"b"}`,
	}
	if err := sh.Append(context.Background(), parseEvents(t, docs, fixtureNow)); err != nil {
		t.Fatal(err)
	}
	s := testSearcher()
	sn := sh.Snapshot()
	defer sn.Release()
	_, err = s.Prepare(context.Background(), sn.Table("fixture"), Request{LQL: "c:count(*) c:group_by(t::minute)"})
	var re *RequestError
	if !errors.As(err, &re) || !strings.Contains(err.Error(), "buckets") {
		t.Fatalf("got %v", err)
	}
	// The default period fits.
	p, err := s.Prepare(context.Background(), sn.Table("fixture"), Request{LQL: "c:count(*)"})
	if err != nil || p.Period != lql.PeriodDay {
		t.Fatalf("got %v %v", p, err)
	}
}

// TestSearchErrors checks that bad requests are RequestErrors with
// Logflare's messages, naming the clause at fault.
func TestSearchErrors(t *testing.T) {
	sh := fixtureShard(t)
	s := testSearcher()
	sn := sh.Snapshot()
	defer sn.Release()
	tbl := sn.Table("fixture")
	cases := []struct {
		req  Request
		want string
	}{
		{Request{LQL: "m.status:500"}, "LQL parser error: path `metadata.status` not present in source schema."},
		{Request{LQL: "m.response.status_code:abc"}, "Query syntax error: expected integer for metadata.response.status_code, got: 'abc'"},
		{Request{LQL: "m.latency:fast"}, "Query syntax error: expected float for metadata.latency, got: 'fast'"},
		{Request{LQL: "m.cached:yes"}, "Query syntax error: Expected boolean for metadata.cached, got: 'yes'"},
		{Request{LQL: "m.request:GET"}, "Field type `map` is not queryable."},
		{Request{LQL: "m.response.status_code:~5.."}, "needs a string field"},
		{Request{LQL: "m.tags:shared"}, "use `:@>`"},
		{Request{LQL: "s:m.nope"}, "LQL parser error: path `metadata.nope` not present in source schema."},
		{Request{LQL: "s:m.level@"}, "select alias cannot be blank"},
		{Request{LQL: "c:avg(m.request.method)"}, "needs a numeric field"},
		{Request{LQL: "c:count(*) c:group_by(t::week)"}, "Error while parsing chart clause"},
		{Request{LQL: "t:2024-13-45"}, "Error while parsing timestamp date value"},
		{Request{LQL: `"unterminated`}, "missing closing"},
		{Request{LQL: "~(unclosed"}, "Error while parsing regular expression"},
		{Request{LQL: "s:project s:project"}, "two selected columns are named `project`"},
		{Request{Limit: MaxLimit + 1}, "limit must be from 1 to 10000"},
		{Request{Limit: -1}, "limit must be from 1 to 10000"},
		{Request{From: usOf(minute(5)), To: usOf(minute(4))}, "is after to"},
	}
	for _, tc := range cases {
		t.Run(tc.req.LQL, func(t *testing.T) {
			_, err := s.Prepare(context.Background(), tbl, tc.req)
			var re *RequestError
			if !errors.As(err, &re) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want a RequestError with %q", err, tc.want)
			}
		})
	}
	// The parser's error, with the clause at fault, is reachable.
	var lerr *lql.Error
	_, err := s.Prepare(context.Background(), tbl, Request{LQL: "m.response.status_code:abc"})
	if !errors.As(err, &lerr) || lerr.Clause != "m.response.status_code:abc" {
		t.Fatalf("the lql.Error with its clause should be reachable: %v", err)
	}
}

// TestSearchSchemaFollowsSource: the same clause types differently on two
// sources whose events gave the field different types.
func TestSearchSchemaFollowsSource(t *testing.T) {
	e := openEngine(t)
	s := testSearcher()
	for _, tc := range []struct {
		doc     string
		lql     string
		wantErr string
		wantN   int
	}{
		{`{"event_message":"a","metadata":{"code":500}}`, "m.code:500", "", 1},
		{`{"event_message":"a","metadata":{"code":500}}`, "m.code:abc", "expected integer", 0},
		{`{"event_message":"a","metadata":{"code":"500"}}`, "m.code:500", "", 1},
		{`{"event_message":"a","metadata":{"code":"E500"}}`, "m.code:E500", "", 1},
		{`{"event_message":"a","metadata":{"code":1.5}}`, "m.code:1.5", "", 1},
		{`{"event_message":"a","metadata":{"items":[{"name":"x","n":1}]}}`, "m.items.n:1", "", 1},
		{`{"event_message":"a","metadata":{"items":[{"name":"x","n":1}]}}`, "m.items.n:one", "expected integer", 0},
		{`{"event_message":"a","metadata":{"items":[{"name":"x","n":1}]}}`, "m.items.nope:1", "not present in source schema", 0},
		{`{"event_message":"a","metadata":{"items":[{"name":"x","n":1}]}}`, "m.items:x", "not queryable", 0},
		{`{"event_message":"a"}`, "m.code:500", "not present in source schema", 0},
	} {
		t.Run(tc.doc+" "+tc.lql, func(t *testing.T) {
			sh, err := e.Shard(fmt.Sprintf("s%d", time.Now().UnixNano()))
			if err != nil {
				t.Fatal(err)
			}
			if err := sh.Append(context.Background(), parseEvents(t, []string{tc.doc}, fixtureNow)); err != nil {
				t.Fatal(err)
			}
			sn := sh.Snapshot()
			defer sn.Release()
			p, err := s.Prepare(context.Background(), sn.Table("src"), Request{LQL: tc.lql})
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("got %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			res, err := s.Run(context.Background(), sn.Table("src"), p)
			if err != nil {
				t.Fatal(err)
			}
			if res.Events.Len != tc.wantN {
				t.Fatalf("%d events, want %d (%s)", res.Events.Len, tc.wantN, p.SearchSQL)
			}
		})
	}
}

func TestParseTime(t *testing.T) {
	ny, err := time.LoadLocation("America/New_York")
	if err != nil {
		t.Skip("no tzdata")
	}
	us := func(s string) int64 {
		v, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			t.Fatal(err)
		}
		return v.UnixMicro()
	}
	for _, tc := range []struct {
		in       string
		loc      *time.Location
		endOfDay bool
		want     int64
		err      bool
	}{
		{in: "1710496800000000", want: 1710496800000000},
		{in: "-5", want: -5},
		{in: "0", want: 0},
		{in: "2024-03-15", want: us("2024-03-15T00:00:00Z")},
		{in: "2024-03-15", endOfDay: true, want: us("2024-03-16T00:00:00Z") - 1},
		{in: "2024-03-15", loc: ny, want: us("2024-03-15T04:00:00Z")},
		{in: "2024-03-15T10:30:00Z", want: us("2024-03-15T10:30:00Z")},
		{in: "2024-03-15T10:30:00.123456Z", want: us("2024-03-15T10:30:00.123456Z")},
		{in: "2024-03-15T10:30:00+02:00", want: us("2024-03-15T08:30:00Z")},
		{in: "2024-03-15T10:30:00 02:00", want: us("2024-03-15T08:30:00Z")},
		{in: "2024-03-15T10:30:00-05:00", endOfDay: true, want: us("2024-03-15T15:30:00Z")},
		{in: "2024-03-15T10:30:00", want: us("2024-03-15T10:30:00Z")},
		{in: "2024-03-15 10:30:00.5", want: us("2024-03-15T10:30:00.5Z")},
		{in: "2024-03-15T10:30", want: us("2024-03-15T10:30:00Z")},
		{in: "2024-03-15T10:30:00", loc: ny, want: us("2024-03-15T14:30:00Z")},
		{in: " 2024-03-15T10:30:00Z ", want: us("2024-03-15T10:30:00Z")},
		{in: "", err: true},
		{in: "-", err: true},
		{in: "yesterday", err: true},
		{in: "2024-02-30", err: true},
		{in: "2024-03-15T25:00:00Z", err: true},
		{in: "99999999999999999999", err: true},
		{in: strings.Repeat("1", 100), err: true},
	} {
		got, err := ParseTime(tc.in, tc.loc, tc.endOfDay)
		if (err != nil) != tc.err || (!tc.err && got != tc.want) {
			t.Errorf("ParseTime(%q) = %d, %v; want %d, error %v", tc.in, got, err, tc.want, tc.err)
		}
	}
}

func TestDefaultPeriod(t *testing.T) {
	for _, tc := range []struct {
		span time.Duration
		want lql.Period
	}{
		{0, lql.PeriodSecond},
		{5 * time.Minute, lql.PeriodSecond},
		{5*time.Minute + time.Second, lql.PeriodMinute},
		{6 * time.Hour, lql.PeriodMinute},
		{25 * time.Hour, lql.PeriodHour},
		{7 * 24 * time.Hour, lql.PeriodHour},
		{8 * 24 * time.Hour, lql.PeriodDay},
		{time.Duration(math.MaxInt64), lql.PeriodDay},
	} {
		if got := DefaultPeriod(tc.span.Microseconds()); got != tc.want {
			t.Errorf("DefaultPeriod(%v) = %v, want %v", tc.span, got, tc.want)
		}
	}
}

// FuzzParseTime: ParseTime never panics, and reads integers as they are.
func FuzzParseTime(f *testing.F) {
	for _, s := range []string{"1710496800000000", "2024-03-15", "2024-03-15T10:30:00.123456+02:00", "2024-03-15 10:30:00 02:00", "-", "", "2024-03-15T"} {
		f.Add(s, false)
	}
	f.Fuzz(func(t *testing.T, s string, endOfDay bool) {
		v, err := ParseTime(s, nil, endOfDay)
		trimmed := strings.TrimSpace(s)
		if n, perr := strconv.ParseInt(trimmed, 10, 64); perr == nil && len(trimmed) <= maxTimeText && trimmed[0] != '+' {
			if err != nil || v != n {
				t.Fatalf("ParseTime(%q) = %d, %v; want %d", s, v, err, n)
			}
		}
	})
}

// FuzzPrepare: any LQL either fails with a RequestError or compiles to SQL
// that the SQL parser accepts; nothing panics.
func FuzzPrepare(f *testing.F) {
	for _, s := range []string{"m.response.status_code:500 c:count(*)", "s:m.level@l -m.tags:@>~x", "t:last@5m c:group_by(t::s)", `"a b" ~c m.latency:1..2`} {
		f.Add(s)
	}
	sh := fixtureShard(f)
	s := testSearcher()
	sn := sh.Snapshot()
	defer sn.Release()
	tbl := sn.Table("fixture")
	f.Fuzz(func(t *testing.T, q string) {
		p, err := s.Prepare(context.Background(), tbl, Request{LQL: q})
		var re *RequestError
		if err != nil {
			if !errors.As(err, &re) {
				t.Fatalf("%q: %v is not a RequestError", q, err)
			}
			return
		}
		if _, err := s.Run(context.Background(), tbl, p); err != nil && strings.Contains(err.Error(), "does not validate") {
			t.Fatalf("%q: %v\n%s\n%s", q, err, p.SearchSQL, p.ChartSQL)
		}
	})
}

// TestSearchMemoryBudget: a search's queries hold memory from the shared
// pool only while they run and until the response is released, and past
// the per-query limit a search fails naming it.
func TestSearchMemoryBudget(t *testing.T) {
	sh := fixtureShard(t)
	pool := sql.NewMemoryPool(64<<20, "--query-memory-total")
	s := New(Options{Now: func() time.Time { return fixtureNow }, MemoryPool: pool})
	res, err := s.Search(context.Background(), sh, "fixture", Request{LQL: "c:count(*) c:group_by(t::minute)", Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	if pool.Used() == 0 {
		t.Fatal("the response is not charged to the pool")
	}
	res.Release()
	if pool.Used() != 0 {
		t.Fatalf("the pool holds %d bytes after the response is released", pool.Used())
	}
	s = New(Options{Now: func() time.Time { return fixtureNow }, MemoryLimit: 1 << 10, MemoryLimitSetting: "--query-memory", MemoryPool: pool})
	_, err = s.Search(context.Background(), sh, "fixture", Request{Limit: 1000})
	if !errors.Is(err, sql.ErrMemoryLimit) || !strings.Contains(err.Error(), "(1KiB, set by --query-memory)") {
		t.Fatalf("got %v", err)
	}
	if pool.Used() != 0 {
		t.Fatalf("the pool holds %d bytes after a failed search", pool.Used())
	}
}
