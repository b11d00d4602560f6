package ingest

import (
	"bytes"
	"strconv"
	"strings"
	"time"

	"github.com/sediment/sediment/event"
)

// Dialect selects the syslog grammar variant of a logplex route.
type Dialect uint8

const (
	// DialectHeroku (/logplex, /syslog): the octet-count prefix is required,
	// structured data is optional (Heroku's drains send none).
	DialectHeroku Dialect = iota + 1
	// DialectRFC5424 (/syslogs): the octet-count prefix is optional,
	// structured data is required ("-" or one or more elements).
	DialectRFC5424
)

// facilityNames are Logflare's names for div(PRI, 8).
var facilityNames = [24]string{
	"kernel", "user", "mail", "system", "auth", "syslogd", "line_printer", "network_news",
	"uucp", "clock", "auth", "ftp", "ntp", "log_audit", "log_alert", "clock",
	"local0", "local1", "local2", "local3", "local4", "local5", "local6", "local7",
}

// severityNames are Logflare's names for rem(PRI, 8).
var severityNames = [8]string{"emergency", "alert", "critical", "error", "warning", "notice", "info", "debug"}

// syslogMessage is one parsed line. Empty header strings stand for "-".
type syslogMessage struct {
	priority  int
	timestamp string // UTC ISO-8601 with Z, "" when "-"
	hostname  string
	appname   string
	procID    string
	msgID     string
	sd        []event.Value // one object per SD element
	msg       []byte
	hasMsg    bool
}

// syslog decodes a logplex body: lines split on '\n' (the octet count is
// parsed but not used for framing, as in Logflare), each line one event.
// Lines that do not parse are dropped and counted.
func (d *Decoder) syslog(body []byte, dialect Dialect) (skipped int) {
	for len(body) > 0 {
		line := body
		if i := bytes.IndexByte(body, '\n'); i >= 0 {
			line, body = body[:i], body[i+1:]
		} else {
			body = nil
		}
		line = bytes.TrimSuffix(line, []byte{'\r'})
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		m, ok := parseSyslogLine(line, dialect)
		if !ok {
			m, ok = d.rfc3164.parse(line, d.nowOrClock())
		}
		if !ok {
			skipped++
			continue
		}
		d.events = append(d.events, d.syslogEvent(line, &m))
	}
	return skipped
}

// syslogEvent builds {"event_message", "timestamp", "metadata"} as Logflare's
// syslog parser does; members for "-" parts are omitted.
func (d *Decoder) syslogEvent(line []byte, m *syslogMessage) event.Value {
	str := event.StringValue
	meta := make([]event.Value, 0, 12)
	meta = append(meta,
		event.Member("priority", event.IntValue(int64(m.priority))),
		event.Member("facility", str(facilityNames[m.priority/8])),
		event.Member("severity", str(severityNames[m.priority%8])),
		event.Member("level", str(severityNames[m.priority%8])),
	)
	for _, f := range [...]struct{ key, val string }{
		{"hostname", m.hostname}, {"appname", m.appname}, {"process_id", m.procID}, {"message_id", m.msgID},
	} {
		if f.val != "" {
			meta = append(meta, event.Member(f.key, str(f.val)))
		}
	}
	var text string
	if m.hasMsg {
		text = stripANSI(m.msg)
		meta = append(meta, event.Member("message_text", str(aliasString(m.msg))))
	}
	meta = append(meta, event.Member("message_raw", str(aliasString(line))))
	sd := m.sd
	if js, ok := d.jsonInMessage(text); ok {
		sd = append(sd, js)
	}
	if len(sd) > 0 {
		meta = append(meta, event.Member("sd", event.ArrayValue(sd...)))
	}
	if isLogfmtProcess(m.procID) && m.hasMsg {
		if lf := parseLogfmt(text); lf.Len() > 0 {
			meta = append(meta, event.Member("logfmt", lf))
		}
	}

	ev := make([]event.Value, 0, 3)
	if m.hasMsg {
		ev = append(ev, event.Member("event_message", str(text)))
	}
	if m.timestamp != "" {
		ev = append(ev, event.Member("timestamp", str(m.timestamp)))
	}
	ev = append(ev, event.Member("metadata", event.ObjectValue(meta...)))
	return event.ObjectValue(ev...)
}

// isLogfmtProcess: Heroku's own processes log in logfmt.
func isLogfmtProcess(procID string) bool {
	return procID == "router" || strings.HasPrefix(procID, "heroku")
}

// jsonInMessage parses the text between the first '{' and the last '}' of a
// message; when it is a JSON object it is returned as an SD element with
// "id":"json" first (a member named "id" in the JSON is dropped so the
// element's id stays "json").
func (d *Decoder) jsonInMessage(text string) (event.Value, bool) {
	start := strings.IndexByte(text, '{')
	end := strings.LastIndexByte(text, '}')
	if start < 0 || end < start {
		return event.Value{}, false
	}
	v, err := d.parser.Parse([]byte(text[start : end+1]))
	if err != nil || v.Kind != event.Object {
		return event.Value{}, false
	}
	kids := make([]event.Value, 0, len(v.Kids)+1)
	kids = append(kids, event.Member("id", event.StringValue("json")))
	for _, k := range v.Kids {
		if k.Key != "id" {
			kids = append(kids, k)
		}
	}
	return event.ObjectValue(kids...), true
}

// parseSyslogLine parses
//
//	[LEN SP] <PRI>VERSION SP TIMESTAMP SP HOSTNAME SP APP-NAME SP PROCID SP MSGID [SP SD] [SP MSG]
func parseSyslogLine(line []byte, dialect Dialect) (syslogMessage, bool) {
	var m syslogMessage
	s := line
	// Octet count.
	if n := digitRun(s); n > 0 {
		if n >= len(s) || s[n] != ' ' {
			return m, false
		}
		s = s[n+1:]
	} else if dialect == DialectHeroku {
		return m, false
	}
	// <PRI>VERSION
	if len(s) < 4 || s[0] != '<' {
		return m, false
	}
	n := digitRun(s[1:])
	if n < 1 || n > 3 || 1+n >= len(s) || s[1+n] != '>' {
		return m, false
	}
	pri, _ := strconv.Atoi(string(s[1 : 1+n]))
	if pri > 191 {
		return m, false
	}
	m.priority = pri
	s = s[2+n:]
	if v := digitRun(s); v < 1 || v > 2 || s[0] == '0' {
		return m, false
	} else {
		s = s[v:]
	}
	// Header fields.
	var fields [5][]byte
	for i := range fields {
		if len(s) == 0 || s[0] != ' ' {
			return m, false
		}
		s = s[1:]
		j := 0
		for j < len(s) && s[j] >= 33 && s[j] <= 126 {
			j++
		}
		if j == 0 {
			return m, false
		}
		fields[i], s = s[:j], s[j:]
	}
	if ts := fields[0]; !isNil(ts) {
		utc, ok := syslogTimestampUTC(string(ts))
		if !ok {
			return m, false
		}
		m.timestamp = utc
	}
	m.hostname = nilable(fields[1])
	m.appname = nilable(fields[2])
	m.procID = nilable(fields[3])
	m.msgID = nilable(fields[4])

	// Structured data.
	switch dialect {
	case DialectRFC5424:
		if len(s) < 2 || s[0] != ' ' {
			return m, false
		}
		s = s[1:]
		if s[0] == '-' {
			s = s[1:]
		} else {
			sd, rest, ok := parseSD(s)
			if !ok {
				return m, false
			}
			m.sd, s = sd, rest
		}
		if len(s) > 0 && s[0] != ' ' {
			return m, false
		}
	case DialectHeroku:
		if len(s) > 1 && s[0] == ' ' && s[1] == '[' {
			if sd, rest, ok := parseSD(s[1:]); ok && (len(rest) == 0 || rest[0] == ' ') {
				m.sd, s = sd, rest
			}
		}
	}
	// Message.
	if len(s) > 1 && s[0] == ' ' {
		m.msg = bytes.TrimPrefix(s[1:], []byte("\xef\xbb\xbf")) // RFC 5424 allows a BOM
		m.hasMsg = true
	}
	return m, true
}

func digitRun(s []byte) int {
	n := 0
	for n < len(s) && s[n] >= '0' && s[n] <= '9' {
		n++
	}
	return n
}

func isNil(b []byte) bool { return len(b) == 1 && b[0] == '-' }

func nilable(b []byte) string {
	if isNil(b) {
		return ""
	}
	return aliasString(b)
}

// syslogTimestampUTC converts an RFC 3339 timestamp to UTC ISO-8601 with a
// Z, keeping the fractional digits as written (at most 6, microsecond
// precision, as Elixir's DateTime does).
func syslogTimestampUTC(ts string) (string, bool) {
	micros, ok := event.ParseISO8601Micros(ts)
	if !ok || len(ts) < 20 || ts[10] != 'T' {
		return "", false
	}
	frac := 0
	if ts[19] == '.' {
		for frac < len(ts)-20 && ts[20+frac] >= '0' && ts[20+frac] <= '9' {
			frac++
		}
	}
	frac = min(frac, 6)
	t := time.UnixMicro(micros).UTC()
	b := make([]byte, 0, 28)
	b = t.AppendFormat(b, "2006-01-02T15:04:05")
	if frac > 0 {
		us := strconv.Itoa(1_000_000 + t.Nanosecond()/1000) // "1" + 6 digits
		b = append(b, '.')
		b = append(b, us[1:1+frac]...)
	}
	b = append(b, 'Z')
	return string(b), true
}

// parseSD parses one or more SD-ELEMENTs at the start of s:
//
//	"[" SD-ID *(SP PARAM-NAME "=" DQUOTE PARAM-VALUE DQUOTE) "]"
//
// Each element becomes {"id": SD-ID, name: value, ...}; in values \" \\ and
// \] are unescaped. A repeated parameter keeps its last value.
func parseSD(s []byte) ([]event.Value, []byte, bool) {
	var out []event.Value
	for len(s) > 0 && s[0] == '[' {
		s = s[1:]
		n := sdNameLen(s)
		if n == 0 {
			return nil, nil, false
		}
		elem := event.ObjectValue(event.Member("id", event.StringValue(aliasString(s[:n]))))
		s = s[n:]
		for {
			if len(s) == 0 {
				return nil, nil, false
			}
			if s[0] == ']' {
				s = s[1:]
				break
			}
			if s[0] != ' ' {
				return nil, nil, false
			}
			s = s[1:]
			n := sdNameLen(s)
			if n == 0 || n+1 >= len(s) || s[n] != '=' || s[n+1] != '"' {
				return nil, nil, false
			}
			name := aliasString(s[:n])
			s = s[n+2:]
			value, rest, ok := sdParamValue(s)
			if !ok {
				return nil, nil, false
			}
			s = rest
			elem.Set(name, event.StringValue(value))
		}
		out = append(out, elem)
	}
	if len(out) == 0 {
		return nil, nil, false
	}
	return out, s, true
}

// sdNameLen: SD-NAME is 1*32 printable ASCII except '=', SP, ']' and '"'.
func sdNameLen(s []byte) int {
	n := 0
	for n < len(s) && n < 32 && s[n] > 32 && s[n] < 127 && s[n] != '=' && s[n] != ']' && s[n] != '"' {
		n++
	}
	return n
}

// sdParamValue reads a parameter value up to its closing quote.
func sdParamValue(s []byte) (string, []byte, bool) {
	escaped := false
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\\':
			escaped = true
			i++
		case '"':
			if !escaped {
				return aliasString(s[:i]), s[i+1:], true
			}
			var b []byte
			for j := 0; j < i; j++ {
				if s[j] == '\\' && j+1 < i && (s[j+1] == '"' || s[j+1] == '\\' || s[j+1] == ']') {
					j++
				}
				b = append(b, s[j])
			}
			return string(b), s[i+1:], true
		}
	}
	return "", nil, false
}

// stripANSI removes terminal escape sequences (CSI sequences such as colour
// codes "\x1b[36m", and two-byte ESC sequences). The result aliases msg when
// there is nothing to strip.
func stripANSI(msg []byte) string {
	i := bytes.IndexByte(msg, 0x1b)
	if i < 0 {
		return aliasString(msg)
	}
	out := make([]byte, 0, len(msg))
	for i := 0; i < len(msg); {
		c := msg[i]
		if c != 0x1b {
			out = append(out, c)
			i++
			continue
		}
		i++
		if i < len(msg) && msg[i] == '[' {
			i++
			for i < len(msg) && msg[i] >= 0x20 && msg[i] <= 0x3f { // parameters, intermediates
				i++
			}
			if i < len(msg) && msg[i] >= 0x40 && msg[i] <= 0x7e { // final byte
				i++
			}
		} else if i < len(msg) && msg[i] >= 0x40 && msg[i] <= 0x5f {
			i++
		}
	}
	return string(out)
}

// parseLogfmt parses "key=value key2=\"quoted value\" flag" into an object
// of strings (true for a bare key). A repeated key keeps its last value.
func parseLogfmt(s string) event.Value {
	obj := event.ObjectValue()
	for i := 0; i < len(s); {
		for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
			i++
		}
		start := i
		for i < len(s) && s[i] > ' ' && s[i] != '=' && s[i] != '"' {
			i++
		}
		key := s[start:i]
		if key == "" {
			// Not a key: skip this token.
			for i < len(s) && s[i] != ' ' && s[i] != '\t' {
				i++
			}
			continue
		}
		if i >= len(s) || s[i] != '=' {
			obj.Set(key, event.BoolValue(true))
			continue
		}
		i++ // '='
		if i < len(s) && s[i] == '"' {
			i++
			var b strings.Builder
			plain := i
			escaped := false
			for i < len(s) && s[i] != '"' {
				if s[i] == '\\' && i+1 < len(s) {
					if !escaped {
						b.WriteString(s[plain:i])
						escaped = true
					}
					b.WriteByte(s[i+1])
					i += 2
					continue
				}
				if escaped {
					b.WriteByte(s[i])
				}
				i++
			}
			value := s[plain:i]
			if escaped {
				value = b.String()
			}
			if i < len(s) {
				i++ // closing quote
			}
			obj.Set(key, event.StringValue(value))
			continue
		}
		start = i
		for i < len(s) && s[i] != ' ' && s[i] != '\t' {
			i++
		}
		obj.Set(key, event.StringValue(s[start:i]))
	}
	return obj
}
