package httpapi

import (
	"log/slog"
	"strings"
	"testing"

	"github.com/sediment/sediment/engine"
)

// TestRejectsCountedAndLogged: every ingest request answered 429 is counted
// per source and reason, shown by GET /api/sources/:token as
// "rejected_requests", and logged with its reason: the first at once,
// later ones paced (one line per 30 s per source and reason).
func TestRejectsCountedAndLogged(t *testing.T) {
	var logs syncBuffer
	ts := startServer(t, serverConfig{
		// No background flush: a frozen head stays, and the shard refuses
		// at once instead of waiting for a flush that never comes.
		engine: engine.Options{DisableBackground: true, HeadMaxRows: 2, MaxFrozenHeads: 1},
		opts:   Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))},
	})
	pg := ts.source("postgres.logs")
	path := "/api/logs?source_name=postgres.logs"
	rejected := func() map[string]any {
		t.Helper()
		r := ts.do("GET", "/api/sources/"+pg.Token, nil, withKey(privKey)...)
		r.expect(t, 200, "")
		return decodeJSON[map[string]any](t, r.body)["rejected_requests"].(map[string]any)
	}
	if got := rejected(); len(got) != 0 {
		t.Fatalf("rejected_requests %v before any 429", got)
	}
	ts.do("POST", path, []byte(`[{"message":"a"},{"message":"b"}]`), withKey(pubKey, jsonCT...)...).expect(t, 200, logged)
	for range 3 {
		ts.do("POST", path, []byte(`[{"message":"c"}]`), withKey(pubKey, jsonCT...)...).expect(t, 429, `{"error":"Buffer Full: Too Many Requests"}`)
	}
	if got := rejected(); len(got) != 1 || got["frozen_heads"] != float64(3) {
		t.Fatalf("rejected_requests %v, want {frozen_heads: 3}", got)
	}
	if st := ts.srv.Stats(); st.Rejected(RejectFrozenHeads) != 3 || st.Sources[pg.Token].Rejected[RejectFrozenHeads] != 3 {
		t.Fatalf("stats %+v", st)
	}
	out := logs.String()
	if n := strings.Count(out, `msg="ingest request refused with 429`); n != 1 {
		t.Fatalf("%d log lines about 429s, want 1 (the rest paced):\n%s", n, out)
	}
	if !strings.Contains(out, "source=postgres.logs source_token="+pg.Token+" reason=frozen_heads") {
		t.Fatalf("the 429 line does not name the source and reason:\n%s", out)
	}
}
