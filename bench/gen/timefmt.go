package gen

import "time"

// Time formatting without fmt or time.Format: an event writes its own time
// in up to four layouts (RFC 3339, nginx, Postgres, HTTP date), so the
// calendar fields are computed once per second and cached.

// civil is a UTC instant split into calendar fields.
type civil struct {
	year, month, day int
	hour, min, sec   int
	weekday, nsec    int
	unixSec          int64
}

// calendar caches the civil fields of the last second it converted.
type calendar struct {
	sec int64
	c   civil
	ok  bool
}

// at returns the civil fields of ns nanoseconds since the Unix epoch.
func (cal *calendar) at(ns int64) civil {
	sec := ns / 1e9
	nsec := ns - sec*1e9
	if nsec < 0 {
		sec--
		nsec += 1e9
	}
	if !cal.ok || cal.sec != sec {
		t := time.Unix(sec, 0).UTC()
		y, mo, d := t.Date()
		h, mi, s := t.Clock()
		cal.c = civil{year: y, month: int(mo), day: d, hour: h, min: mi, sec: s, weekday: int(t.Weekday()), unixSec: sec}
		cal.sec, cal.ok = sec, true
	}
	c := cal.c
	c.nsec = int(nsec)
	return c
}

const monthAbbr = "JanFebMarAprMayJunJulAugSepOctNovDec"
const dayAbbr = "SunMonTueWedThuFriSat"

func append2(dst []byte, v int) []byte { return append(dst, byte('0'+v/10%10), byte('0'+v%10)) }

func append4(dst []byte, v int) []byte {
	return append(dst, byte('0'+v/1000%10), byte('0'+v/100%10), byte('0'+v/10%10), byte('0'+v%10))
}

// autoDigits asks appendFrac for Vector's (chrono AutoSi) choice: no
// fraction for whole seconds, else 3, 6 or 9 digits, the fewest that are
// exact.
const autoDigits = -1

// appendFrac appends ".ddd…" with the given number of fractional digits
// (truncated), or none for 0.
func appendFrac(dst []byte, nsec, digits int) []byte {
	if digits == autoDigits {
		switch {
		case nsec == 0:
			return dst
		case nsec%1e6 == 0:
			digits = 3
		case nsec%1e3 == 0:
			digits = 6
		default:
			digits = 9
		}
	}
	if digits <= 0 {
		return dst
	}
	dst = append(dst, '.')
	div := 100000000
	for range digits {
		dst = append(dst, byte('0'+nsec/div%10))
		div /= 10
	}
	return dst
}

// appendISO appends "2025-07-10T12:00:05" plus the fraction, without a zone.
func appendISO(dst []byte, c civil, digits int) []byte {
	dst = append4(dst, c.year)
	dst = append(dst, '-')
	dst = append2(dst, c.month)
	dst = append(dst, '-')
	dst = append2(dst, c.day)
	dst = append(dst, 'T')
	dst = append2(dst, c.hour)
	dst = append(dst, ':')
	dst = append2(dst, c.min)
	dst = append(dst, ':')
	dst = append2(dst, c.sec)
	return appendFrac(dst, c.nsec, digits)
}

// appendRFC3339 appends "2025-07-10T12:00:05.123456789Z".
func appendRFC3339(dst []byte, c civil, digits int) []byte {
	return append(appendISO(dst, c, digits), 'Z')
}

// appendNginxAccessTime appends nginx's $time_local in UTC:
// "10/Jul/2025:12:00:05 +0000".
func appendNginxAccessTime(dst []byte, c civil) []byte {
	dst = append2(dst, c.day)
	dst = append(dst, '/')
	dst = append(dst, monthAbbr[(c.month-1)*3:c.month*3]...)
	dst = append(dst, '/')
	dst = append4(dst, c.year)
	dst = append(dst, ':')
	dst = append2(dst, c.hour)
	dst = append(dst, ':')
	dst = append2(dst, c.min)
	dst = append(dst, ':')
	dst = append2(dst, c.sec)
	return append(dst, " +0000"...)
}

// appendNginxErrorTime appends nginx's error-log time: "2025/07/10 12:00:06".
func appendNginxErrorTime(dst []byte, c civil) []byte {
	dst = append4(dst, c.year)
	dst = append(dst, '/')
	dst = append2(dst, c.month)
	dst = append(dst, '/')
	dst = append2(dst, c.day)
	dst = append(dst, ' ')
	dst = append2(dst, c.hour)
	dst = append(dst, ':')
	dst = append2(dst, c.min)
	dst = append(dst, ':')
	return append2(dst, c.sec)
}

// appendPGTime appends Postgres' %m log time: "2025-07-10 12:00:05.012 UTC"
// (digits 3), or %t: "2025-07-10 12:00:05 UTC" (digits 0).
func appendPGTime(dst []byte, c civil, digits int) []byte {
	dst = append4(dst, c.year)
	dst = append(dst, '-')
	dst = append2(dst, c.month)
	dst = append(dst, '-')
	dst = append2(dst, c.day)
	dst = append(dst, ' ')
	dst = append2(dst, c.hour)
	dst = append(dst, ':')
	dst = append2(dst, c.min)
	dst = append(dst, ':')
	dst = append2(dst, c.sec)
	dst = appendFrac(dst, c.nsec, digits)
	return append(dst, " UTC"...)
}

// appendHTTPDate appends an HTTP Date header: "Thu, 10 Jul 2025 12:00:05 GMT".
func appendHTTPDate(dst []byte, c civil) []byte {
	dst = append(dst, dayAbbr[c.weekday*3:c.weekday*3+3]...)
	dst = append(dst, ", "...)
	dst = append2(dst, c.day)
	dst = append(dst, ' ')
	dst = append(dst, monthAbbr[(c.month-1)*3:c.month*3]...)
	dst = append(dst, ' ')
	dst = append4(dst, c.year)
	dst = append(dst, ' ')
	dst = append2(dst, c.hour)
	dst = append(dst, ':')
	dst = append2(dst, c.min)
	dst = append(dst, ':')
	dst = append2(dst, c.sec)
	return append(dst, " GMT"...)
}
