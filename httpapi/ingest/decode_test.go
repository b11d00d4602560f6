package ingest

import (
	"errors"
	"strings"
	"testing"

	"github.com/sediment/sediment/event"
)

// eventsJSON renders events as one JSON array, the form the tables compare.
func eventsJSON(evs []event.Value) string {
	b := []byte{'['}
	for i, e := range evs {
		if i > 0 {
			b = append(b, ',')
		}
		b = event.AppendJSON(b, e)
	}
	return string(append(b, ']'))
}

type headerList [][2]string

func (h headerList) seq() func(yield func([]byte, []byte) bool) {
	return func(yield func([]byte, []byte) bool) {
		for _, kv := range h {
			if !yield([]byte(kv[0]), []byte(kv[1])) {
				return
			}
		}
	}
}

type decodeCase struct {
	name        string
	route       Route
	contentType string
	body        string
	headers     headerList
	want        string     // events as a JSON array, when no error
	params      BodyParams // expected body params
	skipped     int
	err         error // sentinel expected
	status      int   // expected StatusCode(err)
}

func runDecodeCases(t *testing.T, cases []decodeCase) {
	t.Helper()
	d := NewDecoder()
	for _, tc := range cases {
		ct := tc.contentType
		if ct == "" {
			ct = "application/json"
		}
		req := Request{Route: tc.route, ContentType: ct, Body: []byte(tc.body)}
		if tc.headers != nil {
			req.Headers = tc.headers.seq()
		}
		res, err := d.Decode(req)
		if tc.err != nil {
			if !errors.Is(err, tc.err) {
				t.Errorf("%s: err = %v, want %v", tc.name, err, tc.err)
			} else if got := StatusCode(err); got != tc.status {
				t.Errorf("%s: status %d, want %d", tc.name, got, tc.status)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: unexpected error %v", tc.name, err)
			continue
		}
		if got := eventsJSON(res.Events); got != tc.want {
			t.Errorf("%s:\n got  %s\n want %s", tc.name, got, tc.want)
		}
		if res.Params != tc.params {
			t.Errorf("%s: params %+v, want %+v", tc.name, res.Params, tc.params)
		}
		if res.Skipped != tc.skipped {
			t.Errorf("%s: skipped %d, want %d", tc.name, res.Skipped, tc.skipped)
		}
	}
}

func TestDecodeCreate(t *testing.T) {
	runDecodeCases(t, []decodeCase{
		{
			name:   "batch keeps timestamp and id; body source reported",
			route:  RouteCreate,
			body:   `{"batch":[{"message":"a","timestamp":1720000000000,"id":"x"},{"message":"b"}],"source":"7a3a7e3c-0000-4000-8000-000000000001"}`,
			want:   `[{"message":"a","timestamp":1720000000000,"id":"x"},{"message":"b"}]`,
			params: BodyParams{Source: "7a3a7e3c-0000-4000-8000-000000000001"},
		},
		{
			name:  "top-level array (Vector's http sink)",
			route: RouteCreate,
			body:  `[{"event_message":"l1","project":"default","timestamp":"2025-07-10T12:00:05Z"},{"event_message":"l2","metadata":{"a":null}}]`,
			want:  `[{"event_message":"l1","project":"default","timestamp":"2025-07-10T12:00:05Z"},{"event_message":"l2","metadata":{"a":null}}]`,
		},
		{
			name:   "single object loses timestamp and id, keeps source_name",
			route:  RouteCreate,
			body:   `{"message":"m","timestamp":"2025-07-10T12:00:05Z","id":"i","source_name":"gotrue.logs.prod","metadata":{"x":1}}`,
			want:   `[{"message":"m","source_name":"gotrue.logs.prod","metadata":{"x":1}}]`,
			params: BodyParams{SourceName: "gotrue.logs.prod"},
		},
		{
			name:   "Cloudflare worker form keeps source as a field",
			route:  RouteCreate,
			body:   `{"source":"7a3a7e3c-0000-4000-8000-000000000002","log_entry":"GET | 200","metadata":{"request":{"url":"https://x"}}}`,
			want:   `[{"source":"7a3a7e3c-0000-4000-8000-000000000002","log_entry":"GET | 200","metadata":{"request":{"url":"https://x"}}}]`,
			params: BodyParams{Source: "7a3a7e3c-0000-4000-8000-000000000002"},
		},
		{
			name:   "collection aliases and non-string params",
			route:  RouteCreate,
			body:   `{"collection":"c-uuid","collection_name":"coll","source":5,"message":"m"}`,
			want:   `[{"collection":"c-uuid","collection_name":"coll","source":5,"message":"m"}]`,
			params: BodyParams{Collection: "c-uuid", CollectionName: "coll"},
		},
		{
			name:  "batch that is not an array is an ordinary field",
			route: RouteCreate,
			body:  `{"batch":"nope","id":"i"}`,
			want:  `[{"batch":"nope"}]`,
		},
		{name: "empty batch", route: RouteCreate, body: `{"batch":[]}`, want: `[]`},
		{name: "empty body", route: RouteCreate, body: " \n", want: `[]`},
		{name: "charset parameter", route: RouteCreate, contentType: "Application/JSON; charset=utf-8", body: `[{"a":1}]`, want: `[{"a":1}]`},
		{name: "+json media type", route: RouteCreate, contentType: "application/vnd.api+json", body: `[{"a":1}]`, want: `[{"a":1}]`},
		{name: "batch element not an object", route: RouteCreate, body: `{"batch":[{"a":1},"x"]}`, err: ErrBadShape, status: 400},
		{name: "array element not an object", route: RouteCreate, body: `[1]`, err: ErrBadShape, status: 400},
		{name: "scalar body", route: RouteCreate, body: `"text"`, err: ErrBadShape, status: 400},
		{name: "malformed JSON", route: RouteCreate, body: `{"a":`, err: ErrMalformed, status: 400},
		{name: "BERT is not supported", route: RouteCreate, contentType: "application/bert", body: "\x83", err: ErrUnsupportedContentType, status: 415},
		{name: "form bodies are not supported", route: RouteCreate, contentType: "application/x-www-form-urlencoded", body: "a=b", err: ErrUnsupportedContentType, status: 415},
		{name: "logplex on create", route: RouteCreate, contentType: "application/logplex-1", body: "x", err: ErrUnsupportedContentType, status: 415},
		{name: "elixir logger with batch", route: RouteElixirLogger, body: `{"batch":[{"message":"m","metadata":{"level":"info"}}],"source":"s"}`,
			want: `[{"message":"m","metadata":{"level":"info"}}]`, params: BodyParams{Source: "s"}},
		{name: "elixir logger without batch", route: RouteElixirLogger, body: `{"message":"m"}`, err: ErrBadShape, status: 400},
	})
}

func TestDecodeMalformedJSONWrapsSyntaxError(t *testing.T) {
	_, err := NewDecoder().Decode(Request{Route: RouteCreate, ContentType: "application/json", Body: []byte(`[{"a":1},]`)})
	var se *event.SyntaxError
	if !errors.As(err, &se) || se.Offset != 9 || !errors.Is(err, ErrMalformed) {
		t.Fatalf("err = %v, want ErrMalformed wrapping a SyntaxError at offset 9", err)
	}
}

func TestDecodeNDJSON(t *testing.T) {
	const nd = "application/x-ndjson"
	runDecodeCases(t, []decodeCase{
		{
			name: "lines keep timestamp and id", route: RouteCreate, contentType: nd,
			body: "{\"message\":\"a\",\"id\":\"1\",\"timestamp\":1}\r\n\n{\"message\":\"b\"}\n",
			want: `[{"message":"a","id":"1","timestamp":1},{"message":"b"}]`,
		},
		{
			name: "a batch line contributes its elements", route: RouteCreate, contentType: nd,
			body: "{\"batch\":[{\"a\":1},{\"a\":2}]}\n{\"a\":3}",
			want: `[{"a":1},{"a":2},{"a":3}]`,
		},
		{name: "malformed line", route: RouteCreate, contentType: nd, body: "{\"a\":1}\n{\"a\":", err: ErrMalformed, status: 400},
		{name: "non-object line", route: RouteCreate, contentType: nd, body: "{\"a\":1}\n[1]", err: ErrBadShape, status: 400},
		{
			name: "json route, one object per line", route: RouteJSON, contentType: nd,
			body: "{\"a\":1}\n{\"b\":\"x\"}",
			want: `[{"message":"{\"a\":1}","metadata":{"a":1}},{"message":"{\"b\":\"x\"}","metadata":{"b":"x"}}]`,
		},
		{
			name: "vector route", route: RouteVector, contentType: nd,
			body: `{"message":"m","timestamp":"2025-07-10T12:00:05Z","appname":"a"}`,
			want: `[{"message":"m","metadata":{"appname":"a"},"timestamp":"2025-07-10T12:00:05Z"}]`,
		},
	})
	_, err := NewDecoder().Decode(Request{Route: RouteCreate, ContentType: nd, Body: []byte("{}\n{}\n{\"a\"}")})
	var se *event.SyntaxError
	if !errors.As(err, &se) || se.Line != 3 || !strings.Contains(err.Error(), "line 3") {
		t.Errorf("err = %v, want a syntax error naming line 3", err)
	}
}

func TestDecodeGenericJSON(t *testing.T) {
	runDecodeCases(t, []decodeCase{
		{
			name: "object", route: RouteJSON,
			body: `{"level":"info","timestamp":"2025-07-10T12:00:05Z","nested":{"k":[1,2.5]}}`,
			want: `[{"message":"{\"level\":\"info\",\"timestamp\":\"2025-07-10T12:00:05Z\",\"nested\":{\"k\":[1,2.5]}}","metadata":{"level":"info","timestamp":"2025-07-10T12:00:05Z","nested":{"k":[1,2.5]}}}]`,
		},
		{
			name: "array", route: RouteJSON,
			body: `[{"a":1},{"b":true}]`,
			want: `[{"message":"{\"a\":1}","metadata":{"a":1}},{"message":"{\"b\":true}","metadata":{"b":true}}]`,
		},
		{
			name: "CSP report", route: RouteBrowserReports, contentType: "application/csp-report",
			body: `{"csp-report":{"document-uri":"https://example.com/","violated-directive":"script-src"}}`,
			want: `[{"message":"{\"csp-report\":{\"document-uri\":\"https://example.com/\",\"violated-directive\":\"script-src\"}}","metadata":{"csp-report":{"document-uri":"https://example.com/","violated-directive":"script-src"}}}]`,
		},
		{name: "array of scalars", route: RouteJSON, body: `[1,2]`, err: ErrBadShape, status: 400},
		{name: "scalar", route: RouteJSON, body: `null`, err: ErrBadShape, status: 400},
	})
}

func TestDecodeVector(t *testing.T) {
	runDecodeCases(t, []decodeCase{
		{
			name: "message, project kept top-level and in metadata", route: RouteVector,
			body: `[{"appname":"supabase-auth","message":"hi","project":"default","timestamp":"2025-07-10T12:00:05.123456789Z","metadata":{"a":1}}]`,
			want: `[{"message":"hi","metadata":{"appname":"supabase-auth","project":"default","metadata":{"a":1}},"project":"default","timestamp":"2025-07-10T12:00:05.123456789Z"}]`,
		},
		{
			name: "without message the message is the metadata JSON", route: RouteVector,
			body: `{"timestamp":1752148805123,"host":"h","n":1}`,
			want: `[{"message":"{\"host\":\"h\",\"n\":1}","metadata":{"host":"h","n":1},"timestamp":1752148805123}]`,
		},
		{name: "timestamp is required", route: RouteVector, body: `[{"message":"m","timestamp":"t"},{"message":"no ts"}]`, err: ErrBadShape, status: 400},
		{name: "scalar", route: RouteVector, body: `1`, err: ErrBadShape, status: 400},
	})
}

func TestDecodeGithub(t *testing.T) {
	runDecodeCases(t, []decodeCase{
		{
			name:  "push payload",
			route: RouteGithub,
			body: `{"action":"opened","html_url":"https://github.com/o/r","repository":{"full_name":"o/r","id":7,"url":"keep: no _url suffix",` +
				`"owner":{"login":"o","avatar_url":"x","events_url":"y"}},"sender":{"login":"alice","gists_url":"g"},` +
				`"commits":[{"id":"c1","tree_url":"t","author":{"name":"A"}}],"pull_request_url":{"deep":"subtree goes"}}`,
			want: `[{"message":"o/r | alice | opened","metadata":{"action":"opened","repository":{"full_name":"o/r","id":7,"url":"keep: no _url suffix",` +
				`"owner":{"login":"o"}},"sender":{"login":"alice"},"commits":[{"id":"c1","author":{"name":"A"}}]}}]`,
		},
		{
			name: "missing parts render empty", route: RouteGithub,
			body: `{"zen":"Keep it logically awesome.","hook_id":1,"sender":{"login":null}}`,
			want: `[{"message":" |  | ","metadata":{"zen":"Keep it logically awesome.","hook_id":1,"sender":{"login":null}}}]`,
		},
		{
			name: "non-string parts render as JSON", route: RouteGithub,
			body: `{"action":3,"repository":{"full_name":true}}`,
			want: `[{"message":"true |  | 3","metadata":{"action":3,"repository":{"full_name":true}}}]`,
		},
		{name: "array payload", route: RouteGithub, body: `[{"action":"x"}]`, err: ErrBadShape, status: 400},
	})
}

func TestDecodeCloudflare(t *testing.T) {
	line1 := `{"EdgeStartTimestamp":1752148805123456789,"ClientRequestHost":"example.com","EdgeResponseStatus":200}`
	line2 := `{"EdgeStartTimestamp":"2025-07-10T12:00:06Z","RayID":"8a1b"}`
	runDecodeCases(t, []decodeCase{
		{
			name: "Logpush NDJSON as text/plain; bad lines skipped", route: RouteCloudflare, contentType: "text/plain; charset=utf-8",
			body:    line1 + "\nnot json\n[1,2]\n\n" + line2 + "\n",
			want:    `[{"timestamp":1752148805123456789,"event_message":` + jsonString(line1) + `,"metadata":` + line1 + `},{"timestamp":"2025-07-10T12:00:06Z","event_message":` + jsonString(line2) + `,"metadata":` + line2 + `}]`,
			skipped: 2,
		},
		{
			name: "line without EdgeStartTimestamp", route: RouteCloudflare, contentType: "application/x-ndjson",
			body: `{"RayID":"r"}`,
			want: `[{"event_message":"{\"RayID\":\"r\"}","metadata":{"RayID":"r"}}]`,
		},
		{
			name: "single JSON object drops source, timestamp and id", route: RouteCloudflare,
			body:   `{"source":"s-uuid","timestamp":1,"id":"i","message":"m","metadata":{"a":1}}`,
			want:   `[{"message":"m","metadata":{"a":1}}]`,
			params: BodyParams{Source: "s-uuid"},
		},
		{
			name: "JSON batch elements are kept whole", route: RouteCloudflare,
			body: `{"batch":[{"source":"s","timestamp":1,"message":"m"}]}`,
			want: `[{"source":"s","timestamp":1,"message":"m"}]`,
		},
	})
}

func jsonString(s string) string { return string(event.AppendJSON(nil, event.StringValue(s))) }

func TestDecodeCloudEvent(t *testing.T) {
	headers := headerList{
		{"Content-Type", "application/json"},
		{"Ce-Id", "A234-1234-1234"},
		{"CE-foo-foo", "bar"},
		{"ce-specversion", "1.0"},
		{"Ce-Time", "2018-04-05T17:31:00Z"},
		{"X-Other", "ignored"},
	}
	runDecodeCases(t, []decodeCase{
		{
			name: "headers merged into a single object", route: RouteCloudEvent, headers: headers,
			body: `{"message":"m","timestamp":"dropped with the single-object rule","data":{"k":"v"}}`,
			want: `[{"message":"m","data":{"k":"v"},"cloud_event":{"id":"A234-1234-1234","foo_foo":"bar","specversion":"1.0","time":"2018-04-05T17:31:00Z"},"timestamp":"2018-04-05T17:31:00Z"}]`,
		},
		{
			name: "headers merged into every batch element, ce-time replaces timestamps", route: RouteCloudEvent, headers: headers,
			body: `[{"a":1,"timestamp":5},{"b":2}]`,
			want: `[{"a":1,"cloud_event":{"id":"A234-1234-1234","foo_foo":"bar","specversion":"1.0","time":"2018-04-05T17:31:00Z"},"timestamp":"2018-04-05T17:31:00Z"},` +
				`{"b":2,"cloud_event":{"id":"A234-1234-1234","foo_foo":"bar","specversion":"1.0","time":"2018-04-05T17:31:00Z"},"timestamp":"2018-04-05T17:31:00Z"}]`,
		},
		{
			name: "without ce-time the event's timestamp stays", route: RouteCloudEvent, headers: headerList{{"ce-type", "t"}},
			body: `[{"a":1,"timestamp":5}]`,
			want: `[{"a":1,"timestamp":5,"cloud_event":{"type":"t"}}]`,
		},
		{
			name: "no ce headers", route: RouteCloudEvent, headers: headerList{{"Accept", "*/*"}},
			body: `[{"a":1}]`,
			want: `[{"a":1}]`,
		},
	})
}

func TestRouteForPath(t *testing.T) {
	tests := []struct {
		path string
		want Route
		ok   bool
	}{
		{"/logs", RouteCreate, true},
		{"/logs/", RouteCreate, true},
		{"/api/logs", RouteCreate, true},
		{"/api/events", RouteCreate, true},
		{"/api/logs/json", RouteJSON, true},
		{"/logs/browser/reports", RouteBrowserReports, true},
		{"/api/events/cloud-event", RouteCloudEvent, true},
		{"/api/logs/vector/", RouteVector, true},
		{"/logs/github", RouteGithub, true},
		{"/logs/cloudflare", RouteCloudflare, true},
		{"/logs/elixir/logger", RouteElixirLogger, true},
		{"/logs/erlang/lager", RouteElixirLogger, true},
		{"/logs/logplex", RouteLogplex, true},
		{"/logs/syslog", RouteLogplex, true},
		{"/api/logs/logplex", RouteLogplex, true},
		{"/logs/syslogs", RouteSyslogs, true},
		{"/logs/vercel", 0, false},
		{"/logsx", 0, false},
		{"/api/endpoints/query/x", 0, false},
	}
	for _, tc := range tests {
		r, ok := RouteForPath(tc.path)
		if r != tc.want || ok != tc.ok {
			t.Errorf("RouteForPath(%q) = %v, %v; want %v, %v", tc.path, r, ok, tc.want, tc.ok)
		}
	}
}

// TestDecoderReuse checks that a Decoder gives the same answers across many
// requests of different routes (no state leaks between calls).
func TestDecoderReuse(t *testing.T) {
	d := NewDecoder()
	bodies := []Request{
		{Route: RouteCreate, ContentType: "application/json", Body: []byte(`[{"a":"x\ny"},{"b":[1,{"c":null}]}]`)},
		{Route: RouteJSON, ContentType: "application/json", Body: []byte(`{"k":"\u00e9"}`)},
		{Route: RouteLogplex, ContentType: "application/logplex-1", Body: []byte(herokuRouterLine + "\n")},
	}
	var first []string
	for round := range 20 {
		for i, req := range bodies {
			res, err := d.Decode(req)
			if err != nil {
				t.Fatal(err)
			}
			got := eventsJSON(res.Events)
			if round == 0 {
				first = append(first, got)
			} else if got != first[i] {
				t.Fatalf("round %d body %d: %s, first time %s", round, i, got, first[i])
			}
		}
	}
}
