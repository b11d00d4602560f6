package sql_test

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sediment/sediment/engine"
	"github.com/sediment/sediment/event"
	"github.com/sediment/sediment/internal/vfs"
	"github.com/sediment/sediment/sql"
	"github.com/sediment/sediment/sql/parser"
	"github.com/sediment/sediment/sql/scan"
)

var rewrite = flag.Bool("rewrite", false, "rewrite golden files in testdata")

// fixedNow is the clock of every test query.
var fixedNow = time.Date(2025, 7, 10, 12, 30, 0, 0, time.UTC)

// testDB is an engine with named sources, some events flushed to segments
// and some left in the head.
type testDB struct {
	eng     *engine.Engine
	sources map[string]*engine.Shard
	// memoryLimit, when set, is the per-query memory limit of query (a
	// golden case's "memory:" line), named --query-memory in errors.
	memoryLimit int64
}

func newTestDB(t testing.TB) *testDB {
	t.Helper()
	fs := vfs.NewMemFS()
	eng, err := engine.Open("/db", &engine.Options{FS: fs, DisableBackground: true, BlockRows: 16, PageBytes: 256})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := eng.Check(); err != nil {
			t.Errorf("consistency check: %v", err)
		}
		eng.Close()
	})
	return &testDB{eng: eng, sources: map[string]*engine.Shard{}}
}

// load parses JSON events (one per line) into a source, normalising them
// as ingest does; flushAfter events go to a segment first.
func (db *testDB) load(t testing.TB, source string, ndjson string, flushAfter int) {
	t.Helper()
	sh, ok := db.sources[source]
	if !ok {
		id := fmt.Sprintf("00000000-0000-4000-8000-%012d", len(db.sources)+1)
		var err error
		if sh, err = db.eng.Shard(id); err != nil {
			t.Fatal(err)
		}
		db.sources[source] = sh
	}
	var evs []event.Event
	n := 0
	seq := 0
	for _, line := range strings.Split(strings.TrimSpace(ndjson), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		raw, err := event.Parse([]byte(line))
		if err != nil {
			t.Fatalf("fixture %q: %v", line, err)
		}
		seq++
		s := seq
		ev, out := event.Normalize(raw, fixedNow, event.NormalizeOptions{NewID: func() string {
			return fmt.Sprintf("gen-%s-%d", source, s)
		}})
		if out != event.OutcomeKept {
			continue
		}
		evs = append(evs, ev.Clone())
		n++
		if n == flushAfter {
			if err := sh.Append(context.Background(), evs); err != nil {
				t.Fatal(err)
			}
			if err := sh.Flush(); err != nil {
				t.Fatal(err)
			}
			evs = nil
		}
	}
	if len(evs) > 0 {
		if err := sh.Append(context.Background(), evs); err != nil {
			t.Fatal(err)
		}
	}
}

// catalog gives a query one snapshot per source.
type catalog struct {
	db    *testDB
	snaps map[string]*engine.Snapshot
}

func (c *catalog) Table(name string) (scan.Table, error) {
	sh, ok := c.db.sources[name]
	if !ok {
		return nil, fmt.Errorf("can't find source %s", name)
	}
	sn, ok := c.snaps[name]
	if !ok {
		sn = sh.Snapshot()
		c.snaps[name] = sn
	}
	return sn.Table(name), nil
}

func (c *catalog) release() {
	for _, s := range c.snaps {
		s.Release()
	}
}

func (db *testDB) names() map[string]bool {
	m := map[string]bool{}
	for n := range db.sources {
		m[n] = true
	}
	return m
}

// query validates and runs SQL, returning the JSON result or the error
// text prefixed with "error: ".
func (db *testDB) query(t testing.TB, q string, params map[string]string) string {
	t.Helper()
	names := db.names()
	pq, err := parser.Validate(q, parser.ValidateOptions{KnownSource: func(n string) bool { return names[n] }})
	if err != nil {
		return "error: " + err.Error()
	}
	cat := &catalog{db: db, snaps: map[string]*engine.Snapshot{}}
	defer cat.release()
	opts := sql.Options{Params: params, Now: fixedNow, Workers: 2}
	if db.memoryLimit > 0 {
		opts.MemoryLimit, opts.MemoryLimitSetting = db.memoryLimit, "--query-memory"
	}
	res, err := sql.Run(context.Background(), pq, cat, opts)
	if err != nil {
		return "error: " + err.Error()
	}
	return string(res.AppendJSON(nil))
}

// golden runs each case of a testdata file:
//
//	# comment
//	query text (several lines)
//	params: a=1 b=2            (optional)
//	memory: 64KiB              (optional: the query's memory limit)
//	----
//	expected output
//	====
//
// With -rewrite the expected outputs are replaced by what runs now.
func golden(t *testing.T, db *testDB, file string) {
	goldenWith(t, db, file, db.query)
}

func goldenWith(t *testing.T, db *testDB, file string, run func(testing.TB, string, map[string]string) string) {
	path := filepath.Join("testdata", file)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	cases := strings.Split(string(data), "\n====\n")
	var out []string
	for i, c := range cases {
		c = strings.TrimSpace(c)
		if c == "" {
			continue
		}
		parts := strings.SplitN(c, "\n----\n", 2)
		q := parts[0]
		want := ""
		if len(parts) == 2 {
			want = strings.TrimSpace(parts[1])
		}
		params := map[string]string{}
		var qlines []string
		db.memoryLimit = 0
		for _, l := range strings.Split(q, "\n") {
			if m, ok := strings.CutPrefix(l, "memory:"); ok {
				n, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(m), "KiB"), 10, 64)
				if err != nil {
					t.Fatalf("%s case %d: memory: %v", file, i+1, err)
				}
				db.memoryLimit = n << 10
				continue
			}
			if p, ok := strings.CutPrefix(l, "params:"); ok {
				for _, kv := range strings.Fields(p) {
					k, v, _ := strings.Cut(kv, "=")
					params[k] = strings.ReplaceAll(v, "_SPACE_", " ")
				}
				continue
			}
			qlines = append(qlines, l)
		}
		got := run(t, strings.Join(qlines, "\n"), params)
		db.memoryLimit = 0
		if *rewrite {
			out = append(out, q+"\n----\n"+got)
			continue
		}
		if got != want {
			t.Errorf("%s case %d:\n%s\n got: %s\nwant: %s", file, i+1, q, got, want)
		}
	}
	if *rewrite {
		if err := os.WriteFile(path, []byte(strings.Join(out, "\n====\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// plan renders the optimised plan of a query, or its error.
func (db *testDB) plan(t testing.TB, q string, params map[string]string) string {
	t.Helper()
	names := db.names()
	pq, err := parser.Validate(q, parser.ValidateOptions{KnownSource: func(n string) bool { return names[n] }})
	if err != nil {
		return "error: " + err.Error()
	}
	cat := &catalog{db: db, snaps: map[string]*engine.Snapshot{}}
	defer cat.release()
	n, err := sql.Plan(pq, cat, sql.Options{Params: params, Now: fixedNow})
	if err != nil {
		return "error: " + err.Error()
	}
	return strings.TrimSpace(sql.Explain(n))
}
