package httpapi

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestElasticsearchClient runs the official Elasticsearch JS client
// against the server: its version probe, the bulk helper (API key auth)
// and client.bulk (basic auth). Every document sent to the source is read
// back and compared; the one sent to an index that is no source is
// reported dropped with a 404 by the helper and not stored.
func TestElasticsearchClient(t *testing.T) {
	node, dir := nodeClients(t)
	ts := startServer(t, serverConfig{})
	ts.createSource("es-logs")
	out := runNode(t, node, dir, "elasticsearch.js", ts.base, pubKey, "es-logs")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	var got struct {
		Version string `json:"version"`
		Tagline string `json:"tagline"`
		Stats   struct {
			Total, Successful, Failed int
		} `json:"stats"`
		Dropped []struct {
			Status  int    `json:"status"`
			Type    string `json:"type"`
			Message string `json:"message"`
		} `json:"dropped"`
		Bulk struct {
			Errors bool `json:"errors"`
			Items  []struct {
				Status int    `json:"status"`
				ID     string `json:"id"`
				Result string `json:"result"`
			} `json:"items"`
		} `json:"bulk"`
	}
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &got); err != nil {
		t.Fatalf("client output: %v\n%s", err, out)
	}
	if !strings.HasPrefix(got.Version, "8.") || got.Tagline != "You Know, for Search" {
		t.Errorf("info: %+v", got)
	}
	if got.Stats.Total != 3 || got.Stats.Successful != 2 || got.Stats.Failed != 1 {
		t.Errorf("helper stats %+v, want 3 total, 2 successful, 1 failed", got.Stats)
	}
	if len(got.Dropped) != 1 || got.Dropped[0].Status != 404 || got.Dropped[0].Type != "index_not_found_exception" || got.Dropped[0].Message != "to nowhere" {
		t.Errorf("dropped %+v", got.Dropped)
	}
	if got.Bulk.Errors || len(got.Bulk.Items) != 2 || got.Bulk.Items[0].Status != 201 || got.Bulk.Items[0].ID != "doc-1" ||
		got.Bulk.Items[1].ID != "doc-2" || got.Bulk.Items[1].Result != "created" {
		t.Errorf("bulk answer %+v", got.Bulk)
	}

	evs := ts.events("es-logs")
	want := []map[string]any{
		{"event_message": "GET /a 200", "timestamp": micros(t, "2025-07-10T12:00:05.123Z"), "metadata.http.method": "GET", "metadata.http.status": float64(200), "metadata.host.name": "web-1"},
		{"event_message": "POST /b 502", "timestamp": micros(t, "2025-07-10T12:00:06Z"), "metadata.http.status": float64(502), "metadata.tags": []any{"edge", "x"}},
		{"event_message": "indexed with an id", "timestamp": micros(t, "2025-07-10T12:00:08Z"), "id": "doc-1", "metadata.level": "warn"},
		{"event_message": "second with an id", "timestamp": micros(t, "2025-07-10T12:00:09Z"), "id": "doc-2", "metadata.level": "error"},
	}
	if len(evs) != len(want) {
		t.Fatalf("%d events stored, want %d: %v\nclient output:\n%s", len(evs), len(want), evs, out)
	}
	for i, w := range want {
		for path, v := range w {
			if g := at(evs[i], path); !jsonEqual(g, v) {
				t.Errorf("event %d: %s = %#v, want %#v", i, path, g, v)
			}
		}
	}
	if st := ts.srv.Stats(); st.Dropped(DropRejected) != 1 {
		t.Errorf("rejected %d, want 1 (the document for no source)", st.Dropped(DropRejected))
	}
}
