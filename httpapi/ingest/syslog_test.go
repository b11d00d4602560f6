package ingest

import (
	"strconv"
	"testing"
)

// withLen prefixes a syslog message with its octet count, as logplex does.
func withLen(msg string) string { return strconv.Itoa(len(msg)) + " " + msg }

var (
	// The example of docs/compat/logflare.md §3.7.
	phxLine = withLen("<190>1 2020-08-09T13:30:36.316601+00:00 host phx-limit phx-limit-5885669966-287kp - " +
		"\x1b[36mweb.1  | \x1b[0m13:30:36.314 request_id=Fi1bTf2Gd1O2UxAAABhB [info] Sent 200 in 1ms")
	routerMsg = `at=info method=GET path="/" host=myapp.herokuapp.com request_id=8601b555-6a83-4c12-8269-97c8e32cdb22 ` +
		`fwd="204.204.204.204" dyno=web.1 connect=1ms service=18ms status=200 bytes=13 protocol=https`
	herokuRouterLine = withLen(`<158>1 2012-10-11T03:47:20+00:00 host heroku router - ` + routerMsg)
	routerErrorMsg   = `at=error code=H12 desc="Request timeout" method=POST path="/api/v1/\"items\"" host=myapp.herokuapp.com ` +
		`fwd="10.0.0.1" dyno=web.2 connect=0ms service=30000ms status=503 bytes=0 protocol=https tls`
	herokuRouterError = withLen(`<158>1 2024-05-01T09:15:02.482311+02:00 host heroku router - ` + routerErrorMsg)
	postgresMsg       = `source=DATABASE addon=postgresql-curly-12345 sample#current_transaction=1873 sample#db_size=9000000bytes sample#active-connections=5`
	herokuPostgres    = withLen(`<134>1 2024-03-01T10:00:00.123+00:00 host app heroku-postgres - ` + postgresMsg)
)

func TestDecodeLogplex(t *testing.T) {
	const lp = "application/logplex-1"
	runDecodeCases(t, []decodeCase{
		{
			name: "logflare.md §3.7 example", route: RouteLogplex, contentType: lp,
			body: phxLine + "\n",
			want: `[{"event_message":"web.1  | 13:30:36.314 request_id=Fi1bTf2Gd1O2UxAAABhB [info] Sent 200 in 1ms",` +
				`"timestamp":"2020-08-09T13:30:36.316601Z","metadata":{"priority":190,"facility":"local7","severity":"info","level":"info",` +
				`"hostname":"host","appname":"phx-limit","process_id":"phx-limit-5885669966-287kp",` +
				`"message_text":"\u001b[36mweb.1  | \u001b[0m13:30:36.314 request_id=Fi1bTf2Gd1O2UxAAABhB [info] Sent 200 in 1ms",` +
				`"message_raw":` + jsonString(phxLine) + `}}]`,
		},
		{
			name: "Heroku router lines with logfmt", route: RouteLogplex, contentType: lp,
			body: herokuRouterLine + "\n" + herokuRouterError + "\r\n",
			want: `[{"event_message":` + jsonString(routerMsg) +
				`,"timestamp":"2012-10-11T03:47:20Z","metadata":{"priority":158,"facility":"local3","severity":"info","level":"info",` +
				`"hostname":"host","appname":"heroku","process_id":"router","message_text":` + jsonString(routerMsg) +
				`,"message_raw":` + jsonString(herokuRouterLine) +
				`,"logfmt":{"at":"info","method":"GET","path":"/","host":"myapp.herokuapp.com","request_id":"8601b555-6a83-4c12-8269-97c8e32cdb22",` +
				`"fwd":"204.204.204.204","dyno":"web.1","connect":"1ms","service":"18ms","status":"200","bytes":"13","protocol":"https"}}},` +
				`{"event_message":` + jsonString(routerErrorMsg) +
				`,"timestamp":"2024-05-01T07:15:02.482311Z","metadata":{"priority":158,"facility":"local3","severity":"info","level":"info",` +
				`"hostname":"host","appname":"heroku","process_id":"router","message_text":` + jsonString(routerErrorMsg) +
				`,"message_raw":` + jsonString(herokuRouterError) +
				`,"logfmt":{"at":"error","code":"H12","desc":"Request timeout","method":"POST","path":"/api/v1/\"items\"","host":"myapp.herokuapp.com",` +
				`"fwd":"10.0.0.1","dyno":"web.2","connect":"0ms","service":"30000ms","status":"503","bytes":"0","protocol":"https","tls":true}}}]`,
		},
		{
			name: "heroku-postgres metrics", route: RouteLogplex, contentType: lp,
			body: herokuPostgres,
			want: `[{"event_message":` + jsonString(postgresMsg) +
				`,"timestamp":"2024-03-01T10:00:00.123Z","metadata":{"priority":134,"facility":"local0","severity":"info","level":"info",` +
				`"hostname":"host","appname":"app","process_id":"heroku-postgres","message_text":` + jsonString(postgresMsg) +
				`,"message_raw":` + jsonString(herokuPostgres) +
				`,"logfmt":{"source":"DATABASE","addon":"postgresql-curly-12345","sample#current_transaction":"1873","sample#db_size":"9000000bytes","sample#active-connections":"5"}}}]`,
		},
		{
			name: "JSON in the message goes to sd; unparsable lines are counted", route: RouteSyslog(), contentType: lp,
			body: "5 <190>1 2024-01-01T00:00:00+00:00 host app web.1 - got {\"level\":\"warn\",\"id\":5,\"n\":[1]} done\n" +
				"<190>1 2024-01-01T00:00:00Z host app web.1 - no length prefix\n" +
				"9 <192>1 2024-01-01T00:00:00Z host app web.1 - priority too big\n" +
				"9 <190>1 2024-13-01T00:00:00Z host app web.1 - bad month\n" +
				"9 garbage\n\n",
			want: `[{"event_message":"got {\"level\":\"warn\",\"id\":5,\"n\":[1]} done","timestamp":"2024-01-01T00:00:00Z",` +
				`"metadata":{"priority":190,"facility":"local7","severity":"info","level":"info","hostname":"host","appname":"app","process_id":"web.1",` +
				`"message_text":"got {\"level\":\"warn\",\"id\":5,\"n\":[1]} done","message_raw":"5 <190>1 2024-01-01T00:00:00+00:00 host app web.1 - got {\"level\":\"warn\",\"id\":5,\"n\":[1]} done",` +
				`"sd":[{"id":"json","level":"warn","n":[1]}]}}]`,
			skipped: 4,
		},
		{
			name: "RFC 5424 with structured data, no length prefix", route: RouteSyslogs, contentType: lp,
			body: `<165>1 2003-10-11T22:14:15.003Z mymachine.example.com evntslog - ID47 [exampleSDID@32473 iut="3" eventSource="Application" eventID="1011"][examplePriority@32473 class="high" esc="q\"u\\o\]t"] ` + "\xef\xbb\xbfAn application event log entry",
			want: `[{"event_message":"An application event log entry","timestamp":"2003-10-11T22:14:15.003Z","metadata":{"priority":165,"facility":"local4","severity":"notice","level":"notice",` +
				`"hostname":"mymachine.example.com","appname":"evntslog","message_id":"ID47","message_text":"An application event log entry",` +
				`"message_raw":` + jsonString(`<165>1 2003-10-11T22:14:15.003Z mymachine.example.com evntslog - ID47 [exampleSDID@32473 iut="3" eventSource="Application" eventID="1011"][examplePriority@32473 class="high" esc="q\"u\\o\]t"] `+"\xef\xbb\xbfAn application event log entry") +
				`,"sd":[{"id":"exampleSDID@32473","iut":"3","eventSource":"Application","eventID":"1011"},{"id":"examplePriority@32473","class":"high","esc":"q\"u\\o]t"}]}}]`,
		},
		{
			name: "RFC 5424 nil SD, offset converted to UTC, no message, nil timestamp", route: RouteSyslogs, contentType: lp,
			body: "<34>1 2003-10-11T22:14:15.003-07:00 mymachine su - ID47 - 'su root' failed\n" +
				"12 <0>1 - - - - - -\n" +
				"<34>1 2003-10-11T22:14:15Z host su - ID47 no structured data\n",
			want: `[{"event_message":"'su root' failed","timestamp":"2003-10-12T05:14:15.003Z","metadata":{"priority":34,"facility":"auth","severity":"critical","level":"critical",` +
				`"hostname":"mymachine","appname":"su","message_id":"ID47","message_text":"'su root' failed","message_raw":"<34>1 2003-10-11T22:14:15.003-07:00 mymachine su - ID47 - 'su root' failed"}},` +
				`{"metadata":{"priority":0,"facility":"kernel","severity":"emergency","level":"emergency","message_raw":"12 <0>1 - - - - - -"}}]`,
			skipped: 1,
		},
		{name: "JSON on a logplex route", route: RouteLogplex, body: `{}`, err: ErrUnsupportedContentType, status: 415},
	})
}

// RouteSyslog is the deprecated /syslog path, which Logflare decodes like
// /logplex.
func RouteSyslog() Route { r, _ := RouteForPath("/logs/syslog"); return r }

func TestFacilitySeverityNames(t *testing.T) {
	want := map[int]string{0: "kernel", 1: "user", 2: "mail", 3: "system", 4: "auth", 5: "syslogd", 6: "line_printer",
		7: "network_news", 8: "uucp", 9: "clock", 10: "auth", 11: "ftp", 12: "ntp", 13: "log_audit", 14: "log_alert",
		15: "clock", 16: "local0", 17: "local1", 18: "local2", 19: "local3", 20: "local4", 21: "local5", 22: "local6", 23: "local7"}
	for f, name := range want {
		if facilityNames[f] != name {
			t.Errorf("facility %d = %q, want %q", f, facilityNames[f], name)
		}
	}
	sev := []string{"emergency", "alert", "critical", "error", "warning", "notice", "info", "debug"}
	for i, name := range sev {
		if severityNames[i] != name {
			t.Errorf("severity %d = %q, want %q", i, severityNames[i], name)
		}
	}
}

func TestStripANSI(t *testing.T) {
	tests := []struct{ in, want string }{
		{"plain", "plain"},
		{"\x1b[36mweb.1\x1b[0m", "web.1"},
		{"\x1b[1;31;40mbold\x1b[K!", "bold!"},
		{"a\x1b(Bb", "a(Bb"}, // ESC ( is not a CSI: only the ESC goes
		{"a\x1bMb", "ab"},
		{"trailing\x1b[", "trailing"},
		{"\x1b", ""},
	}
	for _, tc := range tests {
		if got := stripANSI([]byte(tc.in)); got != tc.want {
			t.Errorf("stripANSI(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
