package catalog_test

import (
	"reflect"
	"testing"

	"github.com/sediment/sediment/catalog"
	"github.com/sediment/sediment/sql/parser"
)

// TestSeededSQLValidates runs the seeded endpoints through the SQL parser
// and validator the server uses: they parse, reference only the Supabase
// sources, and declare the parameters Studio sends.
func TestSeededSQLValidates(t *testing.T) {
	known := map[string]bool{}
	var ctes []string
	for _, s := range catalog.SupabaseSources() {
		known[s.Name] = true
		ctes = append(ctes, s.CTE)
	}
	opts := parser.ValidateOptions{KnownSource: func(n string) bool { return known[n] }}
	wantParams := map[string][]string{
		"logs.all":         {"project", "iso_timestamp_start", "iso_timestamp_end"},
		"usage.api-counts": {"interval", "project"},
	}
	for _, ep := range catalog.SupabaseEndpoints() {
		q, err := parser.Validate(*ep.Query, opts)
		if err != nil {
			t.Fatalf("%s: %v", *ep.Name, err)
		}
		if got := parser.Parameters(q); !reflect.DeepEqual(got, wantParams[*ep.Name]) {
			t.Errorf("%s parameters %v, want %v", *ep.Name, got, wantParams[*ep.Name])
		}
		if *ep.Name != "logs.all" {
			continue
		}
		var names []string
		for _, c := range q.With.CTEs {
			names = append(names, c.Name.Name)
		}
		if !reflect.DeepEqual(names, ctes) {
			t.Errorf("logs.all CTEs %v, want %v", names, ctes)
		}
		// Studio's typical sandboxed query over the CTEs is accepted.
		if _, err := parser.Sandbox(*ep.Query, "select id, timestamp, event_message from postgres_logs where regexp_contains(event_message, 'error') limit 100", opts); err != nil {
			t.Errorf("sandboxed query: %v", err)
		}
	}
}
