package httpapi

// ingestMeter attributes one ingest request (or one syslog batch) to the
// counts per source and route that sediment_ingest_events_total and
// sediment_ingest_bytes_total report. A handler starts it once it knows
// how many raw events it will hand to store, over every source; store
// takes each source's share of the body bytes when it has stored that
// source's events: a request whose events go to several sources (OTLP,
// Loki, bulk) splits its bytes in proportion to the events each was
// handed, and a share that failed to store is counted nowhere.
type ingestMeter struct {
	route  string
	bytes  int64 // body bytes not yet attributed
	events int   // raw events not yet attributed
}

// start sets the route and the request's body bytes (as received, before
// decompression) and the raw events it will hand to store.
func (m *ingestMeter) start(route string, bodyBytes, events int) {
	*m = ingestMeter{route: route, bytes: int64(bodyBytes), events: events}
}

// take returns the share of the body bytes of n raw events, and takes it.
func (m *ingestMeter) take(n int) int64 {
	if n >= m.events {
		b := m.bytes
		m.bytes, m.events = 0, 0
		return b
	}
	b := m.bytes * int64(n) / int64(m.events)
	m.bytes -= b
	m.events -= n
	return b
}

// total returns how many items the groups hold over every source.
func (g *sourceGroups[T]) total() int {
	n := 0
	for _, items := range g.items {
		n += len(items)
	}
	return n
}
