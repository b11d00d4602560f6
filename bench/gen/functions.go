package gen

// deno-relay-logs (function edge logs) and deno-subhosting-events
// (function logs).

var (
	functionStatuses = newChoice(
		weighted[int]{800, 200}, weighted[int]{30, 201}, weighted[int]{40, 401}, weighted[int]{30, 400},
		weighted[int]{20, 404}, weighted[int]{50, 500}, weighted[int]{10, 503}, weighted[int]{10, 504},
		weighted[int]{5, 546}, weighted[int]{5, 502},
	)
	executionTimes = newSpans(
		weighted[span]{200, span{1, 20}}, weighted[span]{350, span{20, 100}}, weighted[span]{300, span{100, 500}},
		weighted[span]{100, span{500, 2000}}, weighted[span]{40, span{2000, 10000}}, weighted[span]{10, span{10000, 150000}},
	)
)

// Console output of user functions. These go through appendEscaped: they
// contain quotes and newlines, as real console.log output does.
var functionConsole = newChoice(
	weighted[string]{20, "Hello from Functions!"},
	weighted[string]{15, `{ name: "Functions", count: 3 }`},
	weighted[string]{10, "Processing payment for order 18273"},
	weighted[string]{10, "Embedding generated in 412ms"},
	weighted[string]{8, "Sent confirmation email to user 0b1c6f5e-3a2d-4f8e-9c1a-2b3d4e5f6a7b"},
	weighted[string]{8, "Webhook received: checkout.session.completed"},
	weighted[string]{6, "cache miss for key user:1234"},
	weighted[string]{6, "Request body is empty, using defaults"},
	weighted[string]{5, "Error: Failed to fetch: 503 Service Unavailable\n    at handler (file:///home/deno/functions/main/index.ts:23:11)"},
	weighted[string]{5, "TypeError: Cannot read properties of undefined (reading 'id')"},
	weighted[string]{4, "Error: Missing authorization header"},
	weighted[string]{3, "\tat async Server.<anonymous> (ext:sb_core_main_js/js/http.js:104:7)"},
)

var consoleLevels = newChoice(
	weighted[string]{40, "info"}, weighted[string]{25, "log"}, weighted[string]{5, "debug"},
	weighted[string]{15, "warning"}, weighted[string]{15, "error"},
)

var relaySelfHosted = newChoice(
	weighted[int]{40, 0}, // serving the request with …
	weighted[int]{35, 1}, // user console output
	weighted[int]{10, 2}, // booted
	weighted[int]{8, 3},  // shutdown
	weighted[int]{4, 4},  // worker errors
	weighted[int]{3, 5},  // runtime startup
)

var shutdownReasons = []string{"EventLoopCompleted", "EventLoopCompleted", "EventLoopCompleted", "WallClockTime", "EarlyDrop", "CPUTime", "Memory"}

func (g *Generator) appendFunctionEdge(dst []byte, ts int64) []byte {
	if g.opts.Shape == Platform {
		return g.appendFunctionEdgePlatform(dst, ts)
	}
	r := &g.r
	p := g.projects.get(0)
	f := &p.functions[r.intn(len(p.functions))]
	dst = append(dst, `{"appname":"supabase-edge-functions",`...)
	dst = g.appendMessageKey(dst)
	dst = append(dst, '"')
	switch relaySelfHosted.pick(r) {
	case 0:
		dst = append(dst, "serving the request with /home/deno/functions/"...)
		dst = append(dst, f.name...)
	case 1:
		dst = appendEscaped(dst, functionConsole.pick(r))
	case 2:
		dst = append(dst, "booted (time: "...)
		dst = appendInt(dst, 15+r.intn(120))
		dst = append(dst, "ms)"...)
	case 3:
		dst = append(dst, "shutdown (reason: "...)
		dst = append(dst, shutdownReasons[r.intn(len(shutdownReasons))]...)
		dst = append(dst, ')')
	case 4:
		if r.intn(2) == 0 {
			dst = append(dst, "InvalidWorkerCreation: worker boot error: failed to bootstrap runtime: could not find an appropriate entrypoint"...)
		} else {
			dst = append(dst, "event loop error: Error: Deno.serve() is not allowed in this context"...)
		}
	default:
		dst = append(dst, "main function started"...)
	}
	dst = append(dst, `","metadata":{"project_ref":"default"}`...)
	dst = g.appendTimestamp(dst, ts, digitsVector)
	return append(dst, '}')
}

// appendFunctionEdgePlatform writes one function invocation as the relay
// logs it.
func (g *Generator) appendFunctionEdgePlatform(dst []byte, ts int64) []byte {
	r := &g.r
	pi := g.projects.pick(r)
	p := g.projects.get(pi)
	c := g.clients.pick(r, pi)
	f := &p.functions[r.intn(len(p.functions))]
	method := methodsFunctions.pick(r)
	status := functionStatuses.pick(r)
	if method == "OPTIONS" {
		status = 200
	}
	withQuery := method == "GET" && r.intn(2) == 0
	qv := r.intn(1 << 30)

	dst = append(dst, '{')
	dst = g.appendMessageKey(dst)
	dst = append(dst, '"')
	dst = append(dst, method...)
	dst = append(dst, " | "...)
	dst = appendInt(dst, status)
	dst = append(dst, " | "...)
	dst = g.appendFunctionURL(dst, p, f, withQuery, qv)
	dst = append(dst, `","metadata":{"deployment_id":"`...)
	dst = append(dst, f.deploymentID...)
	dst = append(dst, `","execution_id":"`...)
	dst = appendUUID(dst, r)
	dst = append(dst, `","execution_time_ms":`...)
	dst = appendInt(dst, executionTimes.draw(r))
	dst = append(dst, `,"function_id":"`...)
	dst = append(dst, f.id...)
	dst = append(dst, `","project_ref":"`...)
	dst = append(dst, p.ref...)
	dst = append(dst, `","request":{"headers":{"accept":"*/*","accept_encoding":"gzip, deflate, br"`...)
	if method == "POST" {
		dst = append(dst, `,"content_length":`...)
		dst = appendIntString(dst, 2+r.intn(4000))
	}
	dst = append(dst, `,"host":"`...)
	dst = append(dst, p.host...)
	dst = append(dst, `","user_agent":`...)
	dst = appendSafe(dst, c.ua.ua)
	if c.ua.clientInfo != "" {
		dst = append(dst, `,"x_client_info":`...)
		dst = appendSafe(dst, c.ua.clientInfo)
	}
	dst = append(dst, `},"host":"`...)
	dst = append(dst, p.host...)
	dst = append(dst, `","method":"`...)
	dst = append(dst, method...)
	dst = append(dst, `","pathname":"/functions/v1/`...)
	dst = append(dst, f.name...)
	dst = append(dst, `","protocol":"https:"`...)
	if withQuery {
		dst = append(dst, `,"search":"?time=`...)
		dst = appendInt(dst, qv)
		dst = append(dst, '"')
	}
	dst = append(dst, `,"url":"`...)
	dst = g.appendFunctionURL(dst, p, f, withQuery, qv)
	dst = append(dst, `"},"response":{"headers":{"content_length":`...)
	dst = appendIntString(dst, 2+r.intn(3000))
	dst = append(dst, `,"content_type":"`...)
	if r.intn(3) == 0 {
		dst = append(dst, "text/plain;charset=UTF-8"...)
	} else {
		dst = append(dst, "application/json"...)
	}
	dst = append(dst, `","date":"`...)
	dst = appendHTTPDate(dst, g.cal.at(ts))
	dst = append(dst, `","server":"deno/`...)
	dst = append(dst, f.region...)
	dst = append(dst, `","vary":"Accept-Encoding"},"status_code":`...)
	dst = appendInt(dst, status)
	dst = append(dst, `},"version":"`...)
	dst = append(dst, f.version...)
	dst = append(dst, `"}`...)
	dst = g.appendTimestamp(dst, ts, digitsPlatform)
	return append(dst, '}')
}

func (g *Generator) appendFunctionURL(dst []byte, p *project, f *function, withQuery bool, qv int) []byte {
	dst = append(dst, p.origin...)
	dst = append(dst, "/functions/v1/"...)
	dst = append(dst, f.name...)
	if withQuery {
		dst = append(dst, "?time="...)
		dst = appendInt(dst, qv)
	}
	return dst
}

// execution is a running function invocation whose events are interleaved
// with others': optionally a boot, some console lines, then a shutdown or an
// uncaught exception.
type execution struct {
	active    bool
	project   int
	fn        int
	id        [36]byte
	remaining int
}

type functionState struct {
	execs [16]execution
}

var consoleLinesPerExecution = newSpans(weighted[span]{50, span{1, 3}}, weighted[span]{35, span{3, 10}}, weighted[span]{15, span{10, 40}})

func (g *Generator) appendFunctionLog(dst []byte, ts int64) []byte {
	r := &g.r
	x := &g.fn.execs[r.intn(len(g.fn.execs))]
	eventType, level := "log", ""
	switch {
	case !x.active:
		x.active = true
		x.project = g.projects.pick(r)
		x.fn = r.intn(len(g.projects.get(x.project).functions))
		appendUUID(x.id[:0], r) // fills the array in place: a UUID is exactly 36 bytes
		x.remaining = consoleLinesPerExecution.draw(r)
		if r.intn(10) < 7 { // cold start
			eventType, level = "boot", "log"
		}
	case x.remaining == 0:
		x.active = false
		if r.intn(100) < 8 {
			eventType, level = "uncaughtException", "error"
		} else {
			eventType, level = "shutdown", "log"
		}
	}
	if eventType == "log" {
		x.remaining--
		level = consoleLevels.pick(r)
	}
	p := g.projects.get(x.project)
	f := &p.functions[x.fn]

	dst = append(dst, '{')
	dst = g.appendMessageKey(dst)
	dst = append(dst, '"')
	switch eventType {
	case "boot":
		dst = append(dst, "booted (time: "...)
		dst = appendInt(dst, 15+r.intn(120))
		dst = append(dst, "ms)"...)
	case "shutdown":
		dst = append(dst, "shutdown"...)
	case "uncaughtException":
		dst = append(dst, `Uncaught (in promise) TypeError: Cannot read properties of null (reading 'email')\n    at Server.<anonymous> (file:///home/deno/functions/`...)
		dst = append(dst, f.name...)
		dst = append(dst, `/index.ts:42:28)`...)
	default:
		dst = appendEscaped(dst, functionConsole.pick(r))
	}
	dst = append(dst, `","metadata":{"deployment_id":"`...)
	dst = append(dst, f.deploymentID...)
	dst = append(dst, `","event_type":"`...)
	dst = append(dst, eventType...)
	dst = append(dst, `","execution_id":"`...)
	dst = append(dst, x.id[:]...)
	dst = append(dst, `","function_id":"`...)
	dst = append(dst, f.id...)
	dst = append(dst, `","level":"`...)
	dst = append(dst, level...)
	dst = append(dst, `","project_ref":"`...)
	dst = append(dst, p.ref...)
	dst = append(dst, `","region":"`...)
	dst = append(dst, f.region...)
	dst = append(dst, `","timestamp":"`...)
	dst = appendISO(dst, g.cal.at(ts), 9)
	dst = append(dst, `+00:00","version":"`...)
	dst = append(dst, f.version...)
	dst = append(dst, `"}`...)
	dst = g.appendTimestamp(dst, ts, g.nativeDigits())
	return append(dst, '}')
}
