package ingest

import (
	"testing"
	"time"
)

func TestDecodeRFC3164(t *testing.T) {
	now := time.Date(2025, 7, 10, 12, 30, 0, 0, time.UTC)
	lp := "application/logplex-1"
	cases := []struct {
		name    string
		route   Route
		body    string
		want    string
		skipped int
	}{
		{
			name: "logger's default line on /syslogs", route: RouteSyslogs,
			body: "<13>Jul 10 12:00:05 web-1 shop[4242]: order placed id=7\n",
			want: `[{"event_message":"order placed id=7","timestamp":"2025-07-10T12:00:05Z","metadata":{"priority":13,"facility":"user",` +
				`"severity":"notice","level":"notice","hostname":"web-1","appname":"shop","process_id":"4242",` +
				`"message_text":"order placed id=7","message_raw":"<13>Jul 10 12:00:05 web-1 shop[4242]: order placed id=7"}}]`,
		},
		{
			name: "RFC 3164 with an octet count on /logplex, a JSON message, no pid, a space-padded day", route: RouteLogplex,
			body: `58 <134>Jul  9 23:59:59 db postgres: {"duration_ms":12,"q":"select 1"}` + "\n",
			want: `[{"event_message":"{\"duration_ms\":12,\"q\":\"select 1\"}","timestamp":"2025-07-09T23:59:59Z","metadata":{"priority":134,` +
				`"facility":"local0","severity":"info","level":"info","hostname":"db","appname":"postgres",` +
				`"message_text":"{\"duration_ms\":12,\"q\":\"select 1\"}","message_raw":"58 <134>Jul  9 23:59:59 db postgres: {\"duration_ms\":12,\"q\":\"select 1\"}",` +
				`"sd":[{"id":"json","duration_ms":12,"q":"select 1"}]}}]`,
		},
		{
			name: "December read in July belongs to last year", route: RouteSyslogs,
			body: "<11>Dec 31 23:00:00 h app: late\n",
			want: `[{"event_message":"late","timestamp":"2024-12-31T23:00:00Z","metadata":{"priority":11,"facility":"user","severity":"error",` +
				`"level":"error","hostname":"h","appname":"app","message_text":"late","message_raw":"<11>Dec 31 23:00:00 h app: late"}}]`,
		},
		{
			name: "RFC 3339 timestamp in a BSD line", route: RouteSyslogs,
			body: "<30>2025-07-10T14:00:05.250+02:00 h app[1]: m\n",
			want: `[{"event_message":"m","timestamp":"2025-07-10T12:00:05.25Z","metadata":{"priority":30,"facility":"system","severity":"info",` +
				`"level":"info","hostname":"h","appname":"app","process_id":"1","message_text":"m","message_raw":"<30>2025-07-10T14:00:05.250+02:00 h app[1]: m"}}]`,
		},
		{
			name: "RFC 5424 still goes through the RFC 5424 parser; garbage is skipped", route: RouteSyslogs,
			body: "<13>1 2025-07-10T12:00:05Z h app - - - five\nno priority at all\n<999>Jul 10 12:00:05 h a: bad priority\n",
			want: `[{"event_message":"five","timestamp":"2025-07-10T12:00:05Z","metadata":{"priority":13,"facility":"user","severity":"notice",` +
				`"level":"notice","hostname":"h","appname":"app","message_text":"five","message_raw":"<13>1 2025-07-10T12:00:05Z h app - - - five"}}]`,
			skipped: 2,
		},
	}
	d := NewDecoder()
	d.Now = func() time.Time { return now }
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res, err := d.Decode(Request{Route: tc.route, ContentType: lp, Body: []byte(tc.body)})
			if err != nil {
				t.Fatal(err)
			}
			if got := eventsJSON(res.Events); got != tc.want {
				t.Errorf("\n got  %s\n want %s", got, tc.want)
			}
			if res.Skipped != tc.skipped {
				t.Errorf("skipped %d, want %d", res.Skipped, tc.skipped)
			}
		})
	}
}

func TestDecodeSyslogFrames(t *testing.T) {
	now := time.Date(2025, 7, 10, 12, 30, 0, 0, time.UTC)
	d := NewDecoder()
	res := d.DecodeSyslogFrames([][]byte{
		[]byte("<14>Jul 10 12:00:05 web-1 shop[42]: from 3164\n"),
		[]byte("<14>1 2025-07-10T12:00:05+00:00 web-1 shop 42 - - from 5424"),
		[]byte("<165>1 2025-07-10T12:00:06.5Z web-1 shop 42 ID7 [ex@32473 k=\"v\"] with sd\r\n"),
		[]byte("\n"),
		[]byte("neither"),
	}, now)
	want := `[{"event_message":"from 3164","timestamp":"2025-07-10T12:00:05Z","metadata":{"priority":14,"facility":"user","severity":"info","level":"info",` +
		`"hostname":"web-1","appname":"shop","process_id":"42","message_text":"from 3164","message_raw":"<14>Jul 10 12:00:05 web-1 shop[42]: from 3164"}},` +
		`{"event_message":"from 5424","timestamp":"2025-07-10T12:00:05Z","metadata":{"priority":14,"facility":"user","severity":"info","level":"info",` +
		`"hostname":"web-1","appname":"shop","process_id":"42","message_text":"from 5424","message_raw":"<14>1 2025-07-10T12:00:05+00:00 web-1 shop 42 - - from 5424"}},` +
		`{"event_message":"with sd","timestamp":"2025-07-10T12:00:06.5Z","metadata":{"priority":165,"facility":"local4","severity":"notice","level":"notice",` +
		`"hostname":"web-1","appname":"shop","process_id":"42","message_id":"ID7","message_text":"with sd",` +
		`"message_raw":"<165>1 2025-07-10T12:00:06.5Z web-1 shop 42 ID7 [ex@32473 k=\"v\"] with sd","sd":[{"id":"ex@32473","k":"v"}]}}]`
	if got := eventsJSON(res.Events); got != want {
		t.Errorf("\n got  %s\n want %s", got, want)
	}
	if res.Skipped != 1 {
		t.Errorf("skipped %d, want 1", res.Skipped)
	}
}
