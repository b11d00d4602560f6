package httpapi

import (
	"fmt"
	"net/url"
	"reflect"
	"strings"
	"testing"

	json "github.com/goccy/go-json"
)

// TestSearchFull: full=true returns whole events (metadata included, in
// the events' own shape), filtered and charted by the LQL, with a bound on
// the limit; without it a search returns its columns only.
func TestSearchFull(t *testing.T) {
	ts := startServer(t, serverConfig{})
	var batch []string
	for i := range 12 {
		batch = append(batch, fmt.Sprintf(`{"message":"req %d","timestamp":%d,"metadata":{"status":%d,"request":{"method":"GET","tags":["a","b"]},"ctx":[{"host":"h%d"}]}}`,
			i, 1752148800000000+int64(i)*1000000, 200+100*(i%4), i))
	}
	ts.do("POST", "/api/logs?source_name=postgres.logs", []byte("["+strings.Join(batch, ",")+"]"), withKey(pubKey, jsonCT...)...).expect(t, 200, logged)
	get := func(q url.Values) response {
		return ts.do("GET", "/api/sources/postgres.logs/search?"+q.Encode(), nil, withKey(queryKey)...)
	}

	plain := get(url.Values{"lql": {"m.status:500"}})
	plain.expect(t, 200, "")
	if strings.Contains(plain.body, "metadata") {
		t.Fatalf("a search without full returns metadata: %s", plain.body)
	}

	res := get(url.Values{"lql": {"m.status:500 c:count(*)"}, "full": {"true"}, "limit": {"2"}})
	res.expect(t, 200, "")
	var out struct {
		Result []map[string]any `json:"result"`
		Chart  []map[string]any `json:"chart"`
	}
	if err := json.Unmarshal([]byte(res.body), &out); err != nil {
		t.Fatal(err)
	}
	if len(out.Result) != 2 || len(out.Chart) == 0 {
		t.Fatalf("full search: %s", res.body)
	}
	for _, ev := range out.Result {
		msg, _ := ev["event_message"].(string)
		var i int
		fmt.Sscanf(msg, "req %d", &i)
		var want map[string]any
		json.Unmarshal([]byte(batch[i]), &want)
		if !reflect.DeepEqual(normalizeNumbers(ev["metadata"]), normalizeNumbers(want["metadata"])) {
			t.Fatalf("event %d metadata %v, want %v", i, ev["metadata"], want["metadata"])
		}
		if ev["id"] == nil || ev["timestamp"] == nil || i%4 != 3 {
			t.Fatalf("event %v", ev)
		}
	}
	if !strings.Contains(res.body, `"req 11"`) || !strings.Contains(res.body, `"req 7"`) {
		t.Fatalf("not the newest two matches: %s", res.body)
	}

	get(url.Values{"full": {"true"}, "limit": {"1001"}}).expect(t, 400, `{"error":"with full=true, limit must be from 1 to 1000"}`)
	get(url.Values{"full": {"true"}, "lql": {"s:m.status"}}).expect(t, 400, "")
	get(url.Values{"full": {"maybe"}}).expect(t, 400, "")
	get(url.Values{"full": {"true"}, "lql": {"m.nope:1"}}).expect(t, 400, "")
	if r := get(url.Values{"full": {"1"}, "limit": {"1000"}}); r.status != 200 || strings.Count(r.body, `"event_message"`) != 12 {
		t.Fatalf("full=1: %d %s", r.status, r.body)
	}
	ts.do("GET", "/api/sources/postgres.logs/search?full=true", nil, withKey(pubKey)...).expect(t, 401, "")
}

// normalizeNumbers turns json.Number and float64 into strings, so that
// numbers decoded either way compare equal.
func normalizeNumbers(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = normalizeNumbers(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = normalizeNumbers(e)
		}
		return out
	case json.Number:
		return x.String()
	case float64:
		return fmt.Sprint(x)
	}
	return v
}
