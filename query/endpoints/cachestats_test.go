package endpoints

import (
	"testing"
	"time"

	"github.com/sediment/sediment/catalog"
)

// TestCacheStats: a call a stored result answers is a hit (through
// RunEndpoint and CachedEndpoint alike), one that runs the query a miss,
// CachedEndpoint finding nothing counts nothing (the run that follows
// does), and an endpoint without caching counts in neither.
func TestCacheStats(t *testing.T) {
	f := newFixture(t, Options{})
	f.ingest("cloudflare.logs.prod", true, edge(fixtureNow.Add(-time.Minute), "default", "10.0.0.1", "/rest/v1/a", 200))
	q := str("select count(*) as n from `cloudflare.logs.prod` as t where t.project = @p")
	cached := f.endpoint(catalog.EndpointParams{Name: str("cached"), CacheDurationSeconds: num(60), Query: q})
	uncached := f.endpoint(catalog.EndpointParams{Name: str("uncached"), CacheDurationSeconds: num(0), Query: q})
	p := map[string]string{"p": "default"}
	want := func(hits, misses int64, entries int) {
		t.Helper()
		st := f.svc.CacheStats()
		if st.Hits != hits || st.Misses != misses || st.Entries != entries || (entries > 0) != (st.Bytes > 0) {
			t.Fatalf("CacheStats %+v; want %d hits, %d misses, %d entries", st, hits, misses, entries)
		}
	}
	want(0, 0, 0)
	if _, ok := f.svc.CachedEndpoint(cached, p, false); ok {
		t.Fatal("a cold cache answered")
	}
	want(0, 0, 0)
	f.rows(cached, p)
	want(0, 1, 1)
	f.rows(cached, p)
	want(1, 1, 1)
	if _, ok := f.svc.CachedEndpoint(cached, p, false); !ok {
		t.Fatal("a warm cache did not answer")
	}
	want(2, 1, 1)
	f.rows(uncached, p)
	want(2, 1, 1)
}
