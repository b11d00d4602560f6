package bench

import (
	"bytes"
	"encoding/csv"
	"encoding/xml"
	"math"
	"os"
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

func TestCompare(t *testing.T) {
	old := NewReport(KindIngest, Dataset{Events: 10})
	old.Ingest = &IngestResult{EventsPerS: 100, MBPerS: 1, LatencyP50: 10, LatencyP99: 20}
	cur := NewReport(KindIngest, Dataset{Events: 10})
	cur.Ingest = &IngestResult{EventsPerS: 120, MBPerS: 1.01, LatencyP50: 12, LatencyP99: 20}
	ds, err := Compare(old, cur, 0.05)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, d := range ds {
		got[d.Metric.Name] = d.Change
	}
	want := map[string]string{"events_per_s": "better", "mb_per_s": "same", "latency_p50": "worse", "latency_p99": "same"}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: %q, want %q (all: %v)", k, got[k], v, got)
		}
	}
	var buf bytes.Buffer
	if err := WriteDeltas(&buf, ds); err != nil || !strings.Contains(buf.String(), "1.200") {
		t.Fatalf("deltas table %q, %v", buf.String(), err)
	}
	if _, err := Compare(old, sampleSweep(), 0.05); err == nil {
		t.Fatal("compared an ingest report with a sweep report")
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
	if len(rows) != 4 || rows[0][len(rows[0])-1] != "q1 median_ms" || rows[1][12] != "true" || rows[2][len(rows[2])-1] != "3" {
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
