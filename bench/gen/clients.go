package gen

import "strconv"

// client is one end user or server calling a project: a stable address,
// software and location, so that the same IP keeps the same user agent,
// country and colo across its requests.
type client struct {
	ip     string
	ua     *userAgent
	loc    *location
	asn    int
	http   string // HTTP version to Cloudflare
	tlsVer string
	rtt    int // typical TCP round trip to the colo, ms
	// The request.cf object of platform edge events is fixed per client
	// apart from clientTcpRtt; cfHead and cfTail are its JSON on either
	// side of that value, built once (see edge.go).
	cfHead, cfTail string
}

// clientsPerProject is the number of distinct clients one project's traffic
// comes from; within them a Zipf draw makes a few clients very busy.
const clientsPerProject = 512

// clientPool is a generator's population of clients. A client is built on
// first use from the pool seed and its index alone, so a pool costs nothing
// up front and its clients do not depend on the order they are met in.
type clientPool struct {
	seed    uint64
	clients []client
	built   []bool
	ranks   zipf
}

func newClientPool(seed uint64, n int) *clientPool {
	return &clientPool{seed: seed, clients: make([]client, n), built: make([]bool, n), ranks: newZipf(clientsPerProject)}
}

// serverLocs are the locations server-side clients run in.
var serverLocs = func() []*location {
	out := make([]*location, len(serverLocations))
	for i, colo := range serverLocations {
		for k := range locations.items {
			if locations.items[k].colo == colo {
				out[i] = &locations.items[k]
			}
		}
	}
	return out
}()

// build draws client i.
func (cp *clientPool) build(i int) {
	r := newRNG(derive(cp.seed, uint64(i)))
	c := &cp.clients[i]
	c.ua = &userAgents.items[userAgents.index(&r)]
	if c.ua.server {
		c.loc = serverLocs[r.intn(len(serverLocs))]
		c.asn = cloudASNs[r.intn(len(cloudASNs))]
		c.rtt = 1 + r.intn(8)
	} else {
		c.loc = &locations.items[locations.index(&r)]
		c.asn = c.loc.asns[r.intn(len(c.loc.asns))]
		c.rtt = 8 + r.intn(120)
	}
	c.http = c.ua.http
	if c.ua.browser && r.permille(400) {
		c.http = "HTTP/3"
	}
	c.tlsVer = "TLSv1.3"
	if r.permille(80) {
		c.tlsVer = "TLSv1.2"
	}
	var b []byte
	if !c.ua.server && r.permille(120) {
		b = append(b, c.loc.v6...)
		for range 6 {
			b = append(b, ':')
			b = strconv.AppendUint(b, uint64(r.intn(0x10000)), 16)
		}
	} else {
		b = appendIPv4(b, publicIPv4(&r))
	}
	c.ip = string(b)
	c.cfHead, c.cfTail = buildCF(c, &r)
	cp.built[i] = true
}

// publicIPv4 draws an address outside the private, loopback, link-local,
// CGNAT, multicast and documentation ranges.
func publicIPv4(r *rng) uint32 {
	for {
		v := uint32(r.next())
		a, b := v>>24, v>>16&0xff
		switch {
		case a == 0, a == 10, a == 127, a >= 224,
			a == 100 && b >= 64 && b < 128,
			a == 169 && b == 254,
			a == 172 && b >= 16 && b < 32,
			a == 192 && b == 168,
			a == 192 && b == 0, a == 198 && (b == 18 || b == 19 || b == 51), a == 203 && b == 0:
			continue
		}
		return v
	}
}

// pick draws a client of the project with the given rank. Each project has
// its own slice of the pool (overlapping others'), drawn with a skew.
func (cp *clientPool) pick(r *rng, project int) *client {
	k := uint64(cp.ranks.pick(r))
	idx := int((uint64(project)*0x9e3779b1 + k*40503) % uint64(len(cp.clients)))
	if !cp.built[idx] {
		cp.build(idx)
	}
	return &cp.clients[idx]
}

// buildCF renders the client's request.cf object around clientTcpRtt. Keys
// are in byte order, as Vector and Logflare's samples write them.
func buildCF(c *client, r *rng) (head, tail string) {
	lat := c.loc.lat + r.between(-30000, 30000)
	lon := c.loc.lon + r.between(-30000, 30000)
	var b []byte
	b = append(b, `"cf":{"asn":`...)
	b = appendInt(b, c.asn)
	b = append(b, `,"city":`...)
	b = appendSafe(b, c.loc.city)
	b = append(b, `,"clientTcpRtt":`...)
	head = string(b)
	b = b[:0]
	b = append(b, `,"colo":`...)
	b = appendSafe(b, c.loc.colo)
	b = append(b, `,"country":`...)
	b = appendSafe(b, c.loc.country)
	b = append(b, `,"httpProtocol":`...)
	b = appendSafe(b, c.http)
	b = append(b, `,"latitude":"`...)
	b = appendFixed5(b, lat)
	b = append(b, `","longitude":"`...)
	b = appendFixed5(b, lon)
	b = append(b, `","region":`...)
	b = appendSafe(b, c.loc.region)
	b = append(b, `,"timezone":`...)
	b = appendSafe(b, c.loc.timezone)
	b = append(b, `,"tlsVersion":`...)
	b = appendSafe(b, c.tlsVer)
	b = append(b, '}')
	return head, string(b)
}

// appendFixed5 writes v/1e5 with exactly five decimals ("-46.63330").
func appendFixed5(dst []byte, v int) []byte {
	if v < 0 {
		dst = append(dst, '-')
		v = -v
	}
	dst = strconv.AppendInt(dst, int64(v/100000), 10)
	dst = append(dst, '.')
	frac := v % 100000
	for div := 10000; div > 0; div /= 10 {
		dst = append(dst, byte('0'+frac/div%10))
	}
	return dst
}
