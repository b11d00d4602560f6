package main

import (
	"bytes"
	"strings"
	"testing"
)

// TestQueryLocalTool: `sediment query` runs `select *`, runs SQL over an
// endpoint's CTEs, and prints timestamps as UTC next to the microseconds.
func TestQueryLocalTool(t *testing.T) {
	dir := t.TempDir()
	r := start(t, serveConfig{DataDir: dir, PrivateToken: "k"})
	r.mustDo("POST", "/api/sources", "k", `{"name":"app.logs"}`, 201)
	r.mustDo("POST", "/api/logs?source_name=app.logs", "k",
		`[{"message":"boom","timestamp":1752148805123456,"metadata":{"level":"error"}},{"message":"fine","timestamp":1752148806000000,"metadata":{"level":"info"}}]`, 200)
	r.mustDo("POST", "/api/endpoints", "k", `{"name":"by.level","query":"with lv as (select t.timestamp, t.event_message, m.level from `+"`app.logs`"+` t cross join unnest(t.metadata) m where m.level = @level) select event_message from lv"}`, 201)

	var out, errb bytes.Buffer
	if code := runQuery([]string{"--data-dir", dir, "select * from `app.logs` order by timestamp"}, &out, &errb); code != 0 {
		t.Fatalf("select *: %d %s", code, errb.String())
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 3 || strings.Join(strings.Fields(lines[0]), " ") != "timestamp id event_message metadata" {
		t.Fatalf("select * output:\n%s", out.String())
	}
	if !strings.Contains(lines[1], "1752148805123456 (2025-07-10T12:00:05.123456Z)") || !strings.Contains(lines[1], `[{"level":"error"}]`) {
		t.Fatalf("row %q: want the UTC time beside the microseconds, and the metadata", lines[1])
	}

	out.Reset()
	code := runQuery([]string{"--data-dir", dir, "--endpoint", "by.level", "--param", "level=info", "select * from lv"}, &out, &errb)
	if code != 0 {
		t.Fatalf("--endpoint: %d %s", code, errb.String())
	}
	if !strings.Contains(out.String(), "fine") || strings.Contains(out.String(), "boom") || !strings.Contains(out.String(), "(2025-07-10T12:00:06.000000Z)") {
		t.Fatalf("--endpoint output:\n%s", out.String())
	}
	out.Reset()
	if code := runQuery([]string{"--data-dir", dir, "--explain", "--endpoint", "by.level", "--param", "level=info", "select * from lv"}, &out, &errb); code != 0 || out.Len() == 0 {
		t.Fatalf("--explain --endpoint: %d %s", code, errb.String())
	}
}
