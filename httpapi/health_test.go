package httpapi

import "testing"

// TestHealthVersion: /health carries the build's version and commit when
// the server is given them, next to Logflare's status; without them it is
// Logflare's body exactly.
func TestHealthVersion(t *testing.T) {
	ts := startServer(t, serverConfig{opts: Options{Version: "v1.2.3", Commit: "abc123"}})
	ts.do("GET", "/health", nil).expect(t, 200, `{"status":"ok","version":"v1.2.3","commit":"abc123"}`)
	ts.do("GET", "/ready", nil).expect(t, 200, `{"status":"ok"}`)

	ts = startServer(t, serverConfig{opts: Options{Version: "v1.2.3"}, notReady: true})
	ts.do("GET", "/health", nil).expect(t, 503, `{"status":"coming_up"}`)

	ts = startServer(t, serverConfig{})
	ts.do("GET", "/health", nil).expect(t, 200, `{"status":"ok"}`)
}
