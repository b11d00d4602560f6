package httpapi

import (
	"reflect"
	"strings"
	"testing"

	"github.com/sediment/sediment/catalog"
)

// TestTranscodedIngestMatchesTree: array bodies on /api/logs and
// /api/logs/cloudflare get the same answers and store the same events
// whether their elements are transcoded (a source without rules) or go
// the tree's way (a source whose drop rule matches nothing, which needs
// every event's tree). Generated ids differ, so events are compared
// without the ids of events that came without one.
func TestTranscodedIngestMatchesTree(t *testing.T) {
	ts := startServer(t, serverConfig{opts: Options{Now: serverNow}})
	tree, fast := ts.source("postgres.logs"), ts.source("pgbouncer.logs.prod")
	never := "m.no_such_field:never"
	if _, err := ts.cat.UpdateSource(tree.Token, catalog.SourceParams{DropLQL: &never}); err != nil {
		t.Fatal(err)
	}
	deep := strings.Repeat(`{"a":`, 600) + "1" + strings.Repeat("}", 600)
	bodies := []string{
		`[{"message":"m","timestamp":"2025-07-10T11:00:00Z","metadata":{"a":1,"b":"x","c":[1,"",null,{"d":null}],"e":{}}}]`,
		`[{"event_message":"e","id":"given-1","metadata":{"request":{"headers":{"cf_ray":"r","host":"h"}},"status":200}}]`,
		`[{"message":"m","event_message":"dropped","log_entry":"kept","project":"p"},{"log_entry":"l","message":""}]`,
		`[{"a-b":1,"_a_b":2,"id":"given-2"},{"m":{"x y":1,"x_y":2},"id":"given-3"}]`,
		`[{"message":"ahead","timestamp":"2025-07-10T14:00:00Z"},{"message":"ok","id":7}]`,
		`[{"message":{"nested":true},"id":"given-4"},{"message":12,"id":"given-5"}]`,
		`[{"a":1,"a":2,"id":"given-6"},{"m":{"k":"\u00e9\n\ud800"},"id":"given-7"}]`,
		`[{"message":"a"},1]`, `[{"message":"a"},{"message":"b"]`, `[{"message":"a"},{"n":1e999}]`,
		`[{"message":"a"},{"n":tru}]`, "[{\"message\":\"bad \xff utf8\",\"id\":\"given-8\"}]", `[` + deep + `]`,
		`[]`, `[{}]`,
	}
	for _, route := range []string{"/api/logs", "/api/logs/cloudflare"} {
		for _, body := range bodies {
			post := func(src *catalog.Source) response {
				return ts.do("POST", route+"?source="+src.Token, []byte(body), withKey(pubKey, "Content-Type", "application/json")...)
			}
			want, got := post(tree), post(fast)
			if got.status != want.status || got.body != want.body {
				t.Fatalf("%s %.80s: transcoded %d %s, tree %d %s", route, body, got.status, got.body, want.status, want.body)
			}
		}
	}
	withoutGeneratedIDs := func(evs []map[string]any) []map[string]any {
		for _, ev := range evs {
			if id, _ := ev["id"].(string); !strings.HasPrefix(id, "given-") && id != "7" {
				delete(ev, "id")
			}
		}
		return evs
	}
	want, got := withoutGeneratedIDs(ts.events("postgres.logs")), withoutGeneratedIDs(ts.events("pgbouncer.logs.prod"))
	if len(want) == 0 || !reflect.DeepEqual(got, want) {
		t.Fatalf("stored events differ:\ntranscoded %v\ntree       %v", got, want)
	}
}
