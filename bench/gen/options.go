package gen

import "time"

// TimestampForm selects how the top-level "timestamp" field is written.
type TimestampForm uint8

const (
	// TimestampNative writes what the real client sends for the source and
	// shape: an RFC 3339 string in UTC ending in "Z". Self-hosted events
	// carry Vector's form, whose fraction has 0, 3, 6 or 9 digits (docker
	// log times have nanoseconds; Kong and PostgREST lines carry whole
	// seconds because Vector takes their time from the log line). Platform
	// events carry microseconds.
	TimestampNative TimestampForm = iota
	// TimestampRFC3339Nano always writes 9 fractional digits.
	TimestampRFC3339Nano
	// TimestampSeconds writes an integer of seconds since the epoch (10 digits).
	TimestampSeconds
	// TimestampMillis writes an integer of milliseconds (13 digits), as
	// pino-logflare does.
	TimestampMillis
	// TimestampMicros writes an integer of microseconds (16 digits).
	TimestampMicros
	// TimestampNanos writes an integer of nanoseconds (19 digits).
	TimestampNanos
	// TimestampOmitted leaves the field out, so the server stamps ingest time.
	TimestampOmitted
)

// DefaultStart returns the log time of the first event when Options.Start
// is zero: 2025-07-10T12:00:00Z. It is fixed (not time.Now) so that a seed
// always yields the same bytes.
func DefaultStart() time.Time { return time.Date(2025, time.July, 10, 12, 0, 0, 0, time.UTC) }

const (
	// DefaultRate is the default number of events per second of log time.
	DefaultRate = 100.0
	// DefaultProjects is the default number of platform projects.
	DefaultProjects = 100
	// outOfOrderPermille is the share of events, in per mille, whose
	// timestamp lies 0.5–5 s before the previous one, as a shipper that
	// batches several containers or retries produces.
	outOfOrderPermille = 10
)

// Options configure a Generator. The zero value is usable: seed 0,
// self-hosted shape, DefaultStart(), DefaultRate.
type Options struct {
	// Seed selects the stream; the same seed and options give the same
	// bytes on every run and platform. Different sources with the same seed
	// draw different events but share project refs.
	Seed int64
	// Start is the log time of the first event (default DefaultStart()).
	Start time.Time
	// Rate is the mean number of events per second of log time (default
	// DefaultRate). Gaps between events are uniform on [0, 2/Rate).
	Rate float64
	// Projects is the number of platform projects events are spread over,
	// with a Zipf-like skew (default DefaultProjects). Self-hosted events
	// always belong to the single project "default".
	Projects int
	// Shape selects the self-hosted (Vector) or platform form.
	Shape Shape
	// Timestamps selects how the top-level timestamp is written.
	Timestamps TimestampForm
	// UseMessageKey writes the message under "message" (the alias Logflare
	// accepts, as pino-logflare sends it) instead of "event_message".
	UseMessageKey bool
	// InOrder disables the small share of out-of-order timestamps, making
	// timestamps non-decreasing.
	InOrder bool
	// RareEvery, when positive, puts RareToken into the event_message of
	// about one edge event in RareEvery (each event independently, decided
	// by a hash of the seed and the event's position, so the rest of the
	// stream is unchanged): a needle for full-text search benchmarks.
	// Zero (the default) leaves every message as it is.
	RareEvery int
	// RareToken is the word RareEvery inserts (default DefaultRareToken).
	RareToken string
	// StorageObjects, when positive, draws the objects of Storage requests
	// (their bucket, name and extension) from a fixed set of this many,
	// instead of a fresh random name for about half of them, so that the
	// number of distinct request paths stays bounded however many events
	// are generated. Zero (the default) keeps the unbounded names.
	StorageObjects int
}

// DefaultRareToken is the word Options.RareEvery puts into messages: no
// vocabulary of the generator contains it, and it is one token for every
// word tokenizer (letters and digits only).
const DefaultRareToken = "xq7rareprobe"

// withDefaults returns o with zero fields replaced by their defaults.
func (o Options) withDefaults() Options {
	if o.Start.IsZero() {
		o.Start = DefaultStart()
	}
	if !(o.Rate > 0) {
		o.Rate = DefaultRate
	}
	if o.Projects <= 0 {
		o.Projects = DefaultProjects
	}
	if o.Shape != Platform {
		o.Shape = SelfHosted
	}
	if o.Timestamps > TimestampOmitted {
		o.Timestamps = TimestampNative
	}
	if o.RareEvery < 0 {
		o.RareEvery = 0
	}
	if o.RareToken == "" {
		o.RareToken = DefaultRareToken
	}
	if o.StorageObjects < 0 {
		o.StorageObjects = 0
	}
	return o
}
