package main

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"testing"
)

// TestWideEventThenNewField is issue 12's case through the server: one
// event with 10,000 distinct keys, then an ordinary event with a field no
// event had. Both are acknowledged; the new field is stored and found by
// SQL and by LQL while the events are in memory, after the shutdown's
// flush and restart, and the wide event keeps its first 1,000 fields
// (--max-event-fields' default).
func TestWideEventThenNewField(t *testing.T) {
	dir := t.TempDir()
	cfg := serveConfig{DataDir: dir, PrivateToken: "priv"}
	r := startWith(t, cfg, productionDeps())
	r.mustDo("POST", "/api/sources", "priv", `{"name":"wide.app"}`, 201)

	var b strings.Builder
	b.WriteString(`{"message":"wide","metadata":{`)
	for i := range 10000 {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"k%05d":%d`, i, i)
	}
	b.WriteString(`}}`)
	r.mustDo("POST", "/api/logs?source_name=wide.app", "priv", b.String(), 200)
	r.mustDo("POST", "/api/logs?source_name=wide.app", "priv", `{"message":"ordinary","metadata":{"new_field":"kept"}}`, 200)

	check := func(when string) {
		t.Helper()
		sql := "SELECT t.event_message AS msg, m.new_field AS nf FROM `wide.app` AS t CROSS JOIN UNNEST(t.metadata) AS m WHERE m.new_field = 'kept'"
		var res struct {
			Result []map[string]any `json:"result"`
			Error  any              `json:"error"`
		}
		body := r.mustDo("GET", "/api/query?sql="+url.QueryEscape(sql), "priv", "", 200)
		if err := json.Unmarshal([]byte(body), &res); err != nil || res.Error != nil || len(res.Result) != 1 ||
			res.Result[0]["msg"] != "ordinary" || res.Result[0]["nf"] != "kept" {
			t.Fatalf("%s: SQL: %s", when, body)
		}
		body = r.mustDo("GET", "/api/sources/wide.app/search?lql="+url.QueryEscape(`m.new_field:kept`), "priv", "", 200)
		res.Result = nil
		if err := json.Unmarshal([]byte(body), &res); err != nil || res.Error != nil || len(res.Result) != 1 || res.Result[0]["event_message"] != "ordinary" {
			t.Fatalf("%s: LQL: %s", when, body)
		}
		// The wide event kept metadata and its first 999 keys.
		for _, f := range []struct {
			key  string
			want int
		}{{"k00000", 1}, {"k00998", 1}, {"k00999", 0}, {"k09999", 0}} {
			sql := fmt.Sprintf("SELECT count(*) AS n FROM `wide.app` AS t CROSS JOIN UNNEST(t.metadata) AS m WHERE m.%s IS NOT NULL", f.key)
			body := r.mustDo("GET", "/api/query?sql="+url.QueryEscape(sql), "priv", "", 200)
			if !strings.Contains(body, fmt.Sprintf(`"n":%d`, f.want)) {
				t.Fatalf("%s: %s of the wide event: %s, want %d", when, f.key, body, f.want)
			}
		}
	}
	check("in memory")
	sh, err := r.a.eng.Shard(r.a.cat.SourceByName("wide.app").Token)
	if err != nil {
		t.Fatal(err)
	}
	if fd := sh.FieldDrops(); fd.EventsOverCap != 1 || fd.FieldsOverCap != 10001-1000 || fd.Unstorable != 0 {
		t.Fatalf("field counts: %+v", fd)
	}
	if err := r.stop(); err != nil { // flushes
		t.Fatal(err)
	}
	r = startWith(t, cfg, productionDeps())
	check("flushed and restarted")
	sh, err = r.a.eng.Shard(r.a.cat.SourceByName("wide.app").Token)
	if err != nil {
		t.Fatal(err)
	}
	if in := sh.Info(); in.Segments == 0 || in.HeadRows != 0 {
		t.Fatalf("after restart the events should be in a segment: %+v", in)
	}
}
