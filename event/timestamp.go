package event

import (
	"math"
	"time"
)

// TimestampMicros converts an event's "timestamp" value to unix microseconds
// by Logflare's rules (docs/compat/logflare.md §4.6). It returns false when the
// caller must use "now" instead:
//
//   - String: an ISO-8601 date-time with a UTC offset or Z, see
//     ParseISO8601Micros. A naive date-time, "" or anything unparsable → false.
//   - Int: by decimal digit count: 19 digits are nanoseconds (÷1000),
//     16 microseconds, 13 milliseconds (×1000), 10 seconds (×1e6), 7 digits
//     ×1e9 (as Logflare does); any other length is taken as microseconds.
//     Negative → false.
//   - Float: rounded half away from zero, then the Int rules. A float beyond
//     the int64 range is clamped to the largest int64 (Logflare, with
//     bignums, would take it as a far-future µs count), so the event is
//     dropped as too far in the future.
//   - Anything else → false.
func TimestampMicros(v Value) (int64, bool) {
	switch v.Kind {
	case String:
		return ParseISO8601Micros(v.Str)
	case Int:
		return integerTimestamp(v.Int())
	case Float:
		f := math.Round(v.Float())
		if f >= math.MaxInt64 {
			return math.MaxInt64, true
		}
		if !(f >= 0) { // also NaN
			return 0, false
		}
		return integerTimestamp(int64(f))
	}
	return 0, false
}

func integerTimestamp(n int64) (int64, bool) {
	if n < 0 {
		return 0, false
	}
	switch digits(n) {
	case 19:
		return n / 1000, true
	case 13:
		return n * 1000, true
	case 10:
		return n * 1_000_000, true
	case 7:
		return n * 1_000_000_000, true
	}
	return n, true
}

func digits(n int64) int {
	d := 1
	for n >= 10 {
		n /= 10
		d++
	}
	return d
}

// ParseISO8601Micros parses an ISO-8601 extended date-time that carries a UTC
// offset, the forms Elixir's DateTime.from_iso8601 accepts, and returns unix
// microseconds:
//
//	YYYY-MM-DD(T|t| )hh:mm:ss[(.|,)fraction](Z|z|±hh:mm|±hhmm|±hh)
//
// The fraction may have any number of digits; digits beyond microseconds are
// truncated. Field ranges are checked (no 24:00, no leap second, real days
// of the month); "-00:00" is refused, as Elixir does. A date-time without an
// offset returns false.
func ParseISO8601Micros(s string) (int64, bool) {
	// Fixed part: "YYYY-MM-DDThh:mm:ss" is 19 bytes.
	if len(s) < 20 {
		return 0, false
	}
	year, ok1 := decimal(s, 0, 4)
	month, ok2 := decimal(s, 5, 2)
	day, ok3 := decimal(s, 8, 2)
	hour, ok4 := decimal(s, 11, 2)
	minute, ok5 := decimal(s, 14, 2)
	sec, ok6 := decimal(s, 17, 2)
	if !(ok1 && ok2 && ok3 && ok4 && ok5 && ok6) ||
		s[4] != '-' || s[7] != '-' || s[13] != ':' || s[16] != ':' ||
		(s[10] != 'T' && s[10] != 't' && s[10] != ' ') {
		return 0, false
	}
	if month < 1 || month > 12 || day < 1 || day > daysIn(month, year) ||
		hour > 23 || minute > 59 || sec > 59 {
		return 0, false
	}
	i := 19
	micros := 0
	if s[i] == '.' || s[i] == ',' {
		i++
		start := i
		scale := 100000
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			micros += int(s[i]-'0') * scale
			scale /= 10
			i++
		}
		if i == start {
			return 0, false
		}
	}
	if i >= len(s) {
		return 0, false // naive date-time: no offset
	}
	offset := 0
	switch s[i] {
	case 'Z', 'z':
		i++
	case '+', '-':
		sign := 1
		if s[i] == '-' {
			sign = -1
		}
		i++
		oh, ok := decimal(s, i, 2)
		if !ok || oh > 23 {
			return 0, false
		}
		i += 2
		om := 0
		if i < len(s) {
			if s[i] == ':' {
				i++
			}
			var ok bool
			if om, ok = decimal(s, i, 2); !ok || om > 59 {
				return 0, false
			}
			i += 2
		}
		if sign < 0 && oh == 0 && om == 0 {
			return 0, false
		}
		offset = sign * (oh*3600 + om*60)
	default:
		return 0, false
	}
	if i != len(s) {
		return 0, false
	}
	t := time.Date(year, time.Month(month), day, hour, minute, sec, 0, time.UTC)
	return (t.Unix()-int64(offset))*1_000_000 + int64(micros), true
}

// num parses n decimal digits at s[i:].
func decimal(s string, i, n int) (int, bool) {
	if i+n > len(s) {
		return 0, false
	}
	v := 0
	for _, c := range []byte(s[i : i+n]) {
		if c < '0' || c > '9' {
			return 0, false
		}
		v = v*10 + int(c-'0')
	}
	return v, true
}

func daysIn(month, year int) int {
	switch month {
	case 2:
		if year%4 == 0 && (year%100 != 0 || year%400 == 0) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}
