package gen_test

import (
	"encoding/json"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/sediment/sediment/bench/gen"
)

// field describes one field of a source's events: its dotted path, the JSON
// types it may have (each must occur at least once), and whether every
// event carries it.
type field struct {
	path   string
	kinds  string // space-separated kinds, see kindOf
	always bool
}

func always(path, kinds string) field    { return field{path, kinds, true} }
func sometimes(path, kinds string) field { return field{path, kinds, false} }

// shapeSpec lists the fields of a source and shape, and paths that must
// never occur.
type shapeSpec struct {
	src    gen.Source
	shape  gen.Shape
	fields []field
	absent []string
}

var edgePlatformFields = []field{
	always("event_message", "string"),
	sometimes("id", "string"),
	always("project", "string"),
	always("timestamp", "string"),
	always("metadata.logflare_worker.worker_id", "string"),
	always("metadata.request.cf.asn", "int"),
	always("metadata.request.cf.city", "string"),
	always("metadata.request.cf.clientTcpRtt", "int"),
	always("metadata.request.cf.colo", "string"),
	always("metadata.request.cf.country", "string"),
	always("metadata.request.cf.httpProtocol", "string"),
	always("metadata.request.cf.latitude", "string"),
	always("metadata.request.cf.longitude", "string"),
	always("metadata.request.cf.region", "string"),
	always("metadata.request.cf.timezone", "string"),
	always("metadata.request.cf.tlsVersion", "string"),
	always("metadata.request.headers.accept", "string"),
	always("metadata.request.headers.cf_connecting_ip", "string"),
	always("metadata.request.headers.cf_ipcountry", "string"),
	always("metadata.request.headers.cf_ray", "string"),
	always("metadata.request.headers.host", "string"),
	sometimes("metadata.request.headers.referer", "string"),
	always("metadata.request.headers.user_agent", "string"),
	sometimes("metadata.request.headers.x_client_info", "string"),
	always("metadata.request.headers.x_forwarded_proto", "string"),
	always("metadata.request.headers.x_real_ip", "string"),
	always("metadata.request.host", "string"),
	always("metadata.request.method", "string"),
	always("metadata.request.path", "string"),
	always("metadata.request.protocol", "string"),
	sometimes("metadata.request.search", "string"),
	always("metadata.request.url", "string"),
	sometimes("metadata.request.sb.jwt.apikey.payload.role", "string"),
	sometimes("metadata.request.sb.jwt.apikey.payload.expires_at", "int"),
	sometimes("metadata.request.sb.jwt.authorization.payload.subject", "string"),
	always("metadata.response.headers.cf_cache_status", "string"),
	always("metadata.response.headers.cf_ray", "string"),
	sometimes("metadata.response.headers.content_length", "string"),
	sometimes("metadata.response.headers.content_type", "string"),
	always("metadata.response.headers.date", "string"),
	always("metadata.response.headers.sb_gateway_mode", "string"),
	always("metadata.response.headers.sb_gateway_version", "string"),
	sometimes("metadata.response.headers.x_kong_proxy_latency", "string"),
	always("metadata.response.origin_time", "int"),
	always("metadata.response.status_code", "int"),
}

var shapeSpecs = []shapeSpec{
	{gen.EdgeLogs, gen.SelfHosted, []field{
		always("appname", "string"),
		always("event_message", "string"),
		always("project", "string"),
		always("timestamp", "string"),
		always("metadata.request.headers.cf_connecting_ip", "string"),
		sometimes("metadata.request.headers.referer", "string null"),
		sometimes("metadata.request.headers.user_agent", "string"),
		sometimes("metadata.request.host", "string"),
		always("metadata.request.method", "string"),
		always("metadata.request.path", "string"),
		always("metadata.request.protocol", "string"),
		always("metadata.response.status_code", "int"),
		sometimes("severity", "string"),
	}, []string{"id", "metadata.request.url", "metadata.request.search", "metadata.request.cf", "metadata.response.headers", "metadata.response.origin_time"}},
	{gen.EdgeLogs, gen.Platform, edgePlatformFields, []string{"appname", "severity"}},

	{gen.PostgresLogs, gen.SelfHosted, []field{
		always("appname", "string"),
		always("event_message", "string"),
		always("project", "string"),
		always("timestamp", "string"),
		always("metadata.host", "string"),
		always("metadata.parsed.error_severity", "string"),
		always("metadata.parsed.timestamp", "string"),
	}, []string{"metadata.parsed.user_name", "metadata.parsed.process_id", "metadata.parsed.query"}},
	{gen.PostgresLogs, gen.Platform, []field{
		always("event_message", "string"),
		always("project", "string"),
		always("timestamp", "string"),
		always("metadata.host", "string"),
		sometimes("metadata.parsed.application_name", "string"),
		always("metadata.parsed.backend_type", "string"),
		sometimes("metadata.parsed.command_tag", "string"),
		sometimes("metadata.parsed.connection_from", "string"),
		sometimes("metadata.parsed.context", "string"),
		sometimes("metadata.parsed.database_name", "string"),
		sometimes("metadata.parsed.detail", "string"),
		always("metadata.parsed.error_severity", "string"),
		always("metadata.parsed.leader_pid", "int"),
		always("metadata.parsed.process_id", "int"),
		sometimes("metadata.parsed.query", "string"),
		always("metadata.parsed.query_id", "int"),
		always("metadata.parsed.session_id", "string"),
		always("metadata.parsed.session_line_num", "int"),
		always("metadata.parsed.session_start_time", "string"),
		always("metadata.parsed.sql_state_code", "string"),
		always("metadata.parsed.timestamp", "string"),
		always("metadata.parsed.transaction_id", "int"),
		sometimes("metadata.parsed.user_name", "string"),
		always("metadata.parsed.virtual_transaction_id", "string"),
	}, []string{"appname"}},

	{gen.FunctionEdgeLogs, gen.SelfHosted, []field{
		always("appname", "string"),
		always("event_message", "string"),
		always("metadata.project_ref", "string"),
		always("timestamp", "string"),
	}, []string{"project", "metadata.function_id"}},
	{gen.FunctionEdgeLogs, gen.Platform, []field{
		always("event_message", "string"),
		always("timestamp", "string"),
		always("metadata.deployment_id", "string"),
		always("metadata.execution_id", "string"),
		always("metadata.execution_time_ms", "int"),
		always("metadata.function_id", "string"),
		always("metadata.project_ref", "string"),
		always("metadata.version", "string"),
		always("metadata.request.headers.accept", "string"),
		always("metadata.request.headers.host", "string"),
		always("metadata.request.headers.user_agent", "string"),
		sometimes("metadata.request.headers.x_client_info", "string"),
		always("metadata.request.host", "string"),
		always("metadata.request.method", "string"),
		always("metadata.request.pathname", "string"),
		always("metadata.request.protocol", "string"),
		sometimes("metadata.request.search", "string"),
		always("metadata.request.url", "string"),
		always("metadata.response.headers.content_type", "string"),
		always("metadata.response.headers.date", "string"),
		always("metadata.response.status_code", "int"),
	}, []string{"project", "appname"}},

	{gen.FunctionLogs, gen.SelfHosted, functionLogFields, []string{"project", "appname"}},
	{gen.FunctionLogs, gen.Platform, functionLogFields, []string{"project", "appname"}},

	{gen.AuthLogs, gen.SelfHosted, append([]field{always("appname", "string")}, authFields...), nil},
	{gen.AuthLogs, gen.Platform, append([]field{always("metadata.host", "string")}, authFields...), []string{"appname"}},

	{gen.RealtimeLogs, gen.SelfHosted, []field{
		always("appname", "string"),
		always("event_message", "string"),
		always("timestamp", "string"),
		always("metadata.external_id", "string"),
		sometimes("metadata.level", "string"),
		always("metadata.project", "string"),
	}, []string{"project", "metadata.context"}},
	{gen.RealtimeLogs, gen.Platform, []field{
		always("event_message", "string"),
		always("timestamp", "string"),
		always("metadata.external_id", "string"),
		always("metadata.level", "string"),
		always("metadata.project", "string"),
		always("metadata.context.application", "string"),
		always("metadata.context.domain", "array"),
		always("metadata.context.line", "int"),
		always("metadata.context.module", "string"),
		always("metadata.context.pid", "string"),
		always("metadata.context.vm.node", "string"),
		sometimes("metadata.error_code", "string"),
	}, []string{"project", "appname"}},

	{gen.StorageLogs, gen.SelfHosted, append([]field{always("appname", "string")}, storageFields...), []string{"project", "metadata.reqId"}},
	{gen.StorageLogs, gen.Platform, append([]field{always("metadata.reqId", "string")}, storageFields...), []string{"project", "appname"}},

	{gen.PostgRESTLogs, gen.SelfHosted, []field{
		always("appname", "string"),
		always("event_message", "string"),
		always("project", "string"),
		always("timestamp", "string"),
		sometimes("metadata.host", "string"),
	}, nil},
	{gen.PostgRESTLogs, gen.Platform, []field{
		always("event_message", "string"),
		always("project", "string"),
		always("timestamp", "string"),
		always("metadata.host", "string"),
	}, []string{"appname"}},

	{gen.PgBouncerLogs, gen.SelfHosted, pgbouncerFields, []string{"appname"}},
	{gen.PgBouncerLogs, gen.Platform, pgbouncerFields, []string{"appname"}},
}

var functionLogFields = []field{
	always("event_message", "string"),
	always("timestamp", "string"),
	always("metadata.deployment_id", "string"),
	always("metadata.event_type", "string"),
	always("metadata.execution_id", "string"),
	always("metadata.function_id", "string"),
	always("metadata.level", "string"),
	always("metadata.project_ref", "string"),
	always("metadata.region", "string"),
	always("metadata.timestamp", "string"),
	always("metadata.version", "string"),
}

var authFields = []field{
	always("event_message", "string"),
	always("project", "string"),
	always("timestamp", "string"),
	sometimes("metadata.component", "string"),
	sometimes("metadata.duration", "int"),
	sometimes("metadata.error", "string"),
	always("metadata.level", "string"),
	sometimes("metadata.method", "string"),
	always("metadata.msg", "string"),
	sometimes("metadata.path", "string"),
	sometimes("metadata.referer", "string"),
	sometimes("metadata.remote_addr", "string"),
	sometimes("metadata.request_id", "string"),
	sometimes("metadata.status", "int"),
	always("metadata.time", "string"),
	always("metadata.timestamp", "string"),
	sometimes("metadata.args", "array"),
	sometimes("metadata.auth_event.action", "string"),
	sometimes("metadata.auth_event.actor_id", "string"),
	sometimes("metadata.auth_event.actor_username", "string"),
	sometimes("metadata.auth_event.actor_via_sso", "bool"),
	sometimes("metadata.auth_event.log_type", "string"),
	sometimes("metadata.auth_event.traits.provider", "string"),
}

var storageFields = []field{
	always("event_message", "string"),
	always("timestamp", "string"),
	always("metadata.context", "array"),
	always("metadata.context[0].host", "string"),
	always("metadata.context[0].pid", "int"),
	always("metadata.level", "string"),
	always("metadata.project", "string"),
	always("metadata.tenantId", "string"),
	always("metadata.timestamp", "string"),
}

var pgbouncerFields = []field{
	always("event_message", "string"),
	always("project", "string"),
	always("timestamp", "string"),
	always("metadata.host", "string"),
}

// TestShapes checks every source and shape carries its fields with the
// right JSON types, and never the fields the real client does not send.
func TestShapes(t *testing.T) {
	if len(shapeSpecs) != 18 {
		t.Fatalf("%d specs, want one per source and shape", len(shapeSpecs))
	}
	for _, spec := range shapeSpecs {
		t.Run(spec.src.Table()+"/"+spec.shape.String(), func(t *testing.T) {
			evs, raw := events(t, spec.src, gen.Options{Seed: 21, Shape: spec.shape}, 1500)
			seen := map[string]bool{}
			for i, ev := range evs {
				for _, f := range spec.fields {
					v, ok := lookup(ev, f.path)
					if !ok {
						if f.always {
							t.Fatalf("event %d lacks %s:\n%s", i, f.path, raw[i])
						}
						continue
					}
					k := kindOf(v)
					if !strings.Contains(" "+f.kinds+" ", " "+k+" ") {
						t.Fatalf("event %d: %s is %s, want %s:\n%s", i, f.path, k, f.kinds, raw[i])
					}
					seen[f.path+" "+k] = true
				}
				for _, p := range spec.absent {
					if _, ok := lookup(ev, p); ok {
						t.Fatalf("event %d has %s, which this shape never carries:\n%s", i, p, raw[i])
					}
				}
			}
			for _, f := range spec.fields {
				for _, k := range strings.Fields(f.kinds) {
					if !seen[f.path+" "+k] {
						t.Errorf("no event has %s as %s", f.path, k)
					}
				}
			}
		})
	}
}

// TestSelfHostedProject: self-hosted events belong to project "default",
// wherever the shape puts it.
func TestSelfHostedProject(t *testing.T) {
	where := map[gen.Source]string{
		gen.FunctionEdgeLogs: "metadata.project_ref",
		gen.FunctionLogs:     "metadata.project_ref",
		gen.RealtimeLogs:     "metadata.project",
		gen.StorageLogs:      "metadata.project",
	}
	for _, src := range gen.AllSources() {
		path := where[src]
		if path == "" {
			path = "project"
		}
		evs, _ := events(t, src, gen.Options{Seed: 2}, 300)
		for _, ev := range evs {
			if p := str(ev, path); p != "default" {
				t.Fatalf("%v: %s = %q", src, path, p)
			}
		}
	}
}

// Vector's remap of Kong lines: parse_nginx_log combined / error formats.
var (
	nginxCombined = regexp.MustCompile(`^(\S+) - - \[(\d{2})/(\w{3})/(\d{4}):(\d{2}:\d{2}:\d{2}) \+0000\] "(\S+) (\S+) (\S+)" (\d{3}) (\d+) "([^"]*)" "([^"]*)"$`)
	nginxError    = regexp.MustCompile(`^(\d{4})/(\d{2})/(\d{2}) (\d{2}:\d{2}:\d{2}) \[(\w+)\] \d+#0: \*\d+ [^"]*, client: (\S+), server: kong, request: "(\S+) (\S+) (\S+)"(, upstream: "http://[^"]*")?, host: "([^"]*)"$`)
)

// TestKongLinesMatchMetadata: the fields Vector extracts agree with the
// line they came from, as they would after parse_nginx_log.
func TestKongLinesMatchMetadata(t *testing.T) {
	evs, raw := events(t, gen.EdgeLogs, gen.Options{Seed: 8}, 6000)
	errors := 0
	for i, ev := range evs {
		msg := str(ev, "event_message")
		if sev := str(ev, "severity"); sev != "" {
			errors++
			m := nginxError.FindStringSubmatch(msg)
			if m == nil {
				t.Fatalf("error line does not parse: %s", msg)
			}
			ts := m[1] + "-" + m[2] + "-" + m[3] + "T" + m[4] + "Z"
			if m[5] != sev || m[6] != str(ev, "metadata.request.headers.cf_connecting_ip") ||
				m[7] != str(ev, "metadata.request.method") || m[8] != str(ev, "metadata.request.path") ||
				m[9] != str(ev, "metadata.request.protocol") || m[11] != str(ev, "metadata.request.host") ||
				ts != str(ev, "timestamp") || num(ev, "metadata.response.status_code") != 200 ||
				!strings.HasPrefix(m[8], "/") {
				t.Fatalf("error line and metadata disagree:\n%s", raw[i])
			}
			continue
		}
		m := nginxCombined.FindStringSubmatch(msg)
		if m == nil {
			t.Fatalf("access line does not parse: %s", msg)
		}
		referer, _ := lookup(ev, "metadata.request.headers.referer")
		wantRef := any(nil)
		if m[11] != "-" {
			wantRef = m[11]
		}
		status, _ := strconv.Atoi(m[9])
		if m[1] != str(ev, "metadata.request.headers.cf_connecting_ip") || m[6] != str(ev, "metadata.request.method") ||
			m[7] != str(ev, "metadata.request.path") || m[8] != str(ev, "metadata.request.protocol") ||
			int64(status) != num(ev, "metadata.response.status_code") || m[12] != str(ev, "metadata.request.headers.user_agent") ||
			referer != wantRef || !strings.HasSuffix(str(ev, "timestamp"), m[5]+"Z") ||
			!strings.HasPrefix(str(ev, "timestamp"), m[4]+"-") {
			t.Fatalf("access line and metadata disagree:\n%s", raw[i])
		}
	}
	if share := float64(errors) / float64(len(evs)); share < 0.01 || share > 0.06 {
		t.Errorf("%.1f%% Kong error lines, want a small share (1–6%%)", 100*share)
	}
}

// TestEdgePlatformConsistency: the worker's message, the request and the
// response describe the same request.
func TestEdgePlatformConsistency(t *testing.T) {
	rayRE := regexp.MustCompile(`^[0-9a-f]{16}$`)
	ipv4 := regexp.MustCompile(`^\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3}$`)
	evs, raw := events(t, gen.EdgeLogs, gen.Options{Seed: 13, Shape: gen.Platform}, 5000)
	colos := map[string]string{}
	ips := map[string]bool{}
	v6 := 0
	for i, ev := range evs {
		parts := strings.Split(str(ev, "event_message"), " | ")
		host, path, search := str(ev, "metadata.request.host"), str(ev, "metadata.request.path"), str(ev, "metadata.request.search")
		url := "https://" + host + path + search
		ray := str(ev, "metadata.request.headers.cf_ray")
		colo := str(ev, "metadata.request.cf.colo")
		ip := str(ev, "metadata.request.headers.cf_connecting_ip")
		ok := len(parts) == 6 &&
			parts[0] == str(ev, "metadata.request.method") &&
			parts[1] == strconv.FormatInt(num(ev, "metadata.response.status_code"), 10) &&
			parts[2] == ip && ip == str(ev, "metadata.request.headers.x_real_ip") &&
			parts[3] == ray && rayRE.MatchString(ray) &&
			str(ev, "metadata.response.headers.cf_ray") == ray+"-"+colo &&
			parts[4] == url && str(ev, "metadata.request.url") == url &&
			parts[5] == str(ev, "metadata.request.headers.user_agent") &&
			host == str(ev, "metadata.request.headers.host") &&
			host == str(ev, "project")+".supabase.co" &&
			str(ev, "metadata.request.headers.cf_ipcountry") == str(ev, "metadata.request.cf.country") &&
			(search == "" || strings.HasPrefix(search, "?")) &&
			!strings.Contains(path, "?")
		if !ok {
			t.Fatalf("event %d is inconsistent:\n%s", i, raw[i])
		}
		if prev, seen := colos[colo]; seen && prev != str(ev, "metadata.request.cf.country") {
			t.Fatalf("colo %s serves both %s and %s", colo, prev, str(ev, "metadata.request.cf.country"))
		}
		colos[colo] = str(ev, "metadata.request.cf.country")
		ips[ip] = true
		if !ipv4.MatchString(ip) {
			v6++
		}
	}
	if len(ips) > len(evs)/2 {
		t.Errorf("%d distinct client IPs in %d events: clients should repeat", len(ips), len(evs))
	}
	if share := float64(v6) / float64(len(evs)); share < 0.005 || share > 0.25 {
		t.Errorf("%.1f%% IPv6 clients, want a minority", 100*share)
	}
	if len(colos) < 10 {
		t.Errorf("only %d colos", len(colos))
	}
}

// vectorLevel is the regex Vector's db transform applies to Postgres lines.
var vectorLevel = regexp.MustCompile(`.*(INFO|NOTICE|WARNING|ERROR|LOG|FATAL|PANIC?):.*`)

// TestPostgresSeverities: the severity in metadata is what Vector's regex
// extracts from the line, and LOG dominates.
func TestPostgresSeverities(t *testing.T) {
	line := regexp.MustCompile(`^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}\.\d{3} UTC \[\d+\] [A-Z]+:  \S`)
	evs, raw := events(t, gen.PostgresLogs, gen.Options{Seed: 17}, 5000)
	counts := map[string]int{}
	for i, ev := range evs {
		msg := str(ev, "event_message")
		if !line.MatchString(msg) {
			t.Fatalf("line has not the text log form:\n%s", raw[i])
		}
		want := "LOG"
		if m := vectorLevel.FindStringSubmatch(msg); m != nil {
			want = m[1]
		}
		got := str(ev, "metadata.parsed.error_severity")
		if got != want {
			t.Fatalf("error_severity %s, Vector would extract %s:\n%s", got, want, raw[i])
		}
		if str(ev, "metadata.parsed.timestamp") != str(ev, "timestamp") {
			t.Fatalf("parsed.timestamp differs from timestamp:\n%s", raw[i])
		}
		counts[got]++
	}
	checkShares(t, counts, len(evs), map[string][2]float64{
		"LOG": {0.80, 0.93}, "ERROR": {0.03, 0.10}, "WARNING": {0.01, 0.05}, "FATAL": {0.005, 0.04},
		"NOTICE": {0.002, 0.03}, "INFO": {0.002, 0.02},
	})

	evs, _ = events(t, gen.PostgresLogs, gen.Options{Seed: 17, Shape: gen.Platform}, 5000)
	counts = map[string]int{}
	for _, ev := range evs {
		counts[str(ev, "metadata.parsed.error_severity")]++
		if strings.Contains(str(ev, "event_message"), " UTC [") {
			t.Fatalf("platform message carries the log prefix: %s", str(ev, "event_message"))
		}
	}
	checkShares(t, counts, len(evs), map[string][2]float64{
		"LOG": {0.80, 0.93}, "ERROR": {0.04, 0.10}, "WARNING": {0.01, 0.05}, "FATAL": {0.005, 0.04},
		"NOTICE": {0.002, 0.03}, "INFO": {0.002, 0.02},
	})
}

// checkShares asserts each key's share of n lies in its range.
func checkShares(t *testing.T, counts map[string]int, n int, want map[string][2]float64) {
	t.Helper()
	for k, r := range want {
		share := float64(counts[k]) / float64(n)
		t.Logf("%s: %.2f%%", k, 100*share)
		if share < r[0] || share > r[1] {
			t.Errorf("%s: %.2f%%, want %.1f–%.1f%%", k, 100*share, 100*r[0], 100*r[1])
		}
	}
}

// TestAuthMessageIsTheLine: event_message is GoTrue's JSON line and
// metadata holds its fields plus timestamp = time.
func TestAuthMessageIsTheLine(t *testing.T) {
	for _, shape := range shapes {
		evs, raw := events(t, gen.AuthLogs, gen.Options{Seed: 19, Shape: shape}, 1500)
		audits := 0
		for i, ev := range evs {
			var line map[string]any
			d := json.NewDecoder(strings.NewReader(str(ev, "event_message")))
			d.UseNumber()
			if err := d.Decode(&line); err != nil {
				t.Fatalf("event_message is not JSON: %v\n%s", err, raw[i])
			}
			meta := ev["metadata"].(map[string]any)
			extra := 1 // timestamp
			if shape == gen.Platform {
				extra = 2 // and host
			}
			if len(meta) != len(line)+extra {
				t.Fatalf("metadata has %d keys, line %d:\n%s", len(meta), len(line), raw[i])
			}
			for k, v := range line {
				a, _ := json.Marshal(v)
				b, _ := json.Marshal(meta[k])
				if string(a) != string(b) {
					t.Fatalf("metadata.%s = %s, line has %s", k, b, a)
				}
			}
			if meta["timestamp"] != line["time"] {
				t.Fatalf("metadata.timestamp %v != time %v", meta["timestamp"], line["time"])
			}
			if line["msg"] == "audit_event" {
				audits++
				if _, ok := lookup(ev, "metadata.auth_event.actor_id"); !ok {
					t.Fatalf("audit event without actor:\n%s", raw[i])
				}
			}
		}
		if audits < 150 || audits > 350 {
			t.Errorf("%v: %d audit events in 1500", shape, audits)
		}
	}
}

// TestStorageRequestLines: request lines are "METHOD | status | ip | reqId |
// path | agent", with the level following the status, and the platform's
// reqId is the line's.
func TestStorageRequestLines(t *testing.T) {
	for _, shape := range shapes {
		evs, raw := events(t, gen.StorageLogs, gen.Options{Seed: 23, Shape: shape}, 1500)
		requests := 0
		for i, ev := range evs {
			parts := strings.Split(str(ev, "event_message"), " | ")
			if len(parts) != 6 {
				continue
			}
			requests++
			status, err := strconv.Atoi(parts[1])
			want := "info"
			switch {
			case status >= 500:
				want = "error"
			case status >= 400:
				want = "warn"
			}
			if err != nil || str(ev, "metadata.level") != want || !strings.HasPrefix(parts[4], "/") {
				t.Fatalf("bad request line or level:\n%s", raw[i])
			}
			if shape == gen.Platform && str(ev, "metadata.reqId") != parts[3] {
				t.Fatalf("reqId differs from the line's:\n%s", raw[i])
			}
			if arr := ev["metadata"].(map[string]any)["context"].([]any); len(arr) != 1 {
				t.Fatalf("context has %d elements", len(arr))
			}
		}
		if requests < 1250 {
			t.Errorf("%v: only %d request lines in 1500", shape, requests)
		}
	}
}

// TestFunctionExecutions: function log events of one execution share their
// function, and event types follow boot → log… → shutdown.
func TestFunctionExecutions(t *testing.T) {
	evs, raw := events(t, gen.FunctionLogs, gen.Options{Seed: 29, Shape: gen.Platform}, 10000)
	fn := map[string]string{}
	ended := map[string]bool{}
	types := map[string]int{}
	for i, ev := range evs {
		id, typ := str(ev, "metadata.execution_id"), str(ev, "metadata.event_type")
		types[typ]++
		if ended[id] {
			t.Fatalf("event after its execution ended:\n%s", raw[i])
		}
		if f, ok := fn[id]; ok && f != str(ev, "metadata.function_id") {
			t.Fatalf("execution changed function:\n%s", raw[i])
		}
		if typ == "boot" && fn[id] != "" {
			t.Fatalf("boot in the middle of an execution:\n%s", raw[i])
		}
		fn[id] = str(ev, "metadata.function_id")
		if typ == "shutdown" || typ == "uncaughtException" {
			ended[id] = true
		}
		if !strings.HasPrefix(str(ev, "metadata.deployment_id"), str(ev, "metadata.project_ref")+"_"+str(ev, "metadata.function_id")+"_") {
			t.Fatalf("deployment_id does not name project and function:\n%s", raw[i])
		}
	}
	checkShares(t, types, len(evs), map[string][2]float64{
		"log": {0.70, 0.92}, "boot": {0.02, 0.15}, "shutdown": {0.03, 0.2}, "uncaughtException": {0.001, 0.03},
	})
}
