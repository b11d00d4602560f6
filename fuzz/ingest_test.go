package fuzz

import (
	"errors"
	"strconv"
	"testing"

	"github.com/sediment/sediment/bench/gen"
	"github.com/sediment/sediment/event"
	"github.com/sediment/sediment/httpapi/ingest"
)

// jsonSeeds are request bodies of the JSON routes: every Supabase source as
// Vector ships it (both shapes), and the other shapes Logflare accepts.
func jsonSeeds() []string {
	seeds := []string{
		`{"batch":[{"message":"a","timestamp":1},{"event_message":"b","metadata":{"k":[1,2.5,null]}}],"source_name":"s"}`,
		`[{"a":1},{"b":[null]},{"c":{}},{"d":""}]`,
		`{"message":"m","id":"i","timestamp":"2025-07-10T12:00:00.123456Z"}`,
		`{"log_entry":"l","metadata":{"1-key!":[null,{"k":1}]}}`,
		`[{"message":{"nested":true},"timestamp":1752148805123}]`,
		`{"message":"x","timestamp":17521488051234567890}`,
		`[{"a-b":1,"_a_b":2,"a b":3}]`,
		`[{"message":"\ud83d\ude00 \u0000 \"q\"","x":1e308,"y":-0.0}]`,
		`[1]`, `"just a string"`, `[]`, `{}`, `[[[[]]]]`,
	}
	for _, src := range gen.AllSources() {
		for _, shape := range []gen.Shape{gen.SelfHosted, gen.Platform} {
			g := gen.New(src, gen.Options{Seed: int64(src) + 1, Shape: shape, Projects: 3})
			seeds = append(seeds, string(g.AppendVectorBatch(nil, 2)))
		}
	}
	return seeds
}

// checkDecoded asserts what every successful decode must give: objects
// that normalise into events whose JSON parses back.
func checkDecoded(t *testing.T, res ingest.Result) {
	t.Helper()
	var norm event.Normalizer
	for _, raw := range res.Events {
		if raw.Kind != event.Object {
			t.Fatalf("decoded event is %v, not an object", raw.Kind)
		}
		e, _ := norm.Normalize(raw, fixedNow, event.NormalizeOptions{NewID: idSeq()})
		js := event.AppendEventJSON(nil, e)
		if _, err := event.Parse(js); err != nil {
			t.Fatalf("normalised event's JSON does not parse: %v\n%s", err, js)
		}
	}
}

// checkDecodeErr accepts only the package's sentinels.
func checkDecodeErr(t *testing.T, err error) {
	t.Helper()
	if !errors.Is(err, ingest.ErrMalformed) && !errors.Is(err, ingest.ErrBadShape) &&
		!errors.Is(err, ingest.ErrTooLarge) && !errors.Is(err, ingest.ErrUnsupportedContentType) {
		t.Fatalf("error of an unknown kind: %v", err)
	}
}

// FuzzIngestJSON: POST /api/logs with a JSON body, Vector's request.
func FuzzIngestJSON(f *testing.F) {
	for _, s := range jsonSeeds() {
		f.Add([]byte(s))
	}
	d := ingest.NewDecoder()
	d.MaxBodyBytes = maxInput
	sd := ingest.NewDecoder()
	sd.MaxBodyBytes = maxInput
	f.Fuzz(func(t *testing.T, body []byte) {
		checkAlloc(t, allocLimit(len(body)), func() {
			res, err := d.Decode(ingest.Request{Route: ingest.RouteCreate, ContentType: "application/json", Body: body})
			// The server reads array bodies element by element (Stream):
			// the same events and the same error.
			streamed, serr := streamJSON(sd, body)
			if (err == nil) != (serr == nil) || (err != nil && err.Error() != serr.Error()) {
				t.Fatalf("Decode error %v, streamed error %v", err, serr)
			}
			if err != nil {
				checkDecodeErr(t, err)
				return
			}
			if want := valuesJSON(res.Events); streamed != want {
				t.Fatalf("streamed events differ:\n%s\n%s", streamed, want)
			}
			checkDecoded(t, res)
		})
	})
}

// streamJSON decodes a create-route JSON body as the server does, reading
// its events with Each, and renders them as valuesJSON does.
func streamJSON(d *ingest.Decoder, body []byte) (string, error) {
	res, err := d.Decode(ingest.Request{Route: ingest.RouteCreate, ContentType: "application/json", Body: body, Stream: true})
	if err != nil {
		return "", err
	}
	var evs []event.Value
	err = d.Each(&res, func(v event.Value) error {
		evs = append(evs, v.Clone())
		return nil
	})
	return valuesJSON(evs), err
}

// valuesJSON renders raw events as one JSON array.
func valuesJSON(evs []event.Value) string {
	b := []byte{'['}
	for i, v := range evs {
		if i > 0 {
			b = append(b, ',')
		}
		b = event.AppendJSON(b, v)
	}
	return string(append(b, ']'))
}

// FuzzIngestNDJSON: the same route with an NDJSON body (pino and friends).
func FuzzIngestNDJSON(f *testing.F) {
	for _, src := range gen.AllSources() {
		g := gen.New(src, gen.Options{Seed: 7, Shape: gen.Platform, Projects: 2, UseMessageKey: src%2 == 0})
		f.Add(g.AppendNDJSON(nil, 3))
	}
	f.Add([]byte("{\"a\":1}\r\n\n  \n{\"batch\":[{\"b\":2}]}\n"))
	f.Add([]byte("{\"a\":\n{\"b\":1}\n"))
	f.Add([]byte("[1,2]\n\"s\"\nnull\n"))
	d := ingest.NewDecoder()
	d.MaxBodyBytes = maxInput
	f.Fuzz(func(t *testing.T, body []byte) {
		checkAlloc(t, allocLimit(len(body)), func() {
			res, err := d.Decode(ingest.Request{Route: ingest.RouteCreate, ContentType: "application/x-ndjson", Body: body})
			if err != nil {
				checkDecodeErr(t, err)
				return
			}
			checkDecoded(t, res)
		})
	})
}

// withLen prefixes a syslog line with its octet count, as logplex frames it.
func withLen(line string) string { return strconv.Itoa(len(line)) + " " + line }

// FuzzLogplex: Heroku's logplex drains (/logplex) and RFC 5424 syslog
// (/syslogs). route selects which.
func FuzzLogplex(f *testing.F) {
	router := `at=info method=GET path="/" host=myapp.herokuapp.com request_id=8601b555-6a83-4c12-8269-97c8e32cdb22 fwd="204.204.204.204" dyno=web.1 connect=1ms service=18ms status=200 bytes=13 protocol=https`
	seeds := []string{
		withLen(`<158>1 2012-10-11T03:47:20+00:00 host heroku router - ` + router),
		withLen("<190>1 2020-08-09T13:30:36.316601+00:00 host phx-limit phx-limit-5885669966-287kp - \x1b[36mweb.1  | \x1b[0m13:30:36.314 request_id=Fi1bTf2Gd1O2UxAAABhB [info] Sent 200 in 1ms") + "\n" +
			withLen(`<134>1 2024-05-01T09:15:02.482311+02:00 host app postgres.1 - source=DATABASE sample#db_size=9000000bytes sample#active-connections=5`),
		withLen(`<190>1 2024-01-01T00:00:00+00:00 host app web.1 - got {"level":"warn","n":1} done`),
		`<165>1 2003-10-11T22:14:15.003Z host app - ID47 [a@1 x="q\"u\\o\]t"][b y="z"] msg`,
		"<34>1 2003-10-11T22:14:15.003-07:00 host su - ID47 - 'su root' failed\n<13>1 - - - - - -\n",
		"garbage\n12 short\n",
	}
	for _, s := range seeds {
		f.Add(byte(0), []byte(s))
		f.Add(byte(1), []byte(s))
	}
	d := ingest.NewDecoder()
	d.MaxBodyBytes = maxInput
	f.Fuzz(func(t *testing.T, route byte, body []byte) {
		r := ingest.RouteLogplex
		if route%2 == 1 {
			r = ingest.RouteSyslogs
		}
		checkAlloc(t, allocLimit(len(body)), func() {
			res, err := d.Decode(ingest.Request{Route: r, ContentType: "application/logplex-1", Body: body})
			if err != nil {
				checkDecodeErr(t, err)
				return
			}
			if res.Skipped < 0 {
				t.Fatalf("skipped %d", res.Skipped)
			}
			checkDecoded(t, res)
		})
	})
}
