package bench

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// LogsQL is a query as VictoriaLogs takes it: an HTTP API path under
// /select/logsql/ and its arguments.
type LogsQL struct {
	// Path is "/select/logsql/query" (JSON lines, one per log entry or
	// stats row) or "/select/logsql/hits" (counts per time bucket).
	Path string
	// Query is the LogsQL text; Args the other arguments (limit, start,
	// end, step).
	Query string
	Args  map[string]string
}

const (
	vlQueryPath = "/select/logsql/query"
	vlHitsPath  = "/select/logsql/hits"
)

// The peers suite's query names, as reports show them.
const (
	PeersQ1 = "Q1 count status_code = 500"
	PeersQ2 = "Q2 newest 100 of one project, 1h"
	PeersQ3 = "Q3 hourly api counts of one project, 7d, url regex"
	PeersQ4 = "Q4 per-minute counts, 1h"
	PeersQ5 = "Q5 rare token, newest 1000, all fields"
	PeersQ6 = "Q6 top 10 paths, all data"
)

// PeersSuite returns the six queries of issue 14, each with its
// VictoriaLogs form and a check of the answer against tr, the generator's
// truth. Sediment gets them as its users send them: logs.all (Studio's
// landing page and a sandboxed sql=) for the project-scoped Q2 and Q3,
// ad-hoc SQL (GET /api/query) for the queries over every project.
// VictoriaLogs gets the equivalent LogsQL over /select/logsql/query, and
// /select/logsql/hits for the per-minute counts. Every window is
// (start, end], as logs.all's.
func PeersSuite(tr *Truth) []Query {
	sp := tr.Spec
	now := sp.Now.UTC()
	hour, week := now.Add(-time.Hour), now.Add(-peersQ3Span)
	vlRange := func(start time.Time) string {
		return "_time:>" + start.Format(time.RFC3339Nano) + " _time:<=" + now.Format(time.RFC3339Nano)
	}
	stream := `{project=` + strconv.Quote(sp.Project) + `}`
	logsAll := func(start time.Time, sql string) map[string]string {
		p := map[string]string{"project": sp.Project, "iso_timestamp_start": isoMillis(start), "iso_timestamp_end": isoMillis(now)}
		if sql != "" {
			p["sql"] = sql
		}
		return p
	}
	sqlTime := func(t time.Time) string { return "cast('" + t.Format(time.RFC3339Nano) + "' as timestamp)" }

	var q3sql, q3vl strings.Builder
	q3sql.WriteString("select timestamp_trunc(t.timestamp, hour) as timestamp")
	q3vl.WriteString(stream + " " + vlRange(week) + " metadata.request.url:~" + strconv.Quote(peersURLRegex) + " | stats by (_time:1h)")
	for i, re := range peersPathRegexes {
		fmt.Fprintf(&q3sql, ",\n  countif(regexp_contains(request.path, '%s')) as %s", re[0], re[1])
		if i > 0 {
			q3vl.WriteByte(',')
		}
		fmt.Fprintf(&q3vl, " count() if (metadata.request.path:~%s) as %s", strconv.Quote(re[0]), re[1])
	}
	q3sql.WriteString("\nfrom edge_logs t\ncross join unnest(t.metadata) as m\ncross join unnest(m.request) as request\n" +
		"where regexp_contains(request.url, '" + peersURLRegex + "')\ngroup by timestamp\norder by timestamp")
	q3vl.WriteString(" | sort by (_time)")

	return []Query{
		{
			Name: PeersQ1,
			SQL: "select count(*) as count from `cloudflare.logs.prod` as t\n" +
				"cross join unnest(t.metadata) as m\ncross join unnest(m.response) as response\nwhere response.status_code = 500",
			LogsQL: &LogsQL{Path: vlQueryPath, Query: `metadata.response.status_code:=500 | stats count() as count`},
			Check:  tr.checkCount,
		},
		{
			// Studio's landing page: logs.all's own query, the newest 100
			// edge events with every field.
			Name:     PeersQ2,
			Endpoint: "logs.all",
			Params:   logsAll(hour, ""),
			LogsQL:   &LogsQL{Path: vlQueryPath, Query: stream + " " + vlRange(hour), Args: map[string]string{"limit": strconv.Itoa(peersNewest)}},
			Check:    tr.checkProjectNewest,
		},
		{
			Name:     PeersQ3,
			Endpoint: "logs.all",
			Params:   logsAll(week, q3sql.String()),
			LogsQL:   &LogsQL{Path: vlQueryPath, Query: q3vl.String()},
			Check:    tr.checkHourly,
		},
		{
			Name: PeersQ4,
			SQL: "select timestamp_trunc(t.timestamp, minute) as timestamp, count(*) as count\nfrom `cloudflare.logs.prod` as t\n" +
				"where cast(t.timestamp as timestamp) > " + sqlTime(hour) + " and cast(t.timestamp as timestamp) <= " + sqlTime(now) +
				"\ngroup by timestamp\norder by timestamp",
			LogsQL: &LogsQL{Path: vlHitsPath, Query: vlRange(hour), Args: map[string]string{
				"start": hour.Format(time.RFC3339Nano), "end": now.Format(time.RFC3339Nano), "step": "1m"}},
			Check: tr.checkMinutely,
		},
		{
			Name: PeersQ5,
			SQL: "select id, timestamp, event_message, metadata, project from `cloudflare.logs.prod`\n" +
				"where regexp_contains(event_message, '" + sp.Token + "')\norder by timestamp desc\nlimit " + strconv.Itoa(peersRareMax),
			LogsQL: &LogsQL{Path: vlQueryPath, Query: sp.Token, Args: map[string]string{"limit": strconv.Itoa(peersRareMax)}},
			Check:  tr.checkRare,
		},
		{
			Name: PeersQ6,
			SQL: "select request.path as path, count(*) as count from `cloudflare.logs.prod` as t\n" +
				"cross join unnest(t.metadata) as m\ncross join unnest(m.request) as request\n" +
				"group by path\norder by count desc\nlimit " + strconv.Itoa(peersTopN),
			LogsQL: &LogsQL{Path: vlQueryPath, Query: "* | stats by (metadata.request.path) count() as count | sort by (count desc) | limit " +
				strconv.Itoa(peersTopN) + " | rename metadata.request.path as path"},
			Check: tr.checkTopPaths,
		},
	}
}

// checkCount: Q1's one row holds the number of status 500 events.
func (t *Truth) checkCount(rows []Row) error {
	if len(rows) != 1 {
		return wrongf("%d rows, want 1", len(rows))
	}
	n, err := rows[0].Int("count")
	if err != nil {
		return wrongf("%v", err)
	}
	if n != t.Status500 {
		return wrongf("count %d, the generator made %d", n, t.Status500)
	}
	return nil
}

// checkEvents compares the times of returned events with want (newest
// first) and checks that each row is a whole event: its message and a
// field of its metadata.
func checkEvents(rows []Row, want []int64, token string) error {
	if len(rows) != len(want) {
		return wrongf("%d events, the generator made %d", len(rows), len(want))
	}
	got := make([]int64, len(rows))
	for i, r := range rows {
		ts, err := r.Time("timestamp")
		if err != nil {
			return wrongf("row %d: %v", i, err)
		}
		got[i] = ts
		msg, err := r.Str("event_message")
		if err != nil {
			return wrongf("row %d: %v", i, err)
		}
		if token != "" && !strings.Contains(msg, token) {
			return wrongf("row %d: message %q lacks %q", i, msg, token)
		}
		if _, err := r.Str("metadata.request.path"); err != nil {
			return wrongf("row %d is not the whole event: %v", i, err)
		}
	}
	// Servers break ties between equal times differently; compare the
	// times as sets, newest first.
	slices.SortFunc(got, func(a, b int64) int { return int(sign(b - a)) })
	for i := range got {
		if got[i] != want[i] {
			return wrongf("event %d (newest first) at %s, the generator's at %s", i, microTime(got[i]), microTime(want[i]))
		}
	}
	return nil
}

func microTime(us int64) string { return time.UnixMicro(us).UTC().Format(time.RFC3339Nano) }

// checkProjectNewest: Q2 returns the project's newest events of the hour.
func (t *Truth) checkProjectNewest(rows []Row) error {
	return checkEvents(rows, t.ProjectNewest, "")
}

// checkRare: Q5 returns the events with the token, newest first.
func (t *Truth) checkRare(rows []Row) error {
	return checkEvents(rows, t.Rare[:min(len(t.Rare), peersRareMax)], t.Spec.Token)
}

// checkHourly: Q3 has one row per hour with matching events, and each of
// its four counts.
func (t *Truth) checkHourly(rows []Row) error {
	if len(rows) != len(t.Hourly) {
		return wrongf("%d hours, the generator's events fall in %d", len(rows), len(t.Hourly))
	}
	for i, r := range rows {
		h, err := r.Time("timestamp")
		if err != nil {
			return wrongf("row %d: %v", i, err)
		}
		want, ok := t.Hourly[h]
		if !ok {
			return wrongf("row %d: hour %s has no matching event", i, microTime(h))
		}
		for k, re := range peersPathRegexes {
			n, err := r.Int(re[1])
			if err != nil {
				return wrongf("row %d: %v", i, err)
			}
			if n != want[k] {
				return wrongf("hour %s: %s %d, the generator made %d", microTime(h), re[1], n, want[k])
			}
		}
	}
	return nil
}

// checkMinutely: Q4 counts the events of each minute of the last hour
// (a minute reported with 0 events is the same as one left out).
func (t *Truth) checkMinutely(rows []Row) error {
	seen := 0
	for i, r := range rows {
		n, err := r.Int("count")
		if err != nil {
			return wrongf("row %d: %v", i, err)
		}
		if n == 0 {
			continue
		}
		m, err := r.Time("timestamp")
		if err != nil {
			return wrongf("row %d: %v", i, err)
		}
		if want := t.Minutely[m]; n != want {
			return wrongf("minute %s: %d events, the generator made %d", microTime(m), n, want)
		}
		seen++
	}
	if seen != len(t.Minutely) {
		return wrongf("%d minutes with events, the generator's fall in %d", seen, len(t.Minutely))
	}
	return nil
}

// checkTopPaths: Q6's rows are paths with their true counts, and the
// counts are the largest (paths tied at the cut may be any of them).
func (t *Truth) checkTopPaths(rows []Row) error {
	top := t.TopPaths(peersTopN)
	if len(rows) != len(top) {
		return wrongf("%d paths, want %d", len(rows), len(top))
	}
	for i, r := range rows {
		p, err := r.Str("path")
		if err != nil {
			return wrongf("row %d: %v", i, err)
		}
		n, err := r.Int("count")
		if err != nil {
			return wrongf("row %d: %v", i, err)
		}
		if want := t.Paths[p]; n != want {
			return wrongf("path %s: %d events, the generator made %d", p, n, want)
		}
		if n != top[i].Count {
			return wrongf("row %d: %s with %d events, but the %d. most frequent path has %d", i, p, n, i+1, top[i].Count)
		}
	}
	return nil
}
