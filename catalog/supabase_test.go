package catalog

import (
	"regexp"
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

// TestLogsAllSQLShape checks the structure §5.3 fixes: nine CTEs, each over
// its source with its project filter, the optional time bounds in the
// COALESCE form, newest first; the default final SELECT.
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
		unnest := ""
		if strings.HasPrefix(s.ProjectFilter, "m.") {
			unnest = "\n  cross join unnest(t.metadata) as m"
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
		"where t.project = @project",
		"request.path as path",
		"countif(regexp_contains(path, '/rest')) as total_rest_requests",
		"countif(regexp_contains(path, '/storage')) as total_storage_requests",
		"countif(regexp_contains(path, '/auth')) as total_auth_requests",
		"countif(regexp_contains(path, '/realtime')) as total_realtime_requests",
		"datetime(ts, 'UTC') as timestamp",
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
	if strings.Contains(q, "url") && strings.Contains(q, "regexp_contains(url") {
		t.Error("project must be filtered on t.project, not on the request url")
	}
}
