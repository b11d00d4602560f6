//go:build soak && linux

package soak

import "testing"

// TestServeHelp reads both forms `sediment serve --help` has had: Go's
// flag package's and sediment's own (with environment variables).
func TestServeHelp(t *testing.T) {
	goFlags := `usage: sediment serve [flags]

  -memory-limit string
    	soft memory target; 0 turns it off (default "256MiB")
  -min-free-disk string
    	free space below which ingest is refused (default "256MiB")
  -supabase
    	Supabase mode
`
	ownFlags := `usage: sediment serve [flags]

Every flag can also be set by the environment variable shown under it.

  --max-concurrent-queries N
      queries that run at once (default: the number of cores, at least 2)
      env SEDIMENT_MAX_CONCURRENT_QUERIES
  --memory-limit SIZE
      soft memory target: heads' budget (a quarter of it); 0 turns it off (default 256MiB)
      env SEDIMENT_MEMORY_LIMIT
  --query-memory-total VALUE
      memory all queries may hold together (default half of --memory-limit, 128MiB, or 4x --query-memory without one); past it a query fails saying so
      env SEDIMENT_QUERY_MEMORY_TOTAL
  --supabase
      Supabase mode (default off, or $LOGFLARE_SUPABASE_MODE)
      env SEDIMENT_SUPABASE
`
	for _, c := range []struct {
		name, help string
		has        []string
		defaults   map[string]string
	}{
		{"flag package", goFlags, []string{"memory-limit", "min-free-disk", "supabase"},
			map[string]string{"memory-limit": "256MiB", "min-free-disk": "256MiB", "supabase": ""}},
		{"own usage", ownFlags, []string{"max-concurrent-queries", "memory-limit", "query-memory-total", "supabase"},
			map[string]string{"memory-limit": "256MiB", "max-concurrent-queries": "", "supabase": "off, or $LOGFLARE_SUPABASE_MODE",
				"query-memory-total": "half of --memory-limit, 128MiB, or 4x --query-memory without one"}},
	} {
		f := parseServeHelp(c.help)
		if len(f) != len(c.has) {
			t.Errorf("%s: %d flags, want %d: %v", c.name, len(f), len(c.has), f)
		}
		for _, n := range c.has {
			if !f.has(n) {
				t.Errorf("%s: no --%s", c.name, n)
			}
		}
		for n, want := range c.defaults {
			if got := f.defaultOf(n); got != want {
				t.Errorf("%s: default of --%s is %q, want %q", c.name, n, got, want)
			}
		}
		if size, err := parseSize(f.defaultOf("memory-limit")); err != nil || size != 256<<20 {
			t.Errorf("%s: --memory-limit's default reads as %d, %v", c.name, size, err)
		}
	}
}
