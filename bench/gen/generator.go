package gen

import (
	"math/bits"
	"time"
)

// Generator produces one source's events. It is not safe for concurrent
// use; make one per goroutine (with different seeds for different streams).
type Generator struct {
	src      Source
	opts     Options
	r        rng // event content
	clk      clock
	cal      calendar
	projects *projectSet
	clients  *clientPool // nil for sources without client requests
	reqs     requestDrawer
	msgKey   string // `"event_message":` or `"message":`
	scratch  []byte

	seq      uint64 // events appended so far
	rareSeed uint64 // decides which events carry the rare token
	facts    Facts  // of the last event (edge events only)
	hasFacts bool
	factPath []byte // scratch for Facts.Path when it is not a request view

	edge     edgeState
	pg       postgresState
	fn       functionState
	realtime realtimeState
}

// New returns a generator of src events. Options' zero fields take their
// defaults (see Options). A src outside AllSources generates EdgeLogs events.
// New builds the refs of Options.Projects projects; everything else
// (per-project data, clients) is built on first use.
func New(src Source, opts Options) *Generator {
	if src >= numSources {
		src = EdgeLogs
	}
	opts = opts.withDefaults()
	seed := uint64(opts.Seed)
	g := &Generator{
		src:      src,
		opts:     opts,
		r:        newRNG(derive(seed, labelEvents+uint64(src))),
		clk:      newClock(derive(seed, labelClock+uint64(src)), opts.Start, opts.Rate, opts.InOrder),
		projects: newProjectSet(opts.Seed, opts.Shape, opts.Projects),
		msgKey:   `"event_message":`,
		rareSeed: derive(seed, labelRare+uint64(src)),
	}
	if opts.UseMessageKey {
		g.msgKey = `"message":`
	}
	switch src {
	case EdgeLogs, StorageLogs, AuthLogs, FunctionEdgeLogs:
		n := 1024
		if src == EdgeLogs && opts.Shape == Platform {
			n = 8192
		}
		g.clients = newClientPool(derive(seed, labelClients+uint64(src)), n)
	}
	g.reqs.objects = opts.StorageObjects
	g.reqs.objectSeed = derive(seed, labelObjects)
	switch src {
	case EdgeLogs:
		g.edge.init(&g.r)
	case PostgresLogs:
		g.pg.init(&g.r, g.clk.next)
	case RealtimeLogs:
		g.realtime.init(&g.r)
	}
	return g
}

// Source returns the generator's source.
func (g *Generator) Source() Source { return g.src }

// Shape returns the generator's shape.
func (g *Generator) Shape() Shape { return g.opts.Shape }

// Projects returns the project refs the generator's events belong to, most
// frequent first: ProjectRefs(seed, Projects) for the platform shape,
// ["default"] for the self-hosted one.
func (g *Generator) Projects() []string { return append([]string(nil), g.projects.refs...) }

// Time returns the log time of the next event.
func (g *Generator) Time() time.Time { return time.Unix(0, g.clk.next).UTC() }

// AppendEvent appends one event, a JSON object, to dst.
func (g *Generator) AppendEvent(dst []byte) []byte {
	ts := g.clk.next
	g.hasFacts = false
	switch g.src {
	case EdgeLogs:
		dst = g.appendEdge(dst, ts)
	case PostgresLogs:
		dst = g.appendPostgres(dst, ts)
	case FunctionEdgeLogs:
		dst = g.appendFunctionEdge(dst, ts)
	case FunctionLogs:
		dst = g.appendFunctionLog(dst, ts)
	case AuthLogs:
		dst = g.appendAuth(dst, ts)
	case RealtimeLogs:
		dst = g.appendRealtime(dst, ts)
	case StorageLogs:
		dst = g.appendStorage(dst, ts)
	case PostgRESTLogs:
		dst = g.appendPostgREST(dst, ts)
	case PgBouncerLogs:
		dst = g.appendPgBouncer(dst, ts)
	}
	g.clk.advance()
	g.seq++
	return dst
}

// rare reports whether the event being appended carries the rare token:
// a hash of the seed and the event's position, so that deciding draws
// nothing from the event stream.
func (g *Generator) rare() bool {
	if g.opts.RareEvery <= 0 {
		return false
	}
	hi, _ := bits.Mul64(finalize(g.rareSeed+g.seq*0x9e3779b97f4a7c15), uint64(g.opts.RareEvery))
	return hi == 0
}

// AppendVectorBatch appends n events as one JSON array, the body Vector's
// http sink POSTs: [ev,ev,…].
func (g *Generator) AppendVectorBatch(dst []byte, n int) []byte {
	dst = append(dst, '[')
	for i := range n {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = g.AppendEvent(dst)
	}
	return append(dst, ']')
}

// AppendNDJSON appends n events, each followed by a newline.
func (g *Generator) AppendNDJSON(dst []byte, n int) []byte {
	for range n {
		dst = g.AppendEvent(dst)
		dst = append(dst, '\n')
	}
	return dst
}

// Native fractional-second digits of the top-level timestamp.
const (
	digitsVector   = autoDigits // docker log time as Vector writes it
	digitsSeconds  = 0          // a time Vector parsed from a log line
	digitsPlatform = 6
)

// nativeDigits returns the native timestamp precision: Vector's form for
// self-hosted events, microseconds for platform ones.
func (g *Generator) nativeDigits() int {
	if g.opts.Shape == Platform {
		return digitsPlatform
	}
	return digitsVector
}

// appendTimestamp appends `,"timestamp":…` in the configured form; native
// is the fractional digits of TimestampNative. It is the last member of
// every event, so the caller closes the object after it.
func (g *Generator) appendTimestamp(dst []byte, ts int64, native int) []byte {
	switch g.opts.Timestamps {
	case TimestampOmitted:
		return dst
	case TimestampRFC3339Nano:
		native = 9
	case TimestampSeconds:
		return appendInt(append(dst, `,"timestamp":`...), int(floorDiv(ts, 1e9)))
	case TimestampMillis:
		return appendInt(append(dst, `,"timestamp":`...), int(floorDiv(ts, 1e6)))
	case TimestampMicros:
		return appendInt(append(dst, `,"timestamp":`...), int(floorDiv(ts, 1e3)))
	case TimestampNanos:
		return appendInt(append(dst, `,"timestamp":`...), int(ts))
	}
	dst = append(dst, `,"timestamp":"`...)
	dst = appendRFC3339(dst, g.cal.at(ts), native)
	return append(dst, '"')
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
}

// table draws a table name.
func (g *Generator) table() string { return tableNames[g.r.intn(len(tableNames))] }

// appendMessageKey appends the key of the message member.
func (g *Generator) appendMessageKey(dst []byte) []byte { return append(dst, g.msgKey...) }
