// Package sqlcheck checks the SQL engine against itself (test files only):
// generated queries over generated Supabase data of all nine sources are
// run in forms that must agree, in the manner of SQLancer, so that no
// answer has to be predicted by hand.
//
//   - Ternary logic partitioning (TLP): for a predicate p, the rows of a
//     query are those of the same query WHERE p, WHERE NOT p and WHERE p IS
//     NULL together; COUNT, COUNTIF, SUM, MIN and MAX (per group, too) are
//     the merge of the three partitions' values; COUNTIF(p) is the count
//     WHERE p.
//   - NoREC: the same query with the optimiser's rewrites, pushdown into
//     scans and index use turned off (sql.Options NoRewrites, NoPushdown,
//     NoIndex), and on one worker, gives the same rows.
//
// The data sit in a real engine, part flushed to segments (small blocks,
// so that indexes and block pruning have something to do; ordered by each
// source's project field, its sort key; half of them merged by
// compaction) and part in the head (read in chunks of 64 rows, so that
// chunk pruning and newest-first reads have something to do too). The queries cover what Studio and the seeded endpoints send: CTEs
// with ORDER BY (logs.all's own, through parser.Sandbox, and ad-hoc ones),
// nested UNNEST of arrays of records, LEFT and CROSS JOIN UNNEST, countif,
// regexp_contains, timestamp_trunc, GROUP BY a truncated alias, and the
// @param CASE forms of the seeded SQL.
//
// The default test run generates queries for a few seconds;
// SEDIMENT_METAMORPHIC=10m runs them for ten minutes (any Go duration), and
// SEDIMENT_METAMORPHIC_SEED picks the random stream. Every bug found is
// kept as a regression case in regress_test.go.
package sqlcheck

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/sediment/sediment/bench/gen"
	"github.com/sediment/sediment/catalog"
	"github.com/sediment/sediment/engine"
	"github.com/sediment/sediment/event"
	"github.com/sediment/sediment/internal/vec"
	"github.com/sediment/sediment/internal/vfs"
	"github.com/sediment/sediment/sql/scan"
)

// dataStart is the log time of the first generated event; the events of
// each source span about two days from it.
var dataStart = time.Date(2025, 7, 8, 12, 0, 0, 0, time.UTC)

// testDB is the engine the checks read, with what the generator needs to
// know of its sources.
type testDB struct {
	eng      *engine.Engine
	shards   map[string]*engine.Shard
	sources  []*source
	now      time.Time // CURRENT_TIMESTAMP of every query: just after the data
	first    time.Time // the oldest and newest event
	last     time.Time
	projects []string // project refs: "default" and the platform's
	logsAll  string   // the seeded logs.all SQL
}

// source is one source as the generator sees it.
type source struct {
	name, cte string
	projectIn string    // logs.all's project filter ("t.project", "m.project_ref", ...)
	root      *field    // the row: base columns, top-level fields, metadata
	samples   valueSets // values seen, by path
}

// field is a node of a source's schema tree.
type field struct {
	name     string
	path     string   // from the row root ("metadata.request"), or from the array element for element fields
	scalar   vec.Type // Unknown when never a scalar
	record   bool     // an object: read through UNNEST
	array    bool     // an array
	elemType vec.Type // scalar element type of an array
	kids     []*field // fields of a record, or of the elements of an array of records
}

func (f *field) child(name string) *field {
	for _, k := range f.kids {
		if k.name == name {
			return k
		}
	}
	return nil
}

// valueSets keeps up to maxSamples distinct values per path, in the order
// first seen (deterministic).
type valueSets map[string][]event.Value

const maxSamples = 24

func (vs valueSets) add(path string, v event.Value) {
	for _, x := range vs[path] {
		if event.Equal(x, v) {
			return
		}
	}
	if len(vs[path]) < maxSamples {
		vs[path] = append(vs[path], v)
	}
}

// walk records the scalar values of an event by path; elements of arrays
// of objects are recorded under "<array path>[].<field>".
func (vs valueSets) walk(prefix string, v event.Value) {
	switch v.Kind {
	case event.Object:
		for _, k := range v.Kids {
			p := k.Key
			if prefix != "" {
				p = prefix + "." + k.Key
			}
			vs.walk(p, k)
		}
	case event.Array:
		for _, e := range v.Kids {
			if e.Kind == event.Object || e.Kind != event.Array && e.Kind != event.Null {
				vs.walk(prefix+"[]", e)
			}
		}
	case event.Null:
	default:
		vs.add(prefix, v)
	}
}

// Sizes of the data set. Each source gets events of both shapes: a
// segment of self-hosted events, a segment of platform events and a head
// holding both, plus events without metadata and events whose fields
// disagree in type with the rest.
const (
	eventsPerPart = 160
	blockRows     = 32
)

func openDB(t testing.TB) *testDB {
	t.Helper()
	// Heads in chunks of 64 rows: each head has sealed chunks and a tail.
	eng, err := engine.Open("/db", &engine.Options{FS: vfs.NewMemFS(), DisableBackground: true, BlockRows: blockRows, PageBytes: 512,
		HeadChunkRows: 64, CompactionMinInputs: 2,
		// A shard with a sort key merges small segments (under a quarter
		// of SegmentMaxRows) once together they make that quarter: each of
		// the two flushed parts is under it, both together over it.
		SegmentMaxRows: 4 * (eventsPerPart * 3 / 2)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := eng.Check(); err != nil {
			t.Errorf("consistency check: %v", err)
		}
		eng.Close()
	})
	db := &testDB{eng: eng, shards: map[string]*engine.Shard{}, projects: []string{"default"}}
	for _, ep := range catalog.SupabaseEndpoints() {
		if *ep.Name == "logs.all" {
			db.logsAll = *ep.Query
		}
	}
	// Both shapes over the same two days: about 100 s between events.
	opts := func(shape gen.Shape) gen.Options {
		return gen.Options{Seed: 13, Shape: shape, Start: dataStart, Rate: 0.002, Projects: 4}
	}
	db.projects = append(db.projects, gen.New(gen.EdgeLogs, opts(gen.Platform)).Projects()...)
	seq := 0
	newID := func() string { seq++; return fmt.Sprintf("gen-%06d", seq) }
	db.first, db.last = time.Unix(1<<40, 0), time.Time{}
	for si, src := range gen.AllSources() {
		sh, err := eng.Shard(fmt.Sprintf("00000000-0000-4000-8000-%012d", si+1))
		if err != nil {
			t.Fatal(err)
		}
		db.shards[src.Name()] = sh
		s := &source{name: src.Name(), cte: src.Table(), samples: valueSets{}}
		for _, ss := range catalog.SupabaseSources() {
			if ss.Name == s.name {
				s.projectIn = ss.ProjectFilter
			}
		}
		// Every source's segments are ordered by the field logs.all
		// filters its project on, as the edge logs' are by default.
		key := strings.Replace(strings.TrimPrefix(s.projectIn, "t."), "m.", "metadata.", 1)
		if err := sh.SetSortKey(key); err != nil {
			t.Fatal(err)
		}
		db.sources = append(db.sources, s)
		self, plat := gen.New(src, opts(gen.SelfHosted)), gen.New(src, opts(gen.Platform))
		parts := [][]event.Event{
			db.events(t, self, eventsPerPart, newID, s),
			append(db.events(t, plat, eventsPerPart, newID, s), db.oddEvents(t, src, newID, s)...),
		}
		head := append(db.events(t, self, eventsPerPart/2, newID, s), db.events(t, plat, eventsPerPart/2, newID, s)...)
		for _, p := range parts {
			if err := sh.Append(context.Background(), p); err != nil {
				t.Fatal(err)
			}
			if err := sh.Flush(); err != nil {
				t.Fatal(err)
			}
		}
		if si%2 == 0 {
			// Half of the sources have their segments merged by key.
			if n, err := sh.Compact(); err != nil || n != 2 {
				t.Fatalf("%s: compaction merged %d: %v", s.name, n, err)
			}
		}
		if err := sh.Append(context.Background(), head); err != nil {
			t.Fatal(err)
		}
		sn := sh.Snapshot()
		s.root = schemaTree(sn.Table(s.name).Schema())
		sn.Release()
	}
	db.now = db.last.Add(time.Minute).Truncate(time.Second)
	return db
}

// events draws n events from g, normalised as ingest does.
func (db *testDB) events(t testing.TB, g *gen.Generator, n int, newID func() string, s *source) []event.Event {
	t.Helper()
	out := make([]event.Event, 0, n)
	var buf []byte
	for range n {
		buf = g.AppendEvent(buf[:0])
		out = append(out, db.normalize(t, buf, newID, s))
	}
	return out
}

// oddEvents are what generators rarely make: events without metadata (in
// every source; logs.all shows them in postgres_logs only), and fields
// whose type disagrees with the other events'.
func (db *testDB) oddEvents(t testing.TB, src gen.Source, newID func() string, s *source) []event.Event {
	var out []event.Event
	for i := range 12 {
		at := dataStart.Add(time.Duration(i) * 3 * time.Hour).Add(time.Duration(i*7) * time.Second)
		var js string
		switch i % 4 {
		case 0, 1:
			js = fmt.Sprintf(`{"event_message":"bare %d without metadata","project":"default","timestamp":"%s"}`, i, at.Format(time.RFC3339Nano))
		case 2:
			js = fmt.Sprintf(`{"event_message":"odd %d","project":"%s","metadata":{"level":%d,"status":"%d","project":"default","project_ref":"default","host":%d},"timestamp":"%s"}`,
				i, db.projects[i%len(db.projects)], i, 200+i, i, at.Format(time.RFC3339Nano))
		case 3:
			extra := `"tags":["a","b%d"]`
			if src == gen.StorageLogs || src == gen.RealtimeLogs {
				// Elements with different fields (realtime's context is an
				// object elsewhere: the path holds both).
				extra = `"context":[{"host":"h%d"},{"pid":3}]`
			}
			js = fmt.Sprintf(`{"event_message":"odd %d with nulls","project":"default","metadata":{"level":null,"project":"default","project_ref":"default",`+extra+`},"timestamp":"%s"}`,
				i, i, at.Format(time.RFC3339Nano))
		}
		out = append(out, db.normalize(t, []byte(js), newID, s))
	}
	return out
}

func (db *testDB) normalize(t testing.TB, js []byte, newID func() string, s *source) event.Event {
	t.Helper()
	raw, err := event.Parse(js)
	if err != nil {
		t.Fatalf("generated event %s: %v", js, err)
	}
	// Far in the future: no event is dropped as too new.
	ev, outcome := event.Normalize(raw, dataStart.Add(365*24*time.Hour), event.NormalizeOptions{NewID: newID})
	if outcome != event.OutcomeKept {
		t.Fatalf("event dropped: %s", js)
	}
	ev = ev.Clone()
	at := time.UnixMicro(ev.Timestamp).UTC()
	if at.Before(db.first) {
		db.first = at
	}
	if at.After(db.last) {
		db.last = at
	}
	s.samples.add("timestamp", event.IntValue(ev.Timestamp))
	s.samples.add("id", event.StringValue(ev.ID))
	if ev.HasMessage {
		s.samples.add("event_message", event.StringValue(ev.Message))
	}
	s.samples.walk("", ev.Fields)
	return ev
}

// schemaTree turns a table's flat schema into a tree under the row.
func schemaTree(sc *scan.Schema) *field {
	root := &field{record: true}
	paths := make([]string, 0, len(sc.Fields))
	for p := range sc.Fields {
		paths = append(paths, p)
	}
	sort.Strings(paths) // parents before children
	for _, p := range paths {
		f := sc.Fields[p]
		parent := root
		parts := strings.Split(p, ".")
		for _, name := range parts[:len(parts)-1] {
			if parent = parent.child(name); parent == nil {
				break
			}
		}
		if parent == nil || parent.array {
			continue
		}
		node := fieldFrom(parts[len(parts)-1], p, f)
		parent.kids = append(parent.kids, node)
	}
	for _, base := range []struct {
		name string
		t    vec.Type
	}{{"timestamp", vec.Timestamp}, {"id", vec.String}, {"event_message", vec.String}} {
		if root.child(base.name) == nil {
			root.kids = append(root.kids, &field{name: base.name, path: base.name, scalar: base.t})
		}
	}
	return root
}

func fieldFrom(name, path string, f *scan.Field) *field {
	node := &field{name: name, path: path, scalar: f.Type, record: f.Record, array: f.Array, elemType: f.ElemType}
	for i := range f.ElemFields {
		ef := &f.ElemFields[i]
		if strings.Contains(ef.Path, ".") {
			continue // nested fields of elements: read whole
		}
		// Element fields' samples are kept under "<array path>[].<field>".
		node.kids = append(node.kids, fieldFrom(ef.Path, path+"[]."+ef.Path, ef))
	}
	return node
}

// ctes are logs.all's CTE names, in order.
func (db *testDB) ctes() []string {
	var out []string
	for _, s := range catalog.SupabaseSources() {
		out = append(out, s.CTE)
	}
	return out
}

// sqlCatalog gives a query one snapshot per source it names.
type sqlCatalog struct {
	db    *testDB
	snaps []*engine.Snapshot
}

func (c *sqlCatalog) Table(name string) (scan.Table, error) {
	sh, ok := c.db.shards[name]
	if !ok {
		return nil, fmt.Errorf("can't find source %s", name)
	}
	sn := sh.Snapshot()
	c.snaps = append(c.snaps, sn)
	return sn.Table(name), nil
}

func (c *sqlCatalog) release() {
	for _, s := range c.snaps {
		s.Release()
	}
}
