package ingest

import (
	"errors"
	"strings"
	"testing"

	"github.com/sediment/sediment/event"
)

func TestDecodeBulk(t *testing.T) {
	// What Filebeat sends: create actions, ECS documents.
	body := strings.Join([]string{
		`{"create":{"_index":"web-logs"}}`,
		`{"@timestamp":"2025-07-10T12:00:05.123Z","message":"GET /a 200","log":{"file":{"path":"/var/log/nginx/access.log"}},"host":{"name":"web-1"},"timestamp":"kept in metadata","id":"doc field"}`,
		`{"index":{"_id":"abc","_index":"other"}}`,
		`{"timestamp":1752148806000,"event_message":"no @timestamp","level":"warn"}`,
		`{"index":{"_id":42}}`,
		`{"log_entry":"legacy"}`,
		`{"update":{"_id":"abc"}}`,
		`{"doc":{"x":1}}`,
		`{"delete":{"_id":"abc"}}`,
		`{"create":{}}`,
		`not json`,
		`{"create":{}}`,
		`["not","an","object"]`,
	}, "\n") + "\n"
	d := NewDecoder()
	items, err := d.DecodeBulk(Request{ContentType: "application/x-ndjson", Body: []byte(body)}, "default-index")
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		action, index, id, errType, event string
	}{
		{action: "create", index: "web-logs", event: `{"timestamp":"2025-07-10T12:00:05.123Z","message":"GET /a 200","metadata":{"log":{"file":{"path":"/var/log/nginx/access.log"}},"host":{"name":"web-1"},"timestamp":"kept in metadata","id":"doc field"}}`},
		{action: "index", index: "other", id: "abc", event: `{"timestamp":1752148806000,"event_message":"no @timestamp","id":"abc","metadata":{"level":"warn"}}`},
		{action: "index", index: "default-index", id: "42", event: `{"log_entry":"legacy","id":"42","metadata":{}}`},
		{action: "update", index: "default-index", id: "abc", errType: "action_request_validation_exception"},
		{action: "delete", index: "default-index", id: "abc", errType: "action_request_validation_exception"},
		{action: "create", index: "default-index", errType: "document_parsing_exception"},
		{action: "create", index: "default-index", errType: "document_parsing_exception"},
	}
	if len(items) != len(want) {
		t.Fatalf("%d items, want %d: %+v", len(items), len(want), items)
	}
	for i, w := range want {
		it := items[i]
		if it.Action != w.action || it.Index != w.index || it.ID != w.id || it.ErrType != w.errType {
			t.Errorf("item %d: %s %q %q %q, want %s %q %q %q", i, it.Action, it.Index, it.ID, it.ErrType, w.action, w.index, w.id, w.errType)
		}
		if w.errType != "" {
			if !it.Failed() || it.Reason == "" {
				t.Errorf("item %d: not failed with a reason: %+v", i, it)
			}
			continue
		}
		if got := string(event.AppendJSON(nil, it.Event)); got != w.event {
			t.Errorf("item %d:\n got  %s\n want %s", i, got, w.event)
		}
	}
}

func TestDecodeBulkErrors(t *testing.T) {
	d := &Decoder{MaxBodyBytes: 1 << 10}
	cases := []struct {
		name, contentType, body string
		err                     error
		status                  int
	}{
		{"unknown action", "application/x-ndjson", "{\"upsert\":{}}\n{}\n", ErrBadShape, 400},
		{"action not an object", "application/x-ndjson", "[1]\n{}\n", ErrBadShape, 400},
		{"two actions in one line", "application/x-ndjson", "{\"index\":{},\"create\":{}}\n{}\n", ErrBadShape, 400},
		{"malformed action", "application/x-ndjson", "{\"index\":\n{}\n", ErrMalformed, 400},
		{"missing source line", "application/json", "{\"index\":{}}\n", ErrBadShape, 400},
		{"content type", "application/xml", "{}", ErrUnsupportedContentType, 415},
		{"over the limit", "application/x-ndjson", strings.Repeat(" ", 2<<10), ErrTooLarge, 413},
	}
	for _, tc := range cases {
		_, err := d.DecodeBulk(Request{ContentType: tc.contentType, Body: []byte(tc.body)}, "")
		if !errors.Is(err, tc.err) || StatusCode(err) != tc.status {
			t.Errorf("%s: err %v (status %d), want %v (%d)", tc.name, err, StatusCode(err), tc.err, tc.status)
		}
	}
	// The content types Elasticsearch clients and shippers send.
	for _, ct := range []string{"", "application/json", "application/x-ndjson", "application/vnd.elasticsearch+x-ndjson; compatible-with=8"} {
		if items, err := d.DecodeBulk(Request{ContentType: ct, Body: []byte("{\"create\":{}}\n{\"message\":\"m\"}\n")}, "i"); err != nil || len(items) != 1 {
			t.Errorf("%q: %v, %d items", ct, err, len(items))
		}
	}
}
