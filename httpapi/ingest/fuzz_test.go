package ingest

import (
	"errors"
	"testing"
	"time"

	"github.com/sediment/sediment/event"
)

// fuzzRoute fuzzes one route's decoder: it must not panic, must fail only
// with the package's sentinels, and must produce objects that Normalize
// accepts.
func fuzzRoute(f *testing.F, route Route, contentType string, seeds ...string) {
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	d := &Decoder{MaxBodyBytes: 1 << 20}
	sd := &Decoder{MaxBodyBytes: 1 << 20}
	headers := headerList{{"ce-id", "1"}, {"ce-time", "2024-01-01T00:00:00Z"}}
	now := time.Date(2025, 7, 10, 12, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, body []byte) {
		res, err := d.Decode(Request{Route: route, ContentType: contentType, Body: body, Headers: headers.seq()})
		// Streaming gives the same events and the same error.
		streamed, serr := streamAll(sd, Request{Route: route, ContentType: contentType, Body: body, Headers: headers.seq(), Stream: true})
		if (err == nil) != (serr == nil) || (err != nil && err.Error() != serr.Error()) {
			t.Fatalf("Decode error %v, streamed error %v", err, serr)
		}
		if err == nil && eventsJSON(res.Events) != streamed {
			t.Fatalf("streamed events differ:\n%s\n%s", eventsJSON(res.Events), streamed)
		}
		if err != nil {
			if !errors.Is(err, ErrMalformed) && !errors.Is(err, ErrBadShape) && !errors.Is(err, ErrTooLarge) {
				t.Fatalf("unexpected error kind: %v", err)
			}
			return
		}
		for _, ev := range res.Events {
			if ev.Kind != event.Object {
				t.Fatalf("event is %v, not an object", ev.Kind)
			}
			e, _ := event.Normalize(ev, now, event.NormalizeOptions{NewID: func() string { return "id" }})
			event.AppendEventJSON(nil, e)
		}
	})
}

func FuzzDecodeCreate(f *testing.F) {
	fuzzRoute(f, RouteCreate, "application/json",
		`{"batch":[{"message":"a","timestamp":1}],"source":"s"}`, `[{"a":1},{"b":[null]}]`, `{"message":"m","id":"i"}`, `[1]`)
}

func FuzzDecodeNDJSON(f *testing.F) {
	fuzzRoute(f, RouteCreate, "application/x-ndjson", "{\"a\":1}\n{\"batch\":[{\"b\":2}]}\n", "{\"a\":\n")
}

func FuzzDecodeGenericJSON(f *testing.F) {
	fuzzRoute(f, RouteJSON, "application/json", `{"level":"info","nested":{"k":[1,2.5]}}`, `[{"a":1},{"b":true}]`)
}

func FuzzDecodeVector(f *testing.F) {
	fuzzRoute(f, RouteVector, "application/json",
		`[{"appname":"a","message":"hi","project":"default","timestamp":"2025-07-10T12:00:05Z"}]`, `{"timestamp":1,"x":2}`)
}

func FuzzDecodeGithub(f *testing.F) {
	fuzzRoute(f, RouteGithub, "application/json",
		`{"action":"opened","repository":{"full_name":"o/r","owner":{"avatar_url":"x"}},"sender":{"login":"a"}}`)
}

func FuzzDecodeCloudflare(f *testing.F) {
	fuzzRoute(f, RouteCloudflare, "text/plain; charset=utf-8",
		"{\"EdgeStartTimestamp\":1752148805123456789,\"RayID\":\"r\"}\nnot json\n")
}

func FuzzDecodeCloudEvent(f *testing.F) {
	fuzzRoute(f, RouteCloudEvent, "application/json", `{"message":"m","data":{"k":"v"}}`, `[{"a":1,"timestamp":5}]`)
}

func FuzzDecodeLogplex(f *testing.F) {
	fuzzRoute(f, RouteLogplex, "application/logplex-1", phxLine+"\n"+herokuRouterLine+"\n"+herokuPostgres,
		"5 <190>1 2024-01-01T00:00:00+00:00 host app web.1 - got {\"level\":\"warn\"} done\n")
}

func FuzzDecodeSyslogs(f *testing.F) {
	fuzzRoute(f, RouteSyslogs, "application/logplex-1",
		`<165>1 2003-10-11T22:14:15.003Z host app - ID47 [a@1 x="q\"u\\o\]t"][b y="z"] msg`,
		"<34>1 2003-10-11T22:14:15.003-07:00 host su - ID47 - 'su root' failed\n")
}

func FuzzDecompress(f *testing.F) {
	f.Add(byte(0), gzipBytes(f, []byte(`[{"a":1}]`)))
	f.Add(byte(1), zlibBytes(f, []byte(`[{"a":1}]`)))
	f.Add(byte(1), flateBytes(f, []byte(`[{"a":1}]`)))
	f.Add(byte(2), zstdBytes(f, []byte(`[{"a":1}]`)))
	encodings := []string{"gzip", "deflate", "zstd", ""}
	d := &Decoder{MaxBodyBytes: 1 << 16}
	f.Fuzz(func(t *testing.T, enc byte, body []byte) {
		_, err := d.Decode(Request{Route: RouteCreate, ContentEncoding: encodings[int(enc)%len(encodings)], Body: body})
		if err != nil && !errors.Is(err, ErrMalformed) && !errors.Is(err, ErrBadShape) && !errors.Is(err, ErrTooLarge) {
			t.Fatalf("unexpected error kind: %v", err)
		}
	})
}

// streamAll decodes req and reads its events with Each, rendering them as
// eventsJSON does (they are valid only during the callback).
func streamAll(d *Decoder, req Request) (string, error) {
	res, err := d.Decode(req)
	if err != nil {
		return "", err
	}
	b := []byte{'['}
	n := 0
	err = d.Each(&res, func(v event.Value) error {
		if n > 0 {
			b = append(b, ',')
		}
		n++
		b = event.AppendJSON(b, v)
		return nil
	})
	return string(append(b, ']')), err
}
