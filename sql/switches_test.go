package sql_test

import (
	"context"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/sediment/sediment/engine"
	"github.com/sediment/sediment/sql"
	"github.com/sediment/sediment/sql/parser"
)

// TestGoldenUnderSwitches runs the golden queries with the optimiser's
// rewrites, pushdown and index use turned off (sql.Options NoRewrites,
// NoPushdown, NoIndex): each must give the rows it gives with them on.
// Rows are compared as sets where the query leaves their order or choice
// open (no ORDER BY, or a LIMIT). query/sqlcheck does the same on
// generated queries.
func TestGoldenUnderSwitches(t *testing.T) {
	db := supabaseDB(t)
	names := db.names()
	run := func(q string, params map[string]string, o sql.Options) string {
		pq, err := parser.Validate(q, parser.ValidateOptions{KnownSource: func(n string) bool { return names[n] }})
		if err != nil {
			return "error: " + err.Error()
		}
		cat := &catalog{db: db, snaps: map[string]*engine.Snapshot{}}
		defer cat.release()
		o.Params, o.Now, o.Workers = params, fixedNow, 2
		res, err := sql.Run(context.Background(), pq, cat, o)
		if err != nil {
			return "error: " + err.Error()
		}
		rows := make([]string, res.Len)
		for i := range rows {
			cells := make([]string, len(res.Cols))
			for c := range res.Cols {
				cells[c] = sql.CellJSON(res, c, i)
			}
			rows[i] = strings.Join(cells, " | ")
		}
		sort.Strings(rows)
		return strings.Join(rows, "\n")
	}
	switches := []sql.Options{{NoRewrites: true}, {NoPushdown: true}, {NoIndex: true}, {NoRewrites: true, NoPushdown: true, NoIndex: true}}
	for _, file := range []string{"basic.txt", "errors.txt"} {
		data, err := os.ReadFile(filepath.Join("testdata", file))
		if err != nil {
			t.Fatal(err)
		}
		for i, c := range strings.Split(string(data), "\n====\n") {
			q, params := goldenCase(strings.SplitN(strings.TrimSpace(c), "\n----\n", 2)[0])
			want := run(q, params, sql.Options{})
			limited := strings.Contains(strings.ToLower(q), "limit")
			for _, o := range switches {
				got := run(q, params, o)
				if got == want || limited && !strings.HasPrefix(got, "error") && !strings.HasPrefix(want, "error") {
					continue // a LIMIT may pick other rows; both ran
				}
				t.Errorf("%s case %d with %+v:\n%s\n got: %s\nwant: %s", file, i+1, o, q, got, want)
			}
		}
	}
}

// goldenCase splits a golden case into its query and its params: line.
func goldenCase(text string) (string, map[string]string) {
	params := map[string]string{}
	var lines []string
	for _, l := range strings.Split(text, "\n") {
		if p, ok := strings.CutPrefix(l, "params:"); ok {
			for _, kv := range strings.Fields(p) {
				k, v, _ := strings.Cut(kv, "=")
				params[k] = strings.ReplaceAll(v, "_SPACE_", " ")
			}
			continue
		}
		lines = append(lines, l)
	}
	return strings.Join(lines, "\n"), params
}
