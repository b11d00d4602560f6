package httpapi

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/sediment/sediment/engine"
)

// TestRetentionHidesExpiredEventsFromRecentAndSchema: with a one-day
// retention, /recent shows neither an event that arrived three days old
// nor one that aged past the retention since it arrived, and the JSON
// schema does not list a field only expired events have.
func TestRetentionHidesExpiredEventsFromRecentAndSchema(t *testing.T) {
	clk := &clock{now: studioNow}
	ts := startServer(t, serverConfig{engine: engine.Options{Now: clk.Now}, opts: Options{Now: clk.Now}})
	r := ts.do("POST", "/api/sources", []byte(`{"name":"aging","retention_days":1}`), withKey(privKey, jsonCT...)...)
	r.expect(t, 201, "")
	token := ts.source("aging").Token
	ingest := func(msg string, age time.Duration, field string) {
		t.Helper()
		body := fmt.Sprintf(`[{"message":%q,"timestamp":%d,"metadata":{%q:1}}]`, msg, studioNow.Add(-age).UnixMicro(), field)
		ts.do("POST", "/api/logs?source_name=aging", []byte(body), withKey(pubKey, jsonCT...)...).expect(t, 200, "")
	}
	ingest("three days old", 72*time.Hour, "only_expired")
	ingest("aging", 23*time.Hour, "aging_field")
	ingest("fresh", time.Hour, "fresh_field")
	messages := func() []string {
		var out []string
		for _, e := range decodeJSON[[]map[string]any](t, ts.do("GET", "/api/sources/"+token+"/recent", nil, withKey(privKey)...).body) {
			out = append(out, fmt.Sprint(e["event_message"]))
		}
		return out
	}
	if got := strings.Join(messages(), ","); got != "fresh,aging" {
		t.Fatalf("/recent shows %q, want the two events within retention", got)
	}
	schema := ts.do("GET", "/api/sources/"+token+"/schema", nil, withKey(privKey)...)
	schema.expect(t, 200, "")
	if strings.Contains(schema.body, "only_expired") || !strings.Contains(schema.body, "fresh_field") {
		t.Fatalf("schema %s", schema.body)
	}
	clk.advance(2 * time.Hour)
	if got := strings.Join(messages(), ","); got != "fresh" {
		t.Fatalf("/recent shows %q once an event aged past the retention", got)
	}
}
