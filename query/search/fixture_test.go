package search

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/sediment/sediment/engine"
	"github.com/sediment/sediment/event"
)

// The fixed data set of the search tests: 120 request events, one a
// minute from fixtureStart, ingested as JSON through the normaliser the
// HTTP API uses. The first 80 are flushed to a segment, the rest stay in
// the head, so every search reads both.

var fixtureStart = time.Date(2024, 3, 15, 10, 0, 0, 0, time.UTC)

// fixtureNow is the test clock: 10 minutes after the last event.
var fixtureNow = fixtureStart.Add(130 * time.Minute)

const fixtureRows = 120

// row is one fixture event, as the oracle of the tests sees it.
type row struct {
	i       int
	id      string
	ts      time.Time
	msg     string
	status  int
	method  string
	path    string
	level   string // "" when absent
	latency float64
	tags    []string // nil when absent
	user    string   // "" when absent
	project string
	cached  *bool // nil when absent
}

var (
	methods  = []string{"GET", "GET", "POST", "PATCH", "DELETE"}
	paths    = []string{"/rest/v1/todos", "/auth/v1/token", "/storage/v1/object/a.png", "/rest/v1/rpc/hello_world", "/functions/v1/send"}
	levels   = []string{"info", "info", "warning", "error", "debug", "critical"}
	projects = []string{"alpha", "bravo", "charlie"}
)

func fixtureRow(i int) row {
	r := row{
		i:       i,
		id:      fmt.Sprintf("00000000-0000-4000-8000-%012d", i),
		ts:      fixtureStart.Add(time.Duration(i) * time.Minute),
		method:  methods[i%len(methods)],
		path:    paths[i%len(paths)],
		latency: float64(i%17) * 12.5,
		project: projects[i%len(projects)],
	}
	switch {
	case i%13 == 0:
		r.status = 500
	case i%7 == 0:
		r.status = 404
	case i%5 == 2:
		r.status = 201
	default:
		r.status = 200
	}
	if i%4 != 3 {
		r.level = levels[i%len(levels)]
	}
	if i%3 == 0 {
		r.tags = []string{"t" + fmt.Sprint(i%4), "shared"}
	}
	if i%6 != 5 {
		r.user = fmt.Sprintf("user-%d", i%9)
	}
	if i%8 == 1 {
		b := i%16 == 1
		r.cached = &b
	}
	r.msg = fmt.Sprintf("%s %s %d in %dms", r.method, r.path, r.status, i%97)
	if r.status == 500 {
		r.msg += " upstream timeout"
	}
	if i%10 == 4 {
		r.msg += ` said "hello world"`
	}
	return r
}

func (r row) json() string {
	var b strings.Builder
	fmt.Fprintf(&b, `{"id":%q,"timestamp":%q,"event_message":%q,"project":%q,"metadata":{`,
		r.id, r.ts.Format(time.RFC3339Nano), r.msg, r.project)
	fmt.Fprintf(&b, `"request":{"method":%q,"path":%q},"response":{"status_code":%d},"latency":%s`,
		r.method, r.path, r.status, fmt.Sprint(r.latency))
	if r.level != "" {
		fmt.Fprintf(&b, `,"level":%q`, r.level)
	}
	if r.tags != nil {
		fmt.Fprintf(&b, `,"tags":["%s"]`, strings.Join(r.tags, `","`))
	}
	if r.user != "" {
		fmt.Fprintf(&b, `,"user_id":%q`, r.user)
	}
	if r.cached != nil {
		fmt.Fprintf(&b, `,"cached":%v`, *r.cached)
	}
	b.WriteString("}}")
	return b.String()
}

func fixture() []row {
	rows := make([]row, fixtureRows)
	for i := range rows {
		rows[i] = fixtureRow(i)
	}
	return rows
}

// parseEvents normalises JSON events as ingestion does.
func parseEvents(tb testing.TB, docs []string, now time.Time) []event.Event {
	tb.Helper()
	var p event.Parser
	var norm event.Normalizer
	out := make([]event.Event, 0, len(docs))
	for _, d := range docs {
		v, err := p.Parse([]byte(d))
		if err != nil {
			tb.Fatalf("parse %s: %v", d, err)
		}
		ev, _ := norm.Normalize(v, now, event.NormalizeOptions{})
		out = append(out, ev.Clone())
	}
	return out
}

// openEngine opens an engine over a temporary directory, closed at the
// end of the test.
func openEngine(tb testing.TB) *engine.Engine {
	tb.Helper()
	e, err := engine.Open(tb.TempDir(), &engine.Options{DisableBackground: true, AckMode: engine.AckBuffered})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { e.Close() })
	return e
}

// fixtureShard loads the fixture into a new shard.
func fixtureShard(tb testing.TB) *engine.Shard {
	tb.Helper()
	sh, err := openEngine(tb).Shard("fixture")
	if err != nil {
		tb.Fatal(err)
	}
	rows := fixture()
	docs := make([]string, len(rows))
	for i, r := range rows {
		docs[i] = r.json()
	}
	evs := parseEvents(tb, docs, fixtureNow)
	ctx := context.Background()
	if err := sh.Append(ctx, evs[:80]); err != nil {
		tb.Fatal(err)
	}
	if err := sh.Flush(); err != nil {
		tb.Fatal(err)
	}
	if err := sh.Append(ctx, evs[80:]); err != nil {
		tb.Fatal(err)
	}
	return sh
}
