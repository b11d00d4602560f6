package bench

import (
	"context"
	"errors"
	"testing"
	"time"
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
