package gen

// Facts are what the generator knows of the event it appended last, so that
// a benchmark can compute the right answers to its queries without parsing
// the JSON back. They are filled for edge events (EdgeLogs, both shapes);
// for other sources Facts reports ok false.
//
// Path, Query and Origin-derived values are views into the generator's
// scratch space: they are valid until the next AppendEvent.
type Facts struct {
	// Time is the event's timestamp as written, in nanoseconds since the
	// epoch: the generator's clock truncated to the precision of the
	// written form (microseconds for platform events). It is 0 when the
	// timestamp is omitted (TimestampOmitted: the server stamps it).
	Time int64
	// Project is the event's project ref ("default" when self-hosted).
	Project string
	// Method, Status: metadata.request.method, metadata.response.status_code.
	Method string
	Status int
	// Path is metadata.request.path (platform: without the query string;
	// self-hosted Kong lines carry the query string in the path, as Vector
	// ships them, and Path does too).
	Path []byte
	// Origin and Query make metadata.request.url of platform events:
	// Origin + Path + "?" + Query (no "?" when Query is empty). Origin is
	// empty for self-hosted events, which have no url.
	Origin string
	Query  []byte
	// Rare reports that event_message carries Options.RareToken.
	Rare bool
}

// URL appends metadata.request.url of a platform event to dst.
func (f *Facts) URL(dst []byte) []byte {
	dst = append(dst, f.Origin...)
	dst = append(dst, f.Path...)
	if len(f.Query) > 0 {
		dst = append(dst, '?')
		dst = append(dst, f.Query...)
	}
	return dst
}

// Facts returns the facts of the event appended last; ok is false before
// the first event and for sources without facts.
func (g *Generator) Facts() (f Facts, ok bool) { return g.facts, g.hasFacts }

// writtenTime returns ts truncated to the precision the timestamp is
// written with; native is the fractional digits of TimestampNative
// (autoDigits writes every digit that is not zero, so it is exact).
func (g *Generator) writtenTime(ts int64, native int) int64 {
	switch g.opts.Timestamps {
	case TimestampOmitted:
		return 0
	case TimestampRFC3339Nano, TimestampNanos:
		return ts
	case TimestampSeconds:
		return floorDiv(ts, 1e9) * 1e9
	case TimestampMillis:
		return floorDiv(ts, 1e6) * 1e6
	case TimestampMicros:
		return floorDiv(ts, 1e3) * 1e3
	}
	if native == autoDigits || native >= 9 {
		return ts
	}
	unit := int64(1)
	for range 9 - native {
		unit *= 10
	}
	return floorDiv(ts, unit) * unit
}

// setEdgeFacts records the facts of an edge event whose request is q;
// path and query are what the event writes as request.path and as the
// url's query string.
func (g *Generator) setEdgeFacts(ts int64, native int, p *project, q *request, status int, path, query []byte, origin string, rare bool) {
	g.facts = Facts{
		Time:    g.writtenTime(ts, native),
		Project: p.ref,
		Method:  q.method,
		Status:  status,
		Path:    path,
		Origin:  origin,
		Query:   query,
		Rare:    rare,
	}
	g.hasFacts = true
}
