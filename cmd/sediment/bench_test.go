package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestBenchListFlags(t *testing.T) {
	ints := []struct {
		in   string
		want []int
		err  bool
	}{
		{in: "16384,65536", want: []int{16384, 65536}},
		{in: "64K, 1M ,", want: []int{64 << 10, 1 << 20}},
		{in: "0", want: []int{0}},
		{in: "x", err: true},
		{in: "-1", err: true},
	}
	for _, c := range ints {
		got, err := intList(c.in)
		if (err != nil) != c.err || !c.err && !reflect.DeepEqual(got, c.want) {
			t.Errorf("intList(%q) = %v, %v", c.in, got, err)
		}
	}
	zs := []struct {
		in   string
		want [][2]int
		err  bool
	}{
		{in: "1/3,2/4", want: [][2]int{{1, 3}, {2, 4}}},
		{in: "3", want: [][2]int{{3, 3}}},
		{in: "0/3", err: true},
		{in: "1/5", err: true},
		{in: "a/b", err: true},
	}
	for _, c := range zs {
		got, err := zstdList(c.in)
		if (err != nil) != c.err || !c.err && !reflect.DeepEqual(got, c.want) {
			t.Errorf("zstdList(%q) = %v, %v", c.in, got, err)
		}
	}
}

func TestBenchCommandLine(t *testing.T) {
	cases := []struct {
		args []string
		code int
		err  string
	}{
		{args: []string{"bench"}, code: 2, err: "usage: sediment bench"},
		{args: []string{"bench", "-h"}, code: 0, err: "sweep"},
		{args: []string{"bench", "frob"}, code: 2, err: `unknown command "frob"`},
		{args: []string{"bench", "ingest", "-h"}, code: 0, err: "-connections"},
		{args: []string{"bench", "ingest", "--shape", "cloud"}, code: 2, err: "unknown shape"},
		{args: []string{"bench", "ingest", "--sources", "nope"}, code: 2, err: "unknown source"},
		{args: []string{"bench", "query", "--format", "xml"}, code: 2, err: "unknown format"},
		{args: []string{"bench", "query", "--url", "http://127.0.0.1:1"}, code: 2, err: "--url needs --key"},
		{args: []string{"bench", "sweep", "--goal", "speed"}, code: 2, err: "unknown goal"},
		{args: []string{"bench", "sweep", "--zstd", "9"}, code: 2, err: "bad zstd levels"},
		{args: []string{"bench", "compare", "one.json"}, code: 2, err: "want two sides"},
		{args: []string{"bench", "compare", "--alpha", "2", "a.json", "b.json"}, code: 2, err: "--alpha"},
		{args: []string{"bench", "query", "--suite", "nope"}, code: 2, err: `unknown suite "nope"`},
		{args: []string{"bench", "query", "--suite", "peers", "--url", "http://127.0.0.1:1", "--key", "k"}, code: 2, err: "needs --data-end"},
		{args: []string{"bench", "peers", "-h"}, code: 0, err: "-victorialogs"},
		{args: []string{"bench", "peers", "--victorialogs", "/nonexistent/victoria-logs"}, code: 2, err: "--victorialogs"},
		{args: []string{"bench", "peers", "--rare-every", "-1"}, code: 2, err: "must not be negative"},
		{args: []string{"bench", "sweep", "--memory-budget", "lots"}, code: 2, err: "invalid size"},
	}
	for _, c := range cases {
		var out, errb bytes.Buffer
		if code := dispatch(c.args, &out, &errb); code != c.code || !strings.Contains(errb.String(), c.err) {
			t.Errorf("%q: exit %d, stderr %q; want %d and %q", c.args, code, errb.String(), c.code, c.err)
		}
	}
}

// TestBenchSweepAndCompare runs a tiny sweep end to end, writes JSON and a
// chart, and compares the report with itself.
func TestBenchSweepAndCompare(t *testing.T) {
	dir := t.TempDir()
	svg := filepath.Join(dir, "sweep.svg")
	var out, errb bytes.Buffer
	code := dispatch([]string{"bench", "sweep", "--events", "2000", "--block-rows", "256,1024", "--page-bytes", "16K", "--zstd", "1/3",
		"--runs", "1", "--ack-mode", "buffered", "--dir", dir, "--svg", svg, "--format", "json", "--goal", "size"}, &out, &errb)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	var rep struct {
		Kind  string
		Sweep struct {
			Goal    string
			Best    int
			Results []struct {
				Name          string
				BytesPerEvent float64 `json:"bytes_per_event"`
				Error         string
			}
		}
	}
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	if rep.Kind != "sweep" || rep.Sweep.Goal != "size" || len(rep.Sweep.Results) != 2 || rep.Sweep.Best < 0 {
		t.Fatalf("report %+v", rep)
	}
	for _, r := range rep.Sweep.Results {
		if r.Error != "" || r.BytesPerEvent <= 0 {
			t.Fatalf("result %+v", r)
		}
	}
	if b, err := os.ReadFile(svg); err != nil || !bytes.HasPrefix(b, []byte("<svg")) {
		t.Fatalf("chart: %v", err)
	}

	// --save writes the same JSON report while the table goes to stdout.
	path := filepath.Join(dir, "r.json")
	out.Reset()
	code = dispatch([]string{"bench", "sweep", "--events", "2000", "--block-rows", "256", "--page-bytes", "16K",
		"--runs", "1", "--ack-mode", "buffered", "--dir", dir, "--save", path}, &out, &errb)
	if code != 0 || !strings.Contains(out.String(), "best for balanced:") {
		t.Fatalf("exit %d: %s\n%s", code, errb.String(), out.String())
	}
	out.Reset()
	if code := dispatch([]string{"bench", "compare", path, path}, &out, &errb); code != 0 {
		t.Fatalf("compare exit %d: %s", code, errb.String())
	}
	if !strings.Contains(out.String(), "bytes_per_event (B)") || !strings.Contains(out.String(), "1.000") || strings.Contains(out.String(), "worse") {
		t.Fatalf("compare output:\n%s", out.String())
	}
}
