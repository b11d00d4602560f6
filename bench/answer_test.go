package bench

import (
	"os"
	"strings"
	"testing"
	"time"
)

func TestRowAccessors(t *testing.T) {
	var rows []Row
	body := `{"result":[{"count":12,"s":"x","metadata":[{"request":[{"path":"/a"}]}],"timestamp":1752148800000000,
		"when":"2025-07-10T12:00:00.5Z","day":"2025-07-10 12:00:00","big":"1e3","half":"1.5"}]}`
	rows, err := logflareRows([]byte(body))
	if err != nil || len(rows) != 1 {
		t.Fatalf("%v %v", rows, err)
	}
	r := rows[0]
	if n, err := r.Int("count"); n != 12 || err != nil {
		t.Errorf("count %d %v", n, err)
	}
	if n, err := r.Int("big"); n != 1000 || err != nil {
		t.Errorf("big %d %v", n, err)
	}
	if _, err := r.Int("half"); err == nil {
		t.Error("1.5 read as an integer")
	}
	if p, err := r.Str("metadata.request.path"); p != "/a" || err != nil {
		t.Errorf("nested path %q %v", p, err)
	}
	// VictoriaLogs' flattened names are found as they are.
	if p, err := (Row{"metadata.request.path": "/b"}).Str("metadata.request.path"); p != "/b" || err != nil {
		t.Errorf("flat path %q %v", p, err)
	}
	want := time.Date(2025, 7, 10, 12, 0, 0, 0, time.UTC).UnixMicro()
	for field, us := range map[string]int64{"timestamp": want, "when": want + 500_000, "day": want} {
		if got, err := r.Time(field); got != us || err != nil {
			t.Errorf("%s: %d %v, want %d", field, got, err, us)
		}
	}
	if _, err := r.Time("s"); err == nil {
		t.Error("x read as a time")
	}
	if _, err := r.Str("nope"); err == nil {
		t.Error("a missing field read")
	}
	for _, bad := range []string{`{"error":"boom"}`, `not json`, `{"other":1}`} {
		if _, err := logflareRows([]byte(bad)); err == nil {
			t.Errorf("%s: no error", bad)
		}
	}
	if _, err := logflareRows([]byte(`{"error":"Field x does not exist"}`)); err == nil || !strings.Contains(err.Error(), "does not exist") {
		t.Errorf("error answer: %v", err)
	}
}

func TestVictoriaLogsAnswers(t *testing.T) {
	tg := NewVLTarget("http://127.0.0.1:1")
	q := Query{LogsQL: &LogsQL{Path: vlQueryPath}}
	rows, err := tg.Rows(q, []byte("{\"_time\":\"2025-07-10T12:00:00Z\",\"_msg\":\"hi\",\"count\":\"3\"}\n\n{\"_time\":\"2025-07-10T12:01:00Z\",\"_msg\":\"yo\"}\n"))
	if err != nil || len(rows) != 2 {
		t.Fatalf("%v %v", rows, err)
	}
	if m, _ := rows[0].Str("event_message"); m != "hi" {
		t.Errorf("message %q", m)
	}
	if n, _ := rows[0].Int("count"); n != 3 {
		t.Errorf("count %d", n)
	}
	if _, ok := rows[1]["_time"]; ok {
		t.Error("_time kept")
	}
	if _, err := tg.Rows(q, []byte("{broken\n")); err == nil {
		t.Error("a broken line read")
	}
	hits := Query{LogsQL: &LogsQL{Path: vlHitsPath}}
	rows, err = tg.Rows(hits, []byte(`{"hits":[{"fields":{"a":"1"},"timestamps":["2025-07-10T12:00:00Z","2025-07-10T12:01:00Z"],"values":[2,3],"total":5},
		{"fields":{"a":"2"},"timestamps":["2025-07-10T12:01:00Z"],"values":[4],"total":4}]}`))
	if err != nil || len(rows) != 2 {
		t.Fatalf("%v %v", rows, err)
	}
	if n, _ := rows[1].Int("count"); n != 7 {
		t.Errorf("groups not added up: %d", n)
	}
	if _, err := tg.Rows(hits, []byte(`{"hits":[{"timestamps":["x"],"values":[]}]}`)); err == nil {
		t.Error("mismatched hits read")
	}
	if _, _, err := tg.Run(t.Context(), Query{Name: "studio only"}, ""); err == nil {
		t.Error("a query without LogsQL ran")
	}
}

func TestProcStatAndGCUse(t *testing.T) {
	// A command name with spaces and parentheses, as /proc shows it.
	line := "4242 (my (odd) cmd) S 1 4242 4242 0 -1 4194560 100 0 0 0 250 75 0 0 20 0 8 0 100 1000 50"
	d, err := parseProcStatCPU(line)
	if err != nil || d != 3250*time.Millisecond {
		t.Fatalf("cpu %v %v, want 3.25s", d, err)
	}
	for _, bad := range []string{"", "1 (x) S 1 2", "1 (x) S 1 2 3 4 5 6 7 8 9 x y"} {
		if _, err := parseProcStatCPU(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
	if _, err := ProcessCPU(os.Getpid()); err != nil {
		t.Fatalf("own CPU: %v", err)
	}
	before := map[string]float64{metricCPUTotal: 10, metricCPUIdle: 4, metricCPUGC: 1, metricGCCycles: 3, metricAllocs: 100}
	after := map[string]float64{metricCPUTotal: 20, metricCPUIdle: 8, metricCPUGC: 2.5, metricGCCycles: 7, metricAllocs: 500}
	u, err := gcUse(before, after)
	if err != nil || u.Share != 0.25 || u.Cycles != 4 || u.AllocBytes != 400 || u.CPUSeconds != 6 {
		t.Fatalf("%+v %v", u, err)
	}
	delete(after, metricCPUGC)
	if _, err := gcUse(before, after); err == nil {
		t.Fatal("missing metric accepted")
	}
}
