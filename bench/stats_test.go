package bench

import (
	"bytes"
	"encoding/csv"
	"encoding/xml"
	"math"
	"os"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestPercentileAndMedian(t *testing.T) {
	d := func(xs ...int) []time.Duration {
		out := make([]time.Duration, len(xs))
		for i, x := range xs {
			out[i] = time.Duration(x)
		}
		return out
	}
	cases := []struct {
		in          []time.Duration
		p           float64
		pct, median time.Duration
	}{
		{in: nil, p: 50, pct: 0, median: 0},
		{in: d(7), p: 99, pct: 7, median: 7},
		{in: d(5, 1, 3), p: 50, pct: 3, median: 3},
		{in: d(4, 1, 3, 2), p: 50, pct: 2, median: 2}, // (2+3)/2 rounds down in integer nanoseconds
		{in: d(1, 2, 3, 4, 5, 6, 7, 8, 9, 10), p: 99, pct: 10, median: 5},
		{in: d(1, 2, 3, 4, 5, 6, 7, 8, 9, 10), p: 90, pct: 9, median: 5},
		{in: d(1, 2, 3, 4, 5, 6, 7, 8, 9, 10), p: 0, pct: 1, median: 5},
	}
	for _, c := range cases {
		if got := Percentile(append([]time.Duration(nil), c.in...), c.p); got != c.pct {
			t.Errorf("Percentile(%v, %v) = %v, want %v", c.in, c.p, got, c.pct)
		}
		if got := Median(append([]time.Duration(nil), c.in...)); got != c.median {
			t.Errorf("Median(%v) = %v, want %v", c.in, got, c.median)
		}
	}
	if g := GeoMean([]float64{1, 100, 0, -3}); math.Abs(g-10) > 1e-9 {
		t.Errorf("GeoMean = %v, want 10 (non-positive values skipped)", g)
	}
}

func TestBest(t *testing.T) {
	rs := []SweepResult{
		{Name: "small", Events: 1, BytesPerEvent: 40, EventsPerS: 50_000, QueryScoreMs: 20},
		{Name: "fast", Events: 1, BytesPerEvent: 60, EventsPerS: 90_000, QueryScoreMs: 18},
		{Name: "quick queries", Events: 1, BytesPerEvent: 70, EventsPerS: 60_000, QueryScoreMs: 5},
		{Name: "middle", Events: 1, BytesPerEvent: 45, EventsPerS: 80_000, QueryScoreMs: 8},
		{Name: "broken", Events: 1, BytesPerEvent: 1, EventsPerS: 1e9, QueryScoreMs: 0.1, Error: "boom"},
	}
	want := map[Goal]string{GoalSize: "small", GoalIngest: "fast", GoalQuery: "quick queries", GoalBalanced: "middle"}
	for g, name := range want {
		i := Best(rs, g)
		if i < 0 || rs[i].Name != name {
			t.Errorf("Best(%s) = %d, want %s", g, i, name)
		}
	}
	if i := Best(rs[4:], GoalSize); i != -1 {
		t.Errorf("Best over failed results = %d, want -1", i)
	}
	if _, err := ParseGoal("fastest"); err == nil {
		t.Error("ParseGoal accepted an unknown goal")
	}
}

func TestGridAndSettingNames(t *testing.T) {
	g := Grid([]int{16384, 65536}, []int{1 << 20}, [][2]int{{1, 3}, {2, 4}}, nil)
	if len(g) != 4 {
		t.Fatalf("%d settings, want 4", len(g))
	}
	names := []string{}
	for _, s := range g {
		names = append(names, s.String())
	}
	want := "block=16Ki page=1MiB zstd=1/3|block=16Ki page=1MiB zstd=2/4|block=64Ki page=1MiB zstd=1/3|block=64Ki page=1MiB zstd=2/4"
	if got := strings.Join(names, "|"); got != want {
		t.Fatalf("names\n got %s\nwant %s", got, want)
	}
	if s := (Setting{}).String(); s != "block=default page=defaultB zstd=d/d" {
		t.Fatalf("default setting %q", s)
	}
	if s := (Setting{BlockRows: 1000, SegmentRows: 1 << 21}).String(); !strings.Contains(s, "block=1000") || !strings.Contains(s, "seg=2Mi") {
		t.Fatalf("setting %q", s)
	}
}

func sampleSweep() *Report {
	r := NewReport(KindSweep, Dataset{Events: 100})
	r.Sweep = &SweepReport{Goal: GoalSize, Results: []SweepResult{
		{Name: "a", Events: 100, EventsPerS: 1000, BytesPerEvent: 50, QueryScoreMs: 3, Queries: []QueryStats{{Name: "q1", Runs: 3, MedianMs: 2}}},
		{Name: "b", Events: 100, EventsPerS: 2000, BytesPerEvent: 60, QueryScoreMs: 4, Queries: []QueryStats{{Name: "q1", Runs: 3, MedianMs: 3}}},
		{Name: "c & <d>", Error: "disk full"},
	}}
	r.Sweep.BestFor = map[Goal]int{}
	for _, g := range Goals() {
		r.Sweep.BestFor[g] = Best(r.Sweep.Results, g)
	}
	r.Sweep.Best = r.Sweep.BestFor[GoalSize]
	return r
}

// queryReport is a query report with one query's timed runs.
func queryReport(samples ...float64) *Report {
	r := NewReport(KindQuery, Dataset{Events: 10})
	r.Query = &QueryBench{Queries: []QueryStats{{Name: "q", Runs: len(samples), MedianMs: median(samples), P99Ms: slices.Max(samples), SamplesMs: samples}}}
	return r
}

func ingestReport(rate, bytesPerEvent float64) *Report {
	r := NewReport(KindIngest, Dataset{Events: 10})
	r.Ingest = &IngestResult{EventsPerS: rate, MBPerS: 1, LatencyP50: 10, LatencyP99: 20, Disk: &DiskUsage{}, BytesPerEvent: bytesPerEvent}
	return r
}

func verdicts(t *testing.T, old, cur []*Report, o CompareOptions) map[string]string {
	t.Helper()
	ds, err := Compare(old, cur, o)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, d := range ds {
		got[d.Metric.Name] = d.Change
	}
	return got
}

// TestCompareCallsOnlyWhatExceedsNoise: a change is better or worse only
// when the runs say it is not noise (issue 16 item 7), as benchstat.
func TestCompareCallsOnlyWhatExceedsNoise(t *testing.T) {
	noisy := []float64{10, 14, 9, 12, 11, 15, 10, 13, 9, 12}
	shifted := []float64{11, 15, 10, 13, 12, 14, 9, 12, 10, 13} // the same spread, a hair slower
	faster := []float64{5, 6, 5.5, 6.2, 5.1, 5.8, 6.1, 5.3, 5.9, 5.4}
	o := CompareOptions{}
	if v := verdicts(t, []*Report{queryReport(noisy...)}, []*Report{queryReport(shifted...)}, o)["q median"]; v != Same {
		t.Errorf("overlapping runs: %q, want %q", v, Same)
	}
	if v := verdicts(t, []*Report{queryReport(noisy...)}, []*Report{queryReport(faster...)}, o)["q median"]; v != Better {
		t.Errorf("faster runs: %q, want %q", v, Better)
	}
	if v := verdicts(t, []*Report{queryReport(faster...)}, []*Report{queryReport(noisy...)}, o)["q median"]; v != Worse {
		t.Errorf("slower runs: %q, want %q", v, Worse)
	}
	// Three runs a side cannot show anything at 5%.
	if v := verdicts(t, []*Report{queryReport(10, 11, 12)}, []*Report{queryReport(1, 2, 3)}, o)["q median"]; v != TooFew {
		t.Errorf("three runs a side: %q, want %q", v, TooFew)
	}
	// A significant change smaller than the threshold is not called.
	if v := verdicts(t, []*Report{queryReport(noisy...)}, []*Report{queryReport(faster...)}, CompareOptions{Threshold: 0.9})["q median"]; v != Same {
		t.Errorf("below the threshold: %q", v)
	}

	// One ingest run a side: the rate's noise is unknown, but bytes on
	// disk are exact, and equal values are no change.
	got := verdicts(t, []*Report{ingestReport(100, 50)}, []*Report{ingestReport(120, 45)}, o)
	if got["events_per_s"] != TooFew || got["bytes_per_event"] != Better || got["mb_per_s"] != Same {
		t.Errorf("one run a side: %v", got)
	}
	// Several reports a side pool their values.
	olds := []*Report{ingestReport(100, 50), ingestReport(102, 50), ingestReport(99, 50), ingestReport(101, 50)}
	news := []*Report{ingestReport(120, 50), ingestReport(121, 50), ingestReport(119, 50), ingestReport(122, 50)}
	got = verdicts(t, olds, news, o)
	if got["events_per_s"] != Better || got["bytes_per_event"] != Same || got["latency_p50"] != Same {
		t.Errorf("four runs a side: %v", got)
	}

	ds, err := Compare(olds, news, o)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := WriteDeltas(&buf, ds); err != nil || !strings.Contains(buf.String(), "1.199") || !strings.Contains(buf.String(), "4+4") {
		t.Fatalf("deltas table %q, %v", buf.String(), err)
	}
	if _, err := Compare([]*Report{ingestReport(1, 1)}, []*Report{sampleSweep()}, o); err == nil {
		t.Fatal("compared an ingest report with a sweep report")
	}
}

// TestMannWhitneyU checks p-values against values worked out by hand.
func TestMannWhitneyU(t *testing.T) {
	near := func(got, want float64) bool { return math.Abs(got-want) < 1e-9 }
	// Completely separated samples: one ordering of C(n1+n2, n1) at each
	// extreme.
	if p := MannWhitneyU([]float64{1, 2, 3}, []float64{4, 5, 6}); !near(p, 2.0/20) {
		t.Errorf("3 vs 3 separated: p %v, want 0.1", p)
	}
	if p := MannWhitneyU([]float64{6, 7, 8, 9, 10}, []float64{1, 2, 3, 4, 5}); !near(p, 2.0/252) {
		t.Errorf("5 vs 5 separated: p %v, want 2/252", p)
	}
	// Interleaved samples: U = 4 of 9 is the middle (P(U<=4) = 10/20).
	if p := MannWhitneyU([]float64{1, 4, 5}, []float64{2, 3, 6}); !near(p, 1) {
		t.Errorf("3 vs 3 interleaved: p %v, want 1", p)
	}
	if p := MannWhitneyU([]float64{1, 2, 4}, []float64{3, 5, 6}); !near(p, 2*2.0/20) {
		t.Errorf("3 vs 3, U=1: p %v, want 0.2", p)
	}
	// Ties use the normal approximation; identical samples are no evidence.
	if p := MannWhitneyU([]float64{5, 5, 5, 5}, []float64{5, 5, 5, 5}); p != 1 {
		t.Errorf("identical: p %v", p)
	}
	a := []float64{1, 1, 2, 2, 3, 3, 4, 4, 5, 5}
	b := []float64{6, 6, 7, 7, 8, 8, 9, 9, 10, 10}
	if p := MannWhitneyU(a, b); !(p < 0.001) || MannWhitneyU(b, a) != p {
		t.Errorf("separated with ties: p %v, or not symmetric", p)
	}
	if p := MannWhitneyU(nil, b); p != 1 {
		t.Errorf("empty sample: p %v", p)
	}
	if p := minPValue(4, 4); !near(p, 2.0/70) {
		t.Errorf("minPValue(4, 4) = %v", p)
	}
}

func TestReportFormats(t *testing.T) {
	r := sampleSweep()
	var js bytes.Buffer
	if err := r.Write(&js, "json"); err != nil {
		t.Fatal(err)
	}
	path := t.TempDir() + "/r.json"
	if err := os.WriteFile(path, js.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	back, err := ReadReport(path)
	if err != nil {
		t.Fatal(err)
	}
	if back.Sweep.Best != 0 || len(back.Sweep.Results) != 3 || back.Sweep.Results[2].Error != "disk full" {
		t.Fatalf("read back %+v", back.Sweep)
	}

	var c bytes.Buffer
	if err := r.Write(&c, "csv"); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&c).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 4 || rows[0][len(rows[0])-1] != "q1 median_ms" || rows[1][14] != "true" || rows[2][len(rows[2])-1] != "3" {
		t.Fatalf("csv %q", rows)
	}

	var tb bytes.Buffer
	if err := r.Write(&tb, "table"); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"← best (size)", "best for ingest:    b", "FAILED: disk full", "queries of a:"} {
		if !strings.Contains(tb.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, tb.String())
		}
	}
	if err := r.Write(&tb, "yaml"); err == nil {
		t.Error("unknown format accepted")
	}
}

func TestSVGIsWellFormed(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteSVG(&buf, sampleSweep().Sweep); err != nil {
		t.Fatal(err)
	}
	doc := buf.String()
	if !strings.HasPrefix(doc, "<svg") || !strings.HasSuffix(doc, "</svg>\n") {
		t.Fatal("not an SVG document")
	}
	dec := xml.NewDecoder(strings.NewReader(doc))
	circles, red := 0, 0
	for {
		tok, err := dec.Token()
		if err != nil {
			break
		}
		if se, ok := tok.(xml.StartElement); ok && se.Name.Local == "circle" {
			circles++
			for _, a := range se.Attr {
				if a.Name.Local == "fill" && a.Value == "#c0392b" {
					red++
				}
			}
		}
	}
	if circles != 2 || red != 1 {
		t.Fatalf("%d points (%d best), want 2 (1 best)", circles, red)
	}
}

func TestFormatting(t *testing.T) {
	cases := []struct{ got, want string }{
		{thousands(0), "0"}, {thousands(999), "999"}, {thousands(1000), "1,000"},
		{thousands(1234567.6), "1,234,568"}, {thousands(-4321), "-4,321"},
		{iec(512), "512 B"}, {iec(1536), "1.5 KiB"}, {iec(3 << 30), "3.0 GiB"},
		{msCell(0.123), "0.12"}, {msCell(12.34), "12.3"}, {msCell(1234.5), "1234"},
	}
	for _, c := range cases {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
}

// TestProcessCPU: the process's own CPU time reads back, and grows with
// work done.
func TestProcessCPU(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("no /proc")
	}
	pid := os.Getpid()
	before, err := ProcessCPU(pid)
	if err != nil {
		t.Fatal(err)
	}
	x := 0
	for i := 0; i < 200_000_000; i++ {
		x += i ^ (x >> 3)
	}
	after, err := ProcessCPU(pid)
	if err != nil {
		t.Fatal(err)
	}
	if after <= before {
		t.Fatalf("CPU time %v then %v after busy work (%d)", before, after, x)
	}
	if _, err := ProcessCPU(1 << 30); err == nil {
		t.Fatal("no error for a process that does not exist")
	}
}
