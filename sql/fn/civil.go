package fn

import (
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	_ "time/tzdata" // IANA zone names must work on machines without tzdata

	"github.com/sediment/sediment/internal/vec"
)

// Civil calendar arithmetic on the engine's encodings: DATE is days since
// 1970-01-01, DATETIME microseconds since 1970-01-01T00:00:00 (no zone),
// TIMESTAMP microseconds since the epoch in UTC. Everything here is integer
// arithmetic on the proleptic Gregorian calendar; time zones map between
// TIMESTAMP and civil time.

const (
	microsPerMilli  = int64(1000)
	microsPerSecond = int64(1_000_000)
	microsPerMinute = 60 * microsPerSecond
	microsPerHour   = 60 * microsPerMinute
	microsPerDay    = 24 * microsPerHour

	// BigQuery's range: 0001-01-01 to 9999-12-31.
	minDate      = int64(-719162) // 0001-01-01
	maxDate      = int64(2932896) // 9999-12-31
	minTimestamp = minDate * microsPerDay
	maxTimestamp = (maxDate+1)*microsPerDay - 1
)

// floorDiv and floorMod divide rounding toward negative infinity.
func floorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}

func floorMod(a, b int64) int64 {
	m := a % b
	if m != 0 && ((m < 0) != (b < 0)) {
		m += b
	}
	return m
}

// daysFromCivil returns the day number of y-m-d (m 1..12, d 1..31).
func daysFromCivil(y, m, d int64) int64 {
	if m <= 2 {
		y--
	}
	era := floorDiv(y, 400)
	yoe := y - era*400
	mp := (m + 9) % 12
	doy := (153*mp+2)/5 + d - 1
	doe := yoe*365 + yoe/4 - yoe/100 + doy
	return era*146097 + doe - 719468
}

// civilFromDays returns the calendar date of a day number.
func civilFromDays(z int64) (y, m, d int64) {
	z += 719468
	era := floorDiv(z, 146097)
	doe := z - era*146097
	yoe := (doe - doe/1460 + doe/36524 - doe/146096) / 365
	y = yoe + era*400
	doy := doe - (365*yoe + yoe/4 - yoe/100)
	mp := (5*doy + 2) / 153
	d = doy - (153*mp+2)/5 + 1
	m = mp + 3
	if m > 12 {
		m -= 12
	}
	if m <= 2 {
		y++
	}
	return y, m, d
}

func isLeap(y int64) bool { return y%4 == 0 && (y%100 != 0 || y%400 == 0) }

// daysInMonth returns the number of days of month m of year y.
func daysInMonth(y, m int64) int64 {
	switch m {
	case 2:
		if isLeap(y) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}

// weekday returns 0 (Sunday) .. 6 (Saturday) of a day number.
func weekday(days int64) int64 { return floorMod(days+4, 7) }

// dayOfYear returns 1..366.
func dayOfYear(days int64) int64 {
	y, _, _ := civilFromDays(days)
	return days - daysFromCivil(y, 1, 1) + 1
}

// isoYearStart returns the Monday that starts ISO year y.
func isoYearStart(y int64) int64 {
	jan4 := daysFromCivil(y, 1, 4)
	return jan4 - floorMod(weekday(jan4)-1, 7)
}

// isoYearWeek returns the ISO 8601 year and week number of a day.
func isoYearWeek(days int64) (year, week int64) {
	thursday := days - floorMod(weekday(days)-1, 7) + 3
	year, _, _ = civilFromDays(thursday)
	week = (thursday-daysFromCivil(year, 1, 1))/7 + 1
	return year, week
}

// addMonths adds n months to a day, clamping the day of month to the end of
// the resulting month (BigQuery's rule for MONTH, QUARTER and YEAR).
func addMonths(days, n int64) (int64, bool) {
	y, m, d := civilFromDays(days)
	total := y*12 + (m - 1) + n
	ny, nm := floorDiv(total, 12), floorMod(total, 12)+1
	if ny < 1 || ny > 9999 {
		return 0, false
	}
	if dim := daysInMonth(ny, nm); d > dim {
		d = dim
	}
	return daysFromCivil(ny, nm, d), true
}

// ---- date parts ----

// datePart is a parsed date part argument.
type datePart struct {
	name  string // upper case, e.g. "WEEK"
	start int64  // first weekday of WEEK(<WEEKDAY>), 0 = Sunday
}

var weekdayNames = []string{"SUNDAY", "MONDAY", "TUESDAY", "WEDNESDAY", "THURSDAY", "FRIDAY", "SATURDAY"}

// parsePart reads a date part argument; allowed lists the parts a function
// accepts.
func parsePart(fname string, a Arg, allowed ...string) (datePart, error) {
	p := datePart{name: strings.ToUpper(a.Part)}
	if a.PartArg != "" {
		if p.name != "WEEK" {
			return p, fmt.Errorf("%s does not support the %s(%s) date part", fname, p.name, a.PartArg)
		}
		wd := strings.ToUpper(a.PartArg)
		found := false
		for i, n := range weekdayNames {
			if n == wd {
				p.start, found = int64(i), true
			}
		}
		if !found {
			return p, fmt.Errorf("%s does not support the WEEK(%s) date part", fname, a.PartArg)
		}
	}
	for _, ok := range allowed {
		if ok == p.name {
			return p, nil
		}
	}
	if a.PartArg != "" {
		return p, fmt.Errorf("%s does not support the %s(%s) date part", fname, p.name, a.PartArg)
	}
	return p, fmt.Errorf("%s does not support the %s date part", fname, p.name)
}

// truncDays truncates a day number to a date part of DAY or coarser.
func truncDays(days int64, p datePart) int64 {
	switch p.name {
	case "WEEK":
		return days - floorMod(weekday(days)-p.start, 7)
	case "ISOWEEK":
		return days - floorMod(weekday(days)-1, 7)
	case "MONTH":
		y, m, _ := civilFromDays(days)
		return daysFromCivil(y, m, 1)
	case "QUARTER":
		y, m, _ := civilFromDays(days)
		return daysFromCivil(y, (m-1)/3*3+1, 1)
	case "YEAR":
		y, _, _ := civilFromDays(days)
		return daysFromCivil(y, 1, 1)
	case "ISOYEAR":
		y, _ := isoYearWeek(days)
		return isoYearStart(y)
	}
	return days
}

// subDayUnit returns the length in microseconds of a part finer than a day
// (0 for DAY and coarser).
func subDayUnit(name string) int64 {
	switch name {
	case "MICROSECOND":
		return 1
	case "MILLISECOND":
		return microsPerMilli
	case "SECOND":
		return microsPerSecond
	case "MINUTE":
		return microsPerMinute
	case "HOUR":
		return microsPerHour
	}
	return 0
}

// truncCivil truncates civil microseconds (DATETIME) to a date part.
func truncCivil(civ int64, p datePart) int64 {
	if u := subDayUnit(p.name); u > 0 {
		return civ - floorMod(civ, u)
	}
	days := floorDiv(civ, microsPerDay)
	return truncDays(days, p) * microsPerDay
}

// diffDays returns b-boundaries crossed between day numbers (a - b) for a
// date part of DAY or coarser.
func diffDays(a, b int64, p datePart) int64 {
	switch p.name {
	case "DAY":
		return a - b
	case "WEEK", "ISOWEEK":
		return (truncDays(a, p) - truncDays(b, p)) / 7
	case "MONTH":
		ya, ma, _ := civilFromDays(a)
		yb, mb, _ := civilFromDays(b)
		return (ya*12 + ma) - (yb*12 + mb)
	case "QUARTER":
		ya, ma, _ := civilFromDays(a)
		yb, mb, _ := civilFromDays(b)
		return (ya*4 + (ma-1)/3) - (yb*4 + (mb-1)/3)
	case "YEAR":
		ya, _, _ := civilFromDays(a)
		yb, _, _ := civilFromDays(b)
		return ya - yb
	case "ISOYEAR":
		ya, _ := isoYearWeek(a)
		yb, _ := isoYearWeek(b)
		return ya - yb
	}
	return 0
}

// ---- time zones ----

// zone is a time zone: a fixed offset (UTC included) or an IANA location.
type zone struct {
	name  string
	fixed bool
	off   int64 // µs east of UTC when fixed
	loc   *time.Location
	// last caches the offset period of the last instant looked up in loc,
	// so that runs of nearby timestamps do not call the time package. It is
	// shared by concurrent evaluations, hence atomic.
	last atomic.Pointer[zonePeriod]
}

// zonePeriod is a span of instants [lo, hi) (µs) with one UTC offset.
type zonePeriod struct{ lo, hi, off int64 }

// period returns the offset period holding ts (named zones only).
func (z *zone) period(ts int64) *zonePeriod {
	if p := z.last.Load(); p != nil && ts >= p.lo && ts < p.hi {
		return p
	}
	t := time.UnixMicro(ts).In(z.loc)
	_, off := t.Zone()
	start, end := t.ZoneBounds()
	p := &zonePeriod{lo: minInt64, hi: maxInt64, off: int64(off) * microsPerSecond}
	if !start.IsZero() {
		p.lo = start.UnixMicro()
	}
	if !end.IsZero() {
		p.hi = end.UnixMicro()
	}
	z.last.Store(p)
	return p
}

var utcZone = &zone{name: "UTC", fixed: true}

var zoneCache sync.Map // string -> *zone; only valid names are stored

// loadZone resolves a BigQuery time zone: an IANA name ("America/Los_Angeles"),
// "UTC", or an offset "(+|-)H[H][:M[M]]" optionally after "UTC"/"GMT".
func loadZone(name string) (*zone, error) {
	if z, ok := zoneCache.Load(name); ok {
		return z.(*zone), nil
	}
	z, err := parseZone(name)
	if err != nil {
		return nil, err
	}
	zoneCache.Store(name, z)
	return z, nil
}

func parseZone(name string) (*zone, error) {
	s := strings.TrimSpace(name)
	up := strings.ToUpper(s)
	switch up {
	case "UTC", "Z", "GMT", "ETC/UTC", "ZULU":
		return utcZone, nil
	}
	if strings.HasPrefix(up, "UTC") || strings.HasPrefix(up, "GMT") {
		if len(s) > 3 && (s[3] == '+' || s[3] == '-') {
			s = s[3:]
		}
	}
	if s != "" && (s[0] == '+' || s[0] == '-') {
		off, ok := parseOffset(s)
		if !ok {
			return nil, fmt.Errorf("Invalid time zone: %s", name)
		}
		return fixedZone(off), nil
	}
	if s == "" || s == "Local" || len(s) > 64 {
		return nil, fmt.Errorf("Invalid time zone: %s", name)
	}
	loc, err := time.LoadLocation(s)
	if err != nil {
		return nil, fmt.Errorf("Invalid time zone: %s", name)
	}
	return &zone{name: s, loc: loc}, nil
}

// fixedZone returns the zone at a fixed offset in seconds.
func fixedZone(offSec int64) *zone {
	if offSec == 0 {
		return utcZone
	}
	return &zone{name: offsetName(offSec), fixed: true, off: offSec * microsPerSecond}
}

// offsetName renders an offset the way BigQuery's %Z does: UTC+2, UTC-5:30.
func offsetName(offSec int64) string {
	sign := "+"
	if offSec < 0 {
		sign, offSec = "-", -offSec
	}
	h, m := offSec/3600, offSec%3600/60
	if m == 0 {
		return "UTC" + sign + strconv.FormatInt(h, 10)
	}
	return fmt.Sprintf("UTC%s%d:%02d", sign, h, m)
}

// parseOffset parses (+|-)H[H][:M[M]] or (+|-)HHMM into seconds.
func parseOffset(s string) (int64, bool) {
	if len(s) < 2 {
		return 0, false
	}
	sign := int64(1)
	if s[0] == '-' {
		sign = -1
	} else if s[0] != '+' {
		return 0, false
	}
	s = s[1:]
	var h, m int64
	digits := func(t string) (int64, bool) {
		if t == "" || len(t) > 2 {
			return 0, false
		}
		var x int64
		for i := 0; i < len(t); i++ {
			if t[i] < '0' || t[i] > '9' {
				return 0, false
			}
			x = x*10 + int64(t[i]-'0')
		}
		return x, true
	}
	var ok bool
	if i := strings.IndexByte(s, ':'); i >= 0 {
		if h, ok = digits(s[:i]); !ok {
			return 0, false
		}
		if m, ok = digits(s[i+1:]); !ok {
			return 0, false
		}
	} else if len(s) == 4 {
		if h, ok = digits(s[:2]); !ok {
			return 0, false
		}
		if m, ok = digits(s[2:]); !ok {
			return 0, false
		}
	} else if h, ok = digits(s); !ok {
		return 0, false
	}
	if h > 14 || m > 59 {
		return 0, false
	}
	return sign * (h*3600 + m*60), true
}

// toCivil converts a TIMESTAMP to civil microseconds in z.
func (z *zone) toCivil(ts int64) int64 {
	if z.fixed {
		return ts + z.off
	}
	return ts + z.period(ts).off
}

// abbrevAt returns the zone's name for %Z at a TIMESTAMP.
func (z *zone) abbrevAt(ts int64) string {
	if z.fixed {
		return z.name
	}
	name, _ := time.UnixMicro(ts).In(z.loc).Zone()
	return name
}

// fromCivil converts civil microseconds in z to a TIMESTAMP. In a gap or
// an overlap the time package picks one of the candidate instants.
func (z *zone) fromCivil(civ int64) int64 {
	if z.fixed {
		return civ - z.off
	}
	// Away from the cached period's edges a civil time has exactly one
	// instant; near them (gaps, overlaps) the time package decides.
	if p := z.last.Load(); p != nil {
		if ts := civ - p.off; ts-microsPerDay >= p.lo && ts+microsPerDay < p.hi {
			return ts
		}
	}
	days := floorDiv(civ, microsPerDay)
	tod := civ - days*microsPerDay
	y, m, d := civilFromDays(days)
	t := time.Date(int(y), time.Month(m), int(d),
		int(tod/microsPerHour), int(tod%microsPerHour/microsPerMinute),
		int(tod%microsPerMinute/microsPerSecond), int(tod%microsPerSecond)*1000, z.loc)
	return t.UnixMicro()
}

// zoneArg resolves a time zone argument: constant at bind time, or per row
// with a cache of resolved names.
type zoneArg struct {
	fixedZ *zone // non-nil when the argument is constant (or absent)
	index  int   // argument index when per row
}

func bindZone(fname string, args []Arg, i int) (zoneArg, error) {
	if i >= len(args) {
		return zoneArg{fixedZ: utcZone}, nil
	}
	a := args[i]
	if (a.Type != vec.String && a.Type != vec.Unknown) || a.Part != "" {
		return zoneArg{}, sigError(fname, args)
	}
	if s, isNull, ok := constString(a); ok {
		if isNull {
			return zoneArg{fixedZ: utcZone}, nil // strict: the row is NULL anyway
		}
		z, err := loadZone(s)
		if err != nil {
			return zoneArg{}, err
		}
		return zoneArg{fixedZ: z}, nil
	}
	return zoneArg{index: i}, nil
}

// at returns the zone of row i.
func (za zoneArg) at(args []*vec.Vector, i int) (*zone, error) {
	if za.fixedZ != nil {
		return za.fixedZ, nil
	}
	return loadZone(args[za.index].StringAt(i))
}

// ---- range checks ----

func validTimestamp(ts int64) bool { return ts >= minTimestamp && ts <= maxTimestamp }
func validDate(d int64) bool       { return d >= minDate && d <= maxDate }
func validDatetime(dt int64) bool {
	return dt >= minDate*microsPerDay && dt < (maxDate+1)*microsPerDay
}

// mulOverflows reports whether a*b overflows int64.
func mulOverflows(a, b int64) bool {
	if a == 0 || b == 0 {
		return false
	}
	c := a * b
	return c/b != a || (a == -1 && b == minInt64) || (b == -1 && a == minInt64)
}

const (
	minInt64 = -1 << 63
	maxInt64 = 1<<63 - 1
)
