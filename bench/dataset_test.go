package bench

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/sediment/sediment/bench/gen"
	"github.com/sediment/sediment/event"
)

func TestParseSources(t *testing.T) {
	cases := []struct {
		in   string
		want []SourceWeight
		err  bool
	}{
		{in: "", want: EdgeOnly()},
		{in: "edge", want: EdgeOnly()},
		{in: "all", want: SupabaseMix()},
		{in: "cloudflare.logs.prod=3, postgres_logs", want: []SourceWeight{{gen.EdgeLogs, 3}, {gen.PostgresLogs, 1}}},
		{in: "postgREST.logs.prod", want: []SourceWeight{{gen.PostgRESTLogs, 1}}},
		{in: "nope", err: true},
		{in: "edge_logs=0", err: true},
		{in: "edge_logs=x", err: true},
		{in: "edge_logs,cloudflare.logs.prod", err: true},
	}
	for _, c := range cases {
		got, err := ParseSources(c.in)
		if (err != nil) != c.err {
			t.Errorf("ParseSources(%q) error %v, want error %v", c.in, err, c.err)
			continue
		}
		if !c.err && !reflect.DeepEqual(got, c.want) {
			t.Errorf("ParseSources(%q) = %v, want %v", c.in, got, c.want)
		}
	}
}

// drain returns every batch of ds.
func drain(ds Dataset, size int) []Batch {
	p := ds.NewProducer(size)
	var out []Batch
	for {
		b, ok := p.Next(nil)
		if !ok {
			return out
		}
		out = append(out, b)
	}
}

func TestProducerDealsTheDataset(t *testing.T) {
	end := time.Date(2025, 7, 10, 12, 0, 0, 0, time.UTC)
	ds := Dataset{Shape: gen.Platform, Seed: 3, Sources: SupabaseMix(), Projects: 5, Events: 10007, End: end, Span: time.Hour}
	batches := drain(ds, 100)

	perSource := map[gen.Source]int{}
	var order []gen.Source
	for _, b := range batches {
		if b.Events <= 0 || b.Events > 100 {
			t.Fatalf("batch of %d events", b.Events)
		}
		vals, err := event.ParseNDJSON(b.Body) // one line: the JSON array
		if err != nil || len(vals) != 1 || vals[0].Len() != b.Events {
			t.Fatalf("body of %s is not an array of %d events: %v", b.Source, b.Events, err)
		}
		for i := range vals[0].Len() {
			ev := vals[0].Elem(i)
			tsv := ev.Get("timestamp")
			if tsv == nil {
				t.Fatalf("%s event without a timestamp", b.Source)
			}
			ts, ok := event.TimestampMicros(*tsv)
			if !ok {
				t.Fatalf("%s event without a timestamp", b.Source)
			}
			// Generators draw gaps at random, so the last events may run
			// a little past End; one in a hundred lies seconds early.
			at := time.UnixMicro(ts)
			if at.Before(ds.Start().Add(-10*time.Second)) || at.After(end.Add(5*time.Minute)) {
				t.Fatalf("%s event at %s, outside %s..%s", b.Source, at, ds.Start(), end)
			}
		}
		perSource[b.Source] += b.Events
		if len(order) < len(ds.Sources) {
			order = append(order, b.Source)
		}
	}
	total := 0
	for i, s := range ds.Sources {
		want := ds.quotas()[i]
		if perSource[s.Source] != want {
			t.Errorf("%s: %d events, want %d", s.Source, perSource[s.Source], want)
		}
		total += perSource[s.Source]
	}
	if total != ds.Events {
		t.Fatalf("%d events, want %d", total, ds.Events)
	}
	// Every source gets its first batch before any gets a second.
	if len(order) != len(ds.Sources) {
		t.Fatalf("first batches came from %v", order)
	}
	seen := map[gen.Source]bool{}
	for _, s := range order {
		if seen[s] {
			t.Fatalf("a source got two batches before all had one: %v", order)
		}
		seen[s] = true
	}

	// The same dataset gives the same bytes.
	again := drain(ds, 100)
	for i := range batches {
		if !bytes.Equal(batches[i].Body, again[i].Body) {
			t.Fatalf("batch %d differs between two producers", i)
		}
	}
}

func TestQuotasSumToEvents(t *testing.T) {
	for _, n := range []int{0, 1, 8, 99, 100, 12345} {
		ds := Dataset{Sources: SupabaseMix(), Events: n}
		sum := 0
		for _, q := range ds.quotas() {
			sum += q
		}
		if sum != n {
			t.Errorf("quotas of %d events sum to %d", n, sum)
		}
	}
}

func TestManifestRoundTrip(t *testing.T) {
	dir := t.TempDir()
	if _, ok, err := LoadManifest(dir); ok || err != nil {
		t.Fatalf("empty dir: ok %v err %v", ok, err)
	}
	ds := Dataset{Shape: gen.Platform, Seed: 9, Sources: []SourceWeight{{gen.EdgeLogs, 4}, {gen.AuthLogs, 1}}, Projects: 7, Events: 1234,
		End: time.Date(2025, 7, 10, 12, 0, 0, 0, time.UTC), Span: 2 * time.Hour, RareEvery: 77, StorageObjects: 99}
	if err := SaveManifest(dir, ds); err != nil {
		t.Fatal(err)
	}
	got, ok, err := LoadManifest(dir)
	if !ok || err != nil {
		t.Fatalf("ok %v err %v", ok, err)
	}
	if !reflect.DeepEqual(got, ds) {
		t.Fatalf("got %+v, want %+v", got, ds)
	}
	if got.Project() != gen.ProjectRefs(9, 7)[0] {
		t.Fatalf("project %q", got.Project())
	}
	if (Dataset{}).Project() != "default" {
		t.Fatalf("self-hosted project %q", (Dataset{}).Project())
	}
	info, _ := json.Marshal(ds.Info())
	if !bytes.Contains(info, []byte(`"gotrue.logs.prod":1`)) {
		t.Fatalf("info %s", info)
	}
}

// TestNDJSONBatchesHoldTheSameEvents: a producer writing JSON lines (for
// VictoriaLogs) deals the same events as one writing Vector's arrays, and
// reports each event's facts.
func TestNDJSONBatchesHoldTheSameEvents(t *testing.T) {
	ds := Dataset{Shape: gen.Platform, Seed: 4, Events: 1500, End: time.Date(2025, 7, 10, 12, 0, 0, 0, time.UTC), RareEvery: 10}
	arrays := ds.NewProducer(400)
	lines := ds.NewProducer(400)
	lines.NDJSON = true
	facts := 0
	lines.OnEvent = func(g *gen.Generator) {
		if _, ok := g.Facts(); ok {
			facts++
		}
	}
	for {
		a, okA := arrays.Next(nil)
		l, okL := lines.Next(nil)
		if okA != okL {
			t.Fatal("producers ended apart")
		}
		if !okA {
			break
		}
		var evs []json.RawMessage
		if err := json.Unmarshal(a.Body, &evs); err != nil {
			t.Fatal(err)
		}
		var want bytes.Buffer
		for _, ev := range evs {
			want.Write(ev)
			want.WriteByte('\n')
		}
		if !bytes.Equal(l.Body, want.Bytes()) || l.Events != a.Events {
			t.Fatalf("JSON lines differ from the array's events")
		}
	}
	if facts != 1500 {
		t.Fatalf("OnEvent saw %d events with facts, want 1500", facts)
	}
}
