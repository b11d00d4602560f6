package lql

import (
	"strconv"
	"strings"
	"time"
)

// Timestamp values (docs/compat/logflare.md §9.5): ISO dates and
// date-times, Unix seconds / milliseconds / microseconds by digit count,
// ranges `a..b`, brace ranges `2022-04-{07..09}T00:{00..40}:00`, and
// shorthands relative to the clock in Options.

// Supported instants: BigQuery's TIMESTAMP range.
var (
	minMicros = time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC).UnixMicro()
	maxMicros = time.Date(9999, 12, 31, 23, 59, 59, 999999000, time.UTC).UnixMicro()
)

// timePoint is one end of a timestamp value.
type timePoint struct {
	us int64 // the instant (start of the day for a date)
	// dateOnly is set for a `YYYY-MM-DD` value; dayEnd is then the last
	// microsecond of that day, used for equality (the whole day) and for
	// the upper end of a range.
	dateOnly bool
	dayEnd   int64
}

// timeValue is a parsed timestamp operand: one point, or a range.
type timeValue struct {
	lo, hi    timePoint
	isRange   bool
	shorthand string // canonical shorthand, "" for literal values
}

type timeErrKind uint8

const (
	timeErrSyntax   timeErrKind = iota + 1 // not a timestamp value at all
	timeErrDate                            // shaped like a date but not a valid one
	timeErrDatetime                        // shaped like a date-time but not a valid one
	timeErrBounds                          // outside 0001-01-01 .. 9999-12-31
	timeErrNoClock                         // a shorthand, and Options.Now is zero
)

type timeError struct{ kind timeErrKind }

// message renders a timestamp error for `t:` clauses, in Logflare's words
// where it has them.
func (e timeError) message(v string) string {
	switch e.kind {
	case timeErrDate:
		return "Error while parsing timestamp date value: expected ISO8601 string, got '" + v + "'"
	case timeErrDatetime:
		return "Error while parsing timestamp datetime value: expected ISO8601 string, got '" + v + "'"
	case timeErrBounds:
		return "Error while parsing timestamp filter value: '" + v + "' is outside the supported range 0001-01-01 to 9999-12-31"
	case timeErrNoClock:
		return "Error while parsing timestamp filter value: shorthand '" + v + "' needs the current time (Options.Now is not set)"
	}
	return msgTimestampValue(v)
}

// timeParser parses timestamp operands against a clock and a zone.
type timeParser struct {
	now time.Time      // zero when the caller gave no clock
	loc *time.Location // zone of values written without an offset
}

// parse parses a whole `t:` operand.
func (tp timeParser) parse(s string) (timeValue, *timeError) {
	if tv, ok, err := tp.shorthand(s); ok || err != nil {
		return tv, err
	}
	if strings.IndexByte(s, '{') >= 0 {
		return tp.braceRange(s)
	}
	if i := strings.Index(s, ".."); i >= 0 {
		lo, err := tp.point(s[:i])
		if err != nil {
			return timeValue{}, err
		}
		hi, err := tp.point(s[i+2:])
		if err != nil {
			return timeValue{}, err
		}
		return timeValue{lo: lo, hi: hi, isRange: true}, nil
	}
	p, err := tp.point(s)
	if err != nil {
		return timeValue{}, err
	}
	return timeValue{lo: p, hi: p}, nil
}

// point parses one literal: Unix digits or an ISO date / date-time.
func (tp timeParser) point(s string) (timePoint, *timeError) {
	if s != "" && allDigits(s) {
		return unixPoint(s)
	}
	f, ok := scanISO(s)
	if !ok {
		return timePoint{}, &timeError{timeErrSyntax}
	}
	return tp.fromFields(f)
}

// unixPoint reads 10, 13 or 16 digits as seconds, milliseconds or
// microseconds since the epoch; other lengths are not timestamps.
func unixPoint(s string) (timePoint, *timeError) {
	var scale int64
	switch len(s) {
	case 10:
		scale = 1_000_000
	case 13:
		scale = 1_000
	case 16:
		scale = 1
	default:
		return timePoint{}, &timeError{timeErrSyntax}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return timePoint{}, &timeError{timeErrSyntax}
	}
	us := n * scale
	if us > maxMicros {
		return timePoint{}, &timeError{timeErrBounds}
	}
	return timePoint{us: us}, nil
}

// isoFields are the parts of an ISO-8601 literal as written.
type isoFields struct {
	year, month, day     int
	hour, minute, second int
	nanos                int
	hasTime              bool
	hasZone              bool
	zoneOffset           int // seconds east of UTC
}

// scanISO reads `YYYY-MM-DD` or `YYYY-MM-DDThh:mm:ss[.f{1,9}][Z|±hh:mm]`
// (shape only; fromFields checks the calendar).
func scanISO(s string) (isoFields, bool) {
	var f isoFields
	if len(s) < 10 || s[4] != '-' || s[7] != '-' {
		return f, false
	}
	var ok1, ok2, ok3 bool
	f.year, ok1 = digitsN(s[0:4])
	f.month, ok2 = digitsN(s[5:7])
	f.day, ok3 = digitsN(s[8:10])
	if !ok1 || !ok2 || !ok3 {
		return f, false
	}
	if len(s) == 10 {
		return f, true
	}
	if len(s) < 19 || s[10] != 'T' || s[13] != ':' || s[16] != ':' {
		return f, false
	}
	f.hasTime = true
	f.hour, ok1 = digitsN(s[11:13])
	f.minute, ok2 = digitsN(s[14:16])
	f.second, ok3 = digitsN(s[17:19])
	if !ok1 || !ok2 || !ok3 {
		return f, false
	}
	rest := s[19:]
	if len(rest) > 0 && rest[0] == '.' {
		n := 1
		for n < len(rest) && isDigit(rest[n]) {
			n++
		}
		nanos, ok := fraction(rest[1:n])
		if !ok {
			return f, false
		}
		f.nanos = nanos
		rest = rest[n:]
	}
	off, hasZone, ok := scanZone(rest)
	if !ok {
		return f, false
	}
	f.hasZone, f.zoneOffset = hasZone, off
	return f, true
}

// fraction reads 1 to 9 digits after a decimal point as nanoseconds.
func fraction(d string) (int, bool) {
	if len(d) == 0 || len(d) > 9 || !allDigits(d) {
		return 0, false
	}
	n, _ := strconv.Atoi(d)
	for i := len(d); i < 9; i++ {
		n *= 10
	}
	return n, true
}

// scanZone reads "", "Z" or "±hh:mm" and must consume all of s.
func scanZone(s string) (offset int, has bool, ok bool) {
	switch {
	case s == "":
		return 0, false, true
	case s == "Z":
		return 0, true, true
	case len(s) == 6 && (s[0] == '+' || s[0] == '-') && s[3] == ':':
		h, ok1 := digitsN(s[1:3])
		m, ok2 := digitsN(s[4:6])
		if !ok1 || !ok2 || h > 23 || m > 59 {
			return 0, false, false
		}
		off := h*3600 + m*60
		if s[0] == '-' {
			off = -off
		}
		return off, true, true
	}
	return 0, false, false
}

// fromFields checks the calendar and converts to an instant: with an offset
// it is absolute, without one it is read in tp.loc.
func (tp timeParser) fromFields(f isoFields) (timePoint, *timeError) {
	bad := timeErrDate
	if f.hasTime {
		bad = timeErrDatetime
	}
	if f.month < 1 || f.month > 12 || f.day < 1 || f.day > daysIn(f.year, time.Month(f.month)) ||
		f.hour > 23 || f.minute > 59 || f.second > 59 {
		return timePoint{}, &timeError{bad}
	}
	loc := tp.loc
	if f.hasZone {
		loc = time.UTC
	}
	t := time.Date(f.year, time.Month(f.month), f.day, f.hour, f.minute, f.second, f.nanos, loc)
	if f.hasZone {
		t = t.Add(-time.Duration(f.zoneOffset) * time.Second)
	}
	p := timePoint{us: t.UnixMicro()}
	if !f.hasTime {
		p.dateOnly = true
		p.dayEnd = time.Date(f.year, time.Month(f.month), f.day+1, 0, 0, 0, 0, loc).UnixMicro() - 1
	}
	if p.us < minMicros || p.us > maxMicros || (p.dateOnly && p.dayEnd > maxMicros) {
		return timePoint{}, &timeError{timeErrBounds}
	}
	return p, nil
}

// braceRange reads `2022-04-{07..09}T00:{00..40}:00.{001..314}`: every
// component is a number or a `{low..high}` pair; the value is the range from
// all the low components to all the high ones.
func (tp timeParser) braceRange(s string) (timeValue, *timeError) {
	bs := braceScanner{s: s}
	var lo, hi isoFields
	lo.year, hi.year = bs.component(4)
	bs.expect('-')
	lo.month, hi.month = bs.component(2)
	bs.expect('-')
	lo.day, hi.day = bs.component(2)
	if !bs.done() {
		lo.hasTime, hi.hasTime = true, true
		bs.expect('T')
		lo.hour, hi.hour = bs.component(2)
		bs.expect(':')
		lo.minute, hi.minute = bs.component(2)
		bs.expect(':')
		lo.second, hi.second = bs.component(2)
		if !bs.done() && bs.peek() == '.' {
			bs.pos++
			lo.nanos, hi.nanos = bs.fractionComponent()
		}
		if !bs.failed {
			off, has, ok := scanZone(s[bs.pos:])
			if !ok {
				bs.failed = true
			}
			bs.pos = len(s)
			lo.hasZone, hi.hasZone = has, has
			lo.zoneOffset, hi.zoneOffset = off, off
		}
	}
	if bs.failed || !bs.done() {
		return timeValue{}, &timeError{timeErrSyntax}
	}
	lp, err := tp.fromFields(lo)
	if err != nil {
		return timeValue{}, err
	}
	hp, err := tp.fromFields(hi)
	if err != nil {
		return timeValue{}, err
	}
	if lp == hp {
		return timeValue{lo: lp, hi: hp}, nil
	}
	return timeValue{lo: lp, hi: hp, isRange: true}, nil
}

// braceScanner walks a brace-range literal; after the first failure every
// call is a no-op and failed stays set.
type braceScanner struct {
	s      string
	pos    int
	failed bool
}

func (b *braceScanner) done() bool { return b.pos >= len(b.s) }
func (b *braceScanner) peek() byte { return b.s[b.pos] }

func (b *braceScanner) expect(c byte) {
	if b.failed || b.done() || b.s[b.pos] != c {
		b.failed = true
		return
	}
	b.pos++
}

// digits reads exactly n digits.
func (b *braceScanner) digits(n int) int {
	if b.failed || b.pos+n > len(b.s) {
		b.failed = true
		return 0
	}
	v, ok := digitsN(b.s[b.pos : b.pos+n])
	if !ok {
		b.failed = true
		return 0
	}
	b.pos += n
	return v
}

// component reads `dd` or `{dd..dd}` with n digits each.
func (b *braceScanner) component(n int) (lo, hi int) {
	if b.failed || b.done() {
		b.failed = true
		return 0, 0
	}
	if b.peek() != '{' {
		v := b.digits(n)
		return v, v
	}
	b.pos++
	lo = b.digits(n)
	b.expect('.')
	b.expect('.')
	hi = b.digits(n)
	b.expect('}')
	return lo, hi
}

// fractionComponent reads `fff` or `{fff..fff}`, 1 to 9 digits each.
func (b *braceScanner) fractionComponent() (lo, hi int) {
	run := func() int {
		start := b.pos
		for b.pos < len(b.s) && isDigit(b.s[b.pos]) {
			b.pos++
		}
		v, ok := fraction(b.s[start:b.pos])
		if !ok {
			b.failed = true
		}
		return v
	}
	if b.failed || b.done() {
		b.failed = true
		return 0, 0
	}
	if b.peek() != '{' {
		v := run()
		return v, v
	}
	b.pos++
	lo = run()
	b.expect('.')
	b.expect('.')
	if b.failed {
		return 0, 0
	}
	hi = run()
	b.expect('}')
	return lo, hi
}

// Shorthand units, longest spelling first so that "minutes" is not read as
// "m" followed by junk.
type shortUnit uint8

const (
	unitSecond shortUnit = iota + 1
	unitMinute
	unitHour
	unitDay
	unitWeek
	unitMonth
	unitYear
)

var unitNames = [...]string{
	unitSecond: "second", unitMinute: "minute", unitHour: "hour", unitDay: "day",
	unitWeek: "week", unitMonth: "month", unitYear: "year",
}

var unitSpellings = []struct {
	s string
	u shortUnit
}{
	{"seconds", unitSecond}, {"minutes", unitMinute}, {"hours", unitHour}, {"days", unitDay},
	{"weeks", unitWeek}, {"months", unitMonth}, {"years", unitYear},
	{"second", unitSecond}, {"minute", unitMinute}, {"hour", unitHour}, {"day", unitDay},
	{"week", unitWeek}, {"month", unitMonth}, {"year", unitYear},
	{"mm", unitMonth}, {"s", unitSecond}, {"m", unitMinute}, {"h", unitHour},
	{"d", unitDay}, {"w", unitWeek}, {"y", unitYear},
}

func parseUnit(s string) (shortUnit, bool) {
	for _, sp := range unitSpellings {
		if s == sp.s {
			return sp.u, true
		}
	}
	return 0, false
}

// maxShorthandDigits bounds `last@<n>` like Logflare (1 to 4 digits).
const maxShorthandDigits = 4

// shorthand recognises now, today, yesterday, this@<unit> and
// last@[<n>]<unit>. ok is false when s is not shaped like a shorthand.
//
// Semantics (in the display zone tp.loc; weeks start on Monday):
//   - now: the current instant.
//   - today / yesterday: that calendar day, midnight to its last microsecond.
//   - this@<unit>: from the start of the current unit to now.
//   - last@<n><unit>: from now truncated to the unit (to the day for weeks,
//     months and years, as Logflare does), shifted back n units, to now.
func (tp timeParser) shorthand(s string) (timeValue, bool, *timeError) {
	var canon string
	var unit shortUnit
	n := 0
	switch {
	case s == "now" || s == "today" || s == "yesterday":
		canon = s
	case strings.HasPrefix(s, "this@"):
		u, ok := parseUnit(s[len("this@"):])
		if !ok {
			return timeValue{}, false, &timeError{timeErrSyntax}
		}
		unit, canon = u, "this@"+unitNames[u]
	case strings.HasPrefix(s, "last@"):
		rest := s[len("last@"):]
		d := 0
		for d < len(rest) && isDigit(rest[d]) {
			d++
		}
		if d > maxShorthandDigits {
			return timeValue{}, false, &timeError{timeErrSyntax}
		}
		n = 1
		if d > 0 {
			n, _ = strconv.Atoi(rest[:d])
		}
		u, ok := parseUnit(rest[d:])
		if !ok {
			return timeValue{}, false, &timeError{timeErrSyntax}
		}
		unit, canon = u, "last@"+strconv.Itoa(n)+unitNames[u]
	default:
		return timeValue{}, false, nil
	}
	if tp.now.IsZero() {
		return timeValue{}, true, &timeError{timeErrNoClock}
	}
	now := tp.now.In(tp.loc)
	y, mo, d := now.Date()
	midnight := time.Date(y, mo, d, 0, 0, 0, 0, tp.loc)
	var lo, hi time.Time
	switch {
	case canon == "now":
		p := timePoint{us: now.UnixMicro()}
		return timeValue{lo: p, hi: p, shorthand: canon}, true, boundsCheck(p.us)
	case canon == "today":
		lo, hi = midnight, time.Date(y, mo, d+1, 0, 0, 0, 0, tp.loc).Add(-time.Microsecond)
	case canon == "yesterday":
		lo, hi = time.Date(y, mo, d-1, 0, 0, 0, 0, tp.loc), midnight.Add(-time.Microsecond)
	case strings.HasPrefix(canon, "this@"):
		lo, hi = truncate(now, unit, true), now
	default: // last@
		lo, hi = shiftBack(truncate(now, unit, false), unit, n), now
	}
	tv := timeValue{lo: timePoint{us: lo.UnixMicro()}, hi: timePoint{us: hi.UnixMicro()}, isRange: true, shorthand: canon}
	if err := boundsCheck(tv.lo.us); err != nil {
		return timeValue{}, true, err
	}
	return tv, true, boundsCheck(tv.hi.us)
}

func boundsCheck(us int64) *timeError {
	if us < minMicros || us > maxMicros {
		return &timeError{timeErrBounds}
	}
	return nil
}

// truncate returns the start of t's unit in t's zone. For `last@` (this ==
// false) weeks, months and years truncate to the day only.
func truncate(t time.Time, u shortUnit, this bool) time.Time {
	y, mo, d := t.Date()
	loc := t.Location()
	switch u {
	case unitSecond:
		return time.Date(y, mo, d, t.Hour(), t.Minute(), t.Second(), 0, loc)
	case unitMinute:
		return time.Date(y, mo, d, t.Hour(), t.Minute(), 0, 0, loc)
	case unitHour:
		return time.Date(y, mo, d, t.Hour(), 0, 0, 0, loc)
	}
	if !this {
		return time.Date(y, mo, d, 0, 0, 0, 0, loc)
	}
	switch u {
	case unitWeek:
		sinceMonday := (int(t.Weekday()) + 6) % 7
		return time.Date(y, mo, d-sinceMonday, 0, 0, 0, 0, loc)
	case unitMonth:
		return time.Date(y, mo, 1, 0, 0, 0, 0, loc)
	case unitYear:
		return time.Date(y, 1, 1, 0, 0, 0, 0, loc)
	}
	return time.Date(y, mo, d, 0, 0, 0, 0, loc)
}

// shiftBack moves t back n units. Months and years keep the day of month,
// clamped to the target month's length (March 31 minus a month is the end
// of February).
func shiftBack(t time.Time, u shortUnit, n int) time.Time {
	switch u {
	case unitSecond:
		return t.Add(-time.Duration(n) * time.Second)
	case unitMinute:
		return t.Add(-time.Duration(n) * time.Minute)
	case unitHour:
		return t.Add(-time.Duration(n) * time.Hour)
	case unitDay:
		return t.AddDate(0, 0, -n)
	case unitWeek:
		return t.AddDate(0, 0, -7*n)
	}
	months := n
	if u == unitYear {
		months = 12 * n
	}
	y, mo, d := t.Date()
	total := y*12 + int(mo) - 1 - months
	ty := floorDiv(total, 12)
	tm := time.Month(total - ty*12 + 1)
	if dim := daysIn(ty, tm); d > dim {
		d = dim
	}
	return time.Date(ty, tm, d, t.Hour(), t.Minute(), t.Second(), t.Nanosecond(), t.Location())
}

func floorDiv(a, b int) int {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}

func daysIn(y int, m time.Month) int {
	return time.Date(y, m+1, 0, 0, 0, 0, 0, time.UTC).Day()
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if !isDigit(s[i]) {
			return false
		}
	}
	return true
}

// digitsN reads a short all-digit string.
func digitsN(s string) (int, bool) {
	if s == "" || !allDigits(s) {
		return 0, false
	}
	n := 0
	for i := 0; i < len(s); i++ {
		n = n*10 + int(s[i]-'0')
	}
	return n, true
}
