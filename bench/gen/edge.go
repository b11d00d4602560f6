package gen

// cloudflare.logs.prod: edge (API gateway) request logs.

// edgeState is the per-generator state of edge events.
type edgeState struct {
	workers   []string // Logflare worker ids
	kongPIDs  [2]int   // nginx worker pids of the self-hosted Kong
	kongConns int      // nginx connection counter (*N in error lines)
}

func (e *edgeState) init(r *rng) {
	const alphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ"
	e.workers = make([]string, 48)
	for i := range e.workers {
		var b [6]byte
		for k := range b {
			b[k] = alphabet[r.intn(len(alphabet))]
		}
		e.workers[i] = string(b[:])
	}
	e.kongPIDs = [2]int{1200 + r.intn(200), 1400 + r.intn(200)}
	e.kongConns = 1 + r.intn(5000)
}

func (g *Generator) appendEdge(dst []byte, ts int64) []byte {
	if g.opts.Shape == Platform {
		return g.appendEdgePlatform(dst, ts)
	}
	if g.r.permille(30) {
		return g.appendKongError(dst, ts)
	}
	return g.appendKongAccess(dst, ts)
}

// kongClientIP picks the self-hosted client address: mostly the docker
// gateway (browsers reaching Kong through the published port), sometimes a
// real address forwarded by a proxy in front.
func (g *Generator) kongClientIP(c *client) string {
	switch x := g.r.intn(100); {
	case x < 65:
		return "172.18.0.1"
	case x < 75:
		return "172.18.0.5" // studio
	}
	return c.ip
}

// appendKongAccess writes a Kong access-log line as Vector's kong_logs
// transform ships it.
func (g *Generator) appendKongAccess(dst []byte, ts int64) []byte {
	p := g.projects.get(0)
	c := g.clients.pick(&g.r, 0)
	q := g.reqs.draw(&g.r, &selfHostedKinds, p)
	ip := g.kongClientIP(c)
	proto := "HTTP/1.1"
	if g.r.intn(10) == 0 {
		proto = "HTTP/2.0"
	}
	cv := g.cal.at(ts)

	dst = append(dst, `{"appname":"supabase-kong",`...)
	dst = g.appendMessageKey(dst)
	dst = append(dst, '"')
	dst = append(dst, ip...)
	dst = append(dst, ` - - [`...)
	dst = appendNginxAccessTime(dst, cv)
	dst = append(dst, `] \"`...)
	dst = append(dst, q.method...)
	dst = append(dst, ' ')
	dst = appendPathQuery(dst, q)
	dst = append(dst, ' ')
	dst = append(dst, proto...)
	dst = append(dst, `\" `...)
	dst = appendInt(dst, q.status)
	dst = append(dst, ' ')
	dst = appendInt(dst, q.length)
	dst = append(dst, ` \"`...)
	hasReferer := c.ua.browser
	refPath := refererPaths[g.r.intn(len(refererPaths))]
	if hasReferer {
		dst = append(dst, p.appOrigin...)
		dst = append(dst, refPath...)
	} else {
		dst = append(dst, '-')
	}
	dst = append(dst, `\" \"`...)
	dst = append(dst, c.ua.ua...)
	dst = append(dst, `\"`...)
	rare := g.rare()
	if rare {
		dst = append(dst, ' ')
		dst = appendEscaped(dst, g.opts.RareToken)
	}
	dst = append(dst, '"')

	dst = append(dst, `,"metadata":{"request":{"headers":{"cf_connecting_ip":"`...)
	dst = append(dst, ip...)
	dst = append(dst, `","referer":`...)
	if hasReferer {
		dst = append(dst, '"')
		dst = append(dst, p.appOrigin...)
		dst = append(dst, refPath...)
		dst = append(dst, '"')
	} else {
		dst = append(dst, "null"...) // Vector assigns the missing field: null
	}
	dst = append(dst, `,"user_agent":`...)
	dst = appendSafe(dst, c.ua.ua)
	dst = append(dst, `},"method":"`...)
	dst = append(dst, q.method...)
	dst = append(dst, `","path":"`...)
	dst = appendPathQuery(dst, q)
	dst = append(dst, `","protocol":"`...)
	dst = append(dst, proto...)
	dst = append(dst, `"},"response":{"status_code":`...)
	dst = appendInt(dst, q.status)
	dst = append(dst, `}},"project":"default"`...)
	dst = g.appendTimestamp(dst, ts, digitsSeconds)
	g.factPath = appendPathQuery(g.factPath[:0], q)
	g.setEdgeFacts(ts, digitsSeconds, p, q, q.status, g.factPath, nil, "", rare)
	return append(dst, '}')
}

func appendPathQuery(dst []byte, q *request) []byte {
	dst = append(dst, q.path...)
	if len(q.query) > 0 {
		dst = append(dst, '?')
		dst = append(dst, q.query...)
	}
	return dst
}

// kongError is one kind of nginx error-log line Kong writes about a request.
type kongError struct {
	severity string
	text     string
	upstream bool // the line names the upstream URL
}

var kongErrors = newChoice(
	weighted[kongError]{40, kongError{"error", "connect() failed (111: Connection refused) while connecting to upstream", true}},
	weighted[kongError]{25, kongError{"error", "upstream timed out (110: Connection timed out) while reading response header from upstream", true}},
	weighted[kongError]{15, kongError{"error", "recv() failed (104: Connection reset by peer) while reading response header from upstream", true}},
	weighted[kongError]{10, kongError{"warn", "an upstream response is buffered to a temporary file /usr/local/kong/proxy_temp/1/00/0000000001 while reading upstream", true}},
	weighted[kongError]{6, kongError{"warn", "a client request body is buffered to a temporary file /usr/local/kong/client_body_temp/0000000012", false}},
	weighted[kongError]{4, kongError{"error", "client intended to send too large body: 52428801 bytes", false}},
)

// upstreamOf maps an API to the self-hosted container Kong proxies it to and
// the path prefix Kong strips.
func upstreamOf(k apiKind) (base, strip, add string) {
	switch k {
	case kindRestSelect, kindRestWrite, kindRPC:
		return "http://172.18.0.7:3000", "/rest/v1", ""
	case kindGraphQL:
		return "http://172.18.0.7:3000", "/graphql/v1", "/rpc/graphql"
	case kindAuthToken, kindAuthUser, kindAuthOther:
		return "http://172.18.0.4:9999", "/auth/v1", ""
	case kindStorageObject, kindStorageRender:
		return "http://172.18.0.9:5000", "/storage/v1", ""
	case kindRealtime:
		return "http://172.18.0.8:4000", "/realtime/v1", "/socket"
	case kindFunctions:
		return "http://172.18.0.10:9000", "/functions/v1", ""
	}
	return "http://172.18.0.6:8080", "/pg", ""
}

// appendKongError writes a Kong error-log line as Vector's kong_err
// transform ships it: a top-level severity, request.host, and the default
// method and status the transform sets before parsing.
func (g *Generator) appendKongError(dst []byte, ts int64) []byte {
	p := g.projects.get(0)
	q := g.reqs.draw(&g.r, &selfHostedKinds, p)
	ke := kongErrors.pick(&g.r)
	ip := "172.18.0.1"
	e := &g.edge
	e.kongConns += 1 + g.r.intn(40)
	cv := g.cal.at(ts)

	dst = append(dst, `{"appname":"supabase-kong",`...)
	dst = g.appendMessageKey(dst)
	dst = append(dst, '"')
	dst = appendNginxErrorTime(dst, cv)
	dst = append(dst, " ["...)
	dst = append(dst, ke.severity...)
	dst = append(dst, "] "...)
	dst = appendInt(dst, e.kongPIDs[g.r.intn(2)])
	dst = append(dst, "#0: *"...)
	dst = appendInt(dst, e.kongConns)
	dst = append(dst, ' ')
	dst = append(dst, ke.text...)
	dst = append(dst, ", client: "...)
	dst = append(dst, ip...)
	dst = append(dst, `, server: kong, request: \"`...)
	dst = append(dst, q.method...)
	dst = append(dst, ' ')
	dst = appendPathQuery(dst, q)
	dst = append(dst, ` HTTP/1.1\"`...)
	if ke.upstream {
		base, strip, add := upstreamOf(q.kind)
		dst = append(dst, `, upstream: \"`...)
		dst = append(dst, base...)
		dst = append(dst, add...)
		if rest := q.path[min(len(strip), len(q.path)):]; len(rest) > 0 {
			dst = append(dst, rest...)
		} else if add == "" {
			dst = append(dst, '/')
		}
		if len(q.query) > 0 {
			dst = append(dst, '?')
			dst = append(dst, q.query...)
		}
		dst = append(dst, `\"`...)
	}
	dst = append(dst, `, host: \"localhost:8000\"`...)
	rare := g.rare()
	if rare {
		dst = append(dst, ' ')
		dst = appendEscaped(dst, g.opts.RareToken)
	}
	dst = append(dst, '"')

	dst = append(dst, `,"metadata":{"request":{"headers":{"cf_connecting_ip":"`...)
	dst = append(dst, ip...)
	dst = append(dst, `"},"host":"localhost:8000","method":"`...)
	dst = append(dst, q.method...)
	dst = append(dst, `","path":"`...)
	dst = appendPathQuery(dst, q)
	dst = append(dst, `","protocol":"HTTP/1.1"},"response":{"status_code":200}},"project":"default","severity":"`...)
	dst = append(dst, ke.severity...)
	dst = append(dst, '"')
	dst = g.appendTimestamp(dst, ts, digitsSeconds)
	g.factPath = appendPathQuery(g.factPath[:0], q)
	g.setEdgeFacts(ts, digitsSeconds, p, q, 200, g.factPath, nil, "", rare)
	return append(dst, '}')
}

// Accept headers by API.
var (
	acceptJSON    = newChoice(weighted[string]{60, "application/json"}, weighted[string]{30, "*/*"}, weighted[string]{10, "application/vnd.pgrst.object+json"})
	acceptBrowser = "image/avif,image/webp,image/apng,image/svg+xml,image/*,*/*;q=0.8"
)

// appendEdgePlatform writes the platform edge event: the Logflare
// Cloudflare worker's message and request/response metadata.
func (g *Generator) appendEdgePlatform(dst []byte, ts int64) []byte {
	r := &g.r
	pi := g.projects.pick(r)
	p := g.projects.get(pi)
	c := g.clients.pick(r, pi)
	q := g.reqs.draw(r, &platformKinds, p)
	var ray [16]byte // the Cloudflare ray id, written three times
	appendHex(ray[:0], r.next(), 16)
	cv := g.cal.at(ts)

	// event_message: "<METHOD> | <status> | <ip> | <ray> | <url> | <ua>"
	dst = append(dst, '{')
	dst = g.appendMessageKey(dst)
	dst = append(dst, '"')
	dst = append(dst, q.method...)
	dst = append(dst, " | "...)
	dst = appendInt(dst, q.status)
	dst = append(dst, " | "...)
	dst = append(dst, c.ip...)
	dst = append(dst, " | "...)
	dst = append(dst, ray[:]...)
	dst = append(dst, " | "...)
	dst = append(dst, p.origin...)
	dst = appendPathQuery(dst, q)
	dst = append(dst, " | "...)
	dst = append(dst, c.ua.ua...)
	rare := g.rare()
	if rare {
		dst = append(dst, " | "...)
		dst = appendEscaped(dst, g.opts.RareToken)
	}
	dst = append(dst, '"')

	// id: most events carry one; the rest get a server-generated id.
	if r.permille(500) {
		dst = append(dst, `,"id":"`...)
		dst = appendUUID(dst, r)
		dst = append(dst, '"')
	}

	dst = append(dst, `,"metadata":{"logflare_worker":{"worker_id":"`...)
	dst = append(dst, g.edge.workers[r.intn(len(g.edge.workers))]...)
	dst = append(dst, `"},"request":{`...)
	dst = append(dst, c.cfHead...)
	dst = appendInt(dst, c.rtt+r.intn(c.rtt/2+3))
	dst = append(dst, c.cfTail...)

	dst = append(dst, `,"headers":{"accept":`...)
	switch {
	case c.ua.browser && q.fileType != "" && q.method == "GET":
		dst = appendSafe(dst, acceptBrowser)
	default:
		dst = appendSafe(dst, acceptJSON.pick(r))
	}
	dst = append(dst, `,"cf_connecting_ip":"`...)
	dst = append(dst, c.ip...)
	dst = append(dst, `","cf_ipcountry":"`...)
	dst = append(dst, c.loc.country...)
	dst = append(dst, `","cf_ray":"`...)
	dst = append(dst, ray[:]...)
	dst = append(dst, `","host":"`...)
	dst = append(dst, p.host...)
	dst = append(dst, '"')
	if c.ua.browser {
		dst = append(dst, `,"referer":"`...)
		dst = append(dst, p.appOrigin...)
		dst = append(dst, refererPaths[r.intn(len(refererPaths))]...)
		dst = append(dst, '"')
	}
	dst = append(dst, `,"user_agent":`...)
	dst = appendSafe(dst, c.ua.ua)
	if c.ua.clientInfo != "" {
		dst = append(dst, `,"x_client_info":`...)
		dst = appendSafe(dst, c.ua.clientInfo)
	}
	dst = append(dst, `,"x_forwarded_proto":"https","x_real_ip":"`...)
	dst = append(dst, c.ip...)
	dst = append(dst, `"},"host":"`...)
	dst = append(dst, p.host...)
	dst = append(dst, `","method":"`...)
	dst = append(dst, q.method...)
	dst = append(dst, `","path":"`...)
	dst = append(dst, q.path...)
	dst = append(dst, `","protocol":"https:"`...)
	if q.method != "OPTIONS" && q.kind != kindRealtime && r.permille(60) {
		dst = g.appendSB(dst, p, c)
	}
	if len(q.query) > 0 {
		dst = append(dst, `,"search":"?`...)
		dst = append(dst, q.query...)
		dst = append(dst, '"')
	}
	dst = append(dst, `,"url":"`...)
	dst = append(dst, p.origin...)
	dst = appendPathQuery(dst, q)

	dst = append(dst, `"},"response":{"headers":{"cf_cache_status":"`...)
	if q.fileType != "" && q.method == "GET" {
		dst = append(dst, cacheStatuses.pick(r)...)
	} else {
		dst = append(dst, "DYNAMIC"...)
	}
	dst = append(dst, `","cf_ray":"`...)
	dst = append(dst, ray[:]...)
	dst = append(dst, '-')
	dst = append(dst, c.loc.colo...)
	dst = append(dst, '"')
	if q.contentType != "" {
		// PostgREST streams large results chunked, with a Content-Range
		// instead of a Content-Length.
		if q.kind == kindRestSelect && q.length > 2000 && r.intn(2) == 0 {
			dst = append(dst, `,"content_range":"0-`...)
			dst = appendInt(dst, q.length/200)
			dst = append(dst, `/*"`...)
		} else {
			dst = append(dst, `,"content_length":`...)
			dst = appendIntString(dst, q.length)
		}
		dst = append(dst, `,"content_type":`...)
		dst = appendSafe(dst, q.contentType)
	}
	dst = append(dst, `,"date":"`...)
	dst = appendHTTPDate(dst, cv)
	dst = append(dst, `","sb_gateway_mode":"direct","sb_gateway_version":"1"`...)
	if r.permille(250) {
		dst = append(dst, `,"x_kong_proxy_latency":`...)
		dst = appendIntString(dst, kongLatencies.draw(r))
	}
	dst = append(dst, `},"origin_time":`...)
	dst = appendInt(dst, g.originTime(q))
	dst = append(dst, `,"status_code":`...)
	dst = appendInt(dst, q.status)
	dst = append(dst, `}},"project":"`...)
	dst = append(dst, p.ref...)
	dst = append(dst, '"')
	dst = g.appendTimestamp(dst, ts, digitsPlatform)
	g.setEdgeFacts(ts, digitsPlatform, p, q, q.status, q.path, q.query, p.origin, rare)
	return append(dst, '}')
}

// originTime draws the origin's response time in ms; gateway timeouts take
// the full proxy timeout.
func (g *Generator) originTime(q *request) int {
	switch q.status {
	case 504:
		return 15000 + g.r.intn(45000)
	}
	return originTimes.draw(&g.r)
}

// appendSB writes request.sb, the API gateway's decoded JWT claims: the
// apikey's (anon or service_role) and, for signed-in users, the
// Authorization bearer's.
func (g *Generator) appendSB(dst []byte, p *project, c *client) []byte {
	r := &g.r
	service := c.ua.server && r.intn(5) < 3
	dst = append(dst, `,"sb":{"jwt":{"apikey":{"payload":{"algorithm":"HS256","expires_at":`...)
	dst = appendInt(dst, p.issuedAt+10*365*86400)
	dst = append(dst, `,"issuer":"supabase","role":"`...)
	if service {
		dst = append(dst, `service_role","signature_prefix":"`...)
		dst = append(dst, p.svcSig...)
	} else {
		dst = append(dst, `anon","signature_prefix":"`...)
		dst = append(dst, p.anonSig...)
	}
	dst = append(dst, `"}}`...)
	if !service && r.intn(2) == 0 {
		dst = append(dst, `,"authorization":{"payload":{"algorithm":"HS256","expires_at":`...)
		dst = appendInt(dst, int(g.clk.next/1e9)+r.intn(3600))
		dst = append(dst, `,"issuer":"`...)
		dst = append(dst, p.origin...)
		dst = append(dst, `/auth/v1","role":"authenticated","session_id":"`...)
		dst = appendUUID(dst, r)
		dst = append(dst, `","signature_prefix":"`...)
		for range 6 {
			dst = append(dst, base64URLAlphabet[r.intn(64)])
		}
		dst = append(dst, `","subject":"`...)
		dst = appendUserID(dst, p, userRanks.pick(r))
		dst = append(dst, `"}}`...)
	}
	return append(dst, `}}`...)
}
