package endpoints

import (
	"testing"
	"time"

	"github.com/sediment/sediment/catalog"
)

// TestCacheNeverShowsExpiredEvents caches an endpoint's count over a
// source with a one-day retention, then lets time pass until one of the
// counted events is older than the retention: the cached answer must not
// be served any more (it would show the expired event), although its
// cache_duration_seconds has not ended. An answer over events far from the
// cutoff stays cached.
func TestCacheNeverShowsExpiredEvents(t *testing.T) {
	f := newFixture(t, Options{})
	const source = "cloudflare.logs.prod"
	src := f.cat.SourceByName(source)
	if _, err := f.cat.UpdateSource(src.Token, catalog.SourceParams{RetentionDays: num(1)}); err != nil {
		t.Fatal(err)
	}
	sh, err := f.eng.Shard(src.Token)
	if err != nil {
		t.Fatal(err)
	}
	sh.SetRetentionDays(1) // as the server does on the catalog change
	f.ingest(source, true,
		edge(fixtureNow.Add(-23*time.Hour), "default", "10.0.0.1", "/rest/v1/a", 200),
		edge(fixtureNow.Add(-time.Hour), "default", "10.0.0.2", "/rest/v1/b", 200))
	all := f.endpoint(catalog.EndpointParams{Name: str("all"), CacheDurationSeconds: num(3 * 3600), ProactiveRequeryingSeconds: num(0),
		Query: str("select count(*) as n from `cloudflare.logs.prod` as t")})
	lastHours := f.endpoint(catalog.EndpointParams{Name: str("recent"), CacheDurationSeconds: num(3 * 3600), ProactiveRequeryingSeconds: num(0),
		Query: str("select count(*) as n from `cloudflare.logs.prod` as t where t.timestamp > '2025-07-10T09:00:00Z'")})
	n := func(ep *catalog.Endpoint) float64 { return f.rows(ep, nil)[0]["n"].(float64) }
	if n(all) != 2 || n(lastHours) != 1 {
		t.Fatal("first run")
	}
	runs := f.svc.Executions()
	f.clk.advance(2 * time.Hour) // the first event is now 25 hours old
	f.svc.Tick()
	if got := n(all); got != 1 {
		t.Fatalf("after the first event expired, the endpoint answers %v (a cached answer showing it)", got)
	}
	if n(lastHours) != 1 || f.svc.Executions() != runs+1 {
		t.Fatalf("an answer over events far from the cutoff was not served from the cache: %d runs", f.svc.Executions()-runs)
	}
}
