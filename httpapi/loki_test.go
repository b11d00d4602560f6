package httpapi

import (
	"encoding/json"
	"testing"
	"time"
)

// TestPinoLoki runs pino with the real pino-loki transport against the
// server and compares every stored event with the log line pino-loki sent:
// the line is event_message, the stream labels (level, hostname, source,
// app) and the structured metadata are metadata, and so are the line's
// JSON members (the level label wins over pino's numeric level).
func TestPinoLoki(t *testing.T) {
	node, dir := nodeClients(t)
	ts := startServer(t, serverConfig{})
	ts.createSource("loki-logs")
	before := time.Now().UnixMilli()
	out := runNode(t, node, dir, "loki.js", ts.base, pubKey, "loki-logs")
	after := time.Now().UnixMilli()

	evs := ts.events("loki-logs")
	if len(evs) != 3 {
		t.Fatalf("%d events stored, want 3: %v\nclient output:\n%s", len(evs), evs, out)
	}
	want := map[string]struct {
		level  string
		fields map[string]any
	}{
		"hello loki":     {"info", map[string]any{"user.id": "u-1", "user.plan": "pro", "meta.trace": "t-1", "trace": "t-1"}},
		"low stock":      {"warning", map[string]any{"sku": "s-9", "left": float64(3)}},
		"payment failed": {"error", map[string]any{"code": float64(42), "retry": false}},
	}
	for _, e := range evs {
		line, _ := e["event_message"].(string)
		var sent map[string]any
		if err := json.Unmarshal([]byte(line), &sent); err != nil {
			t.Fatalf("event_message is not the JSON line pino-loki sent: %q", line)
		}
		msg, _ := sent["msg"].(string)
		w, ok := want[msg]
		if !ok {
			t.Fatalf("unexpected event %v", e)
		}
		delete(want, msg)
		ms, _ := sent["time"].(float64)
		if int64(ms) < before || int64(ms) > after || e["timestamp"] != ms*1000 {
			t.Errorf("%q: timestamp %v, want pino's time %v ms in µs", msg, e["timestamp"], ms)
		}
		checks := map[string]any{
			"metadata.level": w.level, "metadata.hostname": "web-1", "metadata.source": "loki-logs", "metadata.app": "shop",
			"metadata.msg": msg, "metadata.pid": float64(4242), "metadata.time": ms,
		}
		for path, v := range w.fields {
			checks["metadata."+path] = v
		}
		for path, v := range checks {
			if got := at(e, path); got != v {
				t.Errorf("%q: %s = %#v, want %#v", msg, path, got, v)
			}
		}
	}
}
