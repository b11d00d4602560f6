package httpapi

import (
	"fmt"
	"net/url"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	json "github.com/goccy/go-json"

	"github.com/sediment/sediment/catalog"
)

// The seeded endpoints as Studio calls them, through the real server, on
// data with what real installations have: events without metadata in
// every source, several projects, events exactly on window boundaries,
// data both flushed to segments and still in the head.

// ingestTo posts a JSON array body to a source as Vector does.
func (ts *testServer) ingestTo(source string, body []byte) {
	ts.t.Helper()
	ts.do("POST", "/api/logs?source_name="+url.QueryEscape(source), body, "x-api-key", pubKey, "Content-Type", "application/json").
		expect(ts.t, 200, `{"message":"Logged!"}`)
}

// flushAll writes every source's head to a segment.
func (ts *testServer) flushAll() {
	ts.t.Helper()
	for _, s := range ts.cat.Sources() {
		sh, err := ts.eng.Shard(s.Token)
		if err != nil {
			ts.t.Fatal(err)
		}
		if err := sh.Flush(); err != nil {
			ts.t.Fatal(err)
		}
	}
}

// metadataOf is an event's metadata for a source's project filter: the
// project sits where logs.all looks for it.
func metadataOf(s catalog.SupabaseSource, project string) string {
	switch s.ProjectFilter {
	case "m.project_ref":
		return `{"project_ref":"` + project + `","level":"info"}`
	case "m.project":
		return `{"project":"` + project + `","level":"info","context":[{"host":"h1","pid":1}]}`
	}
	return `{"host":"db-` + project + `"}`
}

// TestLogsAllCTEsDropEventsWithoutMetadata: in every CTE but
// postgres_logs, an event without metadata is not visible (Logflare's
// seed reads them through cross join unnest(t.metadata)); postgres_logs
// shows it. Counted with Studio's count query, listed with its list query.
func TestLogsAllCTEsDropEventsWithoutMetadata(t *testing.T) {
	ts, _ := runServer(t)
	const withMeta, otherProject, bare = 4, 2, 3
	type ids struct{ with, bare []string }
	want := map[string]*ids{}
	for half := 0; half < 2; half++ {
		for si, s := range catalog.SupabaseSources() {
			var evs []string
			add := func(id, metadata, project string, k int) {
				at := studioNow.Add(-time.Duration(50-10*half-k) * time.Minute).Add(time.Duration(si) * time.Second)
				ev := `{"id":"` + id + `","event_message":"` + id + `","project":"` + project + `","timestamp":"` + at.Format(time.RFC3339Nano) + `"`
				if metadata != "" {
					ev += `,"metadata":` + metadata
				}
				evs = append(evs, ev+"}")
			}
			if want[s.CTE] == nil {
				want[s.CTE] = &ids{}
			}
			for k := 0; k < withMeta/2; k++ {
				id := fmt.Sprintf("%s-with-%d-%d", s.CTE, half, k)
				add(id, metadataOf(s, "default"), "default", k)
				want[s.CTE].with = append(want[s.CTE].with, id)
			}
			for k := 0; k < otherProject/2; k++ {
				add(fmt.Sprintf("%s-other-%d-%d", s.CTE, half, k), metadataOf(s, "other"), "other", k)
			}
			for k := 0; k < 2-half; k++ { // 3 bare events: 2 flushed, 1 in the head
				id := fmt.Sprintf("%s-bare-%d-%d", s.CTE, half, k)
				add(id, "", "default", k)
				want[s.CTE].bare = append(want[s.CTE].bare, id)
			}
			ts.ingestTo(s.Name, []byte("["+strings.Join(evs, ",")+"]"))
		}
		if half == 0 {
			ts.flushAll()
		}
	}
	start := studioNow.Add(-time.Hour).Format("2006-01-02T15:04:05.000Z")
	for _, s := range catalog.SupabaseSources() {
		w := want[s.CTE]
		if len(w.with) != withMeta || len(w.bare) != bare {
			t.Fatalf("data set: %d with metadata, %d bare", len(w.with), len(w.bare))
		}
		visible := slices.Clone(w.with)
		if s.CTE == "postgres_logs" {
			visible = append(visible, w.bare...)
		}
		sort.Strings(visible)

		count := rows(t, ts.studio("logs.all", [][2]string{{"project", "default"}, {"iso_timestamp_start", start}, {"iso_timestamp_end", ""},
			{"sql", "select count(*) as count from " + s.CTE}}))
		if got := count[0]["count"].(float64); int(got) != len(visible) {
			t.Errorf("%s: count %v, want %d", s.CTE, got, len(visible))
		}
		list := rows(t, ts.studio("logs.all", [][2]string{{"project", "default"}, {"iso_timestamp_start", start}, {"iso_timestamp_end", ""},
			{"sql", "select id, timestamp, event_message from " + s.CTE + " order by timestamp desc limit 100"}}))
		var got []string
		for _, r := range list {
			got = append(got, r["id"].(string))
		}
		sort.Strings(got)
		if !slices.Equal(got, visible) {
			t.Errorf("%s lists %v, want %v", s.CTE, got, visible)
		}
	}
}

// edgePlatformEvent is a platform-shaped edge event (Logflare's Cloudflare
// worker): the request URL names the project.
func edgePlatformEvent(id, ref, path string, at time.Time) string {
	return fmt.Sprintf(`{"id":"%s","event_message":"GET | 200 | 203.0.113.9 | %s | https://%s.supabase.co%s","metadata":{"request":{"host":"%s.supabase.co","method":"GET","path":"%s","url":"https://%s.supabase.co%s"},"response":{"status_code":200}},"project":"%s","timestamp":%d}`,
		id, id, ref, path, ref, path, ref, path, ref, at.UnixMicro())
}

// usageWindow is one @interval's window and bucket, as the endpoint's
// documentation states them.
type usageWindow struct {
	interval string
	span     time.Duration
	bucket   time.Duration
}

var usageWindows = []usageWindow{
	{"minutely", time.Hour, time.Minute},
	{"hourly", time.Hour, time.Hour},
	{"daily", 7 * 24 * time.Hour, 24 * time.Hour},
	{"1hr", time.Hour, time.Minute},
	{"1day", 24 * time.Hour, time.Hour},
	{"7day", 7 * 24 * time.Hour, 24 * time.Hour},
}

type usageRow struct {
	Timestamp string `json:"timestamp"`
	Rest      int64  `json:"total_rest_requests"`
	Storage   int64  `json:"total_storage_requests"`
	Auth      int64  `json:"total_auth_requests"`
	Realtime  int64  `json:"total_realtime_requests"`
}

// expectedUsage counts the requests of project ref at or after the window
// start, per bucket, with a row for each bucket that holds at least one of
// its requests (Logflare's seed groups the matching requests, so a bucket
// without any has no row): the endpoint's specification written as plain
// Go over the events the test sent.
func expectedUsage(w usageWindow, now time.Time, evs []sentRequest, ref string) []usageRow {
	start := now.Add(-w.span)
	rows := map[time.Time]*usageRow{}
	for _, e := range evs {
		if e.ref != ref || e.at.Before(start) {
			continue
		}
		b := e.at.Truncate(w.bucket)
		r := rows[b]
		if r == nil {
			r = &usageRow{Timestamp: b.UTC().Format("2006-01-02T15:04:05")}
			rows[b] = r
		}
		switch {
		case strings.Contains(e.path, "/rest"):
			r.Rest++
		case strings.Contains(e.path, "/storage"):
			r.Storage++
		case strings.Contains(e.path, "/auth"):
			r.Auth++
		case strings.Contains(e.path, "/realtime"):
			r.Realtime++
		}
	}
	out := []usageRow{}
	for _, r := range rows {
		out = append(out, *r)
	}
	slices.SortFunc(out, func(a, b usageRow) int { return strings.Compare(a.Timestamp, b.Timestamp) })
	return out
}

type sentRequest struct {
	ref, path string
	at        time.Time
}

func (ts *testServer) usage(project, interval string) []usageRow {
	ts.t.Helper()
	q := url.Values{"project": {project}, "interval": {interval}}
	r := ts.do("GET", "/api/endpoints/query/usage.api-counts?"+q.Encode(), nil, "x-api-key", privKey)
	if r.status != 200 {
		ts.t.Fatalf("status %d: %s", r.status, r.body)
	}
	var body struct {
		Result []usageRow `json:"result"`
		Error  any        `json:"error"`
	}
	if err := json.Unmarshal([]byte(r.body), &body); err != nil || body.Error != nil || body.Result == nil {
		ts.t.Fatalf("body %s (%v)", r.body, err)
	}
	return body.Result
}

// TestUsageAPICountsWindows: every interval Studio sends, over
// platform-shaped requests of several projects, with requests exactly on
// each window's start (counted) and a microsecond before it (not), half
// of them flushed to segments and half in the head.
func TestUsageAPICountsWindows(t *testing.T) {
	ts, _ := runServer(t)
	refs := []string{"aaaaaaaaaaaaaaaaaaaa", "bbbbbbbbbbbbbbbbbbbb", "cccccccccccccccccccc"}
	paths := []string{"/rest/v1/todos?select=*", "/storage/v1/object/public/a.png", "/auth/v1/token?grant_type=password",
		"/realtime/v1/websocket?vsn=1.0.0", "/functions/v1/hello", "/rest/v1/rpc/f"}
	var sent []sentRequest
	var body []string
	add := func(ref, path string, at time.Time) {
		id := fmt.Sprintf("r%04d", len(sent))
		sent = append(sent, sentRequest{ref, path, at})
		body = append(body, edgePlatformEvent(id, ref, path, at))
	}
	// Spread over eight days, denser in the last hour.
	for i := 0; i < 400; i++ {
		back := time.Duration(i*i) * 4 * time.Second
		if i%3 == 0 {
			back = time.Duration(i) * 9 * time.Second
		}
		add(refs[i%len(refs)], paths[(i/len(refs))%len(paths)], studioNow.Add(-back).Add(-time.Duration(i%7)*time.Millisecond))
	}
	// On each window's start, and just before it.
	for _, span := range []time.Duration{time.Hour, 24 * time.Hour, 7 * 24 * time.Hour} {
		for k, ref := range refs[:2] {
			add(ref, paths[k], studioNow.Add(-span))
			add(ref, paths[k], studioNow.Add(-span-time.Microsecond))
		}
	}
	half := len(body) / 2
	ts.ingestEdge([]byte("[" + strings.Join(body[:half], ",") + "]"))
	ts.flushAll()
	ts.ingestEdge([]byte("[" + strings.Join(body[half:], ",") + "]"))

	for _, w := range usageWindows {
		for _, ref := range refs {
			got := ts.usage(ref, w.interval)
			want := expectedUsage(w, studioNow, sent, ref)
			if !slices.Equal(got, want) {
				t.Errorf("%s, project %s:\n got %v\nwant %v", w.interval, ref, got, want)
			}
		}
	}
	// The requests on the hourly window's start are in its first bucket.
	if h := ts.usage(refs[0], "hourly"); h[0].Timestamp != "2025-07-10T11:00:00" || h[0].Rest == 0 {
		t.Errorf("hourly first bucket %v", h[0])
	}
	// @project is a regular expression on the URL: one that matches two
	// projects counts both.
	both := ts.usage("(aaaa|bbbb)", "daily")
	a, b := ts.usage(refs[0], "daily"), ts.usage(refs[1], "daily")
	sum := func(rs []usageRow) (rest, auth int64) {
		for _, r := range rs {
			rest += r.Rest
			auth += r.Auth
		}
		return
	}
	br, ba := sum(both)
	ar, aa := sum(a)
	bbr, bba := sum(b)
	if len(both) < max(len(a), len(b)) || br != ar+bbr || ba != aa+bba {
		t.Fatalf("(aaaa|bbbb) counts %v, the two projects %v and %v", both, a, b)
	}
	// An interval Studio does not send: no rows.
	for _, iv := range []string{"weekly", "", "5min"} {
		if got := ts.usage(refs[0], iv); len(got) != 0 {
			t.Errorf("interval %q: %v, want []", iv, got)
		}
	}
	// The result as Studio reads it: a zone-less UTC DATETIME and integer
	// counts (not strings, not floats).
	r := ts.do("GET", "/api/endpoints/query/usage.api-counts?interval=hourly&project="+refs[0], nil, "x-api-key", privKey)
	if !strings.HasPrefix(r.body, `{"result":[{"timestamp":"2025-07-10T11:00:00","total_rest_requests":`) || strings.Contains(r.body, ".0,") {
		t.Errorf("body %s", r.body)
	}
}

// TestUsageAPICountsSelfHosted: Kong's events carry no request URL, so
// the seeded endpoint counts nothing for them, as Logflare's does; the
// README's recipe (the management API, replacing the URL match by the
// top-level project) makes it count them. The edited SQL then survives a
// re-seed.
func TestUsageAPICountsSelfHosted(t *testing.T) {
	ts, _ := runServer(t)
	ts.ingestEdge(edgeBatch(90, studioNow.Add(-89*time.Minute), "default"))
	for _, w := range usageWindows {
		if rs := ts.usage("default", w.interval); len(rs) != 0 {
			t.Fatalf("%s: %v counted from events without a URL, want []", w.interval, rs)
		}
	}

	// The README's recipe: read the endpoint, replace the URL match, PUT it.
	var eps []struct{ Token, Name, Query string }
	if err := json.Unmarshal([]byte(ts.do("GET", "/api/endpoints", nil, "x-api-key", privKey).body), &eps); err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(eps, func(e struct{ Token, Name, Query string }) bool { return e.Name == "usage.api-counts" })
	edited := strings.Replace(eps[i].Query, "regexp_contains(request.url, @project)", "t.project = @project", 1)
	if edited == eps[i].Query {
		t.Fatal("the recipe's text is not in the seeded SQL")
	}
	put, _ := json.Marshal(map[string]string{"query": edited})
	ts.do("PUT", "/api/endpoints/"+eps[i].Token, put, "x-api-key", privKey, "Content-Type", "application/json").expect(t, 200, "")

	// edgeBatch: one request a minute over 11:01–12:30, paths cycling over
	// rest, auth, storage, realtime, rest.
	minutely := ts.usage("default", "minutely")
	if len(minutely) != 61 || minutely[0].Timestamp != "2025-07-10T11:30:00" {
		t.Fatalf("minutely: %v", minutely)
	}
	var rest, auth int64
	for _, r := range minutely {
		rest += r.Rest
		auth += r.Auth
	}
	if rest != 25 || auth != 12 {
		t.Fatalf("minutely counts rest %d auth %d, want 25 and 12: %v", rest, auth, minutely)
	}
	if other := ts.usage("another", "hourly"); len(other) != 0 {
		t.Fatalf("another project: %v", other)
	}

	if res, err := ts.cat.SeedSupabase(); err != nil || !slices.Contains(res.Customized, "usage.api-counts") {
		t.Fatalf("re-seed: %+v %v", res, err)
	}
	if ts.cat.EndpointByName("usage.api-counts").Query != edited {
		t.Fatal("a re-seed replaced the operator's SQL")
	}
}

// TestStorageContextQueries are the queries that panicked (issue 13):
// storage_logs' context, an array of records, read through logs.all's CTE
// (which has an ORDER BY) with two nested UNNESTs, in SQL and in LQL.
func TestStorageContextQueries(t *testing.T) {
	ts, _ := runServer(t)
	var evs []string
	for i := 0; i < 30; i++ {
		level := []string{"info", "warn", "error"}[i%3]
		ctx := fmt.Sprintf(`[{"host":"h%d","pid":%d}]`, i%2, 1+i%4)
		if i%5 == 0 {
			ctx = `[{"host":"h0","pid":1},{"host":"h9","pid":9}]`
		}
		at := studioNow.Add(-time.Duration(30-i) * time.Minute)
		evs = append(evs, fmt.Sprintf(`{"id":"s%02d","event_message":"m%d","metadata":{"context":%s,"level":"%s","project":"default","tenantId":"default"},"timestamp":"%s"}`,
			i, i, ctx, level, at.Format(time.RFC3339)))
		if i == 14 {
			ts.ingestTo("storage.logs.prod.2", []byte("["+strings.Join(evs, ",")+"]"))
			ts.flushAll()
			evs = nil
		}
	}
	ts.ingestTo("storage.logs.prod.2", []byte("["+strings.Join(evs, ",")+"]"))

	got := rows(t, ts.studio("logs.all", [][2]string{{"project", "default"},
		{"sql", "select c.host, c.pid from storage_logs cross join unnest(metadata) as m cross join unnest(m.context) as c"}}))
	// 30 events, six of them with two context entries.
	if len(got) != 36 {
		t.Fatalf("%d rows, want 36", len(got))
	}
	pids := map[float64]int{}
	for _, r := range got {
		pids[r["pid"].(float64)]++
	}
	// i%4 == 0 gives pid 1 (8 events, minus i = 0, 20 that have the pair)
	// plus the six pairs' first entries; pid 9 only in the pairs.
	if pids[9] != 6 || pids[1] != 6+6 {
		t.Errorf("pids %v", pids)
	}

	lql := ts.do("GET", "/api/endpoints/query/logs.all?project=default&lql="+url.QueryEscape("f:storage_logs m.context.pid:1 m.level:info"), nil, "x-api-key", privKey)
	var body struct {
		Result []map[string]any `json:"result"`
		Error  any              `json:"error"`
	}
	if lql.status != 200 || json.Unmarshal([]byte(lql.body), &body) != nil || body.Error != nil {
		t.Fatalf("lql: %d %s", lql.status, lql.body)
	}
	// info is i%3 == 0; pid 1 is i%4 == 0 or a pair (i%5 == 0):
	// i in {0, 12, 24} ∪ {15} = 4 events (each matching one context entry).
	if len(body.Result) != 4 {
		t.Fatalf("lql rows %v, want 4", body.Result)
	}
}

// TestStudioLoadOlder pages through the edge logs as Studio's "load older"
// does: the same list query, iso_timestamp_end set to the last row's
// timestamp (µs) turned into an ISO string at millisecond precision. Every
// event of the window is on some page; a page repeats only rows of the
// second its end bound names (the bound is inclusive, as in Logflare).
func TestStudioLoadOlder(t *testing.T) {
	ts, _ := runServer(t)
	// 330 Kong events, whole seconds as Vector sends them, over 55 minutes;
	// a third flushed, the rest in the head.
	var evs []string
	all := map[string]time.Time{}
	for i := 0; i < 330; i++ {
		at := studioNow.Add(-55 * time.Minute).Add(time.Duration(i*10) * time.Second)
		if i%7 == 0 {
			at = at.Add(-10 * time.Second) // same second as the one before
		}
		id := fmt.Sprintf("k%03d", i)
		all[id] = at
		evs = append(evs, fmt.Sprintf(`{"id":"%s","appname":"supabase-kong","event_message":"GET /rest/v1/t %d","metadata":{"request":{"method":"GET","path":"/rest/v1/t"},"response":{"status_code":200}},"project":"default","timestamp":"%s"}`,
			id, i, at.Format(time.RFC3339)))
	}
	ts.ingestEdge([]byte("[" + strings.Join(evs[:110], ",") + "]"))
	ts.flushAll()
	ts.ingestEdge([]byte("[" + strings.Join(evs[110:], ",") + "]"))
	// Events without metadata are not edge logs.
	ts.ingestEdge([]byte(`[{"id":"bare","event_message":"no metadata","project":"default","timestamp":"` + studioNow.Add(-time.Minute).Format(time.RFC3339) + `"}]`))

	list := "select id, edge_logs.timestamp, event_message, request.method, request.path, response.status_code\n" +
		"from edge_logs\ncross join unnest(metadata) as m\ncross join unnest(m.request) as request\n" +
		"cross join unnest(m.response) as response\norder by timestamp desc\nlimit 100"
	start := studioNow.Add(-time.Hour).Truncate(time.Hour).Format("2006-01-02T15:04:05.000Z")
	end := ""
	seen := map[string]bool{}
	prevOldest := int64(1 << 62)
	for page := 0; ; page++ {
		if page > 10 {
			t.Fatal("pagination does not end")
		}
		rs := rows(t, ts.studio("logs.all", [][2]string{{"project", "default"}, {"iso_timestamp_start", start}, {"iso_timestamp_end", end}, {"sql", list}}))
		fresh := 0
		for i, r := range rs {
			at := int64(r["timestamp"].(float64))
			if i > 0 && at > int64(rs[i-1]["timestamp"].(float64)) {
				t.Fatalf("page %d not newest first at row %d", page, i)
			}
			if at > prevOldest {
				t.Fatalf("page %d row %v is newer than the bound %d", page, r, prevOldest)
			}
			id := r["id"].(string)
			if seen[id] {
				if at != prevOldest {
					t.Fatalf("page %d repeats %s from another second than its bound", page, id)
				}
				continue
			}
			seen[id] = true
			fresh++
		}
		if len(rs) == 0 || fresh == 0 {
			break
		}
		// Studio: dayjs.utc(Number(lastRow.timestamp / 1000)).toISOString().
		last := int64(rs[len(rs)-1]["timestamp"].(float64))
		prevOldest = last
		end = time.UnixMilli(last / 1000).UTC().Format("2006-01-02T15:04:05.000Z")
	}
	if len(seen) != len(all) {
		var missing []string
		for id := range all {
			if !seen[id] {
				missing = append(missing, id)
			}
		}
		sort.Strings(missing)
		t.Fatalf("%d of %d events seen; missing %v", len(seen), len(all), missing)
	}
}
