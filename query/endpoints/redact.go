package endpoints

import (
	"net/netip"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/sediment/sediment/event"
)

// Redaction replaces IP addresses in string values with REDACTED, as
// Logflare's PII redactor does: IPv4 addresses anywhere on word
// boundaries; IPv6 addresses (every form: full, ::-compressed, link-local
// with a %zone, IPv4-mapped) only when they stand alone between
// whitespace or the ends of the string.
const redacted = "REDACTED"

var ipv4 = regexp.MustCompile(`\b(?:(?:25[0-5]|2[0-4][0-9]|[01]?[0-9][0-9]?)\.){3}(?:25[0-5]|2[0-4][0-9]|[01]?[0-9][0-9]?)\b`)

// RedactString redacts the IP addresses of one string.
func RedactString(s string) string {
	if !strings.ContainsAny(s, ".:") {
		return s
	}
	if strings.IndexByte(s, ':') >= 0 {
		s = redactIPv6Fields(s)
	}
	if strings.IndexByte(s, '.') >= 0 {
		s = ipv4.ReplaceAllLiteralString(s, redacted)
	}
	return s
}

// redactIPv6Fields replaces whitespace-delimited fields that are IPv6
// addresses. IPv6 goes first so that an IPv4-mapped address is redacted
// whole rather than leaving its IPv6 prefix.
func redactIPv6Fields(s string) string {
	var b strings.Builder
	changed := false
	i := 0
	for i < len(s) {
		r, size := utf8.DecodeRuneInString(s[i:])
		if isSpace(r) {
			b.WriteString(s[i : i+size])
			i += size
			continue
		}
		j := i
		for j < len(s) {
			r, size := utf8.DecodeRuneInString(s[j:])
			if isSpace(r) {
				break
			}
			j += size
		}
		field := s[i:j]
		if strings.IndexByte(field, ':') >= 0 && isIPv6(field) {
			b.WriteString(redacted)
			changed = true
		} else {
			b.WriteString(field)
		}
		i = j
	}
	if !changed {
		return s
	}
	return b.String()
}

func isSpace(r rune) bool {
	switch r {
	case ' ', '\t', '\n', '\r', '\v', '\f':
		return true
	}
	return false
}

func isIPv6(field string) bool {
	a, err := netip.ParseAddr(field)
	return err == nil && (a.Is6() || a.Is4In6())
}

// RedactJSON redacts every string value of a JSON document (keys and
// non-strings untouched). A body that does not parse is returned as is.
func RedactJSON(body []byte) []byte {
	v, err := event.Parse(body)
	if err != nil {
		return body
	}
	redactValue(&v)
	return event.AppendJSON(make([]byte, 0, len(body)), v)
}

func redactValue(v *event.Value) {
	switch v.Kind {
	case event.String:
		v.Str = RedactString(v.Str)
	case event.Array, event.Object:
		for i := range v.Kids {
			redactValue(&v.Kids[i])
		}
	}
}
