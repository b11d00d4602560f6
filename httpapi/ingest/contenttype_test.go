package ingest

import (
	"strings"
	"testing"
)

// TestUnsupportedContentTypeSaysWhatToSend: a 415's message names the
// content types the route takes, and each one named is accepted.
func TestUnsupportedContentTypeSaysWhatToSend(t *testing.T) {
	for _, r := range []Route{RouteCreate, RouteJSON, RouteBrowserReports, RouteCloudEvent, RouteVector, RouteGithub,
		RouteCloudflare, RouteElixirLogger, RouteLogplex, RouteSyslogs} {
		d := NewDecoder()
		_, err := d.Decode(Request{Route: r, ContentType: "application/x-www-form-urlencoded", Body: []byte("a=b")})
		if StatusCode(err) != 415 {
			t.Fatalf("%s: %v", r, err)
		}
		msg := err.Error()
		_, named, ok := strings.Cut(msg, "send Content-Type: ")
		if !ok {
			t.Fatalf("%s: %q does not say what to send", r, msg)
		}
		named = strings.NewReplacer(",", " ", " or ", " ").Replace(named)
		for _, ct := range strings.Fields(named) {
			if !strings.Contains(ct, "/") {
				continue // "(Logpush's NDJSON)"
			}
			if _, err := d.Decode(Request{Route: r, ContentType: ct, Body: []byte("")}); StatusCode(err) == 415 {
				t.Errorf("%s: the message names %s, which is refused", r, ct)
			}
		}
	}
}
