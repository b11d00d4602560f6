package ingest

import (
	"bytes"
	"strconv"
	"time"

	syslog "github.com/leodido/go-syslog/v4"
	"github.com/leodido/go-syslog/v4/rfc3164"
)

// RFC 3164 ("BSD syslog": `<PRI>Mmm dd hh:mm:ss HOST TAG[PID]: MSG`) is
// what most syslog senders write by default (logger, rsyslog's and
// syslog-ng's network destinations, network devices). A line that is not
// RFC 5424 (nor, on /logplex, Heroku's dialect) is parsed as RFC 3164 with
// github.com/leodido/go-syslog and mapped to the same event shape: TAG is
// appname, PID process_id. Its timestamp carries no year and no zone: it
// is read as UTC in the current year, or in the previous year when that
// would put it more than a day in the future (a December line read in
// January). An RFC 3339 timestamp in its place is read as such.

// syslog3164 parses RFC 3164 lines with a reused machine.
type syslog3164 struct {
	machine syslog.Machine
	// year is the year the machine gives timestamps without one; the
	// library fixes it when the machine is made.
	year int
}

// parse parses line as RFC 3164 at time now; false when it is not. An
// octet count before the message ("83 <13>Oct ..."), as a logplex body
// frames it, is skipped.
func (p *syslog3164) parse(line []byte, now time.Time) (syslogMessage, bool) {
	if n := digitRun(line); n > 0 && n < len(line) && line[n] == ' ' {
		line = line[n+1:]
	}
	now = now.UTC()
	if p.machine == nil || p.year != now.Year() {
		p.year = now.Year()
		p.machine = rfc3164.NewParser(
			rfc3164.WithYear(rfc3164.Year{YYYY: p.year}),
			rfc3164.WithTimezone(time.UTC),
			rfc3164.WithRFC3339(),
			rfc3164.WithSecondFractions(),
			rfc3164.WithLenientDay(),
		)
	}
	msg, err := p.machine.Parse(line)
	if err != nil || msg == nil {
		return syslogMessage{}, false
	}
	m, ok := msg.(*rfc3164.SyslogMessage)
	if !ok || !m.Valid() || m.Priority == nil || *m.Priority > 191 || m.Timestamp == nil {
		return syslogMessage{}, false
	}
	out := syslogMessage{priority: int(*m.Priority)}
	ts := m.Timestamp.UTC()
	if ts.After(now.Add(24 * time.Hour)) {
		ts = ts.AddDate(-1, 0, 0)
	}
	out.timestamp = utcISO(ts)
	out.hostname = deref(m.Hostname)
	out.appname = deref(m.Appname)
	out.procID = deref(m.ProcID)
	if m.Message != nil {
		out.msg = []byte(*m.Message)
		out.hasMsg = true
	}
	return out, true
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// utcISO formats t as ISO-8601 UTC with a Z and as many fractional digits
// (at most 6) as it has.
func utcISO(t time.Time) string {
	b := make([]byte, 0, 27)
	b = t.AppendFormat(b, "2006-01-02T15:04:05")
	if us := t.Nanosecond() / 1000; us > 0 {
		frac := strconv.Itoa(1_000_000 + us)[1:] // 6 digits
		frac = string(bytes.TrimRight([]byte(frac), "0"))
		b = append(b, '.')
		b = append(b, frac...)
	}
	return string(append(b, 'Z'))
}

// DecodeSyslogFrames turns syslog messages that a listener has already
// framed (one message per element, without its octet count or trailing
// newline) into raw events: RFC 5424 by Sediment's parser (the same as
// /logs/syslogs), else RFC 3164. now is the clock for RFC 3164's
// year. Messages that are neither are counted in Result.Skipped.
//
// The result aliases frames and the Decoder's buffers until the next
// decode.
func (d *Decoder) DecodeSyslogFrames(frames [][]byte, now time.Time) Result {
	d.parser.Reset()
	clear(d.events)
	d.events = d.events[:0]
	var res Result
	for _, f := range frames {
		f = bytes.TrimRight(f, "\r\n\x00")
		if len(bytes.TrimSpace(f)) == 0 {
			continue
		}
		m, ok := parseSyslogLine(f, DialectRFC5424)
		if !ok {
			m, ok = d.rfc3164.parse(f, now)
		}
		if !ok {
			res.Skipped++
			continue
		}
		d.events = append(d.events, d.syslogEvent(f, &m))
	}
	res.Events = d.events
	return res
}

// nowOrClock returns the decoder's clock reading.
func (d *Decoder) nowOrClock() time.Time {
	if d.Now != nil {
		return d.Now()
	}
	return time.Now()
}
