package catalog

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/sediment/sediment/internal/vfs"
)

func TestSeedSupabaseIsIdempotent(t *testing.T) {
	fs := vfs.NewMemFS()
	c := openMem(t, fs)
	res, err := c.SeedSupabase()
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Sources) != 9 || len(res.Endpoints) != 2 {
		t.Fatalf("seeded %d sources, %d endpoints", len(res.Sources), len(res.Endpoints))
	}
	wantNames := []string{"cloudflare.logs.prod", "postgres.logs", "deno-relay-logs", "deno-subhosting-events",
		"gotrue.logs.prod", "realtime.logs.prod", "storage.logs.prod.2", "postgREST.logs.prod", "pgbouncer.logs.prod"}
	for i, s := range c.Sources() {
		if s.Name != wantNames[i] || c.SourceByName(wantNames[i]) != s {
			t.Fatalf("source %d is %q, want %q", i, s.Name, wantNames[i])
		}
		// The edge logs are ordered by project, the others by time.
		if want := map[bool]string{true: "project"}[s.Name == "cloudflare.logs.prod"]; s.SortKey != want {
			t.Fatalf("source %s seeded with sort key %q, want %q", s.Name, s.SortKey, want)
		}
	}
	snapshot := func(c *Catalog) (string, string) {
		var s, e []string
		for _, x := range c.Sources() {
			s = append(s, x.Token+"="+x.Name)
		}
		for _, x := range c.Endpoints() {
			e = append(e, x.Token+"="+x.Name)
		}
		return strings.Join(s, ","), strings.Join(e, ",")
	}
	s0, e0 := snapshot(c)

	// Again in the same process, then after a restart: nothing new.
	if res, err = c.SeedSupabase(); err != nil || len(res.Sources)+len(res.Endpoints) != 0 {
		t.Fatalf("second seed created %+v (%v)", res, err)
	}
	c = openMem(t, fs.CrashClone())
	if res, err = c.SeedSupabase(); err != nil || len(res.Sources)+len(res.Endpoints) != 0 {
		t.Fatalf("seed after restart created %+v (%v)", res, err)
	}
	if s1, e1 := snapshot(c); s1 != s0 || e1 != e0 {
		t.Fatalf("catalog changed across restart:\n%s\n%s", s1, e1)
	}

	// A deleted seeded source comes back (with a new token); a changed
	// endpoint is left alone.
	old := c.SourceByName("postgres.logs")
	if _, err := c.DeleteSource(old.Token); err != nil {
		t.Fatal(err)
	}
	ep := c.EndpointByName("logs.all")
	if _, err := c.UpdateEndpoint(ep.Token, EndpointParams{MaxLimit: ptr(50)}); err != nil {
		t.Fatal(err)
	}
	res, err = c.SeedSupabase()
	if err != nil || len(res.Sources) != 1 || res.Sources[0].Name != "postgres.logs" || res.Sources[0].Token == old.Token || len(res.Endpoints) != 0 {
		t.Fatalf("reseed: %+v %v", res, err)
	}
	if c.EndpointByName("logs.all").MaxLimit != 50 {
		t.Fatal("seeding overwrote an operator's change")
	}
}

func TestSupabaseEndpointSettings(t *testing.T) {
	c := openMem(t, vfs.NewMemFS())
	if _, err := c.SeedSupabase(); err != nil {
		t.Fatal(err)
	}
	type settings struct {
		sandboxable              bool
		maxLimit, cache, requery int
		lang                     string
		enableAuth, redact       bool
	}
	want := map[string]settings{
		"logs.all":         {true, 1000, 0, 1800, "bq_sql", true, false},
		"usage.api-counts": {true, 1000, 900, 300, "bq_sql", true, false},
	}
	for name, w := range want {
		e := c.EndpointByName(name)
		if e == nil {
			t.Fatalf("%s not seeded", name)
		}
		got := settings{e.Sandboxable, e.MaxLimit, e.CacheDurationSeconds, e.ProactiveRequeryingSeconds, e.Language, e.EnableAuth, e.RedactPII}
		if got != w {
			t.Errorf("%s: %+v, want %+v", name, got, w)
		}
	}
}

// TestLogsAllSQLShape checks the structure docs/compat/supabase.md §4.1
// gives it: nine CTEs, each over its source with its project filter, the
// optional time bounds in the COALESCE form, newest first; the default
// final SELECT.
func TestLogsAllSQLShape(t *testing.T) {
	q := mustSQL("logs.all.sql")
	ctes := regexp.MustCompile(`(?s)(\w+) as \(\s*(.*?)\n\)`).FindAllStringSubmatch(q, -1)
	srcs := SupabaseSources()
	if len(ctes) != len(srcs) {
		t.Fatalf("%d CTEs, want %d", len(ctes), len(srcs))
	}
	for i, s := range srcs {
		name, body := ctes[i][1], ctes[i][2]
		if name != s.CTE {
			t.Fatalf("CTE %d is %s, want %s", i, name, s.CTE)
		}
		// Every CTE but postgres_logs drops events without metadata, as
		// Logflare's seed does.
		unnest := "\n  cross join unnest(t.metadata) as m"
		if s.CTE == "postgres_logs" {
			unnest = ""
		}
		want := "select t.timestamp, t.id, t.event_message, t.metadata\n" +
			"  from `" + s.Name + "` as t" + unnest + "\n" +
			"  where " + s.ProjectFilter + " = @project\n" +
			"    and CASE WHEN COALESCE(@iso_timestamp_start, '') = '' THEN TRUE ELSE cast(t.timestamp as timestamp) > cast(@iso_timestamp_start as timestamp) END\n" +
			"    and CASE WHEN COALESCE(@iso_timestamp_end, '') = '' THEN TRUE ELSE cast(t.timestamp as timestamp) <= cast(@iso_timestamp_end as timestamp) END\n" +
			"  order by cast(t.timestamp as timestamp) desc"
		if body != want {
			t.Errorf("CTE %s:\n%s\nwant:\n%s", name, body, want)
		}
	}
	if !strings.HasSuffix(q, "\nSELECT id, timestamp, event_message, metadata FROM edge_logs LIMIT 100") {
		t.Fatal("default final select missing")
	}
}

func TestUsageAPICountsSQLShape(t *testing.T) {
	q := mustSQL("usage.api-counts.sql")
	for _, must := range []string{
		"from `cloudflare.logs.prod` as t",
		// The project is a regular expression on the request URL, and the
		// window start is counted (docs/compat/supabase.md §4.2).
		"where regexp_contains(request.url, @project)",
		"and t.timestamp >= CASE",
		"countif(regexp_contains(request.path, '/rest')) as total_rest_requests",
		"countif(regexp_contains(request.path, '/storage')) as total_storage_requests",
		"countif(regexp_contains(request.path, '/auth')) as total_auth_requests",
		"countif(regexp_contains(request.path, '/realtime')) as total_realtime_requests",
		"END, 'UTC') as timestamp",
		"group by timestamp",
		"order by timestamp",
		"WHEN @interval = 'hourly' THEN timestamp_sub(current_timestamp(), interval 1 hour)",
		"WHEN @interval IN ('daily', '7day') THEN timestamp_sub(current_timestamp(), interval 7 day)",
		"WHEN @interval IN ('minutely', '1hr') THEN timestamp_sub(current_timestamp(), interval 60 minute)",
		"WHEN @interval = '1day' THEN timestamp_sub(current_timestamp(), interval 24 hour)",
	} {
		if !strings.Contains(q, must) {
			t.Errorf("usage.api-counts lacks %q", must)
		}
	}
	if strings.Contains(q, "t.project") {
		t.Error("the project must be matched on the request URL, not on t.project")
	}
}

// currentSeedDigests pins the seeded SQL texts. When a seeded SQL file
// changes, an existing data directory still holds the previous text:
// SeedSupabase upgrades it only if supersededSeedSQL lists that text's
// digest. This test fails on a change until both are updated.
var currentSeedDigests = map[string]string{
	"logs.all":         "66d9903199ca79bbb3105cedc0113739515c7019f046e1ca27fc0d2ef5c17e82",
	"usage.api-counts": "40ac1ff75c90831949972161e9a537496d06f411e155cae4c702d4cdea5a7746",
}

func TestSeedSQLHistory(t *testing.T) {
	for _, p := range SupabaseEndpoints() {
		name, got := *p.Name, seedDigest(*p.Query)
		if want := currentSeedDigests[name]; got != want {
			t.Errorf("the seeded SQL of %s changed: add %s (its previous digest) to supersededSeedSQL[%q], "+
				"so that existing installations are upgraded, and set currentSeedDigests[%q] to %s", name, want, name, name, got)
		}
		if slices.Contains(supersededSeedSQL[name], got) {
			t.Errorf("the current SQL of %s is listed as superseded", name)
		}
	}
}

// TestSeedUpgradesUneditedSQL: a data directory seeded by an earlier
// version gets the current SQL for the endpoints whose query nobody
// edited; an edited query stays, and so do the other settings.
func TestSeedUpgradesUneditedSQL(t *testing.T) {
	fs := vfs.NewMemFS()
	c := openMem(t, fs)
	if _, err := c.SeedSupabase(); err != nil {
		t.Fatal(err)
	}
	// Make the directory look as an earlier version left it: logs.all with
	// superseded SQL (and a changed max_limit), usage.api-counts edited.
	oldLogsAll := supersededText(t, "logs.all")
	la := c.EndpointByName("logs.all")
	if _, err := c.UpdateEndpoint(la.Token, EndpointParams{Query: ptr(oldLogsAll + "\n"), MaxLimit: ptr(500)}); err != nil {
		t.Fatal(err)
	}
	custom := "select 1 as x"
	ua := c.EndpointByName("usage.api-counts")
	if _, err := c.UpdateEndpoint(ua.Token, EndpointParams{Query: ptr(custom)}); err != nil {
		t.Fatal(err)
	}

	fs = fs.CrashClone()
	c = openMem(t, fs) // a restart on the new version
	var notified []Change
	c.Subscribe(func(ch Change) { notified = append(notified, ch) })
	res, err := c.SeedSupabase()
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Upgraded) != 1 || res.Upgraded[0].Name != "logs.all" || !slices.Equal(res.Customized, []string{"usage.api-counts"}) {
		t.Fatalf("upgraded %v, customized %v", res.Upgraded, res.Customized)
	}
	got := c.EndpointByName("logs.all")
	if got.Query != mustSQL("logs.all.sql") || got.Token != la.Token || got.MaxLimit != 500 {
		t.Fatalf("logs.all after upgrade: token %s max_limit %d, query current: %v", got.Token, got.MaxLimit, got.Query == mustSQL("logs.all.sql"))
	}
	if c.EndpointByName("usage.api-counts").Query != custom {
		t.Fatal("an operator's SQL was replaced")
	}
	if len(notified) != 1 || notified[0].Kind != EndpointUpdated || notified[0].OldEndpoint.Query == got.Query {
		t.Fatalf("changes notified: %+v", notified)
	}

	// Once upgraded, a restart changes nothing.
	c = openMem(t, fs.CrashClone())
	if res, err = c.SeedSupabase(); err != nil || len(res.Upgraded) != 0 {
		t.Fatalf("second start upgraded %v (%v)", res.Upgraded, err)
	}
}

// supersededText is the text of an earlier seed of the endpoint, read from
// the files kept for this test.
func supersededText(t *testing.T, name string) string {
	b, err := os.ReadFile("testdata/superseded/" + name + ".1.sql")
	if err != nil {
		t.Fatal(err)
	}
	q := string(b)
	if !slices.Contains(supersededSeedSQL[name], seedDigest(q)) {
		t.Fatalf("testdata/superseded/%s.1.sql is not a superseded seed", name)
	}
	return q
}
