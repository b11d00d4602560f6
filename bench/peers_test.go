package bench

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sediment/sediment/catalog"
	"github.com/sediment/sediment/engine"
)

// smallPeersDataset is the peers data at test size: enough events that
// every query has an answer (rare tokens one in 400 events).
func smallPeersDataset(events int) Dataset {
	ds := PeersDataset(events, 3)
	ds.RareEvery = 400
	ds.StorageObjects = 300
	ds.End = time.Now().UTC().Truncate(time.Second)
	ds.Span = 8 * time.Hour
	return ds
}

// TestPeersSuiteOverHTTP: the six queries, sent to a server as its users
// send them, give the generator's answers.
func TestPeersSuiteOverHTTP(t *testing.T) {
	ts := startTestServer(t)
	ds := smallPeersDataset(20_000)
	ctx := context.Background()
	if _, err := IngestHTTP(ctx, ds, IngestOptions{URL: ts.url, Key: ts.pub, Connections: 2, BatchSize: 1000}); err != nil {
		t.Fatal(err)
	}
	tr, err := ComputeTruth(ctx, ds, DefaultPeersSpec(ds), nil)
	if err != nil {
		t.Fatal(err)
	}
	if tr.Events != 20_000 || tr.Status500 == 0 || len(tr.ProjectNewest) != 100 || len(tr.Hourly) < 8 || len(tr.Minutely) < 50 || len(tr.Rare) == 0 || len(tr.Paths) < 100 {
		t.Fatalf("truth %+v", tr.Summary())
	}
	stats, err := RunQueries(ctx, NewHTTPTarget(ts.url, ts.priv), PeersSuite(tr), 1, nil)
	for _, s := range stats {
		t.Logf("%s: %d rows via %s, %.1f ms %s", s.Name, s.Rows, s.Via, s.MedianMs, s.Error)
	}
	if err != nil {
		t.Fatal(err)
	}
}

// TestPeersChecksCatchWrongAnswers: each check refuses an answer that
// differs from the truth in the way a wrong server would.
func TestPeersChecksCatchWrongAnswers(t *testing.T) {
	ts := startTestServer(t)
	ds := smallPeersDataset(5_000)
	ctx := context.Background()
	if _, err := IngestHTTP(ctx, ds, IngestOptions{URL: ts.url, Key: ts.pub, Connections: 1, BatchSize: 1000}); err != nil {
		t.Fatal(err)
	}
	tr, err := ComputeTruth(ctx, ds, DefaultPeersSpec(ds), nil)
	if err != nil {
		t.Fatal(err)
	}
	target := NewHTTPTarget(ts.url, ts.priv)
	answers := map[string][]Row{}
	suite := PeersSuite(tr)
	for _, q := range suite {
		body, _, err := target.Run(ctx, q, "")
		if err != nil {
			t.Fatal(err)
		}
		if answers[q.Name], err = target.Rows(q, body); err != nil {
			t.Fatal(err)
		}
		if err := q.Check(answers[q.Name]); err != nil {
			t.Fatalf("%s: %v", q.Name, err)
		}
	}
	spoil := map[string]func(){
		PeersQ1: func() { tr.Status500++ },
		PeersQ2: func() { tr.ProjectNewest[3]-- },
		PeersQ3: func() {
			for h, c := range tr.Hourly {
				c[2]++
				tr.Hourly[h] = c
				break
			}
		},
		PeersQ4: func() {
			for m := range tr.Minutely {
				delete(tr.Minutely, m)
				break
			}
		},
		PeersQ5: func() { tr.Rare = tr.Rare[1:] },
		PeersQ6: func() { tr.Paths[tr.TopPaths(1)[0].Path]++ },
	}
	for _, q := range suite {
		before := *tr
		before.ProjectNewest = append([]int64(nil), tr.ProjectNewest...)
		spoil[q.Name]()
		if err := q.Check(answers[q.Name]); !errors.Is(err, errWrongAnswer) {
			t.Errorf("%s: check of a wrong answer: %v", q.Name, err)
		}
		*tr = before
	}
	// Rows without the fields a check reads are wrong too.
	for _, q := range suite {
		if err := q.Check([]Row{{"x": "1"}}); !errors.Is(err, errWrongAnswer) {
			t.Errorf("%s: check of a row without fields: %v", q.Name, err)
		}
	}
}

// TestSweepPeersSuite: a sweep with the peers suite checks every answer
// under every setting; settings with a sort key are left out with a note
// while the engine has none, and given to SortKeySetter when it is set;
// segment sizes are scaled to the events swept, and a sweep where they
// made no difference says so.
func TestSweepPeersSuite(t *testing.T) {
	defer func(setter func(*engine.Options, *catalog.Catalog, string) error) { SortKeySetter = setter }(SortKeySetter)
	SortKeySetter = nil
	ds := smallPeersDataset(3000)
	ctx := context.Background()
	settings := Grid([]int{1024}, []int{64 << 10}, [][2]int{{1, 1}}, []int{1 << 20, 4 << 20}, "", "project")
	o := SweepOptions{Dataset: ds, Settings: settings, BatchSize: 500, Runs: 1, Dir: t.TempDir(), AckMode: engine.AckBuffered,
		Suite: SuitePeers, SegmentRowsAt: 10_000_000}
	rep, err := RunSweep(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Results) != 2 || rep.Truth == nil || rep.Truth.Events != 3000 || rep.Best < 0 {
		t.Fatalf("report %+v", rep)
	}
	for _, r := range rep.Results {
		if r.Error != "" || r.Setting.SortKey != "" || r.QueryFailures != 0 || len(r.Queries) != 6 {
			t.Fatalf("%s: %+v", r.Name, r)
		}
		// 3,000 of 10,000,000 events: 1Mi rows scale to 314.
		if want := r.Setting.SegmentRows * 3000 / 10_000_000; r.SegmentRowsUsed != want {
			t.Errorf("%s: segment rows used %d, want %d", r.Name, r.SegmentRowsUsed, want)
		}
		for _, q := range r.Queries {
			if !q.Checked {
				t.Errorf("%s: %s not checked", r.Name, q.Name)
			}
		}
	}
	notes := strings.Join(rep.Notes, "\n")
	for _, want := range []string{"sort key axis skipped (project)", "scaled them by 0.0003", "segment size made no difference"} {
		if !strings.Contains(notes, want) {
			t.Errorf("notes lack %q:\n%s", want, notes)
		}
	}

	var keys []string
	SortKeySetter = func(_ *engine.Options, cat *catalog.Catalog, key string) error {
		if cat.SourceByName("cloudflare.logs.prod") == nil {
			t.Error("the setter got a catalog without the Supabase sources")
		}
		keys = append(keys, key)
		return nil
	}
	o.Settings = Grid([]int{1024}, []int{64 << 10}, [][2]int{{1, 1}}, nil, "", "project")
	if rep, err = RunSweep(ctx, o); err != nil {
		t.Fatal(err)
	}
	if len(rep.Results) != 2 || rep.Results[1].Setting.SortKey != "project" || !slices.Equal(keys, []string{"project"}) {
		t.Fatalf("with a sort key setter: %d results, keys %v", len(rep.Results), keys)
	}
}

// TestSweepSortKeys: a sweep setting's sort key reaches every source of
// the catalog and, through ingestInProcess, the shards ("none": time order
// only); without one the seeded edge logs keep theirs (project).
func TestSweepSortKeys(t *testing.T) {
	for _, tc := range []struct{ key, want string }{{"", "project"}, {SortKeyNone, ""}, {"metadata.host", "metadata.host"}} {
		dir := t.TempDir()
		cat, err := catalog.Open(dir, nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := cat.SeedSupabase(); err != nil {
			t.Fatal(err)
		}
		if tc.key != "" {
			if err := SortKeySetter(nil, cat, tc.key); err != nil {
				t.Fatal(err)
			}
		}
		eng, err := engine.Open(dir, &engine.Options{DisableBackground: true})
		if err != nil {
			t.Fatal(err)
		}
		ds := smallPeersDataset(200)
		if _, err := ingestInProcess(context.Background(), eng, cat, sourcesOf(ds), batchFeed(context.Background(), ds, 100, nil), 1, nil); err != nil {
			t.Fatal(err)
		}
		src := cat.SourceByName("cloudflare.logs.prod")
		sh, err := eng.Shard(src.Token)
		if err != nil {
			t.Fatal(err)
		}
		if src.SortKey != tc.want || sh.SortKey() != tc.want {
			t.Errorf("setting %q: source key %q, shard key %q, want %q", tc.key, src.SortKey, sh.SortKey(), tc.want)
		}
		if err := eng.Close(); err != nil {
			t.Fatal(err)
		}
	}
}
