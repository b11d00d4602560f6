package httpapi

import (
	"fmt"
	"testing"
	"time"
)

// studioPageQueries are the queries Studio's log pages send for each table
// (list, new-rows counter, chart), with the joins its self-hosted query
// builder adds per table and a filter on a joined field.
func studioPageQueries() map[string]string {
	tables := []struct{ name, joins, fields, where string }{
		{"edge_logs", "cross join unnest(metadata) as m cross join unnest(m.request) as request cross join unnest(m.response) as response",
			"request.method, request.path, response.status_code", "response.status_code >= 500"},
		{"postgres_logs", "cross join unnest(metadata) as m cross join unnest(m.parsed) as parsed",
			"parsed.error_severity, parsed.user_name", "parsed.error_severity in ('ERROR', 'FATAL', 'PANIC')"},
		{"function_logs", "cross join unnest(metadata) as metadata",
			"metadata.event_type, metadata.function_id, metadata.level", "metadata.function_id = 'f1'"},
		{"function_edge_logs", "cross join unnest(metadata) as m cross join unnest(m.response) as response cross join unnest(m.request) as request",
			"response.status_code, request.method, m.function_id", "`function_id` = 'f1'"},
		{"auth_logs", "cross join unnest(metadata) as metadata",
			"metadata.level, metadata.status, metadata.path, metadata.msg as msg", "metadata.level = 'error'"},
		{"realtime_logs", "cross join unnest(metadata) as m", "m.level", "m.level = 'error'"},
		{"storage_logs", "cross join unnest(metadata) as m cross join unnest(m.context) as context", "m.level, context.host", "m.level = 'error'"},
		{"postgrest_logs", "", "metadata", "regexp_contains(event_message, 'error')"},
		{"pgbouncer_logs", "", "metadata", "regexp_contains(event_message, 'error')"},
	}
	qs := map[string]string{}
	for _, tb := range tables {
		qs[tb.name+" list"] = fmt.Sprintf("select id, %s.timestamp, event_message, %s from %s %s where (%s) order by timestamp desc limit 100",
			tb.name, tb.fields, tb.name, tb.joins, tb.where)
		qs[tb.name+" count"] = fmt.Sprintf("select count(*) as count from %s %s where (%s)", tb.name, tb.joins, tb.where)
		qs[tb.name+" chart"] = fmt.Sprintf("select timestamp_trunc(t.timestamp, minute) as timestamp, count(t.timestamp) as count from %s t group by timestamp order by timestamp asc", tb.name)
	}
	return qs
}

// A fresh self-hosted install has sources without events (edge functions
// nobody deployed, a pooler nobody uses): every Studio log page must
// answer with no rows, not an error — whether no source has events yet or
// only some have.
func TestStudioPagesWithoutEvents(t *testing.T) {
	ts, _ := runServer(t)
	check := func(stage string) {
		t.Helper()
		for name, sql := range studioPageQueries() {
			body := ts.studio("logs.all", [][2]string{{"project", "default"},
				{"iso_timestamp_start", "2025-07-10T11:00:00.000Z"}, {"iso_timestamp_end", ""}, {"sql", sql}})
			if e, ok := body["error"]; ok {
				t.Errorf("%s, %s: error %v\n%s", stage, name, e, sql)
				continue
			}
			rs := rows(t, body)
			switch {
			case len(name) > 6 && name[len(name)-6:] == " count":
				if len(rs) != 1 || rs[0]["count"].(float64) != 0 && stage == "no events" {
					t.Errorf("%s, %s: %v, want one row of 0", stage, name, rs)
				}
			case stage == "no events" && len(rs) != 0:
				t.Errorf("%s, %s: %d rows, want none", stage, name, len(rs))
			}
		}
	}
	check("no events")
	// usage.api-counts: no requests, no rows.
	for _, iv := range []string{"minutely", "hourly", "daily", "1hr", "1day", "7day"} {
		if rs := ts.usage("default", iv); len(rs) != 0 {
			t.Errorf("usage.api-counts %s without events: %v, want []", iv, rs)
		}
	}
	// Edge logs arrive; the other sources stay empty.
	ts.ingestEdge(edgeBatch(20, studioNow.Add(-10*time.Minute), "default"))
	check("edge logs only")
}
